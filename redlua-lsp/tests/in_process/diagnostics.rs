//! Diagnostics: the lint, level and exact range, the header applied, republished on changes.

use super::{Session, URI, code};
use lsp_types::{DiagnosticSeverity, Position, Range};
use serde_json::json;

#[test]
fn diagnostics_carry_the_lint_name_its_level_and_the_exact_range() {
    let mut session = Session::new();
    let text =
        "-- redlua: keys=1\nlocal v = redis.call('hincrbyy', KEYS[1], 'n', 1)\nreturn ARGV[1]\n";
    let diagnostics = session.open(text);
    let unknown = diagnostics
        .iter()
        .find(|d| code(d) == "unknown_command")
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    assert_eq!(
        unknown.range,
        Range::new(Position::new(1, 21), Position::new(1, 31))
    );
    assert_eq!(unknown.severity, Some(DiagnosticSeverity::ERROR));
    assert_eq!(unknown.source.as_deref(), Some("redlua"));
    assert!(
        unknown.message.contains("did you mean `hincrby`?"),
        "{}",
        unknown.message
    );
    // `args` is not declared: any number of arguments is accepted.
    assert!(
        !diagnostics.iter().any(|d| code(d) == "arity"),
        "{diagnostics:#?}"
    );
}

#[test]
fn the_same_messages_as_the_analyzer_with_the_header_applied() {
    let mut session = Session::new();
    let text =
        "-- redlua: keys=1 args=0 returns=string\nreturn redis.call('GET', KEYS[1]) .. ARGV[1]\n";
    let diagnostics = session.open(text);
    let mut options = redlua_analyzer::Options::default();
    redlua_analyzer::header::parse(text)
        .unwrap()
        .apply(&mut options);
    let expected = redlua_analyzer::analyze(text, &options).diagnostics;
    assert!(!expected.is_empty());
    let got: Vec<(&str, &str)> = diagnostics
        .iter()
        .map(|d| (code(d), d.message.lines().next().unwrap()))
        .collect();
    let want: Vec<(&str, &str)> = expected
        .iter()
        .map(|d| (d.lint.name(), d.message.as_str()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_header_error_points_at_the_setting_and_warnings_stay_warnings() {
    let mut session = Session::new();
    let diagnostics = session.open("-- redlua: key=1\nreturn 1\n");
    assert_eq!(code(&diagnostics[0]), "header");
    assert_eq!(
        diagnostics[0].range,
        Range::new(Position::new(0, 11), Position::new(0, 16))
    );
    assert!(diagnostics[0].message.starts_with(
        "invalid `-- redlua:` header: unknown header setting `key` (did you mean `keys`?)"
    ));
    let mut session = Session::new();
    let diagnostics = session.open("return redis.call('GET', 'literal:key')\n");
    let literal = diagnostics
        .iter()
        .find(|d| code(d) == "literal_key")
        .unwrap();
    assert_eq!(literal.severity, Some(DiagnosticSeverity::WARNING));
}

#[test]
fn changes_and_closing_republish() {
    let mut session = Session::new();
    assert_eq!(session.open("return 1\n"), []);
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [
            { "range": { "start": { "line": 0, "character": 7 }, "end": { "line": 0, "character": 8 } },
              "text": "redis.call('GETT', KEYS[1])" } ] }),
    );
    let published = session.published();
    assert_eq!(code(&published[0].diagnostics[0]), "unknown_command");
    assert_eq!(
        published[0].diagnostics[0].range,
        Range::new(Position::new(0, 18), Position::new(0, 24))
    );
    session.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": URI } }),
    );
    let published = session.published();
    assert_eq!(published.len(), 1);
    assert!(published[0].diagnostics.is_empty());
}
