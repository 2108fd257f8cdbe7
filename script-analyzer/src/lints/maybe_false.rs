//! `maybe_false`: a value that may be `false` or nil used where Lua raises
//! on it: arithmetic, `..`, `<`, `#`, the text of `cjson.decode` or of a
//! `string` function, a value `string.format` formats, a method call
//! (`v:sub(1, 3)`), or as a `redis.call` argument.
//!
//! GET, HGET, LPOP... reply `false` for a missing key, and `tonumber` of
//! that is nil, so `redis.call('GET', k) + 1` raises "attempt to perform
//! arithmetic on a boolean value" whenever the key is missing. The value is
//! followed through locals, fields, elements of replies (MGET's), loops and
//! branches; a test on the path (`if v then`, `if not v then return end`,
//! `v or default`, `assert(v)`, `type(v) == 'string'`) removes `false`, so
//! the lint fires only where `false` can reach the operation. A local
//! that is also handed to one of the script's functions, or stored, is
//! left alone: the script reasons about it elsewhere. A warning:
//! the script may know that the key exists.
//!
//! An input the caller does not pass (`ARGV[5]` when 4 arguments are
//! declared) is nil, and so is `tonumber` of it: used in arithmetic, `..`
//! or `<` it raises on every run (as a command argument, it is
//! `argument_type`'s).

use super::typed::{Operand, describe, each_operand, local_of, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty, UseKind};
use crate::replies::LuaTypes;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Call, Expression, FunctionCall, Prefix, Suffix};
use full_moon::visitors::Visitor;
use std::collections::HashSet;

/// Whether `value` is a reply (or an element of one) that may be `false`
/// where it is used, or `tonumber` of one.
fn may_be_false(value: &Inferred) -> bool {
    // Always `false` as a command argument is `argument_type`'s (the
    // caller checks); anywhere else it raises on every run.
    if value.ty.is_any() || !value.ty.intersects(Ty::FALSY) {
        return false;
    }
    match &value.origin {
        // `false` under RESP2, nil under RESP3.
        Some(Origin::Reply { .. }) => value.ty.intersects(Ty::FALSY),
        Some(Origin::Element { .. }) => value.ty.intersects(Ty::FALSE),
        Some(Origin::Missing { .. }) => true,
        Some(Origin::Tonumber { of: Some(of) }) => {
            let nil = LuaTypes::FALSE.union(LuaTypes::NIL);
            match &**of {
                Origin::Reply { shape, .. } => shape.intersects(nil),
                Origin::Missing { .. } => true,
                // Kept only for an element that may be `false` (MGET's).
                Origin::Element { .. } => true,
                _ => false,
            }
        }
        _ => false,
    }
}

/// The input that a value that may be nil is (or is `tonumber` of), when
/// the caller does not pass it.
fn missing_input(value: &Inferred) -> Option<&str> {
    if !value.ty.intersects(Ty::FALSY) {
        return None;
    }
    match &value.origin {
        Some(Origin::Missing { name }) => Some(name),
        Some(Origin::Tonumber { of: Some(of) }) => match &**of {
            Origin::Missing { name } => Some(name),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    report.diagnostics.extend(candidates(cx).dedup());
}

/// A finding before the one-per-local rule: its diagnostic, and the local
/// or field it is about (`None`: reported wherever it is found).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub key: Option<String>,
    pub diagnostic: Diagnostic,
}

/// Every finding of a script (or of the statement checked), in the order
/// the rule takes them: the operands in tree order, then the method
/// calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Candidates {
    pub operands: Vec<Candidate>,
    pub methods: Vec<Candidate>,
}

impl Candidates {
    /// One finding per local or field: once it raised, it was not false.
    pub fn dedup(&self) -> Vec<Diagnostic> {
        let mut reported = HashSet::new();
        self.operands
            .iter()
            .chain(&self.methods)
            .filter(|c| {
                c.key
                    .as_ref()
                    .is_none_or(|key| reported.insert(key.clone()))
            })
            .map(|c| c.diagnostic.clone())
            .collect()
    }
}

