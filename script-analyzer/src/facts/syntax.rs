//! Small reads of the syntax tree: literal index keys, number literals,
//! an expression without its parentheses, where a call ends.

use full_moon::ast::{Call, Expression, Index};
use full_moon::node::Node;
use full_moon::tokenizer::{TokenReference, TokenType};

/// Where a call suffix ends (its closing parenthesis, string or brace).
pub(super) fn call_end(call: &Call) -> usize {
    let args = match call {
        Call::AnonymousCall(args) => &**args,
        Call::MethodCall(method) => method.args(),
        #[allow(unreachable_patterns)]
        _ => return 0,
    };
    args.end_position().map_or(0, |p| p.bytes())
}

/// A literal index.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    /// `.name` or `['name']`.
    Name(String),
    /// `[3]`.
    Number(f64),
}

/// The literal key of an index, if it is one.
pub fn index_key(index: &Index) -> Option<Key> {
    match index {
        Index::Dot { name, .. } => Some(Key::Name(name.token().to_string())),
        Index::Brackets { expression, .. } => match &**expression {
            Expression::String(token) => match token.token_type() {
                TokenType::StringLiteral { literal, .. } => Some(Key::Name(literal.to_string())),
                _ => None,
            },
            Expression::Number(token) => number(token).map(Key::Number),
            _ => None,
        },
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A number literal's value.
pub fn number(token: &TokenReference) -> Option<f64> {
    let TokenType::Number { text } = token.token_type() else {
        return None;
    };
    let text = text.as_str();
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    text.parse().ok()
}

/// `expr` without its parentheses.
pub fn unparenthesized(mut expr: &Expression) -> &Expression {
    while let Expression::Parentheses { expression, .. } = expr {
        expr = expression;
    }
    expr
}
