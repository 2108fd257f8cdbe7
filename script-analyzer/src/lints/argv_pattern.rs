//! `argv_pattern`: an input used as a Lua pattern.
//!
//! `string.find`, `match`, `gmatch` and `gsub` read their pattern argument
//! as a Lua pattern: in `string.find(s, ARGV[1])`, a caller's `.`, `%`,
//! `-`, `(`, `[` are magic (`a-b` never matches itself; `%` at the end
//! raises "malformed pattern"). Fires on `KEYS[n]` / `ARGV[n]` passed as the
//! pattern, unless `string.find` is asked for a plain search (its fourth
//! argument `true`). A warning: the input may be a pattern on purpose.

use super::library_calls::each_library_call;
use super::{Context, RedisCall};
use crate::facts::{Origin, unparenthesized};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Expression, Var};

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

/// `KEYS[n]` / `ARGV[n]` if `expr` is one, or a local that holds one and is
/// assigned nothing else.
fn input_name(cx: &Context<'_>, expr: &Expression) -> Option<String> {
    if let Expression::Var(Var::Name(token)) = expr {
        let var = cx.types.local(token)?;
        if cx.types.assignments(var) != 1 {
            return None;
        }
        return match cx.types.var(var).origin {
            Some(Origin::Input { name }) => Some(format!("`{}` (`{name}`)", token.token())),
            _ => None,
        };
    }
    let Expression::Var(Var::Expression(var)) = expr else {
        return None;
    };
    let full_moon::ast::Prefix::Name(name) = var.prefix() else {
        return None;
    };
    let table = name.token().to_string();
    if !matches!(table.as_str(), "KEYS" | "ARGV") || !cx.model.is_global(name) {
        return None;
    }
    if var.suffixes().count() != 1 {
        return None;
    }
    Some(format!("`{}`", var.to_string().trim()))
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn warnings(source: &str) -> Vec<String> {
        messages(Lint::ArgvPattern, source, 1, 1)
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
}
