//! The class matrix: every class of bug the analyzer claims to catch, in
//! each of four forms a real script moves a value through before the
//! mistake happens:
//!
//! - **local**: a local variable, possibly reassigned;
//! - **field**: a table field (`t.x = ...`, `t[1]`);
//! - **loop**: a `for` loop (the value is made, carried or used in it);
//! - **branch**: an `if` (the value is set in branches, or a guard is on
//!   the path).
//!
//! Each cell has a buggy script, whose bug lines end in `--<` and where the
//! class's lint must report, there and nowhere else, and a correct variant of the
//! same script, where that lint must report nothing. The scripts are read
//! as `lockctl lint` reads a bare file: a `-- redlua:` header, when there
//! is one, says what the caller declares. Classes about what a script
//! returns are checked twice, without a header and with one declaring the
//! caller's type.
//!
//! `cargo test -p redlua-analyzer --test classes -- --nocapture` prints the
//! matrix, one line a class, one column a form. A cell the analyzer does
//! not claim is listed with its reason (`not_claimed`) and shown as `-`.

mod arguments;
mod comparisons;
mod replies;
mod returns;

use redlua_analyzer::{Lint, Options, analyze, header};

/// The four forms, as the matrix's columns.
const FORMS: [&str; 4] = ["local", "field", "loop", "branch"];

/// Where the bug line of a buggy script is marked.
const MARK: &str = "--<";

/// One class of bug: its lint, and for each form a buggy and a correct
/// script.
struct Class {
    name: &'static str,
    lint: Lint,
    /// Header lines to check the class under, besides none at all (a
    /// declared return type).
    headers: &'static [&'static str],
    /// `(buggy, correct)` for each of [`FORMS`], in order.
    cells: [(&'static str, &'static str); 4],
    /// Cells left out of the matrix: the form, whether only without a
    /// header, and why the analyzer does not claim them.
    not_claimed: &'static [(&'static str, bool, &'static str)],
}

/// Every class, one group of them a module, in the matrix's order.
const CLASSES: Groups = Groups(&[
    replies::CLASSES,
    arguments::CLASSES,
    returns::CLASSES,
    comparisons::CLASSES,
]);

/// Groups of classes, iterated as one list.
struct Groups(&'static [&'static [Class]]);

impl IntoIterator for Groups {
    type Item = &'static Class;
    type IntoIter =
        std::iter::Flatten<std::iter::Copied<std::slice::Iter<'static, &'static [Class]>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().copied().flatten()
    }
}

/// The lines (1-based) where `lint` reports on `source`, read as a bare
/// file with its header.
fn lines_of(lint: Lint, source: &str) -> Vec<usize> {
    let mut options = Options::default();
    header::parse(source)
        .unwrap_or_else(|e| panic!("bad header at line {}: {source}", e.line))
        .apply(&mut options);
    analyze(source, &options)
        .diagnostics
        .iter()
        .filter(|d| d.lint == lint)
        .filter_map(|d| d.primary_span())
        .map(|span| span.start.line)
        .collect()
}

/// The lines (1-based) a buggy script marks.
fn marked_lines(source: &str) -> Vec<usize> {
    let marked: Vec<usize> = (1..)
        .zip(source.lines())
        .filter(|(_, line)| line.trim_end().ends_with(MARK))
        .map(|(n, _)| n)
        .collect();
    assert!(!marked.is_empty(), "a line marked `{MARK}` in:\n{source}");
    marked
}

/// What one cell found, if it does not hold.
fn check(lint: Lint, buggy: &str, correct: &str) -> Option<String> {
    assert!(
        !correct.contains(MARK),
        "a correct script is not marked:\n{correct}"
    );
    let expected = marked_lines(buggy);
    let mut found = lines_of(lint, buggy);
    found.dedup();
    let in_correct = lines_of(lint, correct);
    let mut problems = Vec::new();
    if found != expected {
        problems.push(format!(
            "buggy: expected lines {expected:?}, found {found:?}"
        ));
    }
    if !in_correct.is_empty() {
        problems.push(format!("correct: found {in_correct:?}"));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[test]
fn every_class_is_caught_in_every_form_and_quiet_on_its_correct_variant() {
    let mut failures = Vec::new();
    let mut unclaimed = Vec::new();
    let mut table = format!(
        "{:<58} {:<22} {}\n",
        "class",
        "lint",
        FORMS.map(|f| format!("{f:<8}")).join(" ")
    );
    let mut held = 0;
    let mut cells = 0;
    for class in CLASSES {
        for header in std::iter::once(None).chain(class.headers.iter().map(Some)) {
            let name = match header {
                None => class.name.to_string(),
                Some(h) => format!("{} [{}]", class.name, h.trim_start_matches("-- redlua: ")),
            };
            let mut row = format!("{name:<58} {:<22}", class.lint.name());
            for (form, (buggy, correct)) in FORMS.iter().zip(class.cells) {
                if let Some((_, _, why)) = class
                    .not_claimed
                    .iter()
                    .find(|(f, bare_only, _)| f == form && (!bare_only || header.is_none()))
                {
                    row.push_str(&format!(" {:<8}", "-"));
                    unclaimed.push(format!("{name} / {form}: {why}"));
                    continue;
                }
                let with_header = |s: &str| match header {
                    None => s.to_string(),
                    Some(h) => format!("{h}\n{s}"),
                };
                cells += 1;
                match check(class.lint, &with_header(buggy), &with_header(correct)) {
                    None => {
                        held += 1;
                        row.push_str(&format!(" {:<8}", "ok"));
                    }
                    Some(problem) => {
                        row.push_str(&format!(" {:<8}", "MISSING"));
                        failures.push(format!("{name} / {form}: {problem}"));
                    }
                }
            }
            table.push_str(row.trim_end());
            table.push('\n');
        }
    }
    println!(
        "{table}cells held: {held} of {cells}; not claimed (-): {}\n{}",
        unclaimed.len(),
        unclaimed.join("\n")
    );
    assert!(
        failures.is_empty(),
        "cells that do not hold:\n{}",
        failures.join("\n")
    );
}