/// The findings of `cx`, before the one-per-local rule.
pub(crate) fn candidates(cx: &Context<'_>) -> Candidates {
    let mut found = Candidates::default();
    each_operand(cx, |expr, operand| {
        let value = cx.types.of(expr);
        let missing = missing_input(&value);
        // Always nil as a command argument: `argument_type`'s error.
        let refused = operand == Operand::CommandArg && value.ty.within(Ty::FALSY);
        if refused || (!may_be_false(&value) && missing.is_none()) {
            return;
        }
        // A local handed to the script's own functions or stored is taken
        // as known to be there: the script reasons about it elsewhere.
        if let Some(var) = local_of(cx, expr)
            && cx.types.uses(var).iter().any(|u| u.kind == UseKind::Other)
        {
            return;
        }
        let place = match expr {
            Expression::FunctionCall(_) => None,
            _ => Some(text(cx, expr)),
        };
        let falsy = if missing.is_some() || matches!(value.origin, Some(Origin::Tonumber { .. })) {
            "nil"
        } else {
            "`false`"
        };
        let consequence = match operand {
            Operand::Arithmetic(op) => format!("`{op}` on {falsy} raises an error"),
            Operand::Ordering(op) => format!("`{op}` with {falsy} raises an error"),
            Operand::Concat => format!("`..` with {falsy} raises an error"),
            Operand::CommandArg => format!("{falsy} as a command argument raises an error"),
            Operand::Length => format!("`#` of {falsy} raises an error"),
            Operand::Text(function) => format!("`{function}` of {falsy} raises an error"),
        };
        let subject = match (&value.origin, missing) {
            (_, Some(input)) => format!(
                "`{}` is nil{}: the caller does not pass {input}",
                text(cx, expr),
                if value.ty.within(Ty::FALSY) {
                    ""
                } else {
                    " on a path"
                },
            ),
            (Some(Origin::Tonumber { of: Some(of) }), None) => match &**of {
                Origin::Reply { command, shape, .. } => format!(
                    "`{}` is nil when {command} replies `false` ({command} returns {shape})",
                    text(cx, expr)
                ),
                Origin::Element { command } => format!(
                    "`{}` is nil when its argument, an element of the {command} reply, is `false` (a nil reply)",
                    text(cx, expr)
                ),
                _ => describe(cx, expr, &value),
            },
            (_, None) => describe(cx, expr, &value),
        };
        found.operands.push(Candidate {
            key: place,
            diagnostic: Diagnostic::warning(
                Lint::MaybeFalse,
                cx.span_of(expr),
                format!("{subject}; {consequence}"),
            )
            .with_label("may be missing here")
            .with_help(
                "give a default (`redis.call(...) or '0'`, `tonumber(...) or 0`), or test the value first",
            ),
        });
    });
    found.methods = methods_of_false(cx);
    found
}

