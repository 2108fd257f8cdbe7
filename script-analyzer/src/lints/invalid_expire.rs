//! `invalid_expire`: an expire time Redis always refuses.
//!
//! `SET k v EX 0`, `SETEX k 0 v`, `GETEX k PX -1` fail with "invalid expire
//! time": SET, SETEX, PSETEX and GETEX need a positive time (EXPIRE, which
//! deletes the key for a time not in the future, does not). Fires on a
//! literal time of 0 or less, on a literal that is not an integer, and on
//! a computed time that is never positive (errors); and warns on a time
//! that arithmetic can make 0 or negative for some inputs: a rounded
//! division (`math.floor(ms / 1000)` is 0 below a second), or a difference
//! (`deadline - now`), also for EXPIRE and PEXPIRE when rounded, where 0
//! deletes the key at once. A TTL or PTTL reply passed on (to copy an
//! expire to another key) is -1 for a key without an expire and -2 for a
//! missing key, unless a test on the path (`if ttl > 0`) rules them out:
//! refused by SET, and deleting the key for EXPIRE.

use super::typed::command_args;
use super::{CallArg, Context, RedisCall};
use crate::facts::{EXPIRE_QUERIES, Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report, Span};

/// Why a computed time may be 0 or negative, if the value facts say so.
fn may_not_be_positive(value: &Inferred, rounded_only: bool) -> Option<&'static str> {
    // Nil on some paths (`tonumber` of text) is `maybe_false`'s; the number
    // on the others may still be 0.
    if !value.ty.minus(Ty::NIL).within(Ty::NUMBER) || value.range.lo > 0.0 {
        return None;
    }
    match &value.origin {
        Some(Origin::Reply { command, .. }) if EXPIRE_QUERIES.contains(&command.as_str()) => Some(
            "it is a TTL-style reply, which is -1 for a key without an expire and -2 for a missing key",
        ),
        Some(Origin::Rounded { .. }) => {
            Some("it is a rounded division, which is 0 for inputs below the divisor")
        }
        Some(Origin::Difference { .. }) if !rounded_only => Some(
            "it is a difference, which is 0 or negative when the first value is not the larger",
        ),
        _ => None,
    }
}

