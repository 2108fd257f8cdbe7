//! `literal_key`: a key given to a command as a string literal rather than
//! through `KEYS`. Redis Cluster routes a script by its `KEYS`, and ACL key
//! patterns are checked against them; a key spelled in the script escapes
//! both, and works on a single node only by luck.
//!
//! Which arguments are keys comes from the command's key specifications
//! (`XREAD ... STREAMS a b 0 0`: `a` and `b`); keys built from `KEYS`
//! (`KEYS[1] .. ':x'`) or from `ARGV` are not reported, nor is the empty
//! string (MIGRATE's "no key" placeholder).
//!
//! On a standalone server such a script runs correctly, so the finding is a
//! warning there; it is an error when the script may run on a cluster
//! ([`Options::cluster`](crate::Options::cluster)), as `#[redis_script]`'s
//! scripts may.

use super::{CallArg, Context, RedisCall};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let level = if cx.options.cluster {
        Diagnostic::error
    } else {
        Diagnostic::warning
    };
    for call in calls {
        let Some(command) = call.command() else {
            continue;
        };
        let shapes = call.arg_shapes();
        for position in command.key_positions(&shapes) {
            let Some(arg @ CallArg::Literal(value, _)) = call.args.get(position + 1) else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            report.diagnostics.push(
                level(
                    Lint::LiteralKey,
                    arg.span(),
                    "key passed as a string literal; take it from KEYS so Redis Cluster can route the script and ACL key patterns apply",
                )
                .with_label(format!("`{value}` is a key of `{}`", call.resolved_command().unwrap_or(command).display_name()))
                .with_help("pass the key in KEYS and use `KEYS[n]` here"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::{lint, lint_with, messages};
    use crate::{Lint, Options, Severity};

    fn count(source: &str) -> usize {
        messages(Lint::LiteralKey, source, 3, 3).len()
    }

    #[test]
    fn keys_from_keys_pass() {
        assert_eq!(count("redis.call('GET', KEYS[1])"), 0);
        assert_eq!(
            count("redis.call('SET', KEYS[1], 'literal value', 'PX', 100)"),
            0
        );
        assert_eq!(count("redis.call('HSET', KEYS[1], 'field', 'value')"), 0);
        assert_eq!(count("redis.call('SET', KEYS[3] .. ':' .. ARGV[1], 1)"), 0);
        assert_eq!(count("redis.call('PUBLISH', 'channel', 'message')"), 0);
        assert_eq!(
            count("redis.call('XREAD', 'COUNT', '10', 'STREAMS', KEYS[1], '0')"),
            0
        );
        assert_eq!(
            count("redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], KEYS[3], 'WEIGHTS', 1, 2)"),
            0
        );
        assert_eq!(count("redis.call('DEL', unpack(KEYS))"), 0);
        assert_eq!(count("redis.call(ARGV[1], 'x')"), 0);
    }

    #[test]
    fn an_error_on_a_cluster_a_warning_on_a_standalone_server() {
        let source = "redis.call('LPUSH', 'queue:default', ARGV[1])";
        let severity = |cluster| {
            let options = Options {
                cluster,
                ..Options::default()
            };
            let found = lint_with(Lint::LiteralKey, source, &options);
            assert_eq!(found.len(), 1);
            found[0].severity
        };
        assert_eq!(severity(true), Severity::Error);
        assert_eq!(severity(false), Severity::Warning);
    }

    #[test]
    fn literal_keys_are_reported() {
        let d = lint(
            Lint::LiteralKey,
            "redis.call('SADD', 'queues', ARGV[1])",
            0,
            1,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].message,
            "key passed as a string literal; take it from KEYS so Redis Cluster can route the script and ACL key patterns apply"
        );
        assert_eq!(d[0].label.as_deref(), Some("`queues` is a key of `SADD`"));
        let span = d[0].primary_span().unwrap();
        assert_eq!((span.start.column, span.end.column), (20, 28));
        assert_eq!(count("redis.call('MSET', 'a', 1, KEYS[1], 2)"), 1);
        assert_eq!(count("redis.call('RENAME', KEYS[1], 'b')"), 1);
        assert_eq!(
            count("redis.call('ZUNIONSTORE', KEYS[1], 2, 'a', KEYS[2])"),
            1
        );
        assert_eq!(
            count("redis.call('XREAD', 'COUNT', 10, 'STREAMS', 's1', KEYS[1], '0', '0')"),
            1
        );
        assert_eq!(count("redis.call('OBJECT', 'ENCODING', 'k')"), 1);
        assert_eq!(count("redis.call('EXISTS', 'a', 'b')"), 2);
    }
}
