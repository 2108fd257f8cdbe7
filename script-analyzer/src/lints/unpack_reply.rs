//! `unpack_reply`: a command's array reply spread with `unpack`.
//!
//! `redis.call('DEL', unpack(redis.call('KEYS', p)))` breaks both ways: an
//! empty reply leaves DEL without a key ("wrong number of arguments"), and
//! one longer than Lua's C stack allows (about 8,000 values) raises "too
//! many results to unpack". Fires on `unpack` / `table.unpack` of a reply
//! that is an array (directly or through a local), spread as the last
//! arguments of a `redis.call`; not for replies as long as the request
//! (HMGET, MGET). A warning: the reply may be known to be small and
//! non-empty.

use super::library_calls::each_library_call;
use super::{CallArg, Context, RedisCall};
use crate::facts::Ty;
use crate::{Diagnostic, Lint, Report};

/// Replies with one element per argument sent.
const SIZED: &[&str] = &["HMGET", "MGET", "SMISMEMBER", "ZMSCORE", "JSON.MGET"];

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    each_library_call(cx, |call| {
        if !matches!(call.name.as_str(), "unpack" | "table.unpack") {
            return;
        }
        // `unpack(t, i, j)` takes a slice: a batch, on purpose.
        let [table] = call.args.as_slice() else {
            return;
        };
        let value = cx.types.of(table);
        let Some((command, shape, _)) = value.reply() else {
            return;
        };
        // A reply as long as the request (HMGET's fields) is not a risk.
        if SIZED.contains(&command) {
            return;
        }
        // Only a spread into a command: unpacked into locals, the values
        // are as many as the locals.
        let span = cx.span_of(call.call);
        let spread = calls.iter().any(|c| {
            c.args
                .last()
                .is_some_and(|a| matches!(a, CallArg::Spread(s) if *s == span))
        });
        if !spread {
            return;
        }
        if !value.ty.intersects(Ty::ARRAY.union(Ty::PAIRS)) {
            return;
        }
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::UnpackReply,
                cx.span_of(call.call),
                format!("`unpack` of what {command} returns ({shape}): it may be empty, or too long to unpack (about 8,000 values)"),
            )
            .with_label("raises \"too many results to unpack\" on a long reply")
            .with_help("loop over it in batches of a few hundred, and skip the command when it is empty"),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn warnings(source: &str) -> Vec<String> {
        messages(Lint::UnpackReply, source, 1, 1)
    }

    #[test]
    fn replies_unpacked() {
        assert_eq!(
            warnings("return redis.call('DEL', unpack(redis.call('KEYS', ARGV[1]))) + #KEYS[1]"),
            [
                "`unpack` of what KEYS returns (an array table): it may be empty, or too long to unpack (about 8,000 values)"
            ]
        );
        assert_eq!(
            warnings("local members = redis.call('SMEMBERS', KEYS[1])\nreturn redis.call('SADD', ARGV[1], table.unpack(members))").len(),
            1
        );
    }

    #[test]
    fn inputs_and_batches_pass() {
        for source in [
            "return redis.call('DEL', unpack(KEYS)) .. ARGV[1]",
            "local state, group = unpack(redis.call('HMGET', KEYS[1], 'state', 'group')) return {state, group, ARGV[1]}",
            "local a, b = unpack(redis.call('LRANGE', KEYS[1], 0, 1)) return {a, b, ARGV[1]}",
            "return redis.call('DEL', KEYS[1], unpack(redis.call('HMGET', ARGV[1], 'a', 'b')))",
            "local t = {ARGV[1]} return redis.call('DEL', KEYS[1], unpack(t))",
            "local m = redis.call('SMEMBERS', KEYS[1]) for i = 1, #m, 100 do redis.call('SREM', ARGV[1], unpack(m, i, math.min(i + 99, #m))) end return 1",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
