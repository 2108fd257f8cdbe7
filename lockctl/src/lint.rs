//! `lockctl lint FILE...`: the analyzer on script files.
//!
//! Diagnostics are rendered by annotate-snippets (rustc's renderer): the
//! headline, `--> file:line:col`, the quoted line and a caret, coloured only
//! when asked to or when stdout is a terminal. `--json` (or `--format
//! json`) gives, per file, the target it was checked against, the
//! diagnostics, what the script reads, calls and writes, and the replies it
//! may give (`returns`, from the analyzer's type inference). `--format
//! sarif` gives a SARIF 2.1.0 log for code-scanning tools ([`sarif`]).
//!
//! Directories are searched for `*.lua` files ([`files`]). What a script is
//! checked against (the target, and what its header declares) is decided
//! per file ([`settings`]).
//!
//! A file whose first line is `#!lua name=<library>` is a Redis Functions
//! library: it is checked with `analyze_library`, and `--json` adds the
//! library's name and, per function, what it reads, calls and returns.
//!
//! The exit code is 0 when no file has an error (warnings are allowed), 1
//! when one has, or when a file could not be read or checked, and 2 for a
//! usage error ([`exit::LINT_HELP`]).

mod files;
mod sarif;
mod settings;

use crate::cli::{Color, LintArgs, LintFormat};
use crate::exit;
use crate::output::{self, Format};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use files::Found;
use redlua_analyzer::first_error::first_syntax_error_only;
use redlua_analyzer::header::HeaderError;
use redlua_analyzer::{
    Diagnostic, LibraryOptions, Options, Report, ScriptInfo, Severity, Span, analyze,
    analyze_library,
};
use serde_json::{Value, json};
use std::io::{IsTerminal, Read};
use std::path::Path;

/// What the findings are written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Human,
    Json,
    Sarif,
}

/// The output `--format` and `--json` ask for, or a usage error when they
/// disagree.
fn output_of(format: Option<LintFormat>, global: Format) -> Result<Output, String> {
    match (format, global) {
        (None | Some(LintFormat::Human), Format::Human) => Ok(Output::Human),
        (None | Some(LintFormat::Json), _) => Ok(Output::Json),
        (Some(LintFormat::Sarif), Format::Human) => Ok(Output::Sarif),
        (Some(format), Format::Json) => Err(format!(
            "--json asks for JSON, --format {} for another format: give one of them",
            match format {
                LintFormat::Human => "human",
                _ => "sarif",
            }
        )),
    }
}

/// The counts the summary and the exit code come from.
#[derive(Debug, Default)]
struct Counts {
    checked: usize,
    errors: usize,
    warnings: usize,
    unreadable: usize,
    not_checked: usize,
}

