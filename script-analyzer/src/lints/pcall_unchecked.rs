//! `pcall_unchecked`: a `redis.pcall` result used without checking `err`.
//!
//! When the command fails, `redis.pcall` gives a table `{err = "..."}`
//! instead of raising. A result used as a number, a string or a command
//! argument without a look at `err` turns a clear Redis error into a
//! confusing Lua one (or a wrong value). Fires on a local that holds a
//! `redis.pcall` result, is never assigned again, and whose every use
//! consumes it (arithmetic, `..`, `<`, a command argument, an index other
//! than `err`); and on a `redis.pcall` consumed in place. Returning the
//! result, testing it (`if r.err`, `type(r)`), or passing it on leaves it
//! alone. A warning: the command may be one that cannot fail.

use super::typed::{Operand, each_operand, local_of};
use super::{Context, RedisCall};
use crate::facts::UseKind;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;
use std::collections::HashSet;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut reported = HashSet::new();
    each_operand(cx, |expr, operand| {
        let (value, local) = match expr {
            Expression::FunctionCall(_) => (cx.types.of(expr), None),
            _ => {
                let Some(var) = local_of(cx, expr) else {
                    return;
                };
                if cx.types.assignments(var) != 1 || !unchecked(cx, var) {
                    return;
                }
                if !reported.insert(var) {
                    return;
                }
                (cx.types.var(var), Some(var))
            }
        };
        let Some((command, _, true)) = value.reply() else {
            return;
        };
        let how = match operand {
            Operand::Arithmetic(op) | Operand::Ordering(op) => format!("with `{op}`"),
            Operand::Concat => "with `..`".to_string(),
            Operand::CommandArg => "as a command argument".to_string(),
        };
        let subject = match local {
            Some(var) => format!(
                "`{}`, a `redis.pcall` reply of {command},",
                cx.model
                    .variables
                    .get(var)
                    .map_or("the value", |v| v.name.as_str())
            ),
            None => format!("a `redis.pcall` reply of {command}"),
        };
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::PcallUnchecked,
                cx.span_of(expr),
                format!("{subject} is used {how} without checking `err`"),
            )
            .with_label("an error table `{err = ...}` when the command fails")
            .with_help(
                "check it first (`if type(r) == 'table' and r.err then ... end`), or use `redis.call` to let the error stop the script",
            ),
        );
    });
}

/// Whether no use of `var` looks at the error.
fn unchecked(cx: &Context<'_>, var: usize) -> bool {
    cx.types.uses(var).iter().all(|u| match &u.kind {
        UseKind::Arithmetic | UseKind::Ordering | UseKind::Concat | UseKind::CommandArg => true,
        UseKind::Index(Some(key)) => key != "err",
        UseKind::Index(None) => true,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn warnings(source: &str) -> Vec<String> {
        let found = lint(Lint::PcallUnchecked, source, 1, 1);
        assert!(found.iter().all(|d| d.severity == Severity::Warning));
        found.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn unchecked_results() {
        assert_eq!(
            warnings("local n = redis.pcall('INCR', KEYS[1])\nreturn n + ARGV[1]"),
            ["`n`, a `redis.pcall` reply of INCR, is used with `+` without checking `err`"]
        );
        assert_eq!(
            warnings("return 'n=' .. redis.pcall('INCRBY', KEYS[1], ARGV[1])"),
            ["a `redis.pcall` reply of INCRBY is used with `..` without checking `err`"]
        );
    }

    #[test]
    fn checked_or_passed_on_results_pass() {
        for source in [
            "local r = redis.pcall('INCR', KEYS[1])\nif type(r) == 'table' and r.err then return r end\nreturn r + ARGV[1]",
            "local r = redis.pcall('INCR', KEYS[1])\nif r.err then return 0 end\nreturn r + ARGV[1]",
            "return redis.pcall('INCR', KEYS[1], ARGV[1])",
            "local r = redis.pcall('INCR', KEYS[1]) return r",
            "local n = redis.call('INCR', KEYS[1]) return n + ARGV[1]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
