//! `unpack_reply`: a command's array reply spread with `unpack`.
//!
//! `redis.call('DEL', unpack(redis.call('KEYS', p)))` breaks both ways: an
//! empty reply leaves DEL without a key ("wrong number of arguments"), and
//! one longer than Lua's C stack allows (about 8,000 values) raises "too
//! many results to unpack". Fires on `unpack` / `table.unpack` of a reply
//! that is an array (directly or through a local), spread as the last
//! arguments of a `redis.call`; not for replies as long as the request
//! (HMGET, MGET), nor for replies the call bounds (a `COUNT` or `LIMIT`
//! option, SPOP's or LPOP's count, a short literal LRANGE / ZRANGE range).
//! `unpack` pushes every element before the values are used, so a spread
//! elsewhere (the last argument of another function, `math.max(unpack(r))`,
//! the last element of a table constructor, a `return`) raises on a long
//! reply as well.
//!
//! A local table filled in a loop over such a reply (`for _, id in
//! ipairs(reply) do table.insert(out, id) end`, `out[#out + 1] = ...`)
//! counts as the reply: it may be as long. A warning: the reply may be
//! known to be small and non-empty.

use super::library_calls::each_library_call;
use super::typed::{command_args, text};
use super::{CallArg, Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Expression, Field, FunctionArgs, Return, TableConstructor};
use full_moon::visitors::Visitor;
use std::collections::{HashMap, HashSet};

/// Replies with one element per argument sent.
const SIZED: &[&str] = &["HMGET", "MGET", "SMISMEMBER", "ZMSCORE", "JSON.MGET"];

/// Where every value of a call is kept: the last argument of a call, the
/// last element of a table constructor, the last value returned; by the
/// offsets of the call there.
fn spread_positions(cx: &Context<'_>) -> HashSet<(usize, usize)> {
    struct Finder<'c, 'a> {
        cx: &'c Context<'a>,
        found: HashSet<(usize, usize)>,
    }
    impl Finder<'_, '_> {
        fn last(&mut self, expr: Option<&Expression>) {
            if let Some(Expression::FunctionCall(call)) = expr {
                let span = self.cx.span_of(call);
                self.found.insert((span.start.offset, span.end.offset));
            }
        }
    }
    impl Visitor for Finder<'_, '_> {
        fn visit_function_args(&mut self, args: &FunctionArgs) {
            if let FunctionArgs::Parentheses { arguments, .. } = args {
                self.last(arguments.iter().last());
            }
        }
        fn visit_table_constructor(&mut self, table: &TableConstructor) {
            if let Some(Field::NoKey(value)) = table.fields().iter().last() {
                self.last(Some(value));
            }
        }
        fn visit_return(&mut self, ret: &Return) {
            self.last(ret.returns().iter().last());
        }
    }
    let mut finder = Finder {
        cx,
        found: HashSet::new(),
    };
    cx.visit(&mut finder);
    finder.found
}

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    // The arguments' values, inferred once and only for a script that
    // unpacks a reply.
    let all_args = std::cell::OnceCell::new();
    let mut spreads = None;
    each_library_call(cx, |call| {
        if !matches!(call.name.as_str(), "unpack" | "table.unpack") {
            return;
        }
        // `unpack(t, i, j)` takes a slice: a batch, on purpose.
        let [table] = call.args.as_slice() else {
            return;
        };
        let mut value = cx.types.of(table);
        // A table filled from a reply, one element per round of a loop.
        let mut filled = None;
        if value.reply().is_none()
            && let Some(origin @ Origin::Reply { .. }) =
                cx.types.table_fields(table).and_then(|t| t.filled_from)
        {
            filled = Some(text(cx, table));
            value = Inferred::of_reply_array(origin);
        }
        let Some((command, shape, _)) = value.reply() else {
            return;
        };
        // A reply as long as the request (HMGET's fields) is not a risk,
        // nor one that a COUNT, a LIMIT or a literal range bounds.
        if SIZED.contains(&command)
            || bounded(cx, &value, all_args.get_or_init(|| command_args(cx)))
        {
            return;
        }
        // Only a spread: unpacked into locals, the script expects as many
        // values as the locals.
        let span = cx.span_of(call.call);
        let into_command = calls.iter().any(|c| {
            c.args
                .last()
                .is_some_and(|a| matches!(a, CallArg::Spread(s) if *s == span))
        });
        let spreads = spreads.get_or_insert_with(|| spread_positions(cx));
        if !into_command && !spreads.contains(&(span.start.offset, span.end.offset)) {
            return;
        }
        if !value.ty.intersects(Ty::ARRAY.union(Ty::PAIRS)) {
            return;
        }
        let what = match filled {
            Some(local) => format!(
                "`unpack` of `{local}`, filled in a loop over what {command} returns ({shape})"
            ),
            None => format!("`unpack` of what {command} returns ({shape})"),
        };
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::UnpackReply,
                cx.span_of(call.call),
                if into_command {
                    format!("{what}: it may be empty, or too long to unpack (about 8,000 values)")
                } else {
                    format!("{what}: it may be too long to unpack (about 8,000 values)")
                },
            )
            .with_label("raises \"too many results to unpack\" on a long reply")
            .with_help(
                "loop over it in batches of a few hundred, and skip the command when it is empty",
            ),
        );
    });
}

