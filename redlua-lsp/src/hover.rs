//! Hover on `redis.call('CMD', ...)` / `redis.pcall`: the command's summary,
//! arity, the release that introduced it, and what Lua receives from it
//! (under RESP2, and under RESP3 too when the script calls
//! `redis.setresp(3)`), for the document's target.
//!
//! The hover is offered on the command's name (the first argument), on a
//! subcommand's name (the second), and on `call` / `pcall`.
//!
//! On a local variable (or a field of a local table the analyzer follows),
//! the hover is what the analyzer infers of its value at that place: its
//! types, where it comes from, and its range as a number
//! ([`redlua_analyzer::hover::value_at`]).

use crate::call_site::{CallSite, call_sites, code_tokens, token_at};
use crate::lex::Kind;
use crate::summaries;
use redlua_analyzer::commands::{self, ArgShape, Command};
use redlua_analyzer::hover::Values;
use redlua_analyzer::replies::{self, Protocol};
use redlua_analyzer::{ServerTarget, Vendor};
use std::fmt::Write as _;
use std::sync::Arc;

/// The hover text (Markdown) at byte `offset` of `text`, and the bytes it
/// is about.
pub fn at(text: &str, offset: usize, target: ServerTarget) -> Option<(String, (usize, usize))> {
    let tokens = code_tokens(text);
    let index = token_at(&tokens, offset)?;
    let sites = call_sites(&tokens, text);
    let site = sites
        .iter()
        .find(|site| site.function == index || matches!(site.arg_of(index), Some(0 | 1)))?;
    let name = site.literal(&tokens, text, 0)?;
    let command = commands::lookup(name)?;
    let sub = site
        .literal(&tokens, text, 1)
        .and_then(|sub| command.subcommand(sub));
    let on_sub = site.arg_of(index) == Some(1);
    if on_sub && sub.is_none() {
        return None;
    }
    let shown = sub.unwrap_or(command);
    let shapes = site.shapes(&tokens, text);
    let resp3 = text[..tokens[site.function].start].contains("setresp(3)");
    let markdown = describe(shown, &shapes, site, resp3, target);
    let token = tokens[index];
    Some((markdown, (token.start, token.end)))
}

/// Lua 5.1's reserved words.
const KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
    "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// The hover text (Markdown) for the local variable or followed field at
/// byte `offset` of `text`, from `values` (the document's inferred values,
/// asked for only when a name that is not a keyword is at `offset`), and
/// the bytes of its name.
pub fn local_at(
    text: &str,
    offset: usize,
    values: impl FnOnce() -> Arc<Option<Values>>,
) -> Option<(String, (usize, usize))> {
    let tokens = code_tokens(text);
    let token = tokens[token_at(&tokens, offset)?];
    if token.kind != Kind::Name || KEYWORDS.contains(&token.text(text)) {
        return None;
    }
    let info = values().as_ref().as_ref()?.at(offset)?;
    let markdown = format!("**`{}`**: {}", info.name, info.describe());
    Some((markdown, (info.span.start.offset, info.span.end.offset)))
}

