//! Completion: what may be written at a place of a script, for the
//! document's target and header.
//!
//! - In the first string argument of `redis.call(` / `redis.pcall(`: the
//!   commands the target has and lets scripts call (upper case, or lower
//!   case when the typed part is), each with its arity and summary; in the
//!   second, the subcommands of a container command (`OBJECT`, `XINFO`).
//! - After `redis.`, `cjson.`, `string.` ... (or `:`): the library's members.
//! - After `KEYS[` / `ARGV[`: the indices the header declares.
//! - Elsewhere in code: the sandbox's globals, and `KEYS[n]` / `ARGV[n]` up
//!   to the declared counts.
//! - Nothing in a comment, in another string, or in a number.

use crate::call_site::{call_sites, token_at};
use crate::lex::{self, Kind, Token};
use crate::summaries;
use lsp_types::{CompletionItem, CompletionItemKind, InsertTextFormat};
use redlua_analyzer::commands::ArgShape;
use redlua_analyzer::header::Header;
use redlua_analyzer::{ServerTarget, commands, globals};

/// An item, and the edit it makes (`None`: its label replaces the client's
/// word at the cursor).
pub type Item = (CompletionItem, Option<Replace>);

/// The bytes of the text an item replaces, and what with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replace {
    /// The bytes replaced.
    pub range: (usize, usize),
    /// The new text (a snippet when the item says so).
    pub text: String,
}

/// The completions at byte `offset` of `text`; `snippets` when the client
/// takes snippets (a command then comes with placeholders for its required
/// arguments).
pub fn at(
    text: &str,
    offset: usize,
    target: ServerTarget,
    header: &Header,
    snippets: bool,
) -> Vec<Item> {
    let all = lex::tokens(text);
    if let Some(i) = inside(&all, offset)
        && all[i].kind == Kind::Comment
    {
        return Vec::new();
    }
    let tokens: Vec<Token> = all
        .into_iter()
        .filter(|t| t.kind != Kind::Comment)
        .collect();
    let word = |i: usize| tokens.get(i).map_or("", |t| t.text(text));
    let current = token_at(&tokens, offset);
    if let Some(i) = current
        && tokens[i].kind == Kind::String
    {
        return in_string(text, &tokens, i, offset, target, snippets);
    }
    // The token before the word being typed (or before the cursor).
    let before = match current {
        Some(i) if matches!(tokens[i].kind, Kind::Name | Kind::Number) => i.checked_sub(1),
        Some(_) => return Vec::new(),
        None => tokens.partition_point(|t| t.end <= offset).checked_sub(1),
    };
    if current.is_some_and(|i| tokens[i].kind == Kind::Number) {
        // Only an index after `KEYS[` / `ARGV[`.
        let indexing = before.is_some_and(|b| word(b) == "[" && b > 0 && is_input(word(b - 1)));
        if !indexing {
            return Vec::new();
        }
    }
    if let Some(b) = before {
        match word(b) {
            "." | ":" if b > 0 => {
                return globals::members(word(b - 1))
                    .unwrap_or(&[])
                    .iter()
                    .map(|member| (item(member, CompletionItemKind::FIELD, None), None))
                    .collect();
            }
            "[" if b > 0 && is_input(word(b - 1)) => {
                return (1..=declared(header, word(b - 1)))
                    .map(|n| (item(&n.to_string(), CompletionItemKind::VALUE, None), None))
                    .collect();
            }
            _ => {}
        }
    }
    let mut items: Vec<Item> = globals::names()
        .map(|name| {
            let kind = if globals::members(name).is_some() {
                CompletionItemKind::MODULE
            } else {
                CompletionItemKind::FUNCTION
            };
            (item(name, kind, None), None)
        })
        .collect();
    for input in ["KEYS", "ARGV"] {
        for n in 1..=declared(header, input) {
            let label = format!("{input}[{n}]");
            items.push((item(&label, CompletionItemKind::VARIABLE, None), None));
        }
    }
    items
}

