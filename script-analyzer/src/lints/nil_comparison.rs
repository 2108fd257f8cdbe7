//! `nil_comparison`: a command's reply compared with `nil`.
//!
//! A nil reply reaches Lua as `false`, never `nil`, so
//! `redis.call('GET', k) == nil` is always false (and `~= nil` always true).
//! Fires when the other operand is a reply that can never be `nil` where
//! it is compared (in place, or held by a local or a field), or an element
//! of one that cannot be (MGET's and HMGET's within the keys or fields
//! asked for, every value a loop over the reply gives); and on
//! `type(v) == 'nil'` for such a value, which is `'boolean'` for `false`.
//! A comparison with `nil` joined by `and`/`or` to the same comparison
//! with `false` (`v ~= nil and v ~= false`) tests both and is left alone.

use super::typed::{describe, each_comparison};
use super::{Context, RedisCall};
use crate::facts::{Ty, unparenthesized};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{BinOp, Call, Expression, FunctionArgs, Prefix, Suffix};
use full_moon::visitors::Visitor;
use std::collections::HashSet;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut paired = PairedWithFalse {
        cx,
        nil_sides: HashSet::new(),
    };
    cx.visit(&mut paired);
    let paired = paired.nil_sides;
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() || paired.contains(&std::ptr::from_ref(cmp.whole)) {
            return;
        }
        let (value, written) = match (is_nil(cmp.lhs), is_nil(cmp.rhs)) {
            (false, true) => (cmp.lhs, "nil"),
            (true, false) => (cmp.rhs, "nil"),
            _ => match (type_of(cx, cmp.lhs), type_of(cx, cmp.rhs)) {
                (Some(value), None) if is_nil_name(cmp.rhs) => (value, "'nil'"),
                (None, Some(value)) if is_nil_name(cmp.lhs) => (value, "'nil'"),
                _ => return,
            },
        };
        let inferred = cx.types.of(value);
        if !inferred.from_redis()
            || inferred.ty.is_any()
            || inferred.ty == Ty::EMPTY
            || inferred.ty.intersects(Ty::NIL)
        {
            return;
        }
        let message = if written == "nil" {
            format!(
                "{}, never nil: `{} nil` is always {}",
                describe(cx, value, &inferred),
                cmp.op,
                cmp.always()
            )
        } else {
            format!(
                "{}, never nil: `type(...) {} 'nil'` is always {}",
                describe(cx, value, &inferred),
                cmp.op,
                cmp.always()
            )
        };
        report.diagnostics.push(
            Diagnostic::error(Lint::NilComparison, cx.span_of(cmp.whole), message)
                .with_label("a nil reply arrives in Lua as `false`")
                .with_help("test it as a condition (`if not v then`), or compare with `false`"),
        );
    });
}

/// The comparisons with `nil` that an `and`/`or` joins to the same
/// comparison of the same value with `false` (`v == nil or v == false`).
struct PairedWithFalse<'a, 'c> {
    cx: &'c Context<'a>,
    nil_sides: HashSet<*const Expression>,
}

impl Visitor for PairedWithFalse<'_, '_> {
    fn visit_expression(&mut self, expr: &Expression) {
        let Expression::BinaryOperator { lhs, binop, rhs } = expr else {
            return;
        };
        if !matches!(binop, BinOp::And(_) | BinOp::Or(_)) {
            return;
        }
        let (lhs, rhs) = (unparenthesized(lhs), unparenthesized(rhs));
        for (nil_side, false_side) in [(lhs, rhs), (rhs, lhs)] {
            if let (Some((subject, op)), Some((other, other_op))) = (
                tested_against(nil_side, is_nil),
                tested_against(false_side, is_false),
            ) && op == other_op
                && self.source(subject) == self.source(other)
            {
                self.nil_sides.insert(std::ptr::from_ref(nil_side));
            }
        }
    }
}

impl PairedWithFalse<'_, '_> {
    fn source(&self, expr: &Expression) -> Option<&str> {
        let span = self.cx.span_of(expr);
        self.cx.source.get(span.start.offset..span.end.offset)
    }
}

/// `(v, op)` of `v == c`, `v ~= c`, `c == v` or `c ~= v`, where `c` is
/// what `constant` accepts.
fn tested_against(
    expr: &Expression,
    constant: fn(&Expression) -> bool,
) -> Option<(&Expression, bool)> {
    let Expression::BinaryOperator { lhs, binop, rhs } = expr else {
        return None;
    };
    let equal = match binop {
        BinOp::TwoEqual(_) => true,
        BinOp::TildeEqual(_) => false,
        _ => return None,
    };
    let (lhs, rhs) = (unparenthesized(lhs), unparenthesized(rhs));
    match (constant(lhs), constant(rhs)) {
        (false, true) => Some((lhs, equal)),
        (true, false) => Some((rhs, equal)),
        _ => None,
    }
}

fn is_false(expr: &Expression) -> bool {
    matches!(expr, Expression::Symbol(t) if t.token().to_string() == "false")
}

fn is_nil(expr: &Expression) -> bool {
    matches!(expr, Expression::Symbol(t) if t.token().to_string() == "nil")
}

/// The string literal `'nil'`.
fn is_nil_name(expr: &Expression) -> bool {
    matches!(expr, Expression::String(t) if crate::calls::string_value(t).as_deref() == Some("nil"))
}

