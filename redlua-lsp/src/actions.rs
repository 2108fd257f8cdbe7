//! Code actions: the fixes the lints suggest, as edits.
//!
//! - `nil_comparison` (`v == nil` on a reply that is never nil): test it as
//!   a condition, `not v` (for `~= nil`, `v`), or compare with `false`.
//! - `integer_condition` (`if redis.call('EXISTS', k) then`): compare with
//!   `== 1`, or `> 0` for a count; under `not`, in parentheses.
//! - `lexical_comparison` (`redis.call('GET', k) < ARGV[1]`): compare
//!   numbers, `tonumber(a) < tonumber(b)` (a number literal, or an operand
//!   already converted, is left as it is).
//! - Any lint that can be allowed, in a script no Rust struct declares:
//!   "Allow `<lint>` in this script's header", which adds the lint to the
//!   header's `allow=` (`-- redlua: allow=literal_key`), adding the setting
//!   or the header line if there is none (after a library's `#!lua`
//!   line, where the allow holds for the whole library).
//! - The same in a script a Rust struct declares: "Allow `<lint>` in the
//!   `#[redis_script]` of `<Struct>`", which adds the lint to the
//!   attribute's `allow(...)`, or adds `allow(<lint>)`, in the Rust file
//!   as last read (on open and save); in a library, for a finding in a
//!   function a struct declares: "Allow `<lint>` in the
//!   `#[redis_function]` of `<Struct>`".
//!
//! Invariants: an edit replaces exactly the finding's range, and is offered
//! only when the text there has the shape the lint reported (a document
//! edited since its last analysis gets no stale edit).

use crate::call_site::code_tokens;
use crate::diagnostics::Finding;
use crate::lex::{Kind, Token};
use crate::rust_decl::Place;
use crate::settings::Settings;
use redlua_analyzer::{Diagnostic, Lint, header};

/// A fix: its title, whether it is the preferred one, and the text that
/// replaces bytes `start..end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What it does.
    pub title: String,
    /// The first fix of a finding is the preferred one.
    pub preferred: bool,
    /// The bytes replaced.
    pub range: (usize, usize),
    /// The new text.
    pub text: String,
}

/// The fixes for `finding` on `text`.
pub fn fixes(text: &str, finding: &Diagnostic) -> Vec<Fix> {
    let Some(span) = finding.primary_span() else {
        return Vec::new();
    };
    let (start, end) = (span.start.offset, span.end.offset);
    let Some(written) = text.get(start..end) else {
        return Vec::new();
    };
    match finding.lint {
        Lint::NilComparison => nil_comparison(written, (start, end)),
        Lint::IntegerCondition => integer_condition(text, written, (start, end)),
        Lint::LexicalComparison => lexical_comparison(written, (start, end)),
        _ => Vec::new(),
    }
}

/// The fix that allows `finding`'s lint in the header of `text`, for a
/// script whose settings come from its header.
pub fn allow_in_header(text: &str, finding: &Diagnostic, settings: &Settings) -> Option<Fix> {
    if settings.rust.is_some() || settings.header_error.is_some() {
        return None;
    }
    let edit = header::allow_edit(text, finding.lint)?;
    Some(Fix {
        title: format!("Allow `{}` in this script's header", finding.lint),
        preferred: false,
        range: (edit.start, edit.end),
        text: edit.text,
    })
}

/// The fix that allows `finding`'s lint in the `#[redis_script]` (or, for
/// a library's function, `#[redis_function]`) attribute that declares it:
/// its title, where the text goes in the Rust file, and the text.
pub fn allow_in_attribute(
    finding: &Finding,
    settings: &Settings,
) -> Option<(String, Place, String)> {
    let rust = finding.declaration(settings)?;
    let at = rust.allow_at.as_ref()?;
    let lint = finding.diagnostic.lint;
    if !lint.can_be_allowed() || rust.allow.contains(&lint) {
        return None;
    }
    let attribute = match rust.function {
        Some(_) => "redis_function",
        None => "redis_script",
    };
    Some((
        format!("Allow `{lint}` in the `#[{attribute}]` of `{}`", rust.name),
        at.place.clone(),
        format!("{}{lint}{}", at.before, at.after),
    ))
}

fn nil_comparison(written: &str, range: (usize, usize)) -> Vec<Fix> {
    let tokens = code_tokens(written);
    let word = |t: &Token| t.text(written);
    let Some(op) = top_level(&tokens, written)
        .into_iter()
        .find(|&i| matches!(word(&tokens[i]), "==" | "~="))
    else {
        return Vec::new();
    };
    let (left, right) = (&tokens[..op], &tokens[op + 1..]);
    let (value, nil_first) = match (left, right) {
        (_, [nil]) if word(nil) == "nil" && !left.is_empty() => (left, false),
        ([nil], _) if word(nil) == "nil" && !right.is_empty() => (right, true),
        _ => return Vec::new(),
    };
    let value_text = &written[value[0].start..value[value.len() - 1].end];
    let equal = word(&tokens[op]) == "==";
    let operand = if needs_parens(value, written) {
        format!("({value_text})")
    } else {
        value_text.to_string()
    };
    let condition = if equal {
        format!("not {operand}")
    } else {
        value_text.to_string()
    };
    let op_text = word(&tokens[op]);
    let with_false = if nil_first {
        format!("false {op_text} {value_text}")
    } else {
        format!("{value_text} {op_text} false")
    };
    vec![
        Fix {
            title: format!("Test the reply as a condition: `{condition}`"),
            preferred: true,
            range,
            text: condition,
        },
        Fix {
            title: format!("Compare with `false`: `{with_false}`"),
            preferred: false,
            range,
            text: with_false,
        },
    ]
}

