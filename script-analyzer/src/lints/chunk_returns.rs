//! The values the main chunk returns: what Redis converts into the script's
//! reply. Returns inside functions are not the script's reply and are left out.

use full_moon::ast::{Block, Expression, LastStmt, Stmt};

/// Every expression returned by a `return` of the main chunk, including those
/// nested in `if`, `do` and loops (but not in functions).
pub(crate) fn main_chunk_returns(block: &Block) -> Vec<&Expression> {
    let mut found = Vec::new();
    collect(block, &mut found);
    found
}

fn collect<'a>(block: &'a Block, found: &mut Vec<&'a Expression>) {
    for stmt in block.stmts() {
        match stmt {
            Stmt::Do(inner) => collect(inner.block(), found),
            Stmt::If(if_stmt) => {
                collect(if_stmt.block(), found);
                for else_if in if_stmt.else_if().into_iter().flatten() {
                    collect(else_if.block(), found);
                }
                if let Some(else_block) = if_stmt.else_block() {
                    collect(else_block, found);
                }
            }
            Stmt::While(w) => collect(w.block(), found),
            Stmt::Repeat(r) => collect(r.block(), found),
            Stmt::NumericFor(f) => collect(f.block(), found),
            Stmt::GenericFor(f) => collect(f.block(), found),
            _ => {}
        }
    }
    if let Some(LastStmt::Return(ret)) = block.last_stmt() {
        // Redis uses the first returned value only.
        if let Some(first) = ret.returns().iter().next() {
            found.push(first);
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
