//! Parsing with full_moon in Lua 5.1 mode, behind a nesting guard.

use crate::{Diagnostic, Lint, Span};
use full_moon::LuaVersion;
use full_moon::ast::Ast;

/// The deepest nesting of brackets and blocks accepted.
///
/// full_moon recurses once per level and would overflow its stack (an abort,
/// which would take a compiler down with it) a few hundred levels deep. Redis's
/// own Lua refuses a chunk past about 200 syntax levels ("chunk has too many
/// syntax levels"), so refusing deeper input loses no script Redis would run.
pub const MAX_NESTING: usize = 200;

/// Parses `source` as Lua 5.1, or returns `syntax` diagnostics.
pub(crate) fn parse(source: &str) -> Result<Ast, Vec<Diagnostic>> {
    if let Some(span) = too_deep(source) {
        return Err(vec![
            Diagnostic::error(
                Lint::Syntax,
                span,
                format!("the script nests deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deeply nested")
            .with_note("Redis refuses such a chunk (\"chunk has too many syntax levels\")"),
        ]);
    }
    let result = full_moon::parse_fallible(source, LuaVersion::lua51());
    let errors = result.errors();
    if errors.is_empty() {
        return Ok(result.into_ast());
    }
    Err(errors
        .iter()
        .map(|error| {
            let (start, end) = error.range();
            let span = Span::from_offsets(source, start.bytes(), end.bytes());
            Diagnostic::error(Lint::Syntax, span, syntax_message(&error.error_message()))
        })
        .collect())
}

/// full_moon's messages, phrased for a Lua 5.1 reader.
fn syntax_message(message: &str) -> String {
    let mut message = message.trim().to_string();
    if let Some(first) = message.get(..1) {
        let lower = first.to_lowercase();
        message.replace_range(..1, &lower);
    }
    format!("Lua syntax error: {message}")
}

/// Finds the first place where the script nests deeper than [`MAX_NESTING`]
/// syntax levels, counting the way Lua 5.1's parser recurses: every open
/// bracket and block (`function`, `do`, `then`, `repeat`) is a level, and so
/// is every operator that makes the parser recurse within an expression
/// (unary `not`, `#`, `-`, and the right-associative `..` and `^`) until the
/// expression can have ended (a statement keyword, `=` or `;` at the same
/// bracket level). Strings and comments are skipped.
///
/// The count errs on the high side only, so it refuses nothing that Redis's
/// Lua (which stops at 200 levels: "chunk has too many syntax levels") would
/// run.
fn too_deep(source: &str) -> Option<Span> {
    let bytes = source.as_bytes();
    // For each open bracket or block, the operators counted at its level.
    let mut levels: Vec<usize> = vec![0];
    let mut depth: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        i += 1;
        match c {
            b'-' if bytes.get(i) == Some(&b'-') => {
                i += 1;
                if let Some(level) = long_bracket_level(&bytes[i..]) {
                    i = skip_long_bracket(bytes, i, level);
                } else {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' | b'\'' => {
                while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'[' if long_bracket_level(&bytes[start..]).is_some() => {
                let level = long_bracket_level(&bytes[start..]).unwrap_or(0);
                i = skip_long_bracket(bytes, start, level);
                continue;
            }
            b'(' | b'{' | b'[' => open(&mut levels, &mut depth),
            b')' | b'}' | b']' => close(&mut levels, &mut depth),
            b'-' | b'#' | b'^' => operator(&mut levels, &mut depth),
            b'.' if bytes.get(i) == Some(&b'.') && bytes.get(i + 1) != Some(&b'.') => {
                i += 1;
                operator(&mut levels, &mut depth);
            }
            b'=' | b';' => end_expression(&mut levels, &mut depth),
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match &source[start..i] {
                    "function" | "do" | "then" | "repeat" => open(&mut levels, &mut depth),
                    "end" | "until" => close(&mut levels, &mut depth),
                    "not" => operator(&mut levels, &mut depth),
                    "local" | "return" | "if" | "elseif" | "else" | "while" | "for" | "break"
                    | "in" => end_expression(&mut levels, &mut depth),
                    _ => {}
                }
            }
            _ => continue,
        }
        if depth > MAX_NESTING {
            return Some(Span::from_offsets(source, start, i));
        }
    }
    None
}

fn open(levels: &mut Vec<usize>, depth: &mut usize) {
    levels.push(0);
    *depth += 1;
}

fn close(levels: &mut Vec<usize>, depth: &mut usize) {
    if levels.len() > 1 {
        let operators = levels.pop().unwrap_or(0);
        *depth = depth.saturating_sub(operators + 1);
    }
}

fn operator(levels: &mut [usize], depth: &mut usize) {
    if let Some(current) = levels.last_mut() {
        *current += 1;
        *depth += 1;
    }
}

fn end_expression(levels: &mut [usize], depth: &mut usize) {
    if let Some(current) = levels.last_mut() {
        *depth -= *current;
        *current = 0;
    }
}

/// If `rest` starts a long bracket `[==[`, its level (the number of `=`).
fn long_bracket_level(rest: &[u8]) -> Option<usize> {
    if rest.first() != Some(&b'[') {
        return None;
    }
    let level = rest[1..].iter().take_while(|&&b| b == b'=').count();
    (rest.get(1 + level) == Some(&b'[')).then_some(level)
}

/// The index just past the long bracket of `level` that starts at `start`.
fn skip_long_bracket(bytes: &[u8], start: usize, level: usize) -> usize {
    let mut i = start + level + 2;
    while i < bytes.len() {
        if bytes[i] == b']'
            && bytes[i + 1..].iter().take(level).all(|&b| b == b'=')
            && bytes.get(i + 1 + level) == Some(&b']')
            && bytes.len() > i + level
        {
            return i + level + 2;
        }
        i += 1;
    }
    bytes.len()
}

/// The flags of a `#!lua flags=a,b` first line, if the script has one.
pub(crate) fn shebang_flags(source: &str) -> Option<Vec<String>> {
    let first = source.lines().next()?;
    let rest = first.strip_prefix("#!")?;
    let mut words = rest.split_whitespace();
    if words.next() != Some("lua") {
        return Some(Vec::new());
    }
    Some(
        words
            .filter_map(|w| w.strip_prefix("flags="))
            .flat_map(|f| f.split(','))
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect(),
    )
}
