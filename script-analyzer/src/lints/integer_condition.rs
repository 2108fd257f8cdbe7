//! `integer_condition`: a command's integer reply used as a condition.
//!
//! Lua's only false values are `false` and `nil`: 0 is true. A command that
//! replies with an integer (EXISTS, SISMEMBER, HEXISTS, SETNX, EXPIRE, DEL...)
//! gives Lua a number, so `if redis.call('EXISTS', k) then` is always taken.
//! Compare the number instead: `== 1`, or `> 0` for a count.
//!
//! Conditions are those of `if`, `elseif`, `while` and `repeat ... until`,
//! the operand of `not`, and the left operand of `and` (`x and a or b` picks
//! by `x`); within a condition, both operands of `and` and `or`. (`n or 0`
//! outside a condition is harmless: the default is never used, and no error.)
//! A value is checked when it is a `redis.call` / `redis.pcall` whose reply
//! is an integer for these arguments (see [`replies`](crate::replies)), a
//! local initialized with one and never assigned again, or a field or
//! local that the value facts say holds one where it is tested. Under
//! `redis.pcall`, the error table is true as well.
//!
//! The same mistake compares the reply with a boolean: `redis.call('EXISTS',
//! k) == true` is always false (a number is never a boolean), through
//! locals and fields.

use super::typed::{each_comparison, text};
use super::{CallArg, Context, RedisCall};
use crate::facts::{Origin, Ty, display_name};
use crate::replies::{self, LuaTypes};
use crate::{Diagnostic, Lint, Report, Span};
use full_moon::ast::{BinOp, Expression, If, LocalAssignment, Repeat, UnOp, Var, While};
use full_moon::visitors::Visitor;
use std::collections::{HashMap, HashSet};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let by_span: HashMap<(usize, usize), &RedisCall> = calls
        .iter()
        .map(|call| ((call.span.start.offset, call.span.end.offset), call))
        .collect();
    let mut locals = Locals {
        cx,
        by_span: &by_span,
        initialized: HashMap::new(),
    };
    cx.visit(&mut locals);
    let mut conditions = Conditions {
        cx,
        by_span: &by_span,
        initialized: locals.initialized,
        reported: HashSet::new(),
        found: Vec::new(),
    };
    cx.visit(&mut conditions);
    report.diagnostics.extend(conditions.found);
    compared_with_booleans(cx, report);
}

/// An integer reply compared with `true` or `false`.
fn compared_with_booleans(cx: &Context<'_>, report: &mut Report) {
    let boolean = |expr: &Expression| match expr {
        Expression::Symbol(token) => {
            let word = token.token().to_string();
            matches!(word.as_str(), "true" | "false").then_some(word)
        }
        _ => None,
    };
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() {
            return;
        }
        let (value, word) = match (boolean(cmp.lhs), boolean(cmp.rhs)) {
            (None, Some(word)) => (cmp.lhs, word),
            (Some(word), None) => (cmp.rhs, word),
            _ => return,
        };
        let inferred = cx.types.of(value);
        let Some((command, _, false)) = inferred.reply() else {
            return;
        };
        if !inferred.ty.within(Ty::INT) {
            return;
        }
        report.diagnostics.push(
            Diagnostic::error(
                Lint::IntegerCondition,
                cx.span_of(cmp.whole),
                format!(
                    "{command} returns an integer; compared with `{word}`, `{}` is always {}: compare with `== 1`",
                    cmp.op,
                    cmp.always()
                ),
            )
            .with_label("a number is never a boolean")
            .with_help("compare the number: `== 1`, or `> 0` for a count"),
        );
    });
}

/// Whether `call` replies with an integer, whatever happens.
fn replies_integer(call: &RedisCall) -> bool {
    let shapes: Vec<_> = call.args.iter().map(CallArg::shape).collect();
    replies::of_call(&shapes) == Some(LuaTypes::NUMBER)
}

/// `expr` without its parentheses.
fn unparenthesized(mut expr: &Expression) -> &Expression {
    while let Expression::Parentheses { expression, .. } = expr {
        expr = expression;
    }
    expr
}

/// The `redis.call` that `expr` is, if it is one.
fn call_of<'r>(
    cx: &Context<'_>,
    by_span: &HashMap<(usize, usize), &'r RedisCall>,
    expr: &Expression,
) -> Option<&'r RedisCall> {
    let Expression::FunctionCall(_) = expr else {
        return None;
    };
    let span = cx.span_of(expr);
    by_span.get(&(span.start.offset, span.end.offset)).copied()
}

