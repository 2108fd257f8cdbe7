//! `nil_comparison`: a command's reply compared with `nil`.
//!
//! A nil reply reaches Lua as `false`, never `nil`, so
//! `redis.call('GET', k) == nil` is always false (and `~= nil` always true).
//! Fires when the other operand is a reply that can never be `nil` where
//! it is compared (in place, or held by a local or a field).

use super::typed::{describe, each_comparison};
use super::{Context, RedisCall};
use crate::facts::Ty;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() {
            return;
        }
        let value = match (is_nil(cmp.lhs), is_nil(cmp.rhs)) {
            (false, true) => cmp.lhs,
            (true, false) => cmp.rhs,
            _ => return,
        };
        let inferred = cx.types.of(value);
        if inferred.reply().is_none()
            || inferred.ty.is_any()
            || inferred.ty == Ty::EMPTY
            || inferred.ty.intersects(Ty::NIL)
        {
            return;
        }
        let message = format!(
            "{}, never nil: `{} nil` is always {}",
            describe(cx, value, &inferred),
            cmp.op,
            cmp.always()
        );
        report.diagnostics.push(
            Diagnostic::error(Lint::NilComparison, cx.span_of(cmp.whole), message)
                .with_label("a nil reply arrives in Lua as `false`")
                .with_help("test it as a condition (`if not v then`), or compare with `false`"),
        );
    });
}

fn is_nil(expr: &Expression) -> bool {
    matches!(expr, Expression::Symbol(t) if t.token().to_string() == "nil")
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