fn integer_condition(text: &str, written: &str, range: (usize, usize)) -> Vec<Fix> {
    if written.trim().is_empty() {
        return Vec::new();
    }
    // Under `not`, the comparison needs parentheses: `not (x == 1)`.
    let before = code_tokens(&text[..range.0]);
    let negated = before.last().is_some_and(|t| t.text(text) == "not");
    let operand = if needs_parens(&code_tokens(written), written) {
        format!("({written})")
    } else {
        written.to_string()
    };
    [("== 1", true), ("> 0", false)]
        .into_iter()
        .map(|(comparison, preferred)| {
            let compared = format!("{operand} {comparison}");
            let text = if negated {
                format!("({compared})")
            } else {
                compared
            };
            Fix {
                title: format!("Compare the integer reply: `{comparison}`"),
                preferred,
                range,
                text,
            }
        })
        .collect()
}

fn lexical_comparison(written: &str, range: (usize, usize)) -> Vec<Fix> {
    let tokens = code_tokens(written);
    let Some(op) = top_level(&tokens, written)
        .into_iter()
        .find(|&i| matches!(tokens[i].text(written), "<" | "<=" | ">" | ">="))
    else {
        return Vec::new();
    };
    let (left, right) = (&tokens[..op], &tokens[op + 1..]);
    if left.is_empty() || right.is_empty() {
        return Vec::new();
    }
    let number = |side: &[Token]| {
        let text = &written[side[0].start..side[side.len() - 1].end];
        let numeric = (side.len() == 1 && side[0].kind == Kind::Number)
            || (text.starts_with("tonumber(") && !needs_parens(side, written));
        if numeric {
            text.to_string()
        } else {
            format!("tonumber({text})")
        }
    };
    let text = format!(
        "{} {} {}",
        number(left),
        tokens[op].text(written),
        number(right)
    );
    vec![Fix {
        title: format!("Compare numbers: `{text}`"),
        preferred: true,
        range,
        text,
    }]
}

/// The indices of the tokens outside any brackets.
fn top_level(tokens: &[Token], text: &str) -> Vec<usize> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.text(text) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(i),
            _ => {}
        }
    }
    out
}

/// Whether the expression has an operator outside brackets, so that a
/// unary `not` or a comparison next to it needs parentheses.
fn needs_parens(tokens: &[Token], text: &str) -> bool {
    top_level(tokens, text).into_iter().any(|i| {
        let t = &tokens[i];
        let word = t.text(text);
        (t.kind == Kind::Punct && !matches!(word, "." | ":"))
            || matches!(word, "and" | "or" | "not")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::{Options, analyze};

    fn fixed(source: &str, lint: Lint) -> Vec<String> {
        let report = analyze(source, &Options::default());
        let finding = report
            .diagnostics
            .iter()
            .find(|d| d.lint == lint)
            .unwrap_or_else(|| panic!("no {lint:?} in {:?}", report.diagnostics));
        fixes(source, finding)
            .into_iter()
            .map(|fix| {
                let mut out = source.to_string();
                out.replace_range(fix.range.0..fix.range.1, &fix.text);
                out
            })
            .collect()
    }

    #[test]
    fn a_nil_comparison_becomes_a_condition_or_a_false_comparison() {
        let source =
            "local v = redis.call('GET', KEYS[1])\nif v == nil then return 0 end\nreturn 1\n";
        let out = fixed(source, Lint::NilComparison);
        assert!(out[0].contains("\nif not v then"), "{}", out[0]);
        assert!(out[1].contains("\nif v == false then"), "{}", out[1]);
        let source = "if nil ~= redis.call('GET', KEYS[1]) then return 0 end\nreturn 1\n";
        let out = fixed(source, Lint::NilComparison);
        assert!(
            out[0].starts_with("if redis.call('GET', KEYS[1]) then"),
            "{}",
            out[0]
        );
        assert!(
            out[1].starts_with("if false ~= redis.call('GET', KEYS[1]) then"),
            "{}",
            out[1]
        );
    }

    #[test]
    fn a_lexical_comparison_compares_numbers() {
        let source = "if redis.call('GET', KEYS[1]) < ARGV[1] then return 1 end\nreturn 0\n";
        let out = fixed(source, Lint::LexicalComparison);
        assert_eq!(
            out,
            [
                "if tonumber(redis.call('GET', KEYS[1])) < tonumber(ARGV[1]) then return 1 end\nreturn 0\n"
            ]
        );
    }

    #[test]
    fn an_integer_condition_is_compared() {
        let source = "if redis.call('EXISTS', KEYS[1]) then return 1 end\nreturn 0\n";
        let out = fixed(source, Lint::IntegerCondition);
        assert!(
            out[0].starts_with("if redis.call('EXISTS', KEYS[1]) == 1 then"),
            "{}",
            out[0]
        );
        assert!(
            out[1].starts_with("if redis.call('EXISTS', KEYS[1]) > 0 then"),
            "{}",
            out[1]
        );
        let source = "if not redis.call('EXISTS', KEYS[1]) then return 1 end\nreturn 0\n";
        let out = fixed(source, Lint::IntegerCondition);
        assert!(
            out[0].starts_with("if not (redis.call('EXISTS', KEYS[1]) == 1) then"),
            "{}",
            out[0]
        );
    }
}
