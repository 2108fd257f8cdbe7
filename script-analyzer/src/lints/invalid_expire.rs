//! `invalid_expire`: an expire time Redis always refuses.
//!
//! `SET k v EX 0`, `SETEX k 0 v`, `GETEX k PX -1` fail with "invalid expire
//! time": SET, SETEX, PSETEX and GETEX need a positive time (EXPIRE, which
//! deletes the key for a time not in the future, does not). Fires on a
//! literal time of 0 or less, and on a literal that is not an integer.

use super::{CallArg, Context, RedisCall};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(_cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
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
}
