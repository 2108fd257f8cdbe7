//! Helpers shared by the lints built on type inference ([`crate::facts`]):
//! how a value is described in messages, and the comparisons of a script.

use super::Context;
use crate::facts::{Inferred, Origin, Ty, unparenthesized};
use full_moon::ast::{
    BinOp, Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix, UnOp, Var, VarExpression,
};
use full_moon::node::Node;
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
    match value.source() {
        Some(Origin::Reply { command, shape, .. }) => format!("{command} returns {shape}"),
        Some(Origin::Cursor { command }) => format!("{command}'s cursor is a string"),
        Some(Origin::Element { command }) if value.ty.intersects(Ty::FALSE) => {
            format!(
                "`{}`, an element of the {command} reply, is a string or `false` (a nil reply)",
                text(cx, expr)
            )
        }
        Some(Origin::Element { command }) => format!(
            "`{}`, an element of the {command} reply, is a string",
            text(cx, expr)
        ),
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
    cx.visit(&mut finder);
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

/// How a value is consumed by an operation that raises on `false` or nil.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    /// `+ - * / % ^`, unary `-`.
    Arithmetic(&'static str),
    /// `< <= > >=`.
    Ordering(&'static str),
    /// `..`.
    Concat,
    /// An argument of a `redis.call`.
    CommandArg,
    /// The operand of `#`.
    Length,
    /// The text a library function reads (`cjson.decode(v)`, `string.sub(v,
    /// ...)`): the function's name.
    Text(&'static str),
}

/// Library functions whose first argument must be a string (a number
/// passes too): `false` or nil makes them raise "bad argument #1".
const TEXT_FUNCTIONS: &[&str] = &[
    "cjson.decode",
    "cmsgpack.unpack",
    "string.len",
    "string.sub",
    "string.upper",
    "string.lower",
    "string.find",
    "string.match",
    "string.gmatch",
    "string.gsub",
    "string.byte",
    "string.rep",
    "string.reverse",
];

/// The library function `call` is (`string.sub`), when it is one of
/// [`TEXT_FUNCTIONS`], and its first argument.
fn text_function<'c>(
    cx: &Context<'_>,
    call: &'c FunctionCall,
) -> Option<(&'static str, &'c Expression)> {
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let (
        Prefix::Name(library),
        [
            Suffix::Index(full_moon::ast::Index::Dot { name, .. }),
            Suffix::Call(Call::AnonymousCall(args)),
        ],
    ) = (call.prefix(), suffixes.as_slice())
    else {
        return None;
    };
    if !cx.model.is_global(library) {
        return None;
    }
    let full = format!("{}.{}", library.token(), name.token());
    let function = TEXT_FUNCTIONS.iter().find(|f| **f == full)?;
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return None;
    };
    Some((function, arguments.iter().next()?))
}

/// The values `string.format` with a literal format formats: one per
/// conversion (`%d`, `%s`, ...; `%%` takes none). Each must be a number or
/// a string: `false` raises "bad argument to 'format'".
fn formatted_values<'c>(cx: &Context<'_>, call: &'c FunctionCall) -> Vec<&'c Expression> {
    let suffixes: Vec<&Suffix> = call.suffixes().collect();
    let (
        Prefix::Name(library),
        [
            Suffix::Index(full_moon::ast::Index::Dot { name, .. }),
            Suffix::Call(Call::AnonymousCall(args)),
        ],
    ) = (call.prefix(), suffixes.as_slice())
    else {
        return Vec::new();
    };
    if library.token().to_string() != "string"
        || name.token().to_string() != "format"
        || !cx.model.is_global(library)
    {
        return Vec::new();
    }
    let FunctionArgs::Parentheses { arguments, .. } = &**args else {
        return Vec::new();
    };
    let values: Vec<&Expression> = arguments.iter().collect();
    let Some(Expression::String(format)) = values.first().map(|e| unparenthesized(e)) else {
        return Vec::new();
    };
    let Some(format) = crate::calls::string_value(format) else {
        return Vec::new();
    };
    let count = conversions(&format).len();
    values.into_iter().skip(1).take(count).collect()
}

/// The conversion letters of a format string, one per value it takes.
pub(crate) fn conversions(format: &str) -> Vec<char> {
    let mut found = Vec::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        // Flags, width and precision, then the conversion (`%%` takes none).
        if let Some(c) = chars.find(|c| c.is_ascii_alphabetic() || *c == '%')
            && c != '%'
        {
            found.push(c);
        }
    }
    found
}

