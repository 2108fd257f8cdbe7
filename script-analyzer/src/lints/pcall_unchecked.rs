//! `pcall_unchecked`: a `redis.pcall` result used without checking `err`.
//!
//! When the command fails, `redis.pcall` gives a table `{err = "..."}`
//! instead of raising. A result used as a number, a string or a command
//! argument without a look at `err` turns a clear Redis error into a
//! confusing Lua one (or a wrong value). Fires where a `redis.pcall`
//! result, in place or through a local, may still be the error table when
//! it is consumed (arithmetic, `..`, `<`, a command argument): a test on
//! the path (`if r.err then return end`, `type(r) == 'table'`) removes it.
//! A local that is returned, passed on, or whose `err` is read anywhere is
//! left alone. Also fires where such a result is tested for truth (`if not
//! r then`, `if r then`): the error table is true. A warning: the command
//! may be one that cannot fail.

use super::typed::{Operand, each_operand, local_of};
use super::{Context, RedisCall};
use crate::facts::{Ty, UseKind};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{BinOp, Expression, If, Repeat, UnOp, While};
use full_moon::visitors::Visitor;
use std::collections::HashSet;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut reported = HashSet::new();
    each_operand(cx, |expr, operand| {
        let value = cx.types.of(expr);
        let Some((command, _, true)) = value.reply() else {
            return;
        };
        // Checked on the path (`if r.err then return end`, `type(r)`), or
        // replaced by something unknown.
        if !value.ty.intersects(Ty::ERROR) || value.ty.is_any() {
            return;
        }
        let local = local_of(cx, expr);
        if let Some(var) = local
            && (passed_on(cx, var) || !reported.insert(var))
        {
            return;
        }
        let how = match operand {
            Operand::Arithmetic(op) | Operand::Ordering(op) => format!("with `{op}`"),
            Operand::Concat => "with `..`".to_string(),
            Operand::CommandArg => "as a command argument".to_string(),
            // `#r` and text functions: an error table is a table there too.
            Operand::Length | Operand::Text(_) => return,
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
    let mut tests = Tests {
        cx,
        found: Vec::new(),
    };
    cx.visit(&mut tests);
    report.diagnostics.extend(tests.found);
}

/// Whether `var` is handed to a function, stored or returned: checked
/// elsewhere, or on purpose.
fn passed_on(cx: &Context<'_>, var: usize) -> bool {
    cx.types.uses(var).iter().any(|u| {
        matches!(&u.kind, UseKind::Other | UseKind::Returned)
            || matches!(&u.kind, UseKind::Index(Some(key)) if key == "err")
    })
}

/// `redis.pcall` results tested for truth, where an error reply is a
/// table, which is true.
struct Tests<'c, 'a> {
    cx: &'c Context<'a>,
    found: Vec<Diagnostic>,
}

impl Tests<'_, '_> {
    fn condition(&mut self, cond: &Expression) {
        match cond {
            Expression::Parentheses { expression, .. } => self.condition(expression),
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.condition(expression),
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_) | BinOp::Or(_),
                rhs,
            } => {
                self.condition(lhs);
                self.condition(rhs);
            }
            _ => {
                let value = self.cx.types.of(cond);
                let Some((command, _, true)) = value.reply() else {
                    return;
                };
                if !value.ty.intersects(Ty::ERROR) || value.ty.is_any() {
                    return;
                }
                self.found.push(
                    Diagnostic::warning(
                        Lint::PcallUnchecked,
                        self.cx.span_of(cond),
                        format!(
                            "a `redis.pcall` reply of {command} tested for truth: when the command fails it is the table `{{err = ...}}`, which is true"
                        ),
                    )
                    .with_label("true for an error reply")
                    .with_help("test the error itself: `if type(r) == 'table' and r.err then ... end`"),
                );
            }
        }
    }
}

impl Visitor for Tests<'_, '_> {
    fn visit_if(&mut self, node: &If) {
        self.condition(node.condition());
        for else_if in node.else_if().into_iter().flatten() {
            self.condition(else_if.condition());
        }
    }

    fn visit_while(&mut self, node: &While) {
        self.condition(node.condition());
    }

    fn visit_repeat(&mut self, node: &Repeat) {
        self.condition(node.until());
    }
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

    #[test]
    fn results_tested_for_truth() {
        for source in [
            "local r = redis.pcall('GET', KEYS[1])\nif not r then return 0 end\nreturn 1",
            // Through a field.
            "local o = {}\no.r = redis.pcall('INCR', KEYS[1])\nif o.r then return 1 end\nreturn 0",
            // In a loop.
            "for i = 1, 3 do if redis.pcall('DEL', KEYS[1]) then return i end end",
            // In a branch, with `and`.
            "local r = redis.pcall('SET', KEYS[1], ARGV[1])\nif ARGV[1] ~= '' and r then return 1 end\nreturn 0",
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
    fn errors_checked_first_pass() {
        for source in [
            "local r = redis.pcall('GET', KEYS[1])\nif type(r) == 'table' and r.err then return 0 end\nif not r then return 0 end\nreturn 1",
            "local r = redis.pcall('GET', KEYS[1])\nif type(r) == 'table' then return 0 end\nif not r then return 0 end\nreturn 1",
            "local r = redis.call('GET', KEYS[1])\nif not r then return 0 end\nreturn 1",
            "local r = redis.pcall('INCR', KEYS[1])\nif r.err then return 0 end\nreturn r + ARGV[1]",
            "for i = 1, 3 do local r = redis.pcall('DEL', KEYS[1]) if type(r) == 'number' then return i end end",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn results_replaced_after_an_error_pass() {
        let source = "local pos = redis.pcall('LPOS', KEYS[1], ARGV[1])\nif type(pos) == 'table' and pos.err then\n  pos = f(pos)\nend\nif pos then return 1 end\nreturn 0";
        assert!(warnings(source).is_empty(), "{:?}", warnings(source));
    }
}