/// Lints every file, printing as `format` says; the exit code.
pub fn run(args: &LintArgs, format: Format) -> u8 {
    let output = match output_of(args.format, format) {
        Ok(output) => output,
        Err(message) => {
            output::err(&format!("lockctl: error: {message}"));
            return exit::USAGE;
        }
    };
    let renderer = renderer(args.color);
    let mut crates = settings::CrateTargets::default();
    let mut results = Vec::new();
    let mut log = sarif::Log::default();
    let mut counts = Counts::default();
    // A file that could not be read or checked: named, and counted.
    let failed = |name: &str, message: String, results: &mut Vec<Value>, log: &mut sarif::Log| {
        match output {
            Output::Human => output::err(&format!("lockctl: error: {message}")),
            Output::Json => results.push(json!({ "file": name, "error": message })),
            Output::Sarif => log.not_checked(name, &message),
        }
    };
    for found in files::expand(&args.files) {
        let path = match found {
            Found::Script(path) => path,
            Found::Unreadable(dir, error) => {
                counts.unreadable += 1;
                let name = display_name(&dir);
                failed(
                    &name,
                    format!("cannot read `{name}`: {error}"),
                    &mut results,
                    &mut log,
                );
                continue;
            }
        };
        let name = display_name(&path);
        let source = match read(&path) {
            Ok(source) => source,
            Err(error) => {
                counts.unreadable += 1;
                failed(
                    &name,
                    format!("cannot read `{name}`: {error}"),
                    &mut results,
                    &mut log,
                );
                continue;
            }
        };
        let library = is_library(&source);
        let settings = match settings::for_script(&source, &path, library, args.target, &mut crates)
        {
            Ok(settings) => settings,
            Err(message) => {
                counts.not_checked += 1;
                failed(
                    &name,
                    format!("cannot check `{name}`: {message}"),
                    &mut results,
                    &mut log,
                );
                continue;
            }
        };
        counts.checked += 1;
        let options = settings.options;
        let (mut report, library) = if library {
            let (report, library) = lint_library(&source, &options);
            (report, Some(library))
        } else {
            (analyze(&source, &options), None)
        };
        let hidden = first_syntax_error_only(&mut report.diagnostics, &source, &options);
        for d in &report.diagnostics {
            match d.severity {
                Severity::Error => counts.errors += 1,
                Severity::Warning => counts.warnings += 1,
            }
        }
        if settings.header_error.is_some() {
            counts.errors += 1;
        }
        match output {
            Output::Human => {
                if let Some(error) = &settings.header_error {
                    output::out(&render_header_error(&renderer, error, &name, &source));
                    output::out("");
                }
                for d in &report.diagnostics {
                    output::out(&render(&renderer, d, &name, &source));
                    output::out("");
                }
            }
            Output::Json => {
                let mut file = file_json(&name, &report);
                file["target"] = options.target.name().into();
                file["hidden_syntax_errors"] = hidden.into();
                if let Some(error) = &settings.header_error {
                    file["ok"] = false.into();
                    file["header_error"] =
                        json!({ "line": error.line, "message": error.to_string() });
                }
                if let Some(library) = library {
                    file["library"] = library;
                }
                results.push(file);
            }
            Output::Sarif => {
                if let Some(error) = &settings.header_error {
                    log.header_error(&name, error, &header_message(error));
                }
                log.diagnostics(&name, &report.diagnostics);
            }
        }
    }
    match output {
        Output::Human => output::out(&summary(&counts)),
        Output::Json => output::json(&json!({
            "target": args.target.unwrap_or_default().name(),
            "files": results,
            "errors": counts.errors,
            "warnings": counts.warnings,
            "unreadable": counts.unreadable,
            "not_checked": counts.not_checked,
        })),
        Output::Sarif => output::json(&log.document()),
    }
    if counts.errors > 0 || counts.unreadable > 0 || counts.not_checked > 0 {
        exit::NO
    } else {
        exit::OK
    }
}

/// A header error's message, without the line (shown by the location).
fn header_message(error: &HeaderError) -> String {
    format!("invalid `-- redlua:` header: {}", error.kind)
}