/// Commands whose optional count argument (after the key) bounds the reply.
const COUNTED: &[&str] = &[
    "SPOP",
    "SRANDMEMBER",
    "LPOP",
    "RPOP",
    "ZPOPMIN",
    "ZPOPMAX",
    "HRANDFIELD",
    "ZRANDMEMBER",
];

/// Commands whose reply is a slice `start stop` of a list or a sorted set.
const RANGES: &[&str] = &["LRANGE", "ZRANGE", "ZREVRANGE"];

/// The most values `unpack` gives (Lua 5.1's `LUAI_MAXCSTACK`): a literal
/// range shorter than this is bounded.
const SHORT_RANGE: i64 = 8_000;

/// Whether the call that made the reply `value` bounds its length: a
/// `COUNT` or `LIMIT` option, a count argument, or a short literal range.
fn bounded(cx: &Context<'_>, value: &Inferred, args: &HashMap<(usize, usize), Inferred>) -> bool {
    let Some(Origin::Reply { span, .. }) = &value.origin else {
        return false;
    };
    let Some(call) = cx.types.call_at(span.start.offset, span.end.offset) else {
        return false;
    };
    let Some(command) = call.command_name().map(str::to_ascii_uppercase) else {
        return false;
    };
    // An argument's value, when it is one known integer.
    let integer = |i: usize| -> Option<i64> {
        let arg = call.args.get(i)?;
        if let Some(text) = arg.literal() {
            return text.parse().ok();
        }
        let span = arg.span();
        let value = args.get(&(span.start.offset, span.end.offset))?;
        let range = value.range;
        (range.lo == range.hi && range.lo.fract() == 0.0 && range.lo.abs() < 1e15)
            .then_some(range.lo as i64)
    };
    let option = call.args.iter().skip(2).any(|a| {
        a.literal()
            .is_some_and(|w| w.eq_ignore_ascii_case("LIMIT") || w.eq_ignore_ascii_case("COUNT"))
    });
    if option {
        return true;
    }
    if COUNTED.contains(&command.as_str()) && call.args.len() >= 3 {
        return true;
    }
    if RANGES.contains(&command.as_str())
        && let (Some(start), Some(stop)) = (integer(2), integer(3))
    {
        let same_side = (start >= 0) == (stop >= 0);
        return same_side && stop.saturating_sub(start).saturating_add(1) < SHORT_RANGE;
    }
    false
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

    #[test]
    fn unbounded_replies_through_locals_fields_and_loops() {
        for source in [
            "local o = {}\no.ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1])\nredis.call('ZREM', KEYS[1], unpack(o.ids))",
            "for i = 1, 2 do local m = redis.call('LRANGE', KEYS[1], 0, -1) if #m > 0 then redis.call('DEL', unpack(m)) end end",
            "local m = redis.call('ZRANGE', KEYS[1], 0, 7999)\nredis.call('SADD', ARGV[1], unpack(m))",
            "local m = redis.call('LRANGE', KEYS[1], -9223372036854775807, -1)\nredis.call('RPUSH', ARGV[1], unpack(m))",
            "local m = redis.call('ZRANGE', KEYS[1], 0, 9223372036854775807)\nredis.call('SADD', ARGV[1], unpack(m))",
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
    fn tables_filled_in_a_loop_over_an_unbounded_reply() {
        for source in [
            // `table.insert` in a branch of a loop over a local's reply.
            "local out = {}\nlocal ids = redis.call('SMEMBERS', KEYS[1])\nfor _, id in ipairs(ids) do\n  if redis.call('EXISTS', id) == 0 then table.insert(out, id) end\nend\nif #out > 0 then redis.call('SREM', KEYS[1], unpack(out)) end\nreturn #out",
            // `t[#t + 1]` of a computed value, in a numeric loop over the reply's length.
            "local keys = {}\nlocal ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1])\nfor i = 1, #ids do keys[#keys + 1] = 'job:' .. ids[i] end\nredis.call('DEL', unpack(keys))",
            // Nested in another loop.
            "local names = {}\nfor _, k in ipairs(redis.call('KEYS', ARGV[1])) do\n  for j = 1, 2 do names[#names + 1] = k .. j end\nend\nreturn redis.call('EXISTS', unpack(names))",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("filled in a loop over what"), "{found:?}");
        }
    }

    #[test]
    fn tables_filled_from_bounded_or_no_replies_pass() {
        for source in [
            // The reply is bounded by LIMIT.
            "local out = {}\nlocal ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1], 'LIMIT', 0, 50)\nfor _, id in ipairs(ids) do table.insert(out, id) end\nredis.call('ZREM', KEYS[1], unpack(out))",
            // A loop over the inputs.
            "local out = {}\nfor i = 1, #ARGV do out[#out + 1] = ARGV[i] .. ':x' end\nreturn redis.call('DEL', KEYS[1], unpack(out))",
            // Filled from a reply, but unpacked in batches.
            "local out = {}\nfor _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do table.insert(out, id) end\nfor i = 1, #out, 100 do redis.call('SREM', ARGV[1], unpack(out, i, math.min(i + 99, #out))) end",
            // Filled in a loop over a reply, then unpacked into locals.
            "local out = {}\nfor _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do table.insert(out, id) end\nlocal a, b = unpack(out)\nreturn {a, b, ARGV[1]}",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn replies_spread_into_functions_tables_and_returns() {
        for source in [
            // The greatest score, through a local.
            "local scores = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1])\nreturn math.max(unpack(scores))",
            // A copy, in a branch.
            "local copy = {}\nif ARGV[1] == 'x' then copy = {unpack(redis.call('SMEMBERS', KEYS[1]))} end\nreturn #copy",
            // Every value returned, from a table filled in a loop.
            "local out = {}\nfor _, k in ipairs(redis.call('KEYS', ARGV[1])) do out[#out + 1] = k end\nreturn unpack(out)",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].ends_with("it may be too long to unpack (about 8,000 values)"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn unpacked_into_locals_or_not_last_passes() {
        for source in [
            "local first = unpack(redis.call('LRANGE', KEYS[1], 0, -1))\nreturn first .. ARGV[1]",
            "return {unpack(redis.call('SMEMBERS', KEYS[1])), ARGV[1]}",
            "return math.max(unpack(redis.call('ZRANGE', KEYS[1], 0, 9)))",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn bounded_replies_pass() {
        for source in [
            "local o = {}\no.ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1], 'LIMIT', 0, 100)\nredis.call('ZREM', KEYS[1], unpack(o.ids))",
            "for i = 1, 2 do local m = redis.call('LRANGE', KEYS[1], 0, 99) if #m > 0 then redis.call('DEL', unpack(m)) end end",
            "local m = redis.call('SPOP', KEYS[1], 10)\nredis.call('SADD', ARGV[1], unpack(m))",
            "local r = redis.call('SSCAN', KEYS[1], 0, 'COUNT', 100)\nredis.call('SREM', KEYS[1], unpack(r[2]))",
            "local m = redis.call('ZRANGE', KEYS[1], -10, -1)\nredis.call('SADD', ARGV[1], unpack(m))",
            "local m = redis.call('LRANGE', KEYS[1], 0, 6999)\nredis.call('RPUSH', ARGV[1], unpack(m))",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
