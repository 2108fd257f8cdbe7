//! Helpers shared by the lints built on type inference ([`crate::infer`]):
//! how a value is described in messages, and the comparisons of a script.

use super::Context;
use crate::infer::{Inferred, Origin, Ty, unparenthesized};
use full_moon::ast::{BinOp, Expression};
use full_moon::visitors::Visitor;

/// The source text of `expr`, shortened for a message.
pub(crate) fn text(cx: &Context<'_>, expr: &Expression) -> String {
    let span = cx.span_of(expr);
    let text = cx
        .source
        .get(span.start.offset..span.end.offset)
        .unwrap_or("this value");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 40 {
        let short: String = text.chars().take(37).collect();
        format!("{short}...")
    } else {
        text
    }
}

/// "GET returns a string or `false` (a nil reply)", "`n` is a number".
pub(crate) fn describe(cx: &Context<'_>, expr: &Expression, value: &Inferred) -> String {
    match &value.origin {
        Some(Origin::Reply { command, shape, .. }) => format!("{command} returns {shape}"),
        Some(Origin::Cursor { command }) => format!("{command}'s cursor is a string"),
        Some(Origin::Tonumber { .. }) => {
            format!("`{}` is a number or nil", text(cx, expr))
        }
        _ => {
            let what = if value.ty.within(Ty::INT) {
                "an integer"
            } else if value.ty.within(Ty::NUMBER) {
                "a number"
            } else if value.ty.within(Ty::NUMBER.union(Ty::NIL)) {
                "a number or nil"
            } else if value.ty.within(Ty::STRING) {
                "a string"
            } else if value.ty.within(Ty::STRING.union(Ty::FALSY)) {
                "a string or false"
            } else {
                "a value"
            };
            format!("`{}` is {what}", text(cx, expr))
        }
    }
}

/// A comparison of the script.
pub(crate) struct Comparison<'a> {
    pub lhs: &'a Expression,
    pub rhs: &'a Expression,
    /// `==`, `~=`, `<`, `<=`, `>`, `>=`.
    pub op: &'static str,
    pub whole: &'a Expression,
}

impl Comparison<'_> {
    /// `==` or `~=`.
    pub fn is_equality(&self) -> bool {
        matches!(self.op, "==" | "~=")
    }

    /// What an equality always gives when its operands can never be equal.
    pub fn always(&self) -> &'static str {
        if self.op == "~=" { "true" } else { "false" }
    }
}

/// Calls `f` on every comparison of the script, in source order.
pub(crate) fn each_comparison(cx: &Context<'_>, f: impl FnMut(&Comparison<'_>)) {
    let mut finder = Finder { f };
    finder.visit_ast(cx.ast);
}

struct Finder<F> {
    f: F,
}

impl<F: FnMut(&Comparison<'_>)> Visitor for Finder<F> {
    fn visit_expression(&mut self, expr: &Expression) {
        if let Expression::BinaryOperator { lhs, binop, rhs } = expr {
            let op = match binop {
                BinOp::TwoEqual(_) => "==",
                BinOp::TildeEqual(_) => "~=",
                BinOp::LessThan(_) => "<",
                BinOp::LessThanEqual(_) => "<=",
                BinOp::GreaterThan(_) => ">",
                BinOp::GreaterThanEqual(_) => ">=",
                _ => return,
            };
            (self.f)(&Comparison {
                lhs: unparenthesized(lhs),
                rhs: unparenthesized(rhs),
                op,
                whole: expr,
            });
        }
    }
}
