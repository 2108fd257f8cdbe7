//! The analyzer's findings on a document, as the protocol's diagnostics.
//!
//! The findings are those of `lockctl lint` on the same file: the same
//! lints, levels and messages; a header that cannot be read is an error
//! (code `header`) at the faulty setting; of several syntax errors only the
//! first is shown (the rest are usually its fallout), together with what
//! the lines before it give on their own.
//!
//! Each diagnostic has the lint's name as its code, `redlua` as its source,
//! the analyzer's label, notes and help as further lines of its message, and
//! the analyzer's secondary places as related information. A finding about
//! the declared keys or arguments (no place in the script) points at the
//! header's `keys=` or `args=` setting (or the script's start); when a Rust
//! struct declares the script, the related information names it (for a key
//! or argument, its field).

use crate::lines::LineIndex;
use crate::rust_decl::Declaration;
use crate::settings::Settings;
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position, Range,
    Uri,
};
use redlua_analyzer::first_error;
use redlua_analyzer::header::HeaderError;
use redlua_analyzer::incremental::Session;
use redlua_analyzer::{Diagnostic, LibraryOptions, Severity, Target, analyze, analyze_library};

/// The source every diagnostic names.
pub const SOURCE: &str = "redlua";

/// The code of a header that cannot be read.
pub const HEADER_CODE: &str = "header";

/// The code of a `Cargo.toml` whose target cannot be read.
pub const MANIFEST_CODE: &str = "manifest";

/// One of the analyzer's findings, and for a library the function whose
/// declaration it was checked against.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The analyzer's diagnostic.
    pub diagnostic: Diagnostic,
    /// In a library: the index in [`Settings::functions`] of the struct
    /// that declares the function the finding is in.
    pub function: Option<usize>,
}

impl Finding {
    /// The Rust struct the finding was checked against, if one: the
    /// script's, or its function's in a library.
    pub fn declaration<'s>(&self, settings: &'s Settings) -> Option<&'s Declaration> {
        if settings.library {
            self.function.and_then(|i| settings.functions.get(i))
        } else {
            settings.rust.as_ref()
        }
    }
}

/// The analyzer's findings on `source`, as `lockctl lint` reports them.
pub fn findings(source: &str, settings: &Settings) -> Vec<Finding> {
    let found = if settings.library {
        library_findings(source, settings)
    } else {
        undeclared(analyze(source, &settings.options).diagnostics)
    };
    first_syntax_error_only(found, source, settings)
}

/// [`findings`] and [`values`] of `source` from one inference where the
/// analyzer makes both at once (a script; a library is analyzed twice):
/// `deliver` takes the findings and says whether the values are still
/// wanted (`None` when they are not, unless they came anyway). A script is analyzed by the
/// analyzer's editor sessions ([`redlua_analyzer::incremental`]): `session`
/// is that of an earlier version of the document, and the session of
/// `source` comes back for the next.
pub fn findings_then_values(
    session: Option<Session>,
    source: &str,
    settings: &Settings,
    deliver: impl FnOnce(Vec<Finding>) -> bool + Send,
) -> (
    Option<Option<redlua_analyzer::hover::Values>>,
    Option<Session>,
) {
    if settings.library {
        let values = deliver(findings(source, settings)).then(|| values(source, settings));
        return (values, None);
    }
    let mut wanted = false;
    let (values, session) = redlua_analyzer::incremental::analyze_then_values(
        session,
        source,
        &settings.options,
        |diagnostics| {
            let found = first_syntax_error_only(undeclared(diagnostics), source, settings);
            wanted = deliver(found);
            wanted
        },
    );
    // The session's values come with it, wanted or not.
    let values = match values {
        Some(values) => Some(Some(values)),
        None => wanted.then_some(None),
    };
    (values, session)
}

/// Findings checked against no function's declaration.
fn undeclared(diagnostics: Vec<Diagnostic>) -> Vec<Finding> {
    diagnostics
        .into_iter()
        .map(|diagnostic| Finding {
            diagnostic,
            function: None,
        })
        .collect()
}

/// `found`, or when the text does not parse, its first syntax error and
/// what the lines before it give (no function's findings remain).
fn first_syntax_error_only(found: Vec<Finding>, source: &str, settings: &Settings) -> Vec<Finding> {
    if !found
        .iter()
        .any(|f| f.diagnostic.lint == redlua_analyzer::Lint::Syntax)
    {
        return found;
    }
    let mut diagnostics: Vec<Diagnostic> = found.into_iter().map(|f| f.diagnostic).collect();
    first_error::first_syntax_error_only(&mut diagnostics, source, &settings.options);
    undeclared(diagnostics)
}

/// The findings on a Functions library: the library's own, and each
/// function's body checked against the `#[redis_function]` struct that
/// declares it (a function no struct declares: without declarations, as
/// `lockctl lint` checks it). The header's `allow` holds for the whole
/// library, a struct's for its function.
fn library_findings(source: &str, settings: &Settings) -> Vec<Finding> {
    let whole = analyze_library(
        source,
        &LibraryOptions {
            options: settings.options.clone(),
            ..LibraryOptions::default()
        },
    );
    let undeclared = |diagnostic: &Diagnostic| Finding {
        diagnostic: diagnostic.clone(),
        function: None,
    };
    let mut out: Vec<Finding> = whole.diagnostics.iter().map(undeclared).collect();
    for function in &whole.functions {
        let declared = settings
            .functions
            .iter()
            .position(|d| d.function.as_deref() == Some(function.name.as_str()));
        let Some(index) = declared else {
            out.extend(function.diagnostics.iter().map(undeclared));
            continue;
        };
        let declared = &settings.functions[index];
        let mut options = settings.options.clone();
        options.declared = Some(declared.declared);
        options.returns = declared.returns.clone();
        options.allow.extend(declared.allow.iter().copied());
        if let Some(target) = declared.target {
            options.target = target;
        }
        let checked = analyze_library(
            source,
            &LibraryOptions {
                function: Some(function.name.clone()),
                options,
            },
        );
        if let Some(report) = checked.function(&function.name) {
            out.extend(report.diagnostics.iter().map(|diagnostic| Finding {
                diagnostic: diagnostic.clone(),
                function: Some(index),
            }));
        }
    }
    out.sort_by_key(|f| match f.diagnostic.primary_span() {
        Some(span) => (0, span.start.offset, span.end.offset),
        None => (1, 0, 0),
    });
    out
}

