//! `argv_pattern`: an input used as a Lua pattern.
//!
//! `string.find`, `match`, `gmatch` and `gsub` read their pattern argument
//! as a Lua pattern: in `string.find(s, ARGV[1])`, a caller's `.`, `%`,
//! `-`, `(`, `[` are magic (`a-b` never matches itself; `%` at the end
//! raises "malformed pattern"). Fires on `KEYS[n]` / `ARGV[n]`, or a string
//! built from one by `..` (`'^' .. ARGV[1]`, `prefix .. '.*'`), passed as
//! the pattern, through locals, fields, loops and branches; unless
//! `string.find` is asked for a plain search (its fourth argument `true`).
//! A string escaped first (`x:gsub('%p', '%%%0')`) is no longer the input.
//! Text from Redis (a reply, an element of one: a member, a key that KEYS
//! or SCAN found) used as the pattern is data too, and fires as well.
//! A warning: the input may be a pattern on purpose.

use super::library_calls::each_library_call;
use super::typed::text;
use super::{Context, RedisCall};
use crate::facts::{Origin, Ty, unparenthesized};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;

const FUNCTIONS: &[&str] = &["find", "match", "gmatch", "gsub"];

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_library_call(cx, |call| {
        let (function, pattern, plain) = match call.name.split_once(['.', ':']) {
            Some(("string", f)) if FUNCTIONS.contains(&f) => {
                (f, call.args.get(1), call.args.get(3))
            }
            Some(("", f)) if FUNCTIONS.contains(&f) => (f, call.args.first(), call.args.get(2)),
            _ => return,
        };
        let Some(pattern) = pattern.map(|p| unparenthesized(p)) else {
            return;
        };
        let Some(input) = input_name(cx, pattern) else {
            return;
        };
        if function == "find"
            && plain.is_some_and(|p| !matches!(unparenthesized(p), Expression::Symbol(t) if matches!(t.token().to_string().as_str(), "nil" | "false")))
        {
            return;
        }
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::ArgvPattern,
                cx.span_of(pattern),
                format!("{input} is used as a Lua pattern by `{function}`: its `.`, `%`, `-`, `(`, `[` are magic"),
            )
            .with_label("a pattern, not plain text")
            .with_help("escape it first (`x:gsub('%p', '%%%0')`), or search plainly: `string.find(s, x, 1, true)`"),
        );
    });
}

/// How to name the input `expr` is, or is built from by `..`, as the
/// value facts follow it (through locals, fields, loops and branches).
fn input_name(cx: &Context<'_>, expr: &Expression) -> Option<String> {
    let value = cx.types.of(expr);
    if !value.ty.within(Ty::STRING) {
        return None;
    }
    let written = text(cx, expr);
    match value.origin? {
        Origin::Input { name } if name == written => Some(format!("`{name}`")),
        Origin::Input { name } => Some(format!("`{written}` (`{name}`)")),
        Origin::Concat { input } => Some(format!("`{written}`, built from `{input}` by `..`,")),
        Origin::Reply { command, .. } => Some(format!("`{written}`, text from {command},")),
        Origin::Element { command } => {
            Some(format!("`{written}`, an element of the {command} reply,"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn warnings(source: &str) -> Vec<String> {
        messages(Lint::ArgvPattern, source, 1, 1)
    }

    #[test]
    fn text_from_redis_as_patterns() {
        for source in [
            // A member, in a loop.
            "local n = 0\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  if string.find(ARGV[1], m) then n = n + 1 end\nend\nreturn n",
            // A reply tested first, through a local.
            "local prefix = redis.call('GET', KEYS[1])\nif not prefix then return 0 end\nreturn (ARGV[1]:gsub(prefix, ''))",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("is used as a Lua pattern"), "{found:?}");
        }
        for source in [
            "local n = 0\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  if string.find(ARGV[1], m, 1, true) then n = n + 1 end\nend\nreturn n",
            "local prefix = redis.call('GET', KEYS[1]) or ''\nreturn (ARGV[1]:gsub(prefix:gsub('%p', '%%%0'), ''))",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn inputs_as_patterns() {
        assert_eq!(
            warnings(
                "local v = redis.call('GET', KEYS[1]) or '' return string.find(v, ARGV[1]) and 1 or 0"
            ),
            ["`ARGV[1]` is used as a Lua pattern by `find`: its `.`, `%`, `-`, `(`, `[` are magic"]
        );
        assert_eq!(
            warnings("local v = redis.call('GET', KEYS[1]) or '' return (v:gsub(ARGV[1], ''))")
                .len(),
            1
        );
        assert_eq!(
            warnings("local v = redis.call('GET', KEYS[1]) or '' return v:match(ARGV[1])").len(),
            1
        );
        assert_eq!(
            warnings(
                "local user = ARGV[1]\nlocal token = redis.call('GET', KEYS[1]) or ''\nreturn string.find(token, user) and 1 or 0"
            ),
            [
                "`user` (`ARGV[1]`) is used as a Lua pattern by `find`: its `.`, `%`, `-`, `(`, `[` are magic"
            ]
        );
    }

    #[test]
    fn plain_searches_and_literal_patterns_pass() {
        for source in [
            "local v = redis.call('GET', KEYS[1]) or '' return string.find(v, ARGV[1], 1, true) and 1 or 0",
            "local v = redis.call('GET', KEYS[1]) or '' return v:find(ARGV[1], 1, true) and 1 or 0",
            "local v = redis.call('GET', KEYS[1]) or '' return string.match(v, '^%d+$') and ARGV[1]",
            "return string.find(ARGV[1], ':') and KEYS[1]",
            "local p = ARGV[1] p = p:gsub('%p', '%%%0') local v = redis.call('GET', KEYS[1]) or '' return v:find(p) and 1 or 0",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn patterns_built_from_inputs() {
        assert_eq!(
            warnings(
                "local pat = '^' .. ARGV[1]\nlocal v = redis.call('GET', KEYS[1]) or ''\nreturn v:match(pat)"
            ),
            [
                "`pat`, built from `ARGV[1]` by `..`, is used as a Lua pattern by `match`: its `.`, `%`, `-`, `(`, `[` are magic"
            ]
        );
        for source in [
            // Through a field.
            "local o = {}\no.prefix = KEYS[1] .. ':'\nlocal v = redis.call('GET', KEYS[1]) or ''\nreturn string.find(v, o.prefix .. '.*') and 1 or 0",
            // In a loop, over a reply.
            "for _, k in ipairs(redis.call('KEYS', '*')) do if k:match('^' .. ARGV[1]) then return k end end",
            // Past a branch that may not replace it.
            "local p = ARGV[1] .. '$'\nif #p > 10 then p = 'x' end\nreturn (redis.call('GET', KEYS[1]) or ''):gsub(p, '')",
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
    fn escaped_or_literal_built_patterns_pass() {
        for source in [
            "local pat = '^' .. ARGV[1]:gsub('%p', '%%%0')\nlocal v = redis.call('GET', KEYS[1]) or ''\nreturn v:match(pat)",
            "local o = {}\no.prefix = 'user' .. ':'\nlocal v = redis.call('GET', KEYS[1]) or ''\nreturn string.find(v, o.prefix .. '.*') and 1 or 0",
            "for _, k in ipairs(redis.call('KEYS', '*')) do if k:find(ARGV[1] .. ':', 1, true) then return k end end",
            "local p = ARGV[1] .. '$'\nif #p > 10 then p = 'x' else p = 'y' end\nreturn (redis.call('GET', KEYS[1]) or ''):gsub(p, '')",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
