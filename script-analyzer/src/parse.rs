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

/// Finds the first place where brackets, `function`, `do`, `then`,
/// `repeat` ... nest deeper than [`MAX_NESTING`], counting roughly (strings
/// and comments are skipped). Overcounting only ever refuses scripts Redis
/// would refuse as well, since every counted token opens a syntax level.
fn too_deep(source: &str) -> Option<Span> {
    let bytes = source.as_bytes();
    let mut depth: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i += 2;
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
                i += 1;
                while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'[' => {
                if let Some(level) = long_bracket_level(&bytes[i..]) {
                    i = skip_long_bracket(bytes, i, level);
                    continue;
                }
                depth += 1;
            }
            b'(' | b'{' => depth += 1,
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match &source[start..i] {
                    "function" | "do" | "then" | "repeat" => depth += 1,
                    "end" | "until" => depth = depth.saturating_sub(1),
                    // `not`, `-` and `#` chains recurse too.
                    "not" => depth += 1,
                    _ => {}
                }
                if depth > MAX_NESTING {
                    return Some(Span::from_offsets(source, start, i));
                }
                continue;
            }
            _ => {}
        }
        if depth > MAX_NESTING {
            return Some(Span::from_offsets(source, i, i + 1));
        }
        i += 1;
    }
    None
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
