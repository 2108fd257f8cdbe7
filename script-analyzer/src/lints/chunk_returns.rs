//! The values the main chunk returns: what Redis converts into the script's
//! reply. Returns inside functions are not the script's reply and are left out.

use super::Context;
use crate::facts::Ty;
use full_moon::ast::{Block, Expression, LastStmt, Return, Stmt};

/// What Redis may reply with for the script, from the inferred types of
/// the values the main chunk returns (see
/// [`ScriptInfo::returns`](crate::ScriptInfo::returns)).
pub(crate) fn reply_kinds(cx: &Context<'_>) -> Option<Vec<String>> {
    let block = cx.ast.nodes();
    let mut ty = Ty::EMPTY;
    let mut found = Vec::new();
    let mut bare = false;
    collect(block, &mut found, &mut bare);
    for expr in found {
        ty = ty.union(cx.types.of(expr).ty);
    }
    // Falling off the end, or `return` with no value, replies nil.
    if bare || !matches!(block.last_stmt(), Some(LastStmt::Return(_))) {
        ty = ty.union(Ty::NIL);
    }
    if ty.is_any() {
        return None;
    }
    let kinds: [(Ty, &str); 6] = [
        (Ty::NUMBER.union(Ty::TRUE), "integer"),
        // RESP3 doubles, big numbers and verbatim strings reach a RESP2
        // client as bulk strings, maps and sets as arrays.
        (
            Ty::STRING
                .union(Ty::DOUBLE)
                .union(Ty::BIG_NUMBER)
                .union(Ty::VERBATIM),
            "string",
        ),
        (Ty::STATUS, "status"),
        (Ty::ERROR, "error"),
        (
            Ty::ARRAY
                .union(Ty::PAIRS)
                .union(Ty::TABLE)
                .union(Ty::MAP)
                .union(Ty::SET),
            "array",
        ),
        (
            Ty::NIL
                .union(Ty::FALSE)
                .union(Ty::FUNCTION)
                .union(Ty::OTHER),
            "nil",
        ),
    ];
    Some(
        kinds
            .iter()
            .filter(|(t, _)| ty.intersects(*t))
            .map(|(_, name)| name.to_string())
            .collect(),
    )
}

/// Every expression returned by a `return` of the main chunk, including those
/// nested in `if`, `do` and loops (but not in functions).
pub(crate) fn main_chunk_returns(block: &Block) -> Vec<&Expression> {
    let mut found = Vec::new();
    collect(block, &mut found, &mut false);
    found
}

/// Every `return` statement of the main chunk, including those nested in
/// `if`, `do` and loops (but not in functions), with or without a value.
pub(crate) fn main_chunk_return_statements(block: &Block) -> Vec<&Return> {
    let mut found = Vec::new();
    statements(block, &mut found);
    found
}

/// Pushes each `return` of `block` and its nested blocks into `found`.
fn statements<'a>(block: &'a Block, found: &mut Vec<&'a Return>) {
    for stmt in block.stmts() {
        match stmt {
            Stmt::Do(inner) => statements(inner.block(), found),
            Stmt::If(if_stmt) => {
                statements(if_stmt.block(), found);
                for else_if in if_stmt.else_if().into_iter().flatten() {
                    statements(else_if.block(), found);
                }
                if let Some(else_block) = if_stmt.else_block() {
                    statements(else_block, found);
                }
            }
            Stmt::While(w) => statements(w.block(), found),
            Stmt::Repeat(r) => statements(r.block(), found),
            Stmt::NumericFor(f) => statements(f.block(), found),
            Stmt::GenericFor(f) => statements(f.block(), found),
            _ => {}
        }
    }
    if let Some(LastStmt::Return(ret)) = block.last_stmt() {
        found.push(ret);
    }
}

/// Pushes the first value of each `return` into `found`; sets `bare` when a
/// `return` has no value.
fn collect<'a>(block: &'a Block, found: &mut Vec<&'a Expression>, bare: &mut bool) {
    for ret in main_chunk_return_statements(block) {
        // Redis uses the first returned value only.
        match ret.returns().iter().next() {
            Some(first) => found.push(first),
            None => *bare = true,
        }
    }
}

/// Strips parentheses.
pub(crate) fn unparenthesized(mut expr: &Expression) -> &Expression {
    while let Expression::Parentheses { expression, .. } = expr {
        expr = expression;
    }
    expr
}

#[cfg(test)]
mod tests {
    use crate::{Options, analyze};

    fn returns(source: &str) -> Option<Vec<String>> {
        analyze(source, &Options::default()).info.returns
    }

    #[test]
    fn inferred_replies() {
        let kinds = |k: &[&str]| Some(k.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            returns("return redis.call('INCR', KEYS[1])"),
            kinds(&["integer"])
        );
        assert_eq!(
            returns("return redis.call('GET', KEYS[1])"),
            kinds(&["string", "nil"])
        );
        assert_eq!(
            returns("if ARGV[1] == 'a' then return end return {1}"),
            kinds(&["array", "nil"])
        );
        assert_eq!(returns("redis.call('SET', KEYS[1], 1)"), kinds(&["nil"]));
        assert_eq!(
            returns("return redis.pcall('SET', KEYS[1], 1)"),
            kinds(&["status", "error"])
        );
        assert_eq!(returns("return true"), kinds(&["integer"]));
        assert_eq!(returns("return cjson.decode(ARGV[1])"), None);
        assert_eq!(returns("return ("), None);
    }
}
