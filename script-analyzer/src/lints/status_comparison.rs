//! `status_comparison`: a status reply compared with a string.
//!
//! A status reply (`+OK`, `+PONG`, `TYPE`'s `+string`) reaches Lua as a table
//! `{ok = "OK"}`, so `redis.call('SET', k, v) == 'OK'` is always false,
//! and so is a comparison with a number (`== 1`) or with `true`, through
//! locals and fields. Compare its `ok` field, or test the reply as a
//! condition.

use super::typed::{describe, each_comparison};
use super::{Context, RedisCall};
use crate::facts::Ty;
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() {
            return;
        }
        for (value, other) in [(cmp.lhs, cmp.rhs), (cmp.rhs, cmp.lhs)] {
            let inferred = cx.types.of(value);
            let status = inferred.reply().is_some()
                && inferred.ty.intersects(Ty::STATUS)
                && inferred
                    .ty
                    .within(Ty::STATUS.union(Ty::FALSE).union(Ty::ERROR));
            let other = cx.types.of(other).ty;
            let what = if other.within(Ty::STRING) {
                "a string"
            } else if other.within(Ty::NUMBER) {
                "a number"
            } else if other == Ty::TRUE {
                "`true`"
            } else {
                continue;
            };
            if !status {
                continue;
            }
            let message = format!(
                "{}; comparing it with {what}, `{}` is always {}",
                describe(cx, value, &inferred),
                cmp.op,
                cmp.always()
            );
            report.diagnostics.push(
                Diagnostic::error(Lint::StatusComparison, cx.span_of(cmp.whole), message)
                    .with_label(format!("a table is never equal to {what}"))
                    .with_help(
                        "compare its `ok` field (`redis.call(...).ok == 'OK'`), or test the reply as a condition",
                    ),
            );
            return;
        }
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::StatusComparison, source, 1, 1)
    }

    #[test]
    fn status_replies_compared_with_strings() {
        assert_eq!(
            errors("if redis.call('SET', KEYS[1], ARGV[1]) == 'OK' then return 1 end return 0"),
            [
                "SET returns a status table (`{ok = ...}`); comparing it with a string, `==` is always false"
            ]
        );
        assert_eq!(
            errors("local r = redis.call('SET', KEYS[1], ARGV[1], 'NX')\nif r ~= 'OK' then return 0 end return 1").len(),
            1
        );
        assert_eq!(
            errors("if redis.call('TYPE', KEYS[1]) == 'none' then return ARGV[1] end return 0")
                .len(),
            1
        );
    }

    #[test]
    fn status_replies_compared_with_numbers_and_true() {
        for (source, expected) in [
            (
                "local s = redis.call('SET', KEYS[1], ARGV[1], 'NX')\nif s == 1 then return 1 end\nreturn 0",
                "SET returns `false` (a nil reply) or a status table (`{ok = ...}`); comparing it with a number, `==` is always false",
            ),
            (
                "local o = {}\no.r = redis.call('SET', KEYS[1], ARGV[1], 'XX')\nif o.r ~= true then return 0 end\nreturn 1",
                "SET returns `false` (a nil reply) or a status table (`{ok = ...}`); comparing it with `true`, `~=` is always true",
            ),
        ] {
            assert_eq!(errors(source), [expected], "{source}");
        }
    }

    #[test]
    fn status_replies_compared_with_false_pass() {
        for source in [
            "local s = redis.call('SET', KEYS[1], ARGV[1], 'NX')\nif s == false then return 0 end\nreturn 1",
            "if redis.call('SET', KEYS[1], ARGV[1], 'NX') ~= false then return 1 end return 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn fields_and_other_replies_pass() {
        for source in [
            "if redis.call('SET', KEYS[1], ARGV[1]).ok == 'OK' then return 1 end return 0",
            "if redis.call('TYPE', KEYS[1]).ok == 'none' then return ARGV[1] end return 0",
            "if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 1 end return 0",
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return 0",
            "if redis.call('PING', ARGV[1]) == 'x' then return 1 end return KEYS[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
