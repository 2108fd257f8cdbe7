//! `maybe_false`: a value that may be `false` or nil used where Lua raises
//! on it: arithmetic, `..`, `<`, or as a `redis.call` argument.
//!
//! GET, HGET, LPOP... reply `false` for a missing key, and `tonumber` of
//! that is nil, so `redis.call('GET', k) + 1` raises "attempt to perform
//! arithmetic on a boolean value" whenever the key is missing. The value is
//! checked when it is the call itself, written in place, or a local that
//! holds one and is never assigned again nor tested anywhere (no `if v`,
//! `v or default`, `v == false`, `type(v)`...): the inference has no
//! narrowing, so a local that is tested somewhere is left alone. A warning:
//! the script may know that the key exists.

use super::typed::{Operand, describe, each_operand, local_of, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty, UseKind};
use crate::replies::LuaTypes;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;
use std::collections::HashSet;

/// Whether `value` is a reply that may be `false`, or `tonumber` of one.
fn may_be_false(value: &Inferred) -> bool {
    if value.ty.is_any() || !value.ty.intersects(Ty::FALSY) {
        return false;
    }
    match &value.origin {
        // `false` under RESP2, nil under RESP3.
        Some(Origin::Reply { .. }) => value.ty.intersects(Ty::FALSY),
        Some(Origin::Tonumber { of: Some(of) }) => {
            let nil = LuaTypes::FALSE.union(LuaTypes::NIL);
            matches!(&**of, Origin::Reply { shape, .. } if shape.intersects(nil))
        }
        _ => false,
    }
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut reported_locals = HashSet::new();
    each_operand(cx, |expr, operand| {
        let value = match expr {
            Expression::FunctionCall(_) => cx.types.of(expr),
            _ => {
                let Some(var) = local_of(cx, expr) else {
                    return;
                };
                if cx.types.assignments(var) != 1 || !untested(cx, var) {
                    return;
                }
                if !reported_locals.insert(var) {
                    return;
                }
                cx.types.var(var)
            }
        };
        if !may_be_false(&value) {
            return;
        }
        let falsy = if matches!(value.origin, Some(Origin::Tonumber { .. })) {
            "nil"
        } else {
            "`false`"
        };
        let consequence = match operand {
            Operand::Arithmetic(op) => format!("`{op}` on {falsy} raises an error"),
            Operand::Ordering(op) => format!("`{op}` with {falsy} raises an error"),
            Operand::Concat => format!("`..` with {falsy} raises an error"),
            Operand::CommandArg => format!("{falsy} as a command argument raises an error"),
        };
        let subject = match &value.origin {
            Some(Origin::Tonumber { of: Some(of) }) => match &**of {
                Origin::Reply { command, shape, .. } => format!(
                    "`{}` is nil when {command} replies `false` ({command} returns {shape})",
                    text(cx, expr)
                ),
                _ => describe(cx, expr, &value),
            },
            _ => describe(cx, expr, &value),
        };
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::MaybeFalse,
                cx.span_of(expr),
                format!("{subject}; {consequence}"),
            )
            .with_label("may be missing here")
            .with_help(
                "give a default (`redis.call(...) or '0'`, `tonumber(...) or 0`), or test the value first",
            ),
        );
    });
}

/// Whether every use of `var` consumes it without testing it.
fn untested(cx: &Context<'_>, var: usize) -> bool {
    cx.types.uses(var).iter().all(|u| {
        matches!(
            u.kind,
            UseKind::Arithmetic | UseKind::Ordering | UseKind::Concat | UseKind::CommandArg
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn warnings(source: &str) -> Vec<String> {
        let found = lint(Lint::MaybeFalse, source, 2, 1);
        assert!(found.iter().all(|d| d.severity == Severity::Warning));
        found.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn false_replies_consumed() {
        assert_eq!(
            warnings("return redis.call('GET', KEYS[1]) + ARGV[1] + #KEYS[2]"),
            ["GET returns a string or `false` (a nil reply); `+` on `false` raises an error"]
        );
        assert_eq!(
            warnings(
                "local v = redis.call('HGET', KEYS[1], 'f')\nreturn 'value: ' .. v .. KEYS[2] .. ARGV[1]"
            ),
            ["HGET returns a string or `false` (a nil reply); `..` with `false` raises an error"]
        );
        assert_eq!(
            warnings("redis.call('SET', KEYS[2], redis.call('GET', KEYS[1]))\nreturn ARGV[1]"),
            [
                "GET returns a string or `false` (a nil reply); `false` as a command argument raises an error"
            ]
        );
        assert_eq!(
            warnings(
                "local n = tonumber(redis.call('GET', KEYS[1]))\nif n > tonumber(ARGV[1]) then return 1 end return KEYS[2]"
            ),
            [
                "`n` is nil when GET replies `false` (GET returns a string or `false` (a nil reply)); `>` with nil raises an error"
            ]
        );
    }

    #[test]
    fn defaults_and_tests_pass() {
        for source in [
            "return (redis.call('GET', KEYS[1]) or 0) + ARGV[1] + #KEYS[2]",
            "return tonumber(redis.call('GET', KEYS[1]) or '0') + ARGV[1] + #KEYS[2]",
            "return (tonumber(redis.call('GET', KEYS[1])) or 0) + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif not v then return 0 end\nreturn v + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif v == false then v = '0' end\nreturn v + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nlocal n = tonumber(v)\nif not n then return 0 end return n + ARGV[1] + #KEYS[2]",
            "local v = redis.call('GET', KEYS[1])\nif v then return tonumber(v) + ARGV[1] end return #KEYS[2]",
            "return redis.call('INCR', KEYS[1]) + ARGV[1] + #KEYS[2]",
            "return redis.call('SET', KEYS[1], ARGV[1], 'GET', KEYS[2]) and 1",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