/// A computed time: an error if never positive, a warning if it may not be.
fn computed(command: &str, span: Span, value: &Inferred, refused: bool) -> Option<Diagnostic> {
    if refused && value.ty.within(Ty::NUMBER) && value.range.hi <= 0.0 {
        return Some(
            Diagnostic::error(
                Lint::InvalidExpire,
                span,
                format!("{command} refuses this expire time: it is never positive"),
            )
            .with_label("Redis replies \"invalid expire time\"")
            .with_help("give a positive whole number"),
        );
    }
    let why = may_not_be_positive(value, !refused)?;
    let effect = if refused {
        "Redis refuses it with \"invalid expire time\""
    } else {
        "the key is deleted at once"
    };
    Some(
        Diagnostic::warning(
            Lint::InvalidExpire,
            span,
            format!("this {command} expire time may be 0 or negative: {why}"),
        )
        .with_label(effect)
        .with_help("bound it: `math.max(1, ...)`, or round up with `math.ceil`"),
    )
}

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    // The arguments' values, inferred once and only for a script that
    // sets an expire time.
    let all_values = std::cell::OnceCell::new();
    let values = || all_values.get_or_init(|| command_args(cx));
    for call in calls {
        if let Some(command) = call.command_name().map(str::to_ascii_uppercase)
            && matches!(command.as_str(), "EXPIRE" | "PEXPIRE")
            && let Some(CallArg::Expr(span) | CallArg::Spread(span)) = call.args.get(2)
            && let Some(value) = values().get(&(span.start.offset, span.end.offset))
            && let Some(found) = computed(&command, *span, value, false)
        {
            report.diagnostics.push(found);
        }
    }
    for call in calls {
        let Some(command) = call.command_name().map(str::to_ascii_uppercase) else {
            continue;
        };
        // The positions (in `call.args`, the name being 0) holding a time.
        let times: Vec<usize> = match command.as_str() {
            "SETEX" | "PSETEX" => vec![2],
            "SET" | "GETEX" => {
                // The flag comes after the key (GETEX) or the value (SET).
                let first = if command == "SET" { 4 } else { 3 };
                (first..call.args.len())
                    .filter(|&i| {
                        call.args[i - 1].literal().is_some_and(|flag| {
                            matches!(
                                flag.to_ascii_uppercase().as_str(),
                                "EX" | "PX" | "EXAT" | "PXAT"
                            )
                        })
                    })
                    .collect()
            }
            _ => continue,
        };
        for i in times {
            if let Some(CallArg::Expr(span) | CallArg::Spread(span)) = call.args.get(i)
                && let Some(value) = values().get(&(span.start.offset, span.end.offset))
                && let Some(found) = computed(&command, *span, value, true)
            {
                report.diagnostics.push(found);
            }
            let Some(CallArg::Literal(text, span)) = call.args.get(i) else {
                continue;
            };
            let why = match text.trim().parse::<i64>() {
                Ok(n) if n <= 0 => format!("`{text}` is not a positive time"),
                Ok(_) => continue,
                Err(_) => format!("`{text}` is not an integer"),
            };
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::InvalidExpire,
                    *span,
                    format!("{command} refuses this expire time: {why}"),
                )
                .with_label("Redis replies \"invalid expire time\" (or \"not an integer\")")
                .with_help("give a positive whole number, or drop the option to keep the key without a time limit"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::InvalidExpire, source, 1, 1)
    }

    #[test]
    fn times_redis_refuses() {
        assert_eq!(
            errors("return redis.call('SET', KEYS[1], ARGV[1], 'EX', 0)"),
            ["SET refuses this expire time: `0` is not a positive time"]
        );
        assert_eq!(
            errors("return redis.call('setex', KEYS[1], '-1', ARGV[1])"),
            ["SETEX refuses this expire time: `-1` is not a positive time"]
        );
        assert_eq!(
            errors("return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'px', '1.5')"),
            ["SET refuses this expire time: `1.5` is not an integer"]
        );
        assert_eq!(
            errors("return redis.call('GETEX', KEYS[1], 'EX', 0) .. ARGV[1]").len(),
            1
        );
    }

    #[test]
    fn positive_or_computed_times_pass() {
        for source in [
            "return redis.call('SET', KEYS[1], ARGV[1], 'EX', 10)",
            "return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[1])",
            "return redis.call('EXPIRE', KEYS[1], 0) .. ARGV[1]",
            // The value may be the word "EX".
            "return redis.call('SET', KEYS[1], 'EX', 'NX') .. ARGV[1]",
            "return redis.call('SETEX', KEYS[1], 60, ARGV[1])",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    fn warnings(source: &str) -> Vec<String> {
        crate::lints::test_util::lint(Lint::InvalidExpire, source, 1, 1)
            .into_iter()
            .filter(|d| d.severity == crate::Severity::Warning)
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn times_arithmetic_can_make_zero_or_negative() {
        for source in [
            // Through a local.
            "local s = math.floor(tonumber(ARGV[1]) / 1000)\nreturn redis.call('SET', KEYS[1], 'v', 'EX', s)",
            // Through a field.
            "local o = {}\no.ttl = tonumber(ARGV[1]) - redis.call('TIME')[1]\nreturn redis.call('SETEX', KEYS[1], o.ttl, 'v')",
            // In a loop.
            "for i = 1, 3 do redis.call('EXPIRE', KEYS[1], math.floor(tonumber(ARGV[1]) / 1000)) end",
            // Rounded on one path, an input (nil when not a number) on another.
            "local s = tonumber(ARGV[1])\nif redis.call('EXISTS', KEYS[1]) == 1 then s = math.floor(s / 1000) end\nreturn redis.call('SET', KEYS[1], 'v', 'EX', s)",
            // Past a branch that does not bound it.
            "local s = math.floor(tonumber(ARGV[1]) / 1000)\nif s > 100000 then s = 100000 end\nreturn redis.call('SET', KEYS[1], 'v', 'EX', s)",
            // Passed to the script's own function.
            "local function put(k, ttl) return redis.call('SET', k, 'v', 'EX', ttl) end\nreturn put(KEYS[1], math.floor(tonumber(ARGV[1]) / 1000))",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
        // Past a branch that leaves only times of 0 or less.
        assert_eq!(
            errors(
                "local s = tonumber(ARGV[1]) if s > 0 then return end return redis.call('SET', KEYS[1], 'v', 'EX', s)"
            ),
            ["SET refuses this expire time: it is never positive"]
        );
    }

    #[test]
    fn ttl_replies_passed_on_may_be_minus_1_or_minus_2() {
        for source in [
            // Copied to another key through a local.
            "local ttl = redis.call('TTL', KEYS[1])\nredis.call('SET', ARGV[1], 'v', 'EX', ttl)",
            // Through a field, to EXPIRE (which deletes the key for -1).
            "local o = {}\no.left = redis.call('PTTL', KEYS[1])\nredis.call('PEXPIRE', ARGV[1], o.left)",
            // In a loop, past a branch that tests something else.
            "for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  local ttl = redis.call('TTL', k)\n  if k ~= ARGV[1] then redis.call('SETEX', k .. ':copy', ttl, 'v') end\nend",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].contains("-1 for a key without an expire"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn ttl_replies_tested_first_pass() {
        for source in [
            "local ttl = redis.call('TTL', KEYS[1])\nif ttl > 0 then redis.call('SET', ARGV[1], 'v', 'EX', ttl) end",
            "local ttl = redis.call('PTTL', KEYS[1])\nif ttl < 0 then return 0 end\nredis.call('PEXPIRE', ARGV[1], ttl + 1)",
            "local ttl = redis.call('TTL', KEYS[1])\nredis.call('EXPIRE', ARGV[1], math.max(ttl, 60))",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn bounded_times_pass() {
        for source in [
            "local s = math.max(1, math.floor(tonumber(ARGV[1]) / 1000))\nreturn redis.call('SET', KEYS[1], 'v', 'EX', s)",
            "local s = math.ceil(tonumber(ARGV[1]) / 1000)\nreturn redis.call('SET', KEYS[1], 'v', 'PX', tonumber(ARGV[1]))",
            "local o = {}\no.ttl = tonumber(ARGV[1]) - redis.call('TIME')[1]\nif o.ttl <= 0 then return 0 end\nreturn redis.call('SETEX', KEYS[1], o.ttl, 'v')",
            "local s = math.floor(tonumber(ARGV[1]) / 1000)\nif s < 1 then s = 1 end\nreturn redis.call('SET', KEYS[1], 'v', 'EX', s)",
            "local ttl = tonumber(ARGV[1]) - 5\nreturn redis.call('EXPIRE', KEYS[1], ttl)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
