//! `lexical_comparison`: a reply compared with `<`, `>` as a string.
//!
//! Lua compares two strings character by character: `'10' < '9'`. A reply
//! that holds a number as text (GET of a counter, HGET, ZSCORE, which
//! sends a double as a string) compared with an input or another such
//! value is compared lexically, not numerically. Fires on `<`, `<=`, `>`,
//! `>=` between a command's string reply (or an element of an array reply:
//! HMGET's, TIME's) and `ARGV[n]`, another such string, or a string literal
//! that holds a number, followed through locals, fields, loops and
//! branches. A warning: the strings may be meant to sort as text.

use super::typed::{describe, each_comparison};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Expression, Prefix, Var};
use full_moon::tokenizer::TokenType;

fn textual(value: &Inferred) -> bool {
    value.ty.intersects(Ty::STRING) && value.ty.within(Ty::STRING.union(Ty::FALSY))
}

/// A string Redis gave: a reply, or an element of an array reply.
fn from_redis(value: &Inferred) -> bool {
    value.from_redis()
}

/// `ARGV[n]` (also through locals), or a string literal holding a number.
fn numeric_text(cx: &Context<'_>, expr: &Expression, value: &Inferred) -> bool {
    if matches!(&value.origin, Some(Origin::Input { name }) if name.starts_with("ARGV")) {
        return true;
    }
    match expr {
        Expression::String(token) => match token.token_type() {
            TokenType::StringLiteral { literal, .. } => literal.trim().parse::<f64>().is_ok(),
            _ => false,
        },
        Expression::Var(Var::Expression(var)) => {
            matches!(
                var.prefix(),
                Prefix::Name(name) if name.token().to_string() == "ARGV" && cx.model.is_global(name)
            ) && var.suffixes().count() == 1
        }
        _ => false,
    }
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_comparison(cx, |cmp| {
        if cmp.is_equality() {
            return;
        }
        let (l, r) = (cx.types.of(cmp.lhs), cx.types.of(cmp.rhs));
        if !textual(&l) || !textual(&r) {
            return;
        }
        let (reply, other, other_value) = if from_redis(&l) {
            (cmp.lhs, cmp.rhs, &r)
        } else if from_redis(&r) {
            (cmp.rhs, cmp.lhs, &l)
        } else {
            return;
        };
        if !from_redis(other_value) && !numeric_text(cx, other, other_value) {
            return;
        }
        let value = if std::ptr::eq(reply, cmp.lhs) { &l } else { &r };
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::LexicalComparison,
                cx.span_of(cmp.whole),
                format!(
                    "{}; `{}` between two strings compares them as text: '10' < '9'",
                    describe(cx, reply, value),
                    cmp.op
                ),
            )
            .with_label("compared character by character")
            .with_help("compare numbers: `tonumber(a) < tonumber(b)`"),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn warnings(source: &str) -> Vec<String> {
        let found = lint(Lint::LexicalComparison, source, 1, 1);
        assert!(found.iter().all(|d| d.severity == Severity::Warning));
        found.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn replies_compared_as_text() {
        assert_eq!(
            warnings("if redis.call('ZSCORE', KEYS[1], 'm') > ARGV[1] then return 1 end return 0"),
            [
                "ZSCORE returns a string or `false` (a nil reply); `>` between two strings compares them as text: '10' < '9'"
            ]
        );
        assert_eq!(
            warnings("local v = redis.call('GET', KEYS[1]) or '0'\nif v >= '10' then return ARGV[1] end return 0").len(),
            1,
            "a default leaves the reply a string where it is not the default"
        );
        assert_eq!(
            warnings("local v = redis.call('HGET', KEYS[1], 'n')\nif v and v < '10' then return ARGV[1] end return 0").len(),
            1
        );
    }

    #[test]
    fn text_from_redis_followed_to_the_comparison() {
        for source in [
            // The input through a local.
            "local v = redis.call('GET', KEYS[1])\nlocal limit = ARGV[1]\nif v and v > limit then return 1 end\nreturn 0",
            // TIME's seconds, through a field.
            "local o = {}\no.now = redis.call('TIME')[1]\nif o.now >= ARGV[1] then return 1 end\nreturn 0",
            // Two elements of HMGET, each tested first.
            "local r = redis.call('HMGET', KEYS[1], 'seen', 'max')\nif r[1] and r[2] and r[1] > r[2] then return 1 end\nreturn ARGV[1]",
            // In a loop over LRANGE's elements.
            "local n = 0\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do if v < ARGV[1] then n = n + 1 end end\nreturn n",
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
    fn numbers_and_text_pass() {
        for source in [
            "if tonumber(redis.call('ZSCORE', KEYS[1], 'm')) > tonumber(ARGV[1]) then return 1 end return 0",
            "local v = redis.call('GET', KEYS[1]) if v and v < 'm' then return ARGV[1] end return 0",
            "if ARGV[1] < '10' then return KEYS[1] end return 0",
            // A key name is not a number.
            "local v = redis.call('GET', KEYS[1])\nlocal name = KEYS[1]\nif v and v > name then return 1 end return ARGV[1]",
            // Both converted, in a loop.
            "for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do if tonumber(v) < tonumber(ARGV[1]) then return 1 end end return 0",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