/// Completions in the string token `i`: command names in a call's first
/// argument, subcommand names in its second.
fn in_string(
    text: &str,
    tokens: &[Token],
    i: usize,
    offset: usize,
    target: ServerTarget,
    snippets: bool,
) -> Vec<Item> {
    let token = tokens[i];
    if offset <= token.start || (token.closed && offset >= token.end) {
        return Vec::new(); // before the opening quote, or after the closing one
    }
    let sites = call_sites(tokens, text);
    let Some(site) = sites.iter().find(|s| s.arg_of(i).is_some()) else {
        return Vec::new();
    };
    let start = token.inner.0.min(offset);
    let end = if token.closed { token.inner.1 } else { offset };
    let typed = &text[start..offset.max(start)];
    let lower = typed.chars().any(|c| c.is_ascii_lowercase())
        && !typed.chars().any(|c| c.is_ascii_uppercase());
    let spell = |name: String| {
        if lower {
            name.to_ascii_lowercase()
        } else {
            name
        }
    };
    let candidates: Vec<&commands::Command> = match site.arg_of(i) {
        Some(0) => commands::all().iter().collect(),
        Some(1) => match site.literal(tokens, text, 0).and_then(commands::lookup) {
            Some(container) => container.subcommands().iter().collect(),
            None => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    candidates
        .into_iter()
        .filter(|c| c.available_on(target) && c.allowed_in_scripts_on(target))
        .map(|c| {
            let name = c
                .name()
                .rsplit('|')
                .next()
                .unwrap_or(c.name())
                .to_ascii_uppercase();
            let detail = format!("arity {}", c.arity_on(target));
            let label = spell(name);
            let mut completion = item(&label, CompletionItemKind::KEYWORD, Some(detail));
            completion.documentation =
                summaries::of(c.name()).map(|s| lsp_types::Documentation::String(s.to_string()));
            let plain = Replace {
                range: (start, end),
                text: label.clone(),
            };
            let whole_call = site.arg_of(i) == Some(0) && site.args.len() == 1;
            let snippet = (snippets && whole_call)
                .then(|| arity_snippet(text, token, offset, c, target, &label))
                .flatten();
            if snippet.is_some() {
                completion.insert_text_format = Some(InsertTextFormat::SNIPPET);
            }
            (completion, Some(snippet.unwrap_or(plain)))
        })
        .collect()
}

/// The command's name and placeholders for its required arguments (`key`
/// where the command takes a key, `arg` elsewhere), closing the string:
/// `HSET', ${1:key}, ${2:arg}, ${3:arg}`. `None` for a command without
/// required arguments, one with subcommands, or a long-bracket string.
fn arity_snippet(
    text: &str,
    token: Token,
    offset: usize,
    command: &commands::Command,
    target: ServerTarget,
    label: &str,
) -> Option<Replace> {
    let quote = text[token.start..].chars().next()?;
    if (quote != '\'' && quote != '"') || !command.subcommands().is_empty() {
        return None;
    }
    let required = (command.arity_on(target).unsigned_abs() as usize).checked_sub(1)?;
    if required == 0 {
        return None;
    }
    let keys = command.key_positions(&vec![ArgShape::Value; required]);
    let mut snippet = format!("{label}{quote}");
    for n in 0..required {
        let name = if keys.contains(&n) { "key" } else { "arg" };
        snippet.push_str(&format!(", ${{{}:{name}}}", n + 1));
    }
    let end = if token.closed { token.end } else { offset };
    Some(Replace {
        range: (token.inner.0.min(offset), end),
        text: snippet,
    })
}

/// The token whose inside (not its edges) holds `offset`.
fn inside(tokens: &[Token], offset: usize) -> Option<usize> {
    let i = tokens
        .partition_point(|t| t.start < offset)
        .checked_sub(1)?;
    let t = tokens[i];
    let open_end = !t.closed && offset == t.end;
    (offset < t.end || open_end).then_some(i)
}

fn is_input(word: &str) -> bool {
    word == "KEYS" || word == "ARGV"
}

/// The fixed count the header declares for `KEYS` or `ARGV` (0 if none).
fn declared(header: &Header, input: &str) -> usize {
    let count = if input == "KEYS" {
        header.keys
    } else {
        header.args
    };
    count.map_or(0, |c| c.fixed).min(64)
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..CompletionItem::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str, header: &str) -> Vec<String> {
        let header = redlua_analyzer::header::parse(header).unwrap();
        let offset = text.find('|').unwrap();
        let text = text.replace('|', "");
        at(&text, offset, ServerTarget::Redis7_0, &header, false)
            .into_iter()
            .map(|(item, _)| item.label)
            .collect()
    }

    #[test]
    fn commands_come_with_placeholders_for_their_required_arguments() {
        let text = "return redis.call('HS')";
        let offset = text.find("HS").unwrap() + 2;
        let found = at(
            text,
            offset,
            ServerTarget::Redis7_0,
            &Header::default(),
            true,
        );
        let (item, replace) = found.iter().find(|(item, _)| item.label == "HSET").unwrap();
        assert_eq!(item.insert_text_format, Some(InsertTextFormat::SNIPPET));
        let replace = replace.as_ref().unwrap();
        assert_eq!(replace.text, "HSET', ${1:key}, ${2:arg}, ${3:arg}");
        // From the name to the closing quote.
        assert_eq!(&text[replace.range.0..replace.range.1], "HS'");
        // Without snippets, or with arguments already written: the name only.
        let plain = at(
            text,
            offset,
            ServerTarget::Redis7_0,
            &Header::default(),
            false,
        );
        let (_, replace) = plain.iter().find(|(item, _)| item.label == "HSET").unwrap();
        assert_eq!(replace.as_ref().unwrap().text, "HSET");
        let text = "return redis.call('HS', KEYS[1])";
        let found = at(
            text,
            offset,
            ServerTarget::Redis7_0,
            &Header::default(),
            true,
        );
        let (item, replace) = found.iter().find(|(item, _)| item.label == "HSET").unwrap();
        assert_eq!(
            (
                item.insert_text_format,
                replace.as_ref().unwrap().text.as_str()
            ),
            (None, "HSET")
        );
    }

    #[test]
    fn commands_in_the_first_argument_for_the_target() {
        let found = labels("return redis.call('HG|", "");
        assert!(found.contains(&"HGET".to_string()), "{found:?}");
        assert!(
            !found.contains(&"HEXPIRE".to_string()),
            "not on 7.0: {found:?}"
        );
        assert!(!found.contains(&"MULTI".to_string()), "noscript: {found:?}");
        let lower = labels("return redis.pcall('hg|')", "");
        assert!(lower.contains(&"hget".to_string()), "{lower:?}");
        let subs = labels("redis.call('OBJECT', '|')", "");
        assert!(subs.contains(&"ENCODING".to_string()), "{subs:?}");
        assert!(labels("local s = 'HG|'", "").is_empty());
    }

    #[test]
    fn members_inputs_and_globals() {
        assert!(labels("cjson.|", "").contains(&"encode".to_string()));
        assert!(labels("redis.pc|", "").contains(&"pcall".to_string()));
        assert_eq!(labels("KEYS[|", "-- redlua: keys=2\n"), ["1", "2"]);
        let found = labels("local x = |", "-- redlua: keys=1 args=2\n");
        for expected in ["KEYS[1]", "ARGV[2]", "redis", "tonumber"] {
            assert!(
                found.contains(&expected.to_string()),
                "{expected}: {found:?}"
            );
        }
        assert!(!found.contains(&"KEYS[2]".to_string()), "{found:?}");
        assert!(labels("-- a comment |", "").is_empty());
        assert!(labels("local n = 12|", "").is_empty());
    }
}
