//! Where the units of a script are: the function statements of the main
//! chunk written on lines of their own (see the module's documentation).

use crate::padding::Layout;
use full_moon::ast::{Ast, Stmt};

/// Whether a line break (`\n` or `\r\n`) starts at byte `at` of `text`.
pub(super) fn line_break_at(text: &str, at: usize) -> bool {
    text.get(at..)
        .is_some_and(|rest| rest.starts_with('\n') || rest.starts_with("\r\n"))
}

/// The units of `text`, by their lines (see the module's documentation):
/// (start, length up to the last line break) of each.
pub(super) fn candidates(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line
            .strip_suffix("\r\n")
            .or_else(|| line.strip_suffix('\n'))
            .unwrap_or(line);
        match start {
            None if content.starts_with("local function ") || content.starts_with("function ") => {
                start = Some(offset);
            }
            Some(at)
                if line.ends_with('\n')
                    && content
                        .strip_prefix("end")
                        .is_some_and(|rest| rest.chars().all(|c| c == ' ' || c == '\t')) =>
            {
                found.push((at, offset + content.len() - at));
                start = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    found
}

/// For each unit of `layout`, the index of its statement in the main
/// chunk of `ast` (the parse of `padded`) and whether it declares a local
/// (`local function`); `None` when a unit is not exactly one function
/// statement.
pub(super) fn units(ast: &Ast, layout: &Layout, padded: &str) -> Option<Vec<(usize, bool)>> {
    let stmts: Vec<&Stmt> = ast.nodes().stmts().collect();
    let mut found = Vec::with_capacity(layout.slots.len());
    let mut next = 0;
    for i in 0..layout.slots.len() {
        let (start, end) = layout.unit(i);
        // The statement that starts the unit's first line.
        while next < stmts.len() && stmt_start(stmts[next])? < start {
            next += 1;
        }
        let stmt = stmts.get(next)?;
        if stmt_start(stmt)? != start || !fills(stmt, padded, end) {
            return None;
        }
        let local = match stmt {
            Stmt::LocalFunction(_) => true,
            Stmt::FunctionDeclaration(decl)
                if decl.name().names().len() == 1 && decl.name().method_name().is_none() =>
            {
                false
            }
            _ => return None,
        };
        found.push((next, local));
        next += 1;
    }
    Some(found)
}

/// Where a statement's first token starts.
pub(super) fn stmt_start(stmt: &Stmt) -> Option<usize> {
    full_moon::node::Node::start_position(stmt).map(|p| p.bytes())
}

/// Whether `stmt`'s last token ends the unit that ends at `end` (only
/// spaces follow it there).
pub(super) fn fills(stmt: &Stmt, padded: &str, end: usize) -> bool {
    let Some(last) = full_moon::node::Node::end_position(stmt).map(|p| p.bytes()) else {
        return false;
    };
    last <= end
        && padded
            .get(last..end)
            .is_some_and(|rest| rest.chars().all(|c| c == ' ' || c == '\t'))
}