/// Finds the locals initialized with a `redis.call`.
struct Locals<'c, 'a, 'r> {
    cx: &'c Context<'a>,
    by_span: &'c HashMap<(usize, usize), &'r RedisCall>,
    /// Declaring offset of the local -> the call that initializes it.
    initialized: HashMap<usize, &'r RedisCall>,
}

impl Visitor for Locals<'_, '_, '_> {
    fn visit_local_assignment(&mut self, node: &LocalAssignment) {
        for (name, expr) in node.names().iter().zip(node.expressions().iter()) {
            let Some(variable) = self.cx.model.local(name) else {
                continue;
            };
            if variable.reassigned {
                continue;
            }
            if let Some(call) = call_of(self.cx, self.by_span, unparenthesized(expr)) {
                self.initialized.insert(variable.declared_at, call);
            }
        }
    }
}

/// Walks the conditions and reports integer replies in them.
struct Conditions<'c, 'a, 'r> {
    cx: &'c Context<'a>,
    by_span: &'c HashMap<(usize, usize), &'r RedisCall>,
    initialized: HashMap<usize, &'r RedisCall>,
    /// Start offsets already reported (a condition may be reached twice).
    reported: HashSet<usize>,
    found: Vec<Diagnostic>,
}

impl Conditions<'_, '_, '_> {
    /// `expr` is used for its truth.
    fn condition(&mut self, expr: &Expression) {
        match unparenthesized(expr) {
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_) | BinOp::Or(_),
                rhs,
            } => {
                self.condition(lhs);
                self.condition(rhs);
            }
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.condition(expression),
            leaf => self.leaf(leaf),
        }
    }

    fn leaf(&mut self, expr: &Expression) {
        let span = self.cx.span_of(expr);
        let (call, through) = match expr {
            Expression::FunctionCall(_) => match call_of(self.cx, self.by_span, expr) {
                Some(call) => (call, None),
                // A call of the script's own function: the reply the value
                // facts say it gives.
                None => match self.held_reply(expr) {
                    Some(call) => (call, Some(text(self.cx, expr))),
                    None => return,
                },
            },
            Expression::Var(Var::Name(token))
                if self
                    .cx
                    .model
                    .local(token)
                    .is_some_and(|v| self.initialized.contains_key(&v.declared_at)) =>
            {
                let Some(variable) = self.cx.model.local(token) else {
                    return;
                };
                match self.initialized.get(&variable.declared_at) {
                    Some(call) => (*call, Some(variable.name.clone())),
                    None => return,
                }
            }
            // A field, a reassigned local: what the value facts say it holds here.
            Expression::Var(_) => match self.held_reply(expr) {
                Some(call) => (call, Some(text(self.cx, expr))),
                None => return,
            },
            _ => return,
        };
        if !replies_integer(call) || !self.reported.insert(span.start.offset) {
            return;
        }
        let Some(name) = display_name(call) else {
            return;
        };
        self.found.push(diagnostic(name, span, call, through));
    }
}

impl<'c> Conditions<'c, '_, '_> {
    /// The `redis.call` whose reply `expr` surely is where it is tested
    /// (anywhere in the script: a reply a function of the script gives).
    fn held_reply(&self, expr: &Expression) -> Option<&'c RedisCall> {
        let cx = self.cx;
        let value = cx.types.of(expr);
        let Some(Origin::Reply { span, pcall, .. }) = &value.origin else {
            return None;
        };
        let integer = if *pcall {
            Ty::INT.union(Ty::ERROR)
        } else {
            Ty::INT
        };
        if !value.ty.within(integer) {
            return None;
        }
        cx.types.call_at(span.start.offset, span.end.offset)
    }
}

fn diagnostic(name: String, span: Span, call: &RedisCall, through: Option<String>) -> Diagnostic {
    let message = format!("{name} returns an integer; 0 is true in Lua: compare with `== 1`");
    let function = if call.pcall { "pcall" } else { "call" };
    let help = match &through {
        Some(local) => format!("write `if {local} == 1 then` (or `> 0` for a count)"),
        None => format!("write `redis.{function}(...) == 1` (or `> 0` for a count)"),
    };
    let mut diagnostic = Diagnostic::error(Lint::IntegerCondition, span, message)
        .with_label("always true: a number, even 0, is true in Lua")
        .with_help(help);
    if let Some(local) = through {
        diagnostic =
            diagnostic.with_secondary(call.span, format!("`{local}` holds this reply, a number"));
    }
    if call.pcall {
        diagnostic = diagnostic.with_note("under `redis.pcall`, an error table is true as well");
    }
    diagnostic
}

