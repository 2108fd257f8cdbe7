//! Where a script reads `KEYS` and `ARGV`: shared by the `arity` and
//! `dynamic_access` lints.

use super::Context;
use crate::Span;
use full_moon::ast::{Expression, FunctionCall, Index, Prefix, Suffix, UnOp, VarExpression};
use full_moon::tokenizer::{TokenReference, TokenType};
use full_moon::visitors::Visitor;
use std::collections::HashSet;

/// `KEYS` or `ARGV`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Keys,
    Argv,
}

impl Table {
    fn from_name(name: &str) -> Option<Table> {
        match name {
            "KEYS" => Some(Table::Keys),
            "ARGV" => Some(Table::Argv),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Keys => "KEYS",
            Table::Argv => "ARGV",
        }
    }
}

/// How one use of `KEYS` / `ARGV` reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Access {
    /// `KEYS[n]` with a positive integer literal `n`.
    Index(u32),
    /// `KEYS[0]`, `KEYS[-1]`, `KEYS[1.5]`, `KEYS.x`: never a valid input.
    Invalid(String),
    /// A computed index, `#KEYS`, or the table as a whole.
    Dynamic(&'static str),
}

/// One use of `KEYS` / `ARGV`.
#[derive(Debug, Clone)]
pub(crate) struct Use {
    pub table: Table,
    pub access: Access,
    pub span: Span,
}

/// Every use of the global `KEYS` and `ARGV`, in source order.
pub(crate) fn uses(cx: &Context<'_>) -> Vec<Use> {
    let mut finder = Finder {
        cx,
        uses: Vec::new(),
        seen: HashSet::new(),
    };
    cx.visit(&mut finder);
    // What the visitor did not see indexed is a use of the whole table
    // (`#KEYS`, `unpack(ARGV)`, `local k = KEYS`).
    for read in &cx.model.global_reads {
        let Some(table) = Table::from_name(&read.name) else {
            continue;
        };
        if !cx.in_scope(read.start) {
            continue;
        }
        if finder.seen.contains(&read.start) {
            continue;
        }
        let length = cx.source[..read.start].trim_end().ends_with('#');
        finder.uses.push(Use {
            table,
            access: Access::Dynamic(if length {
                "its length"
            } else {
                "the whole table"
            }),
            span: Span::from_offsets(cx.source, read.start, read.end),
        });
    }
    finder.uses.sort_by_key(|u| u.span.start.offset);
    finder.uses
}

struct Finder<'c, 'a> {
    cx: &'c Context<'a>,
    uses: Vec<Use>,
    /// Offsets of the `KEYS` / `ARGV` tokens already classified.
    seen: HashSet<usize>,
}

impl Finder<'_, '_> {
    fn check<'s>(&mut self, prefix: &Prefix, mut suffixes: impl Iterator<Item = &'s Suffix>) {
        let Prefix::Name(token) = prefix else {
            return;
        };
        let Some(table) = Table::from_name(&token.token().to_string()) else {
            return;
        };
        if !self.cx.model.is_global(token) {
            return;
        }
        let Some(Suffix::Index(index)) = suffixes.next() else {
            return;
        };
        let start = token.token().start_position().bytes();
        let end = crate::node_range::node_range(self.cx.source, index).map_or(start, |(_, e)| e);
        let access = classify(index);
        self.seen.insert(start);
        self.uses.push(Use {
            table,
            access,
            span: Span::from_offsets(self.cx.source, start, end),
        });
    }
}

impl Visitor for Finder<'_, '_> {
    fn visit_var_expression(&mut self, node: &VarExpression) {
        self.check(node.prefix(), node.suffixes());
    }

    fn visit_function_call(&mut self, node: &FunctionCall) {
        self.check(node.prefix(), node.suffixes());
    }
}

/// What `[index]` or `.name` after `KEYS` reads.
fn classify(index: &Index) -> Access {
    match index {
        Index::Brackets { expression, .. } => classify_expression(expression),
        Index::Dot { name, .. } => Access::Invalid(format!("`.{}` is not an index", name.token())),
        #[allow(unreachable_patterns)]
        _ => Access::Dynamic("a computed index"),
    }
}

fn classify_expression(expression: &Expression) -> Access {
    match expression {
        Expression::Number(token) => match number(token) {
            Some(n) if n.fract() == 0.0 && n >= 1.0 && n <= f64::from(u32::MAX) => {
                Access::Index(n as u32)
            }
            Some(n) if n.fract() == 0.0 => Access::Invalid(format!(
                "index {} is out of range: the first is 1",
                token.token()
            )),
            _ => Access::Invalid(format!("index {} is not an integer", token.token())),
        },
        Expression::UnaryOperator {
            unop: UnOp::Minus(_),
            expression,
        } => match &**expression {
            Expression::Number(token) => Access::Invalid(format!(
                "index -{} is out of range: the first is 1",
                token.token()
            )),
            _ => Access::Dynamic("a computed index"),
        },
        Expression::Parentheses { expression, .. } => classify_expression(expression),
        Expression::String(token) => {
            Access::Invalid(format!("{} is a string, not an index", token.token()))
        }
        Expression::Symbol(token) => {
            Access::Invalid(format!("`{}` is not an index", token.token()))
        }
        _ => Access::Dynamic("a computed index"),
    }
}

/// The value of a Lua number literal (decimal or hex).
pub(crate) fn number(token: &TokenReference) -> Option<f64> {
    let TokenType::Number { text } = token.token_type() else {
        return None;
    };
    let text = text.as_str();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    text.parse().ok()
}
