//! Where a node of the syntax tree is in the source, closing brackets
//! included.
//!
//! full_moon's `Node::end_position` of an index in brackets (`KEYS[2]`,
//! `x['name']`) is the end of the expression inside: it stops before the
//! closing `]`, and so does the end of every node that ends with one (a
//! variable, an expression, an argument). Spans are taken here, through
//! [`node_range`], so that carets cover the whole node.

use crate::diagnostic::Span;
use full_moon::node::Node;

/// The byte range `start..end` of `node`, `end` past its last token, or
/// `None` for a node without a position (only in a tree that failed to
/// parse).
pub(crate) fn node_range(source: &str, node: &impl Node) -> Option<(usize, usize)> {
    let (start, end) = node.range()?;
    let (start, end) = (start.bytes(), end.bytes());
    // Cheap test first: only a node followed by `]` (or a comment, which may
    // hide one) can have stopped short; then the last token decides.
    let next = source
        .get(end..)
        .and_then(|rest| rest.trim_start().chars().next());
    if !matches!(next, Some(']' | '-')) {
        return Some((start, end));
    }
    let last = node
        .tokens()
        .map(|token| token.token().end_position().bytes())
        .max()
        .unwrap_or(end);
    Some((start, end.max(last)))
}

/// The span of `node` in `source` (see [`node_range`]); the default span
/// for a node without a position.
pub(crate) fn node_span(source: &str, node: &impl Node) -> Span {
    match node_range(source, node) {
        Some((start, end)) => Span::from_offsets(source, start, end),
        None => Span::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use full_moon::ast::{Expression, Stmt};

    /// The text of the spans of the expressions returned by `source`'s
    /// `return` statement.
    fn returned(source: &str) -> Vec<String> {
        let ast = full_moon::parse(source).expect("valid Lua");
        let Some(full_moon::ast::LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
            panic!("no return in {source}");
        };
        ret.returns()
            .iter()
            .map(|expr: &Expression| {
                let span = node_span(source, expr);
                source[span.start.offset..span.end.offset].to_owned()
            })
            .collect()
    }

    #[test]
    fn spans_end_after_the_closing_bracket() {
        assert_eq!(
            returned("return KEYS[2], x['name'], t[ a ] , y[1][2]"),
            ["KEYS[2]", "x['name']", "t[ a ]", "y[1][2]"]
        );
        assert_eq!(
            returned("return t[i --[[ i ]] ] --[[ done ]]"),
            ["t[i --[[ i ]] ]"]
        );
    }

    #[test]
    fn other_spans_are_unchanged() {
        assert_eq!(
            returned("return f(a), x.y, {1, 2}, (t[1]), a - b"),
            ["f(a)", "x.y", "{1, 2}", "(t[1])", "a - b"]
        );
        // An expression inside brackets does not take the bracket.
        let source = "local v = t[a + b]";
        let ast = full_moon::parse(source).expect("valid Lua");
        let Some(Stmt::LocalAssignment(local)) = ast.nodes().stmts().next() else {
            panic!("no local");
        };
        let Some(Expression::Var(full_moon::ast::Var::Expression(var))) =
            local.expressions().iter().next()
        else {
            panic!("no var");
        };
        let Some(full_moon::ast::Suffix::Index(full_moon::ast::Index::Brackets {
            expression, ..
        })) = var.suffixes().next()
        else {
            panic!("no index");
        };
        let span = node_span(source, &**expression);
        assert_eq!(&source[span.start.offset..span.end.offset], "a + b");
    }
}
