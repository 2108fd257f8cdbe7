//! `number_string_comparison`: a number compared with a string.
//!
//! Lua never converts for a comparison: `redis.call('INCR', k) == '1'` and
//! `redis.call('GET', k) == 1` are always false, and `tonumber(x) > ARGV[1]`
//! raises "attempt to compare number with string". Fires when one operand is
//! surely a number (or nil) and the other surely a string (or false/nil),
//! as far as the inference knows: a reply, `tonumber`, arithmetic, `#`, a
//! literal, `KEYS[n]` / `ARGV[n]`, `tostring`, a concatenation. A reply
//! with a number in place of its nil (`redis.call('GET', k) or 0`, or set
//! to 0 on the branch where it is `false`) is still a string whenever the
//! reply is there: ordered against a number (`<`, `>`), it raises.
//! A SCAN cursor is left to `scan_cursor`.

use super::typed::{Comparison, describe, each_comparison, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;

fn numeric(value: &Inferred) -> bool {
    value.ty.intersects(Ty::NUMBER) && value.ty.within(Ty::NUMBER.union(Ty::NIL))
}

fn textual(value: &Inferred) -> bool {
    value.ty.intersects(Ty::STRING) && value.ty.within(Ty::STRING.union(Ty::FALSY))
}

/// A string Redis gave, or a number in its place (`redis.call('GET', k)
/// or 0`, a branch that sets 0 when the reply is `false`): a string
/// whenever the reply is there.
fn defaulted(value: &Inferred) -> bool {
    value.from_redis()
        && value.ty.intersects(Ty::STRING)
        && value.ty.intersects(Ty::NUMBER)
        && value
            .ty
            .within(Ty::STRING.union(Ty::NUMBER).union(Ty::FALSY))
}

/// The error for an ordering of a number and a reply that is a string
/// unless a number took its place.
fn reply_or_number(
    cx: &Context<'_>,
    cmp: &Comparison<'_>,
    expr: &Expression,
    value: &Inferred,
) -> Diagnostic {
    let source = match value.source() {
        Some(Origin::Reply { command, .. }) => format!("{command}'s reply"),
        Some(Origin::Element { command }) => format!("an element of the {command} reply"),
        _ => "a reply".to_string(),
    };
    Diagnostic::error(
        Lint::NumberStringComparison,
        cx.span_of(cmp.whole),
        format!(
            "`{}` is {source}, a string, or a number in its place; compared with a number, `{}` raises \"attempt to compare number with string\" whenever the reply is there",
            text(cx, expr),
            cmp.op
        ),
    )
    .with_label("a number in place of a nil reply does not make the reply a number")
    .with_help("convert the reply: `tonumber(redis.call(...)) or 0`")
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_comparison(cx, |cmp| {
        let (l, r) = (cx.types.of(cmp.lhs), cx.types.of(cmp.rhs));
        let cursor = |v: &Inferred| matches!(v.origin, Some(Origin::Cursor { .. }));
        if cursor(&l) || cursor(&r) {
            return;
        }
        let (number, string) = if numeric(&l) && textual(&r) {
            ((cmp.lhs, &l), (cmp.rhs, &r))
        } else if textual(&l) && numeric(&r) {
            ((cmp.rhs, &r), (cmp.lhs, &l))
        } else {
            if !cmp.is_equality() {
                let defaulted = if defaulted(&l) && numeric(&r) {
                    Some((cmp.lhs, &l))
                } else if numeric(&l) && defaulted(&r) {
                    Some((cmp.rhs, &r))
                } else {
                    None
                };
                if let Some((expr, value)) = defaulted {
                    report
                        .diagnostics
                        .push(reply_or_number(cx, cmp, expr, value));
                }
            }
            return;
        };
        // Name the side that says most: a reply or tonumber over a literal.
        let (subject, with) = if string.1.origin.is_some() && number.1.origin.is_none() {
            (describe(cx, string.0, string.1), "a number")
        } else {
            (describe(cx, number.0, number.1), "a string")
        };
        let (message, label) = if cmp.is_equality() {
            (
                format!(
                    "{subject}; compared with {with}, `{}` is always {}",
                    cmp.op,
                    cmp.always()
                ),
                "Lua never equates a number and a string",
            )
        } else {
            (
                format!(
                    "{subject}; compared with {with}, `{}` raises \"attempt to compare number with string\"",
                    cmp.op
                ),
                "Lua does not convert strings to numbers for `<`, `>`",
            )
        };
        report.diagnostics.push(
            Diagnostic::error(Lint::NumberStringComparison, cx.span_of(cmp.whole), message)
                .with_label(label)
                .with_help(
                    "convert one side: `tonumber(...)` the string, or `tostring(...)` the number",
                ),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::NumberStringComparison, source, 1, 1)
    }

    #[test]
    fn elements_unpacked_into_locals_keep_their_types() {
        assert_eq!(
            errors("local s, us = unpack(redis.call('TIME'))\nif s > 1700000000 then return 1 end\nreturn 0").len(),
            1
        );
        assert!(
            errors("local s, us = unpack(redis.call('TIME'))\nif tonumber(s) > 1700000000 then return 1 end\nreturn 0")
                .is_empty()
        );
    }

    #[test]
    fn replies_with_a_number_in_place_of_nil_ordered_against_numbers() {
        assert_eq!(
            errors(
                "local n = redis.call('GET', KEYS[1]) or 0\nif n > 5 then return 1 end\nreturn 0"
            ),
            [
                "`n` is GET's reply, a string, or a number in its place; compared with a number, `>` raises \"attempt to compare number with string\" whenever the reply is there"
            ]
        );
        // An element of an array reply, with its default.
        assert_eq!(
            errors("local r = redis.call('HMGET', KEYS[1], 'a')\nlocal a = r[1] or 0\nif 10 <= a then return 1 end\nreturn 0").len(),
            1
        );
        for source in [
            // Converted, or made a number by arithmetic first.
            "local n = tonumber(redis.call('GET', KEYS[1])) or 0\nif n > 5 then return 1 end\nreturn 0",
            "local n = (redis.call('GET', KEYS[1]) or 0) + 0\nif n > 5 then return 1 end\nreturn 0",
            // A default that is a string: compared as text (another lint).
            "local n = redis.call('GET', KEYS[1]) or '0'\nif n > ARGV[1] then return 1 end\nreturn 0",
            // Equality is left alone.
            "local n = redis.call('GET', KEYS[1]) or 0\nif n == 0 then return 1 end\nreturn 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn numbers_compared_with_strings() {
        assert_eq!(
            errors("if redis.call('INCR', KEYS[1]) == '1' then return 1 end return ARGV[1]"),
            [
                "INCR returns a number (an integer reply); compared with a string, `==` is always false"
            ]
        );
        assert_eq!(
            errors("if tonumber(redis.call('GET', KEYS[1])) > ARGV[1] then return 1 end return 0"),
            [
                "`tonumber(redis.call('GET', KEYS[1]))` is a number or nil; compared with a string, `>` raises \"attempt to compare number with string\""
            ]
        );
        assert_eq!(
            errors(
                "local v = redis.call('GET', KEYS[1])\nif v == 1 then return 1 end return ARGV[1]"
            ),
            [
                "GET returns a string or `false` (a nil reply); compared with a number, `==` is always false"
            ]
        );
        assert_eq!(
            errors(
                "local n = redis.call('LLEN', KEYS[1]) if n ~= ARGV[1] then return 1 end return 0"
            ),
            [
                "LLEN returns a number (an integer reply); compared with a string, `~=` is always true"
            ]
        );
        assert_eq!(
            errors("local limit = tonumber(ARGV[1]) local c = redis.call('GET', KEYS[1]) or '0'\nif limit <= c then return 1 end return 0").len(),
            1
        );
    }

    #[test]
    fn converted_or_unknown_operands_pass() {
        for source in [
            "if redis.call('INCR', KEYS[1]) == 1 then return 1 end return ARGV[1]",
            "if tonumber(redis.call('GET', KEYS[1])) > tonumber(ARGV[1]) then return 1 end return 0",
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return 0",
            "if redis.call('GET', KEYS[1]) == '1' then return 1 end return ARGV[1]",
            "local n = redis.call('GET', KEYS[1]) n = tonumber(n) or 0 if n > 5 then return 1 end return ARGV[1]",
            "local t = cjson.decode(ARGV[1]) if t.n == '1' then return 1 end return KEYS[1]",
            "local f = cjson.decode(ARGV[2]).f if f(1) == ARGV[1] then return 1 end return KEYS[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn a_guard_does_not_make_a_string_a_number() {
        for source in [
            // Through a local and an `and` guard.
            "local v = redis.call('GET', KEYS[1]) local limit = tonumber(ARGV[1])\nif v and v > limit then return 1 end return 0",
            // Through an early exit.
            "local v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nif v >= 10 then return 1 end return 0",
            // Through a field.
            "local t = {}\nt.count = redis.call('HGET', KEYS[1], 'n')\nif t.count and t.count > 3 then return 1 end return 0",
            // A score of a WITHSCORES reply, in a loop.
            "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nfor i = 2, #r, 2 do if r[i] > 100 then return 1 end end return 0",
            "local n = 0\nfor _, v in ipairs(redis.call('HVALS', KEYS[1])) do if v > n then n = tonumber(v) end end return n",
            // The seconds of TIME.
            "local now = redis.call('TIME')[1]\nif now > tonumber(ARGV[1]) then return 1 end return 0",
        ] {
            assert_eq!(errors(source).len(), 1, "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn converted_on_the_path_passes() {
        for source in [
            "local v = redis.call('GET', KEYS[1]) local limit = tonumber(ARGV[1])\nif v and tonumber(v) > limit then return 1 end return 0",
            "local v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nv = tonumber(v)\nif v >= 10 then return 1 end return 0",
            "local t = {}\nt.count = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')\nif t.count > 3 then return 1 end return 0",
            "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\nfor i = 2, #r, 2 do if tonumber(r[i]) > 100 then return 1 end end return 0",
            "local now = tonumber(redis.call('TIME')[1])\nif now > tonumber(ARGV[1]) then return 1 end return 0",
            "local v = redis.call('GET', KEYS[1])\nif type(v) == 'number' and v > 1 then return 1 end return 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
