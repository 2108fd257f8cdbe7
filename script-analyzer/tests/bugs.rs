//! The bug corpus: one small script per famous class of Redis Lua bug, in
//! `tests/bugs/`. Each file's header says what the bug is, where such bugs
//! were reported, and what the analyzer must find:
//!
//! ```text
//! -- declared: keys=1 args=2    (what the struct declares)
//! -- returns: integer           (optional: the `returns` type's kind)
//! -- expect: maybe_false 8      (a lint and the line it points at; one line each)
//! ```
//!
//! The analyzer is run as `#[redis_script]` runs it (generated calls may
//! run on a cluster, the default target), and must report exactly the
//! expected lints at the expected lines, nothing else. An expected lint at
//! error level must make the script refuse to compile. The test prints a
//! table of what is caught as an error and what as a warning
//! (`cargo test -p redlua-analyzer --test bugs -- --nocapture`).

use redlua_analyzer::{Declared, Lint, Options, ReturnKind, Returns, Severity, analyze};
use std::path::{Path, PathBuf};

/// What a file's header asks for.
struct Expectation {
    declared: Declared,
    returns: Option<ReturnKind>,
    /// Lint name and 1-based line.
    found: Vec<(String, usize)>,
}

fn header(path: &Path, source: &str) -> Expectation {
    let mut declared = None;
    let mut returns = None;
    let mut found = Vec::new();
    for line in source.lines().take_while(|l| l.starts_with("--")) {
        let line = line.trim_start_matches('-').trim();
        if let Some(rest) = line.strip_prefix("declared:") {
            let mut counts = [0usize; 2];
            for (i, (part, name)) in rest.split_whitespace().zip(["keys=", "args="]).enumerate() {
                let value = part
                    .strip_prefix(name)
                    .unwrap_or_else(|| panic!("{}: `declared: keys=N args=N`", path.display()));
                counts[i] = value.parse().expect("a count");
            }
            declared = Some(Declared::exact(counts[0], counts[1]));
        } else if let Some(rest) = line.strip_prefix("returns:") {
            returns = Some(match rest.trim() {
                "integer" => ReturnKind::Integer,
                "string" => ReturnKind::String,
                "array" => ReturnKind::Array,
                other => panic!("{}: unknown returns kind `{other}`", path.display()),
            });
        } else if let Some(rest) = line.strip_prefix("expect:") {
            let mut parts = rest.split_whitespace();
            let (Some(lint), Some(at), None) = (parts.next(), parts.next(), parts.next()) else {
                panic!("{}: `expect: <lint> <line>`", path.display());
            };
            assert!(
                Lint::ALL.iter().any(|l| l.name() == lint),
                "{}: unknown lint `{lint}`",
                path.display()
            );
            found.push((lint.to_owned(), at.parse().expect("a line number")));
        }
    }
    Expectation {
        declared: declared.unwrap_or_else(|| panic!("{}: no `declared:` line", path.display())),
        returns,
        found,
    }
}

fn bugs() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bugs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bugs exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .collect();
    files.sort();
    assert!(files.len() >= 24, "bug corpus shrank: {files:?}");
    files
        .into_iter()
        .map(|p| {
            let source = std::fs::read_to_string(&p).expect("readable script");
            (p, source)
        })
        .collect()
}

#[test]
fn every_bug_is_caught_where_expected() {
    let mut failures = Vec::new();
    let mut table = vec![("file".to_owned(), "lint".to_owned(), "caught as".to_owned())];
    for (path, source) in bugs() {
        let name = format!("tests/bugs/{}", path.file_name().unwrap().to_string_lossy());
        let expected = header(&path, &source);
        assert!(
            !expected.found.is_empty(),
            "{name}: no `expect:` line (a file the analyzer does not catch does not belong here)"
        );
        // As `#[redis_script]` analyzes it.
        let options = Options {
            declared: Some(expected.declared),
            cluster: true,
            returns: expected.returns.map(Returns::of),
            ..Options::default()
        };
        let report = analyze(&source, &options);
        let mut found: Vec<(String, usize)> = report
            .diagnostics
            .iter()
            .map(|d| {
                (
                    d.lint.name().to_owned(),
                    d.primary_span().map_or(0, |s| s.start.line),
                )
            })
            .collect();
        found.sort();
        let mut wanted = expected.found.clone();
        wanted.sort();
        if found != wanted {
            let rendered: Vec<String> = report
                .diagnostics
                .iter()
                .map(|d| d.render(&name, &source))
                .collect();
            failures.push(format!(
                "{name}: expected {wanted:?}, found {found:?}\n{}",
                rendered.join("\n")
            ));
            continue;
        }
        for (lint, _) in &expected.found {
            let severity = report
                .diagnostics
                .iter()
                .find(|d| d.lint.name() == lint)
                .map(|d| d.severity)
                .expect("found above");
            let caught = match severity {
                Severity::Error => {
                    // An error refuses compilation.
                    if report.is_ok() {
                        failures.push(format!("{name}: an error, yet the report is ok"));
                    }
                    "error (does not compile)"
                }
                Severity::Warning => "warning",
            };
            table.push((name.clone(), lint.clone(), caught.to_owned()));
        }
    }
    let width = |column: fn(&(String, String, String)) -> &String| {
        table.iter().map(|row| column(row).len()).max().unwrap_or(0)
    };
    let (w0, w1) = (width(|r| &r.0), width(|r| &r.1));
    let errors = table.iter().filter(|r| r.2.starts_with("error")).count();
    let warnings = table.iter().filter(|r| r.2 == "warning").count();
    println!("bug corpus: {errors} caught as errors, {warnings} as warnings");
    for (file, lint, caught) in &table {
        println!("{file:w0$}  {lint:w1$}  {caught}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