/// A header error, rustc-style, pointing at its line.
fn render_header_error(
    renderer: &Renderer,
    error: &HeaderError,
    file: &str,
    source: &str,
) -> String {
    let message = header_message(error);
    let start: usize = source
        .split_inclusive('\n')
        .take(error.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line = source[start..].lines().next().unwrap_or("");
    // The faulty setting: its columns are characters, the span bytes.
    let from: usize = line
        .chars()
        .take(error.column.saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    let len: usize = line[from..]
        .chars()
        .take(error.len.max(1))
        .map(char::len_utf8)
        .sum();
    let title = Level::ERROR
        .primary_title(message.as_str())
        .id(sarif::HEADER_RULE);
    let group = title.element(
        Snippet::source(source)
            .path(file)
            .annotation(AnnotationKind::Primary.span(start + from..start + from + len)),
    );
    let group = group.element(Level::HELP.message(
        "settings: keys=N, args=N (N+ for N or more), \
         returns=integer|string|array|any (? after it: nil too), target=NAME, \
         allow=LINT,LINT",
    ));
    renderer.render(&[group])
}

/// The renderer: styled for `--color always`, or for `auto` on a terminal
/// without `NO_COLOR`.
fn renderer(color: Color) -> Renderer {
    let styled = match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
}

/// The file's text; bytes that are not UTF-8 become U+FFFD. `-` is stdin.
fn read(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(path)?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// How a path is shown: as given, `<stdin>` for `-`.
fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// One diagnostic, rustc-style.
fn render(renderer: &Renderer, d: &Diagnostic, file: &str, source: &str) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let title = level.primary_title(d.message.as_str()).id(d.lint.name());
    let mut group: Group<'_> = match d.primary_span() {
        Some(span) => {
            let mut snippet = Snippet::source(source).path(file).annotation(
                AnnotationKind::Primary
                    .span(range(span, source))
                    .label(d.label.as_deref()),
            );
            for secondary in &d.secondary {
                snippet = snippet.annotation(
                    AnnotationKind::Context
                        .span(range(secondary.span, source))
                        .label(secondary.message.as_str()),
                );
            }
            title.element(snippet)
        }
        None => {
            let group = title.element(Origin::path(file));
            match &d.label {
                Some(label) => group.element(Level::NOTE.message(trusted(label))),
                None => group,
            }
        }
    };
    for note in &d.notes {
        group = group.element(Level::NOTE.message(trusted(note)));
    }
    if let Some(help) = &d.help {
        group = group.element(Level::HELP.message(trusted(help)));
    }
    renderer.render(&[group])
}

/// Text the renderer prints as given, made safe: control characters (a
/// script's string literal may hold escapes) are shown as symbols.
fn trusted(text: &str) -> String {
    annotate_snippets::normalize_untrusted_str(text)
}

/// A span's byte range, kept within `source` and on character boundaries.
fn range(span: Span, source: &str) -> std::ops::Range<usize> {
    let boundary = |mut offset: usize| {
        offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    };
    let start = boundary(span.start.offset);
    start..boundary(span.end.offset).max(start)
}

/// The closing line of the human output.
fn summary(counts: &Counts) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let mut text = format!(
        "checked {}: {}, {}",
        plural(counts.checked, "file"),
        plural(counts.errors, "error"),
        plural(counts.warnings, "warning")
    );
    if counts.unreadable > 0 {
        text.push_str(&format!(
            ", {} unreadable",
            plural(counts.unreadable, "file")
        ));
    }
    if counts.not_checked > 0 {
        text.push_str(&format!(
            ", {} not checked",
            plural(counts.not_checked, "file")
        ));
    }
    text
}

/// Whether `source` is a Redis Functions library: `#!lua name=...` first.
fn is_library(source: &str) -> bool {
    let first = source.lines().next().unwrap_or("");
    first.starts_with("#!lua") && first.split_whitespace().any(|w| w.starts_with("name="))
}

/// A library's diagnostics as one report, and the library as JSON: its
/// name, and per function its flags and what its body reads and calls.
fn lint_library(source: &str, options: &Options) -> (Report, Value) {
    let library = analyze_library(
        source,
        &LibraryOptions {
            options: options.clone(),
            ..LibraryOptions::default()
        },
    );
    let report = Report {
        diagnostics: library.all_diagnostics().into_iter().cloned().collect(),
        info: ScriptInfo::default(),
    };
    let functions: Vec<Value> = library
        .functions
        .iter()
        .map(|f| {
            let mut value = info_json(&f.info);
            value["name"] = f.name.clone().into();
            value["flags"] = f.flags.clone().into();
            value["read_only"] = f.read_only.into();
            value["checked"] = f.checked.into();
            value
        })
        .collect();
    (
        report,
        json!({ "name": library.name, "functions": functions }),
    )
}

/// What a script (or a function's body) reads, calls and returns.
fn info_json(info: &ScriptInfo) -> Value {
    json!({
        "keys": { "read": info.keys_read, "dynamic": info.keys_dynamic },
        "argv": { "read": info.args_read, "dynamic": info.args_dynamic },
        "commands": info.commands,
        "writes": info.writes,
        "returns": info.returns,
    })
}

/// One file's report as JSON.
fn file_json(name: &str, report: &Report) -> Value {
    let info = &report.info;
    json!({
        "file": name,
        "ok": report.is_ok(),
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
        "keys": { "read": info.keys_read, "dynamic": info.keys_dynamic },
        "argv": { "read": info.args_read, "dynamic": info.args_dynamic },
        "commands": info.commands,
        "writes": info.writes,
        "shebang_flags": info.shebang_flags,
        "returns": info.returns,
    })
}