/// A method called on a local that may be `false` (`job:sub(1, 3)`):
/// "attempt to index a boolean value".
fn methods_of_false(cx: &Context<'_>) -> Vec<Candidate> {
    struct Finder<'c, 'a> {
        cx: &'c Context<'a>,
        found: Vec<(String, usize, crate::Span, Inferred, String)>,
    }
    impl Visitor for Finder<'_, '_> {
        fn visit_function_call(&mut self, call: &FunctionCall) {
            let Prefix::Name(token) = call.prefix() else {
                return;
            };
            let Some(Suffix::Call(Call::MethodCall(method))) = call.suffixes().next() else {
                return;
            };
            let Some(var) = self.cx.types.local(token) else {
                return;
            };
            let value = self
                .cx
                .types
                .chain(call.prefix(), std::iter::empty())
                .swap_remove(0);
            if may_be_false(&value) {
                self.found.push((
                    token.token().to_string(),
                    var,
                    self.cx.span_of(token),
                    value,
                    method.name().token().to_string(),
                ));
            }
        }
    }
    let mut finder = Finder {
        cx,
        found: Vec::new(),
    };
    cx.visit(&mut finder);
    // A method call is a use of its receiver like a call: handed to the
    // script's own functions or stored is something else.
    let receivers: HashSet<(usize, usize)> = finder
        .found
        .iter()
        .map(|(_, _, span, _, _)| (span.start.offset, span.end.offset))
        .collect();
    let mut found = Vec::new();
    for (name, var, span, value, method) in finder.found {
        let elsewhere = cx.types.uses(var).iter().any(|u| {
            u.kind == UseKind::Other
                && !receivers.contains(&(u.span.start.offset, u.span.end.offset))
        });
        if elsewhere {
            continue;
        }
        let subject = match &value.origin {
            Some(Origin::Reply { command, shape, .. }) => format!("{command} returns {shape}"),
            Some(Origin::Element { command }) => format!(
                "`{name}`, an element of the {command} reply, is a string or `false` (a nil reply)"
            ),
            _ => format!("`{name}` may be `false` or nil"),
        };
        let diagnostic = Diagnostic::warning(
            Lint::MaybeFalse,
            span,
            format!("{subject}; `{name}:{method}(...)` on `false` raises \"attempt to index a boolean value\""),
        )
        .with_label("may be missing here")
        .with_help("test the value first (`if v then`), or give a default: `(v or '')`");
        found.push(Candidate {
            key: Some(name),
            diagnostic,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn warnings(source: &str) -> Vec<String> {
        let found = lint(Lint::MaybeFalse, source, 2, 1);
        assert!(found.iter().all(|d| d.severity == Severity::Warning));
        found.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn false_replies_consumed() {
        assert_eq!(
            warnings("return redis.call('GET', KEYS[1]) + ARGV[1] + #KEYS[2]"),
            ["GET returns a string or `false` (a nil reply); `+` on `false` raises an error"]
        );
        assert_eq!(
            warnings(
                "local v = redis.call('HGET', KEYS[1], 'f')\nreturn 'value: ' .. v .. KEYS[2] .. ARGV[1]"
            ),
            ["HGET returns a string or `false` (a nil reply); `..` with `false` raises an error"]
        );
        assert_eq!(
            warnings("redis.call('SET', KEYS[2], redis.call('GET', KEYS[1]))\nreturn ARGV[1]"),
            [
                "GET returns a string or `false` (a nil reply); `false` as a command argument raises an error"
            ]
        );
        assert_eq!(
            warnings(
                "local n = tonumber(redis.call('GET', KEYS[1]))\nif n > tonumber(ARGV[1]) then return 1 end return KEYS[2]"
            ),
            [
                "`n` is nil when GET replies `false` (GET returns a string or `false` (a nil reply)); `>` with nil raises an error"
            ]
        );
    }

    #[test]
    fn defaults_and_tests_pass() {
        for source in [
            "return (redis.call('GET', KEYS[1]) or 0) + ARGV[1] + #KEYS[2]",
            "return tonumber(redis.call('GET', KEYS[1]) or '0') + ARGV[1] + #KEYS[2]",
            "return (tonumber(redis.call('GET', KEYS[1])) or 0) + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nreturn v + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif v == false then v = '0' end\nreturn v + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nlocal n = tonumber(v)\nif not n then return 0 end return n + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif v then return tonumber(v) + ARGV[1] end return #KEYS[2]",
            "return redis.call('INCR', KEYS[1]) + ARGV[1] + #KEYS[2]",
            "return redis.call('SET', KEYS[1], ARGV[1], 'GET', KEYS[2]) and 1",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn false_followed_through_fields_loops_and_branches() {
        for source in [
            // A field.
            "local t = {}\nt.v = redis.call('GET', KEYS[1])\nreturn t.v .. ARGV[1]",
            // An element of MGET, in a loop.
            "local out = 0\nfor _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do out = out + v end\nreturn out",
            // A branch that tests something else.
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'x' then return 0 end\nreturn v + 1",
            // Reassigned in a branch, still false on the other path.
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] then v = redis.call('GET', KEYS[2]) or '0' end\nreturn v .. 'x'",
            // Tested on one path only.
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'a' and v then return v + 1 end\nreturn v * 2",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn false_from_one_path_survives_the_join() {
        for source in [
            // An input on the other path.
            "local v = ARGV[1]\nif KEYS[2] == 'a' then v = redis.call('GET', KEYS[1]) end\nreturn v + 1",
            // Another nil reply on the other path.
            "local v\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) else v = redis.call('HGET', KEYS[2], 'f') end\nreturn v .. 'x'",
            // `tonumber` of an input or of a nil reply, through a field.
            "local t = {}\nt.n = tonumber(ARGV[1])\nif KEYS[2] == 'a' then t.n = tonumber(redis.call('GET', KEYS[1])) end\nreturn t.n * 2",
            // In a loop: the reply of a round, or the input before the first.
            "local v = ARGV[1]\nfor i = 1, 3 do\n  if i > 1 then v = redis.call('LPOP', KEYS[1]) end\nend\nreturn #v",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
        }
    }

    #[test]
    fn what_the_scripts_own_function_returns_is_taken_as_known() {
        for source in [
            "local function get(k) return redis.call('GET', k) end\nreturn get(KEYS[1]) + 1",
            "local function held() return tonumber(redis.call('HGET', KEYS[1], 'n')) end\nif held() == nil then return -1 end\nif held() > 1 then return 1 end\nreturn 0",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn a_nil_reply_passed_to_the_scripts_own_function() {
        let source =
            "local function bump(v)\n  return v + 1\nend\nreturn bump(redis.call('GET', KEYS[1]))";
        assert_eq!(warnings(source).len(), 1, "{:?}", warnings(source));
        for source in [
            // Tested inside.
            "local function bump(v)\n  if not v then return 0 end\n  return v + 1\nend\nreturn bump(redis.call('GET', KEYS[1]))",
            // A local handed over: the caller is taken to know.
            "local function bump(v)\n  return v + 1\nend\nlocal x = redis.call('GET', KEYS[1])\nreturn bump(x)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn nil_replies_kept_in_a_table_and_read_back() {
        for source in [
            "local vals = {}\nfor _, k in ipairs(KEYS) do vals[#vals + 1] = redis.call('GET', k) end\nlocal total = 0\nfor _, v in ipairs(vals) do total = total + v end\nreturn total",
            "local ids = {}\nfor _, k in ipairs(KEYS) do table.insert(ids, redis.call('HGET', k, 'id')) end\nfor i = 1, #ids do redis.call('SADD', KEYS[1], 'x' .. ids[i]) end",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
        for source in [
            "local vals = {}\nfor _, k in ipairs(KEYS) do vals[#vals + 1] = redis.call('GET', k) or '0' end\nlocal total = 0\nfor _, v in ipairs(vals) do total = total + v end\nreturn total",
            "local ok = {}\nfor _, k in ipairs(KEYS) do\n  local v = redis.call('GET', k)\n  if v then ok[#ok + 1] = v end\nend\nlocal total = 0\nfor _, v in ipairs(ok) do total = total + v end\nreturn total",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn fields_of_a_record_unpacked_into_locals_are_taken_as_known() {
        // Read by position, an element of HMGET may be `false`; unpacked
        // into named locals, the script is taken to know its record.
        let source =
            "local r = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\nreturn r[1] + ARGV[1]";
        assert_eq!(warnings(source).len(), 1, "{:?}", warnings(source));
        let source = "local tokens, ts = unpack(redis.call('HMGET', KEYS[1], 'tokens', 'ts'))\nreturn tokens + ARGV[1]";
        assert!(warnings(source).is_empty(), "{:?}", warnings(source));
    }

    #[test]
    fn false_formatted_by_string_format() {
        for source in [
            "return string.format('%d', redis.call('GET', KEYS[1])) .. ARGV[1] .. KEYS[2]",
            "local t = {}\nt.n = redis.call('HGET', KEYS[1], 'n')\nreturn string.format('n=%s', t.n) .. ARGV[1] .. KEYS[2]",
            "local out = ''\nfor _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do out = out .. string.format('%5.1f;', v) end\nreturn out .. ARGV[1]",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("`string.format` of"), "{found:?}");
        }
        for source in [
            "return string.format('%d', redis.call('GET', KEYS[1]) or 0) .. ARGV[1] .. KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif not v then return '' end\nreturn string.format('%s', v) .. ARGV[1] .. KEYS[2]",
            // Past the conversions: not formatted.
            "return string.format('100%%', redis.call('GET', KEYS[1])) .. ARGV[1] .. KEYS[2]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn a_reply_that_is_always_false_where_it_is_used() {
        for source in [
            // After a loop that drains the list.
            "local job = redis.call('LPOP', KEYS[1])\nwhile job do\n  redis.call('RPUSH', KEYS[2], job)\n  job = redis.call('LPOP', KEYS[1])\nend\nreturn job .. ARGV[1]",
            // In the branch that found it missing.
            "local v = redis.call('GET', KEYS[1])\nif not v then return 'missing ' .. v end\nreturn v .. ARGV[1]",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn a_join_tested_after_it_or_with_defaults_on_each_path_passes() {
        for source in [
            "local v = ARGV[1]\nif KEYS[2] == 'a' then v = redis.call('GET', KEYS[1]) or '0' end\nreturn v + 1",
            "local v\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) else v = redis.call('HGET', KEYS[2], 'f') end\nif not v then return 0 end\nreturn v .. 'x'",
            "local t = {}\nt.n = tonumber(ARGV[1])\nif KEYS[2] == 'a' then t.n = tonumber(redis.call('GET', KEYS[1])) end\nreturn (t.n or 0) * 2",
            "local v = ARGV[1]\nfor i = 1, 3 do\n  if i > 1 then v = redis.call('LPOP', KEYS[1]) end\n  if not v then break end\nend\nreturn v and #v or 0",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn tonumber_of_an_element_that_may_be_false_is_nil() {
        for source in [
            // Through the loop's value.
            "for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do\n  if tonumber(v) > 3 then return 1 end\nend\nreturn 0",
            // Through a local holding the reply, then one holding the number.
            "local r = redis.call('HMGET', KEYS[1], 'a', 'b')\nlocal n = tonumber(r[2])\nreturn n * 2",
            // A computed index, in a branch of a numeric loop.
            "local vals = redis.call('MGET', KEYS[1], KEYS[2])\nlocal total = 0\nfor i = 1, #vals do\n  if ARGV[1] == 'x' then total = total + tonumber(vals[i]) end\nend\nreturn total",
            // Through a field.
            "local t = {}\nt.n = tonumber(redis.call('MGET', KEYS[1])[1])\nreturn t.n + 1",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("is `false` (a nil reply)"), "{found:?}");
        }
    }

    #[test]
    fn tonumber_of_an_element_that_is_never_false_or_is_tested_passes() {
        for source in [
            // LRANGE's elements are strings.
            "for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  if tonumber(v) > 3 then return 1 end\nend\nreturn KEYS[2] .. ARGV[1]",
            // A default before the conversion, or after it.
            "for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do\n  if tonumber(v or '0') > 3 then return 1 end\nend\nreturn ARGV[1]",
            "local r = redis.call('HMGET', KEYS[1], 'a', 'b')\nlocal n = tonumber(r[2]) or 0\nreturn n * 2 .. ARGV[1] .. KEYS[2]",
            // Tested first.
            "for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do\n  if v and tonumber(v) > 3 then return 1 end\nend\nreturn ARGV[1]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn an_input_the_caller_does_not_pass_is_nil_where_it_is_used() {
        for (source, expected) in [
            // Through `tonumber` and a local.
            (
                "local limit = tonumber(ARGV[2])\nreturn redis.call('INCR', KEYS[1]) + limit + ARGV[1] + #KEYS[2]",
                "`limit` is nil: the caller does not pass ARGV[2]; `+` on nil raises an error",
            ),
            // Through a field.
            (
                "local cfg = {}\ncfg.ttl = ARGV[2]\nreturn 'ttl: ' .. cfg.ttl .. ARGV[1] .. KEYS[1] .. KEYS[2]",
                "`cfg.ttl` is nil: the caller does not pass ARGV[2]; `..` with nil raises an error",
            ),
            // Given a value on one branch only.
            (
                "local n = tonumber(ARGV[2])\nif ARGV[1] == 'x' then n = 5 end\nreturn n * 2 .. KEYS[2] .. KEYS[1]",
                "`n` is nil on a path: the caller does not pass ARGV[2]; `*` on nil raises an error",
            ),
            // In a loop, as a command argument on a path.
            (
                "local ttl = KEYS[3]\nfor i = 1, 3 do redis.call('EXPIRE', KEYS[1], ttl) ttl = ARGV[1] .. KEYS[2] end",
                "`ttl` is nil on a path: the caller does not pass KEYS[3]; nil as a command argument raises an error",
            ),
        ] {
            assert_eq!(warnings(source), [expected], "{source}");
        }
    }

    #[test]
    fn inputs_that_are_passed_or_defaulted_pass() {
        for source in [
            "local limit = tonumber(ARGV[2]) or 10\nreturn limit + ARGV[1] + #KEYS[2] + #KEYS[1]",
            "local limit = tonumber(ARGV[1])\nreturn limit + #KEYS[2] + #KEYS[1]",
            "local n = ARGV[2]\nif not n then n = '1' end\nreturn n .. ARGV[1] .. KEYS[2] .. KEYS[1]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
        // Without declared counts, nothing says that an input is missing.
        let options = crate::Options::default();
        assert!(
            crate::lints::test_util::lint_with(
                crate::Lint::MaybeFalse,
                "return tonumber(ARGV[9]) + 1 .. KEYS[3]",
                &options
            )
            .is_empty()
        );
    }

    #[test]
    fn false_given_to_length_and_text_functions() {
        for (source, consequence) in [
            // Decoded through a local.
            (
                "local job = redis.call('LPOP', KEYS[1])\nlocal doc = cjson.decode(job)\nreturn doc.id .. ARGV[1]",
                "`cjson.decode` of `false` raises an error",
            ),
            // Measured through a field.
            (
                "local t = {}\nt.v = redis.call('GET', KEYS[1])\nreturn #t.v + ARGV[1]",
                "`#` of `false` raises an error",
            ),
            // Cut in a loop over MGET's elements.
            (
                "local out = {}\nfor _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do out[#out + 1] = string.sub(v, 1, 3) end\nreturn out",
                "`string.sub` of `false` raises an error",
            ),
            // Matched past a branch that tests something else.
            (
                "local v = redis.call('HGET', KEYS[1], 'f')\nif ARGV[1] == 'x' then return 0 end\nreturn string.find(v, 'a', 1, true)",
                "`string.find` of `false` raises an error",
            ),
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].ends_with(consequence), "{found:?}");
        }
    }

    #[test]
    fn methods_called_on_false() {
        for source in [
            "local job = redis.call('LPOP', KEYS[1])\nreturn job:sub(1, 8) .. ARGV[1]",
            // An element of MGET in a loop, past a branch on something else.
            "for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do\n  if ARGV[1] == 'x' then return v:upper() end\nend\nreturn 0",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].contains("attempt to index a boolean value"),
                "{found:?}"
            );
        }
        for source in [
            "local job = redis.call('LPOP', KEYS[1])\nif not job then return ARGV[1] end\nreturn job:sub(1, 8) .. KEYS[2]",
            "local job = redis.call('LPOP', KEYS[1]) or ''\nreturn job:sub(1, 8) .. ARGV[1] .. KEYS[2]",
            "local s = ARGV[1]\nreturn s:upper() .. KEYS[1] .. KEYS[2]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn length_and_text_functions_of_tested_values_pass() {
        for source in [
            "local job = redis.call('LPOP', KEYS[1])\nif not job then return ARGV[1] end\nreturn cjson.decode(job).id .. KEYS[2]",
            "local v = redis.call('GET', KEYS[1]) or ''\nreturn #v + ARGV[1] + #KEYS[2]",
            "local out = {}\nfor _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do if v then out[#out + 1] = string.sub(v, 1, 3) end end\nreturn #out .. ARGV[1]",
            "local r = redis.call('LRANGE', KEYS[1], 0, -1)\nreturn #r + string.len(r[1] or '') + ARGV[1] + #KEYS[2]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn guards_on_the_path_remove_false() {
        for source in [
            "local t = {}\nt.v = redis.call('GET', KEYS[1])\nif not t.v then return 0 end\nreturn t.v .. ARGV[1]",
            "local out = 0\nfor _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do if v then out = out + v end end\nreturn out",
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'x' or not v then return 0 end\nreturn v + 1",
            "local v = redis.call('GET', KEYS[1])\nassert(v, 'missing')\nreturn v .. 'x'",
            "local v = redis.call('GET', KEYS[1])\nwhile not v do v = redis.call('GET', KEYS[2]) end\nreturn v .. 'x'",
            "local v = redis.call('GET', KEYS[1])\nif type(v) == 'string' then return v .. 'x' end\nreturn 0",
            "for _, k in ipairs(KEYS) do local v = redis.call('GET', k) if v then redis.call('SET', k, v .. 'x') end end",
            "local v = redis.call('GET', KEYS[1])\nlocal n = v and tonumber(v) or 0\nreturn n + 1",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