/// `x` in `type(x)`, with the global `type`.
fn type_of<'e>(cx: &Context<'_>, expr: &'e Expression) -> Option<&'e Expression> {
    let Expression::FunctionCall(call) = expr else {
        return None;
    };
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))]) =
        (call.prefix(), suffixes.as_slice())
    else {
        return None;
    };
    if name.token().to_string() != "type" || !cx.model.is_global(name) {
        return None;
    }
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return None;
    };
    let mut arguments = arguments.iter();
    match (arguments.next(), arguments.next()) {
        (Some(x), None) => Some(unparenthesized(x)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::NilComparison, source, 1, 1)
    }

    #[test]
    fn replies_compared_with_nil() {
        assert_eq!(
            errors("if redis.call('GET', KEYS[1]) == nil then return 0 end return 1"),
            ["GET returns a string or `false` (a nil reply), never nil: `== nil` is always false"]
        );
        assert_eq!(
            errors(
                "local v = redis.call('HGET', KEYS[1], 'f')\nif nil ~= v then return v end return ARGV[1]"
            ),
            ["HGET returns a string or `false` (a nil reply), never nil: `~= nil` is always true"]
        );
        assert_eq!(
            errors("local n = redis.call('INCR', KEYS[1]) if n == nil then return 0 end return n + tonumber(ARGV[1])")
                .len(),
            1
        );
    }

    #[test]
    fn elements_and_types_of_replies_compared_with_nil() {
        for source in [
            // An element within the fields asked for, through a local.
            "local r = redis.call('HMGET', KEYS[1], 'a', 'b')\nif r[2] == nil then return 0 end\nreturn 1",
            // Every value of a loop over MGET, in a branch.
            "for i, v in ipairs(redis.call('MGET', KEYS[1], ARGV[1])) do\n  if i > 1 and v ~= nil then return v end\nend\nreturn 0",
            // `type` of a reply held by a field.
            "local o = {}\no.s = redis.call('ZSCORE', KEYS[1], ARGV[1])\nif type(o.s) == 'nil' then return 0 end\nreturn 1",
        ] {
            let found = errors(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("never nil"), "{found:?}");
        }
    }

    #[test]
    fn elements_past_the_request_and_other_types_pass() {
        for source in [
            // Past the fields asked for: nil.
            "local r = redis.call('HMGET', KEYS[1], 'a')\nif r[2] == nil then return 0 end\nreturn ARGV[1]",
            // A computed index may be past the end.
            "local r = redis.call('LRANGE', KEYS[1], 0, 9)\nfor i = 1, 11 do if r[i] == nil then return i end end\nreturn ARGV[1]",
            // `type(v) == 'boolean'` is the test that works.
            "local v = redis.call('GET', KEYS[1])\nif type(v) == 'boolean' then return 0 end\nreturn ARGV[1]",
            "if type(tonumber(ARGV[1])) == 'nil' then return 0 end\nreturn KEYS[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn named_fields_of_an_unpacked_reply_compared_with_nil() {
        for source in [
            "local state, owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))\nif owner == nil then return 0 end\nreturn 1",
            "local job = {}\njob.state, job.owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))\nif nil ~= job.owner then return job.owner end\nreturn 0",
        ] {
            let found = errors(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].contains("an element of the HMGET reply"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn what_the_scripts_own_function_returns_compared_with_nil() {
        let helper = "local function owner(key)\n  return redis.call('HGET', key, 'owner')\nend\n";
        for test in ["owner(KEYS[1]) == nil", "nil ~= owner(KEYS[1])"] {
            let source = format!("{helper}if {test} then return 0 end\nreturn 1");
            let found = errors(&source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].starts_with("HGET returns a string or `false`"),
                "{found:?}"
            );
        }
        // A function that may give nil itself is fairly compared with nil.
        let source = "local function owner(key)\n  if key == '' then return nil end\n  return redis.call('HGET', key, 'owner')\nend\nif owner(KEYS[1]) == nil then return 0 end\nreturn 1";
        assert!(errors(source).is_empty(), "{:?}", errors(source));
    }

    #[test]
    fn a_comparison_with_nil_joined_to_the_same_with_false_passes() {
        for source in [
            "local v = redis.call('LPOP', KEYS[1])\nif v ~= nil and v ~= false then return v end\nreturn 0",
            "local v = redis.call('GET', KEYS[1])\nif (v == false) or (v == nil) then return 0 end\nreturn v",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
        // A different value on each side is no such test.
        assert_eq!(
            errors("local v = redis.call('GET', KEYS[1])\nlocal w = redis.call('GET', KEYS[2])\nif v ~= nil and w ~= false then return v end\nreturn 0")
                .len(),
            1
        );
    }

    #[test]
    fn values_that_may_be_nil_pass() {
        for source in [
            "if redis.call('GET', KEYS[1]) == false then return 0 end return ARGV[1]",
            "if not redis.call('GET', KEYS[1]) then return 0 end return ARGV[1]",
            // tonumber may give nil.
            "local n = tonumber(redis.call('GET', KEYS[1])) if n == nil then return 0 end return ARGV[1]",
            // A local that may have been set to nil.
            "local v = redis.call('GET', KEYS[1]) if ARGV[1] == 'x' then v = nil end if v == nil then return 0 end return 1",
            // A reply the table does not know.
            "local v = redis.call('EVAL', 'return 1', 0) if v == nil then return 0 end return ARGV[1]",
            "local function f() end if f() == nil then return 0 end return ARGV[1] .. KEYS[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