/// The inferred values of the locals of `source`, for hovers (`None`: it
/// does not parse).
pub fn values(source: &str, settings: &Settings) -> Option<redlua_analyzer::hover::Values> {
    redlua_analyzer::hover::values(source, &settings.options)
}

/// The protocol's diagnostics for `findings` on `source`.
pub fn to_protocol(
    uri: &Uri,
    source: &str,
    index: &LineIndex,
    settings: &Settings,
    findings: &[Finding],
) -> Vec<lsp_types::Diagnostic> {
    let mut out = Vec::new();
    if let Some(message) = &settings.manifest_error {
        out.push(lsp_types::Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String(MANIFEST_CODE.into())),
            source: Some(SOURCE.into()),
            message: format!(
                "the crate's target cannot be read: {message}\nnote: checked against {}",
                settings.options.target.name()
            ),
            ..lsp_types::Diagnostic::default()
        });
    }
    if let Some(error) = &settings.header_error {
        let (start, end) = header_error_bytes(source, error);
        out.push(lsp_types::Diagnostic {
            range: index.range(source, start, end),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String(HEADER_CODE.into())),
            source: Some(SOURCE.into()),
            message: format!(
                "invalid `-- redlua:` header: {}\nhelp: settings: keys=N, args=N (N+ for N or \
                 more), returns=integer|string|array|any (? after it: nil too), target=NAME, \
                 allow=LINT,LINT",
                error.kind
            ),
            ..lsp_types::Diagnostic::default()
        });
    }
    for finding in findings {
        let d = &finding.diagnostic;
        let (start, end) = match d.target {
            Target::Script(span) => (span.start.offset, span.end.offset),
            Target::Key(_) => setting_bytes(source, "keys="),
            Target::Arg(_) => setting_bytes(source, "args="),
        };
        let mut related: Vec<DiagnosticRelatedInformation> = d
            .secondary
            .iter()
            .map(|label| DiagnosticRelatedInformation {
                location: Location::new(
                    uri.clone(),
                    index.range(source, label.span.start.offset, label.span.end.offset),
                ),
                message: label.message.clone(),
            })
            .collect();
        related.extend(
            finding
                .declaration(settings)
                .and_then(|rust| declared_at(rust, d.target)),
        );
        out.push(lsp_types::Diagnostic {
            range: index.range(source, start, end),
            severity: Some(match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(d.lint.name().into())),
            source: Some(SOURCE.into()),
            message: message(d),
            related_information: (!related.is_empty()).then_some(related),
            ..lsp_types::Diagnostic::default()
        });
    }
    out
}

/// For a finding about a declared key or argument: the field that declares
/// it; for any other: the struct.
fn declared_at(rust: &Declaration, target: Target) -> Option<DiagnosticRelatedInformation> {
    let (place, message) = match target {
        Target::Key(i) => {
            let (name, place) = rust.keys.get(i)?;
            (
                place,
                format!("`{name}` of `{}` declares KEYS[{}]", rust.name, i + 1),
            )
        }
        Target::Arg(i) => {
            let (name, place) = rust.args.get(i)?;
            (
                place,
                format!("`{name}` of `{}` declares ARGV[{}]", rust.name, i + 1),
            )
        }
        Target::Script(_) => match &rust.function {
            Some(function) => (
                &rust.place,
                format!("`{}` declares the function `{function}`", rust.name),
            ),
            None => (&rust.place, format!("`{}` declares this script", rust.name)),
        },
    };
    let line = u32::try_from(place.line.saturating_sub(1)).ok()?;
    let column = u32::try_from(place.column).ok()?;
    Some(DiagnosticRelatedInformation {
        location: Location::new(
            crate::settings::file_uri(&place.file)?,
            Range::new(Position::new(line, column), Position::new(line, column)),
        ),
        message,
    })
}

/// The headline, then the label, notes and help, one a line.
fn message(d: &Diagnostic) -> String {
    let mut text = d.message.clone();
    if let Some(label) = &d.label {
        text.push('\n');
        text.push_str(label);
    }
    for note in &d.notes {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    text
}

/// The bytes of a header's faulty setting (its line and columns count
/// characters).
fn header_error_bytes(source: &str, error: &HeaderError) -> (usize, usize) {
    let start: usize = source
        .split_inclusive('\n')
        .take(error.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line = source[start..].lines().next().unwrap_or("");
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
    (start + from, start + from + len)
}

/// The bytes of the header's `name=...` setting, or the script's start.
fn setting_bytes(source: &str, name: &str) -> (usize, usize) {
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let text = line.trim();
        let header = text.starts_with("--") && text.contains(redlua_analyzer::header::MARKER);
        if header && let Some(at) = line.find(name) {
            let len = line[at..]
                .find(char::is_whitespace)
                .unwrap_or(line.len() - at);
            return (offset + at, offset + at + len);
        }
        if !text.is_empty() && !text.starts_with("--") && !text.starts_with("#!") {
            break;
        }
        offset += line.len();
    }
    (0, 0)
}
