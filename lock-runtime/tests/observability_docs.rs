//! Every `tracing` event the runtime emits is a row of the events table of
//! `observability`'s documentation, with its target, level and message: the
//! table is what operators filter and alert on, so an event it lacks is one
//! they cannot know of.
//!
//! The test reads the sources: each `tracing::{trace,debug,info,warn,error}!`
//! call, its `target:` (a constant of `observability::targets` or a string)
//! and its message (the call's last string literal). A documented message
//! ending in ` ...` is a prefix of the event's message.

use redlua_runtime::observability::targets;
use std::fs;
use std::path::{Path, PathBuf};

const LEVELS: [&str; 5] = ["trace", "debug", "info", "warn", "error"];

/// One event call found in the sources.
#[derive(Debug)]
struct Emitted {
    at: String,
    target: String,
    level: &'static str,
    message: String,
}

/// One row of the documented events table.
#[derive(Debug)]
struct Documented {
    target: String,
    level: String,
    message: String,
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of `text` (plain `"..."` literals, escapes kept).
fn string_literals(text: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => literal.extend(chars.next()),
                '"' => break,
                _ => literal.push(c),
            }
        }
        literals.push(literal);
    }
    literals
}

/// The text of the macro call whose `(` is at `open`, up to its `)`.
fn call_body(text: &str, open: usize) -> &str {
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unclosed macro call at byte {open}");
}

fn target_of(body: &str, at: &str) -> String {
    let after = body
        .split_once("target:")
        .unwrap_or_else(|| panic!("{at}: an event without a target"))
        .1
        .trim_start();
    let expr = after.split(',').next().unwrap().trim();
    if let Some(literal) = expr.strip_prefix('"') {
        return literal.trim_end_matches('"').to_owned();
    }
    match expr.rsplit("::").next().unwrap() {
        "ACQUIRE" => targets::ACQUIRE,
        "RELEASE" => targets::RELEASE,
        "WATCHDOG" => targets::WATCHDOG,
        "CONNECTION" => targets::CONNECTION,
        "PUBSUB" => targets::PUBSUB,
        other => panic!("{at}: unknown target constant {other}"),
    }
    .to_owned()
}

fn emitted() -> Vec<Emitted> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    let mut events = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for level in LEVELS {
            let call = format!("tracing::{level}!(");
            for (start, _) in text.match_indices(&call) {
                let line = text[..start].lines().count();
                let at = format!("{}:{line}", file.display());
                let body = call_body(&text, start + call.len() - 1);
                let message = string_literals(body)
                    .pop()
                    .unwrap_or_else(|| panic!("{at}: an event without a message"));
                events.push(Emitted {
                    target: target_of(body, &at),
                    level,
                    message,
                    at,
                });
            }
        }
    }
    events
}

fn documented() -> Vec<Documented> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/observability/mod.rs");
    let text = fs::read_to_string(path).unwrap();
    let mut rows = Vec::new();
    for line in text.lines() {
        let Some(row) = line.strip_prefix("//! | `redlua::") else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        // target | level | message | fields: only the events table has a level.
        if cells.len() < 4 || !LEVELS.contains(&cells[1]) {
            continue;
        }
        let unquote = |cell: &str| cell.trim_matches('`').to_owned();
        rows.push(Documented {
            target: format!("redlua::{}", unquote(cells[0])),
            level: cells[1].to_owned(),
            message: unquote(cells[2]),
        });
    }
    rows
}

fn documents(row: &Documented, event: &Emitted) -> bool {
    let message = match row.message.strip_suffix(" ...") {
        Some(prefix) => event.message.starts_with(prefix),
        None => event.message == row.message,
    };
    message && row.target == event.target && row.level == event.level
}

#[test]
fn every_event_is_in_the_documented_table() {
    let events = emitted();
    let rows = documented();
    // The scan finds the events it must (a broken scan would pass vacuously).
    assert!(events.len() >= 25, "{events:#?}");
    assert!(rows.len() >= 25, "{rows:#?}");
    let missing: Vec<String> = events
        .iter()
        .filter(|event| !rows.iter().any(|row| documents(row, event)))
        .map(|event| {
            format!(
                "{}: {} {} `{}`",
                event.at, event.target, event.level, event.message
            )
        })
        .collect();
    assert!(
        missing.is_empty(),
        "events missing from the table in src/observability/mod.rs:\n{}",
        missing.join("\n")
    );
    let stale: Vec<&Documented> = rows
        .iter()
        .filter(|row| !events.iter().any(|event| documents(row, event)))
        .collect();
    assert!(
        stale.is_empty(),
        "rows of src/observability/mod.rs no event emits:\n{stale:#?}"
    );
}