/// The hover text for `command` called with `shapes` (its name first).
fn describe(
    command: &Command,
    shapes: &[ArgShape<'_>],
    site: &CallSite,
    resp3: bool,
    target: ServerTarget,
) -> String {
    let mut out = format!("**{}**", command.display_name());
    if let Some(summary) = summaries::of(command.name()) {
        let _ = write!(out, " — {summary}");
    }
    out.push_str("\n\n");
    let arity = command.arity_on(target);
    let words = if command.name().contains('|') { 2 } else { 1 };
    let args = arity.unsigned_abs() as usize - words.min(arity.unsigned_abs() as usize);
    let _ = writeln!(
        out,
        "- arity {arity}: {} {args} argument{} after the name",
        if arity < 0 { "at least" } else { "exactly" },
        if args == 1 { "" } else { "s" }
    );
    let reply = replies::lookup(command.name());
    if let Some(reply) = reply {
        let _ = writeln!(out, "- since Redis {}", reply.since);
    }
    if !command.available_on(target) {
        let first = command.since().first(target.vendor());
        let _ = match first {
            Some(first) => writeln!(
                out,
                "- **not on {}**: it came with {}",
                target.display_name(),
                first.display_name()
            ),
            None => writeln!(
                out,
                "- **not on {}**: no {} release has it",
                target.display_name(),
                match target.vendor() {
                    Vendor::Redis => "Redis",
                    Vendor::Valkey => "Valkey",
                }
            ),
        };
    } else if !command.allowed_in_scripts_on(target) {
        let _ = writeln!(
            out,
            "- **not allowed in scripts** on {}",
            target.display_name()
        );
    } else if command.is_write() {
        let _ = writeln!(out, "- writes (not allowed in read-only scripts)");
    }
    if let Some(types) = replies::of_call(shapes) {
        let _ = writeln!(out, "- reply (RESP2): {types}");
        if resp3 && let Some(types) = replies::of_call_in(Protocol::Resp3, shapes) {
            let _ = writeln!(out, "- reply (RESP3, after `redis.setresp(3)`): {types}");
        }
        if site.pcall {
            let _ = writeln!(
                out,
                "- or, from `redis.pcall`, an error table (`{{err = ...}}`)"
            );
        }
    }
    let _ = write!(out, "\nTarget: {}", target.display_name());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::Options;

    fn hover(text: &str, needle: &str) -> Option<String> {
        let offset = text.find(needle).unwrap() + 1;
        at(text, offset, ServerTarget::Redis7_0).map(|(markdown, _)| markdown)
    }

    #[test]
    fn a_command_shows_summary_arity_release_and_reply() {
        let text = "return redis.call('GET', KEYS[1])";
        let markdown = hover(text, "GET").unwrap();
        assert!(
            markdown.starts_with("**GET** — Returns the string value of a key."),
            "{markdown}"
        );
        assert!(
            markdown.contains("- arity 2: exactly 1 argument after the name"),
            "{markdown}"
        );
        assert!(markdown.contains("- since Redis 1.0.0"), "{markdown}");
        assert!(
            markdown.contains("- reply (RESP2): a string or `false` (a nil reply)"),
            "{markdown}"
        );
        assert_eq!(hover(text, "call"), Some(markdown));
        assert_eq!(hover(text, "KEYS"), None);
    }

    #[test]
    fn a_local_shows_its_inferred_value() {
        let text = "local v = redis.call('GET', KEYS[1])\nreturn v";
        let offset = text.rfind('v').unwrap();
        let values = || Arc::new(redlua_analyzer::hover::values(text, &Options::default()));
        let (markdown, (start, end)) = local_at(text, offset, values).unwrap();
        assert!(
            markdown.starts_with("**`v`**: a string or `false` (the reply of GET"),
            "{markdown}"
        );
        assert_eq!((start, end), (offset, offset + 1));
        assert_eq!(local_at(text, 0, values), None);
        assert_eq!(local_at(text, text.find("KEYS").unwrap(), values), None);
    }

    #[test]
    fn resp3_subcommands_and_missing_commands() {
        let text = "redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1])";
        let markdown = hover(text, "HGETALL").unwrap();
        assert!(
            markdown.contains("- reply (RESP3, after `redis.setresp(3)`): a map table"),
            "{markdown}"
        );
        let text = "return redis.call('OBJECT', 'ENCODING', KEYS[1])";
        let markdown = hover(text, "ENCODING").unwrap();
        assert!(markdown.starts_with("**OBJECT ENCODING**"), "{markdown}");
        let text = "return redis.call('HEXPIRE', KEYS[1], 10, 'FIELDS', 1, 'f')";
        let markdown = hover(text, "HEXPIRE").unwrap();
        assert!(
            markdown.contains("**not on Redis 7.0**: it came with Redis 7.4"),
            "{markdown}"
        );
        assert_eq!(hover("return redis.call('NOPE')", "NOPE"), None);
    }
}