/// Calls `f` on every operand of an operation that needs a number or a
/// string, and every argument of a `redis.call`, in tree order.
pub(crate) fn each_operand(cx: &Context<'_>, f: impl FnMut(&Expression, Operand)) {
    let mut finder = Operands { cx, f };
    cx.visit(&mut finder);
}

struct Operands<'c, 'a, F> {
    cx: &'c Context<'a>,
    f: F,
}

impl<F: FnMut(&Expression, Operand)> Operands<'_, '_, F> {
    fn chain<'s>(&mut self, prefix: &Prefix, suffixes: impl Iterator<Item = &'s Suffix>) {
        let Some(start) = prefix.start_position().map(|p| p.bytes()) else {
            return;
        };
        for suffix in suffixes {
            let Suffix::Call(Call::AnonymousCall(args)) = suffix else {
                continue;
            };
            let end = args.end_position().map_or(0, |p| p.bytes());
            if self.cx.types.call_at(start, end).is_none() {
                continue;
            }
            if let FunctionArgs::Parentheses { arguments, .. } = &**args {
                for arg in arguments.iter() {
                    (self.f)(unparenthesized(arg), Operand::CommandArg);
                }
            }
        }
    }
}

impl<F: FnMut(&Expression, Operand)> Visitor for Operands<'_, '_, F> {
    fn visit_expression(&mut self, expr: &Expression) {
        match expr {
            Expression::BinaryOperator { lhs, binop, rhs } => {
                let kind = match binop {
                    BinOp::Plus(_) => Operand::Arithmetic("+"),
                    BinOp::Minus(_) => Operand::Arithmetic("-"),
                    BinOp::Star(_) => Operand::Arithmetic("*"),
                    BinOp::Slash(_) => Operand::Arithmetic("/"),
                    BinOp::Percent(_) => Operand::Arithmetic("%"),
                    BinOp::Caret(_) => Operand::Arithmetic("^"),
                    BinOp::TwoDots(_) => Operand::Concat,
                    BinOp::LessThan(_) => Operand::Ordering("<"),
                    BinOp::LessThanEqual(_) => Operand::Ordering("<="),
                    BinOp::GreaterThan(_) => Operand::Ordering(">"),
                    BinOp::GreaterThanEqual(_) => Operand::Ordering(">="),
                    _ => return,
                };
                (self.f)(unparenthesized(lhs), kind);
                (self.f)(unparenthesized(rhs), kind);
            }
            Expression::UnaryOperator {
                unop: UnOp::Minus(_),
                expression,
            } => (self.f)(unparenthesized(expression), Operand::Arithmetic("-")),
            Expression::UnaryOperator {
                unop: UnOp::Hash(_),
                expression,
            } => (self.f)(unparenthesized(expression), Operand::Length),
            _ => {}
        }
    }

    fn visit_function_call(&mut self, call: &FunctionCall) {
        self.chain(call.prefix(), call.suffixes());
        if let Some((function, text)) = text_function(self.cx, call) {
            (self.f)(unparenthesized(text), Operand::Text(function));
        }
        for value in formatted_values(self.cx, call) {
            (self.f)(unparenthesized(value), Operand::Text("string.format"));
        }
    }

    fn visit_var_expression(&mut self, var: &VarExpression) {
        self.chain(var.prefix(), var.suffixes());
    }
}

/// The value of every `redis.call` argument, by its span's offsets.
pub(crate) fn command_args(
    cx: &Context<'_>,
) -> std::collections::HashMap<(usize, usize), Inferred> {
    let mut values = std::collections::HashMap::new();
    each_operand(cx, |expr, operand| {
        if operand == Operand::CommandArg {
            let span = cx.span_of(expr);
            values.insert((span.start.offset, span.end.offset), cx.types.of(expr));
        }
    });
    values
}

/// The local variable an expression names, if it is a plain name.
pub(crate) fn local_of(cx: &Context<'_>, expr: &Expression) -> Option<usize> {
    match expr {
        Expression::Var(Var::Name(token)) => cx.types.local(token),
        _ => None,
    }
}