/// One diagnostic as JSON; `line`, `column` and `end` are null for a
/// diagnostic that points at no place in the script.
fn diagnostic_json(d: &Diagnostic) -> Value {
    let end = |span: Span| json!({ "line": span.end.line, "column": span.end.column });
    let span = d.primary_span();
    json!({
        "lint": d.lint.name(),
        "severity": d.severity.as_str(),
        "message": d.message,
        "line": span.map(|s| s.start.line),
        "column": span.map(|s| s.start.column),
        "end": span.map(end),
        "label": d.label,
        "secondary": d.secondary.iter().map(|l| json!({
            "line": l.span.start.line,
            "column": l.span.start.column,
            "end": end(l.span),
            "message": l.message,
        })).collect::<Vec<_>>(),
        "notes": d.notes,
        "help": d.help,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_column_and_a_caret() {
        let source = "local x = 1\nreturn redis.call('hincrbyy', KEYS[1], 'n', 1)\n";
        let report = analyze(source, &Options::default());
        let text = render(&Renderer::plain(), &report.diagnostics[0], "s.lua", source);
        assert!(text.starts_with("error[unknown_command]: "), "{text}");
        assert!(text.contains("--> s.lua:2:19"), "{text}");
        assert!(text.contains("2 | return redis.call('hincrbyy'"), "{text}");
        assert!(
            text.contains("^^^^^^^^^^ did you mean `hincrby`?"),
            "{text}"
        );
    }

    #[test]
    fn ranges_stay_inside_the_source() {
        let source = "é";
        let mut span = Span::default();
        span.start.offset = 1;
        span.end.offset = 99;
        assert_eq!(range(span, source), 0..2);
    }

    #[test]
    fn libraries_are_linted_as_libraries() {
        let source = "#!lua name=l\nredis.register_function('f', function(keys, args)\n  return redis.call('GET', keys[1])\nend)\nredis.register_function('f', function() return 1 end)\n";
        assert!(is_library(source));
        assert!(!is_library("#!lua flags=no-writes\nreturn 1"));
        let (report, library) = lint_library(source, &Options::default());
        let messages: Vec<&str> = report
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(messages, ["function `f` is registered twice"]);
        assert_eq!(library["name"], "l");
        assert_eq!(library["functions"][0]["name"], "f");
        assert_eq!(library["functions"][0]["keys"]["read"], json!([1]));
        assert_eq!(library["functions"][0]["commands"], json!(["get"]));
    }

    #[test]
    fn summaries_count() {
        let counts = |checked, errors, warnings, unreadable, not_checked| Counts {
            checked,
            errors,
            warnings,
            unreadable,
            not_checked,
        };
        assert_eq!(
            summary(&counts(1, 0, 1, 0, 0)),
            "checked 1 file: 0 errors, 1 warning"
        );
        assert_eq!(
            summary(&counts(2, 2, 0, 1, 0)),
            "checked 2 files: 2 errors, 0 warnings, 1 file unreadable"
        );
        assert_eq!(
            summary(&counts(0, 0, 0, 0, 2)),
            "checked 0 files: 0 errors, 0 warnings, 2 files not checked"
        );
    }

    #[test]
    fn json_and_another_format_are_a_usage_error() {
        assert_eq!(output_of(None, Format::Human), Ok(Output::Human));
        assert_eq!(output_of(None, Format::Json), Ok(Output::Json));
        assert_eq!(
            output_of(Some(LintFormat::Json), Format::Human),
            Ok(Output::Json)
        );
        assert_eq!(
            output_of(Some(LintFormat::Json), Format::Json),
            Ok(Output::Json)
        );
        assert_eq!(
            output_of(Some(LintFormat::Sarif), Format::Human),
            Ok(Output::Sarif)
        );
        assert!(output_of(Some(LintFormat::Sarif), Format::Json).is_err());
        assert!(output_of(Some(LintFormat::Human), Format::Json).is_err());
    }

    #[test]
    fn a_header_error_points_at_its_line() {
        let source = "-- Counts.\n-- redlua: key=1\nreturn 1\n";
        let error = redlua_analyzer::header::parse(source).unwrap_err();
        let text = render_header_error(&Renderer::plain(), &error, "s.lua", source);
        assert!(
            text.starts_with(
                "error[header]: invalid `-- redlua:` header: unknown header setting `key` (did you mean `keys`?)"
            ),
            "{text}"
        );
        assert!(text.contains("--> s.lua:2:12"), "{text}");
        assert!(text.contains("^^^^^"), "{text}");
        assert!(text.contains("2 | -- redlua: key=1"), "{text}");
    }
}