impl Conditions<'_, '_, '_> {
    /// `if not v then v = <default> ... end`: a guard that gives `v` a
    /// default, harmless when `v` is a number (the branch is never taken).
    /// Its test is not reported.
    fn skip_default_guard(&mut self, node: &If) {
        let Expression::UnaryOperator {
            unop: UnOp::Not(_),
            expression,
        } = unparenthesized(node.condition())
        else {
            return;
        };
        let Expression::Var(Var::Name(tested)) = unparenthesized(expression) else {
            return;
        };
        let assigns_default = node.block().stmts().any(|stmt| match stmt {
            full_moon::ast::Stmt::Assignment(assignment) => {
                assignment.variables().iter().any(|var| {
                    matches!(var, Var::Name(name) if name.token().to_string() == tested.token().to_string())
                })
            }
            _ => false,
        });
        if assigns_default {
            let span = self.cx.span_of(expression);
            self.reported.insert(span.start.offset);
        }
    }
}

impl Visitor for Conditions<'_, '_, '_> {
    fn visit_if(&mut self, node: &If) {
        self.skip_default_guard(node);
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

    fn visit_expression(&mut self, node: &Expression) {
        match node {
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.condition(expression),
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_),
                ..
            } => self.condition(lhs),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{lint, messages};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::IntegerCondition, source, 1, 0)
    }

    const EXISTS: &str = "EXISTS returns an integer; 0 is true in Lua: compare with `== 1`";

    #[test]
    fn integer_replies_compared_with_booleans() {
        for (source, expected) in [
            (
                "if redis.call('EXISTS', KEYS[1]) == true then return 1 end return 0",
                "EXISTS returns an integer; compared with `true`, `==` is always false: compare with `== 1`",
            ),
            (
                "local o = {}\no.added = redis.call('HSETNX', KEYS[1], 'f', 'v')\nif o.added ~= false then return 1 end\nreturn 0",
                "HSETNX returns an integer; compared with `false`, `~=` is always true: compare with `== 1`",
            ),
        ] {
            assert_eq!(errors(source), [expected], "{source}");
        }
    }

    #[test]
    fn integer_replies_compared_with_numbers_and_other_values_with_booleans_pass() {
        for source in [
            "if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end return 0",
            "local v = redis.call('GET', KEYS[1])\nif v == false then return 0 end return 1",
            "local ok = redis.call('EXISTS', KEYS[1]) == 1\nif ok == true then return 1 end return 0",
            "local r = redis.pcall('INCR', KEYS[1])\nif r == false then return 0 end return 1",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn a_guard_that_gives_a_default_is_not_reported() {
        // Dead but harmless: the default is never used.
        let source = "local ttl = redis.call('PTTL', KEYS[1])\n\
            if not ttl then\n  ttl = 0\nend\nreturn ttl";
        assert_eq!(errors(source), Vec::<String>::new());
        // Without the default it is the usual mistake.
        let source = "local found = redis.call('EXISTS', KEYS[1])\n\
            if not found then\n  return 0\nend\nreturn 1";
        assert_eq!(errors(source), [EXISTS]);
        // A default given to another variable does not count.
        let source = "local found = redis.call('EXISTS', KEYS[1])\nlocal other = 1\n\
            if not found then\n  other = 0\nend\nreturn other";
        assert_eq!(errors(source), [EXISTS]);
    }

    #[test]
    fn integer_replies_as_conditions() {
        for source in [
            "if redis.call('EXISTS', KEYS[1]) then return 1 end return 0",
            "if (redis.call('exists', KEYS[1])) then return 1 end return 0",
            "if not redis.call('EXISTS', KEYS[1]) then return 1 end return 0",
            "local x = 1 if x == 1 and redis.call('EXISTS', KEYS[1]) then return 1 end return 0",
            "if false then elseif redis.call('EXISTS', KEYS[1]) then return 1 end return 0",
            "while redis.call('EXISTS', KEYS[1]) do break end return 0",
            "repeat local a = 1 until redis.call('EXISTS', KEYS[1]) return 0",
            "return redis.call('EXISTS', KEYS[1]) and 'yes' or 'no'",
            "local rcall = redis.call if rcall('EXISTS', KEYS[1]) then return 1 end return 0",
            "if redis.call('EXISTS', unpack(KEYS)) then return 1 end return 0",
        ] {
            assert_eq!(errors(source), [EXISTS], "{source}");
        }
        let source =
            "local found = redis.call('EXISTS', KEYS[1])\nif found then return 1 end\nreturn 0";
        let d = &lint(Lint::IntegerCondition, source, 1, 0)[0];
        assert_eq!(d.message, EXISTS);
        let span = d.primary_span().unwrap();
        assert_eq!((span.start.line, span.start.column), (2, 4));
        assert_eq!(d.secondary[0].span.start.line, 1);
        assert_eq!(
            d.help.as_deref(),
            Some("write `if found == 1 then` (or `> 0` for a count)")
        );
        assert_eq!(
            errors("if redis.call('SETNX', KEYS[1], 1) then return 1 end return 0"),
            ["SETNX returns an integer; 0 is true in Lua: compare with `== 1`"]
        );
        assert_eq!(
            errors(
                "if redis.call('SET', KEYS[1], 1, 'EX', 10) then end\nif redis.call('SISMEMBER', KEYS[1], 'a') then return 1 end return 0"
            ),
            ["SISMEMBER returns an integer; 0 is true in Lua: compare with `== 1`"]
        );
        let pcall = &lint(
            Lint::IntegerCondition,
            "if redis.pcall('DEL', KEYS[1]) then return 1 end return 0",
            1,
            0,
        )[0];
        assert_eq!(pcall.notes.len(), 1);
        assert_eq!(
            pcall.help.as_deref(),
            Some("write `redis.pcall(...) == 1` (or `> 0` for a count)")
        );
    }

    #[test]
    fn other_conditions_pass() {
        for source in [
            // Compared: fine.
            "if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end return 0",
            "while redis.call('LLEN', KEYS[1]) > 0 do redis.call('LPOP', KEYS[1]) end return 0",
            // Replies that may be false.
            "if redis.call('GET', KEYS[1]) then return 1 end return 0",
            "if redis.call('SET', KEYS[1], 'v', 'NX') then return 1 end return 0",
            "if not redis.call('HGET', KEYS[1], 'f') then return 0 end return 1",
            "local v = redis.call('LPOP', KEYS[1]) while v do v = redis.call('LPOP', KEYS[1]) end return 0",
            // A default after `or`, outside a condition, is harmless.
            "local n = redis.call('INCR', KEYS[1]) or 0 return n",
            // A local assigned again may hold anything.
            "local n = redis.call('EXISTS', KEYS[1]) n = n == 1 if n then return 1 end return 0",
            // A computed command name, or one whose reply is unknown.
            "if redis.call(ARGV[1], KEYS[1]) then return 1 end return 0",
            "if redis.call('EVAL', 'return 1', 0) then return 1 end return 0",
            // A reply that is a table is true, but that is rarely a mistake
            // (`if redis.call('HGETALL', k)` is another lint's business).
            "if redis.call('TYPE', KEYS[1]).ok == 'none' then return 0 end return 1",
            // Not redis.call.
            "local function exists() return 1 end if exists() then return 1 end return 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn what_the_scripts_own_function_returns_as_a_condition() {
        let helper = "local function held(key)\n  return redis.call('EXISTS', key)\nend\n";
        for condition in [
            "held(KEYS[1])",
            "not held(KEYS[1])",
            "held(KEYS[1]) and ARGV[1]",
        ] {
            let source = format!("{helper}if {condition} then return 1 end\nreturn 0");
            assert_eq!(errors(&source).len(), 1, "{source}");
        }
        for source in [
            // A boolean it makes is the condition it means.
            "local function held(key)\n  return redis.call('EXISTS', key) == 1\nend\nif held(KEYS[1]) then return 1 end\nreturn 0",
            // It may give nil: a condition is a fair test of that.
            "local function held(key)\n  if key == '' then return nil end\n  return redis.call('EXISTS', key)\nend\nif held(KEYS[1]) then return 1 end\nreturn 0",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }

    #[test]
    fn integer_replies_followed_through_fields_loops_and_branches() {
        for source in [
            "local o = {}\no.seen = redis.call('SISMEMBER', KEYS[1], ARGV[1])\nif o.seen then return 1 end\nreturn 0",
            "local n\nif ARGV[1] == 'a' then\n  n = redis.call('EXISTS', KEYS[1])\n  if n then return 1 end\nend\nreturn 0",
            "for _, k in ipairs(KEYS) do local o = {} o.e = redis.call('EXISTS', k) while o.e do return 1 end end",
        ] {
            let found = crate::lints::test_util::lint(crate::Lint::IntegerCondition, source, 1, 1);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
        }
        for source in [
            "local o = {}\no.seen = redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1\nif o.seen then return 1 end\nreturn 0",
            "local n = false\nif ARGV[1] then n = redis.call('EXISTS', KEYS[1]) end\nif n then return 1 end\nreturn 0",
        ] {
            let found = crate::lints::test_util::lint(crate::Lint::IntegerCondition, source, 1, 1);
            assert!(found.is_empty(), "{source}: {found:?}");
        }
    }
}
