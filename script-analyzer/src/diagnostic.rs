//! Diagnostics: what went wrong, where, and how to show it.

use crate::lint::Lint;
use std::fmt::Write as _;

/// A place in the script: byte offset plus 1-based line and column
/// (the column counts characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// Byte offset from the start of the source.
    pub offset: usize,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `source` (clamped to the source, and
    /// moved back to a character boundary).
    pub fn at(source: &str, offset: usize) -> Position {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = line_index(source, offset);
        let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
        Position {
            offset,
            line,
            column: source[line_start..offset].chars().count() + 1,
        }
    }
}

thread_local! {
    /// The line starts of the source last asked about, keyed by its address
    /// and length: spans are made by the thousand for one script.
    static LINE_STARTS: std::cell::RefCell<(usize, usize, Vec<usize>)> =
        const { std::cell::RefCell::new((0, 0, Vec::new())) };
}

/// The 1-based line holding byte `offset` of `source`.
fn line_index(source: &str, offset: usize) -> usize {
    LINE_STARTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (source.as_ptr() as usize, source.len());
        if (cache.0, cache.1) != key {
            let starts = std::iter::once(0)
                .chain(source.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            *cache = (key.0, key.1, starts);
        }
        // Lines whose start is at or before `offset`.
        cache.2.partition_point(|&start| start <= offset)
    })
}

/// A range of the script, `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// First byte of the range.
    pub start: Position,
    /// One past the last byte of the range.
    pub end: Position,
}

impl Span {
    /// The span of bytes `start..end` of `source`.
    pub fn from_offsets(source: &str, start: usize, end: usize) -> Span {
        let start = Position::at(source, start);
        let end = Position::at(source, end.max(start.offset));
        Span { start, end }
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The script is wrong: the macro refuses to compile it.
    Error,
    /// Probably wrong, but not refused.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Which side is at fault: a place in the script, or a declaration on the
/// Rust side (a key or argument field that the script never reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// A range of the script.
    Script(Span),
    /// The declared key with this 0-based index.
    Key(usize),
    /// The declared argument with this 0-based index.
    Arg(usize),
}

/// A secondary place in the script that explains a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What about it.
    pub message: String,
}

/// One finding of the analyzer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The lint that found it (`Lint::Syntax` for parse errors).
    pub lint: Lint,
    /// Error or warning.
    pub severity: Severity,
    /// One line saying what is wrong.
    pub message: String,
    /// Where it is.
    pub target: Target,
    /// Text shown under the caret, e.g. "did you mean `hincrby`?".
    pub label: Option<String>,
    /// Further places in the script that explain the finding.
    pub secondary: Vec<Label>,
    /// Extra lines, rendered as `= note: ...`.
    pub notes: Vec<String>,
    /// A suggestion, rendered as `= help: ...`.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `span` of the script.
    pub fn error(lint: Lint, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            lint,
            severity: Severity::Error,
            message: message.into(),
            target: Target::Script(span),
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// A warning at `span` of the script.
    pub fn warning(lint: Lint, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(lint, span, message)
        }
    }

    /// An error about a declaration on the Rust side.
    pub fn declaration_error(lint: Lint, target: Target, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            lint,
            severity: Severity::Error,
            message: message.into(),
            target,
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// Sets the text under the caret.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// Adds a `= note:` line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Sets the `= help:` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Adds a secondary place in the script.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// The script span, if the diagnostic points into the script.
    pub fn primary_span(&self) -> Option<Span> {
        match self.target {
            Target::Script(span) => Some(span),
            Target::Key(_) | Target::Arg(_) => None,
        }
    }

    /// Renders the diagnostic as rustc does: the headline, `--> file:line:col`,
    /// the quoted line with a caret under the offending token, then notes.
    ///
    /// `file` is the name to show (a path relative to the crate, say) and
    /// `source` the script text the spans refer to.
    ///
    /// ```
    /// use redlua_analyzer::{analyze, Options};
    ///
    /// let source = "return redis.call('hincrbyy', KEYS[1], 'n', 1)\n";
    /// let report = analyze(source, &Options::default());
    /// let text = report.diagnostics[0].render("scripts/count.lua", source);
    /// assert!(text.contains("--> scripts/count.lua:1:19"), "{text}");
    /// assert!(text.contains("did you mean `hincrby`?"), "{text}");
    /// ```
    pub fn render(&self, file: &str, source: &str) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "{}[{}]: {}",
            self.severity.as_str(),
            self.lint.name(),
            self.message
        );
        if let Some(span) = self.primary_span() {
            let mut places = vec![(span, self.label.as_deref().unwrap_or(""))];
            places.extend(self.secondary.iter().map(|l| (l.span, l.message.as_str())));
            let width = places
                .iter()
                .map(|(s, _)| s.start.line.to_string().len())
                .max()
                .unwrap_or(1);
            let pad = " ".repeat(width);
            let _ = write!(
                out,
                "\n{pad}--> {file}:{}:{}\n{pad} |",
                span.start.line, span.start.column
            );
            for (i, (span, label)) in places.iter().enumerate() {
                if i > 0 {
                    let _ = write!(out, "\n{pad} ...");
                }
                quote_line(&mut out, source, *span, label, width, i == 0);
            }
        } else {
            let _ = write!(out, "\n --> {file}");
            if let Some(label) = &self.label {
                let _ = write!(out, "\n  = note: {label}");
            }
        }
        for note in &self.notes {
            let _ = write!(out, "\n  = note: {note}");
        }
        if let Some(help) = &self.help {
            let _ = write!(out, "\n  = help: {help}");
        }
        out
    }
}

/// Appends `N | the line` and a caret line under `span` (only its first line).
fn quote_line(
    out: &mut String,
    source: &str,
    span: Span,
    label: &str,
    width: usize,
    primary: bool,
) {
    let start = span.start.offset.min(source.len());
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    let line = source[line_start..line_end].trim_end_matches('\r');
    let end = span.end.offset.clamp(start, line_start + line.len());
    // Keep tabs as tabs so that the caret lines up in any terminal.
    let lead: String = source[line_start..start]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let carets = source[start..end].chars().count().max(1);
    let mark = if primary { "^" } else { "-" };
    let _ = write!(
        out,
        "\n{:>width$} | {line}\n{} | {lead}{}",
        span.start.line,
        " ".repeat(width),
        mark.repeat(carets)
    );
    if !label.is_empty() {
        let _ = write!(out, " {label}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let src = "a\nbé c\n";
        let p = Position::at(src, 5); // the space after é (2 bytes)
        assert_eq!((p.line, p.column, p.offset), (2, 3, 5));
        // Not on a char boundary: moved back.
        assert_eq!(Position::at(src, 4).offset, 3);
        // Past the end: clamped.
        assert_eq!(Position::at(src, 99).offset, src.len());
    }

    #[test]
    fn positions_stay_right_when_sources_alternate() {
        // The line index is cached per source: switching must not reuse it.
        let one = "a\nb\nc";
        let two = "xyz\n\n\nw";
        for _ in 0..2 {
            assert_eq!(Position::at(one, 4).line, 3);
            assert_eq!(Position::at(two, 6).line, 4);
            assert_eq!(Position::at(&one[2..], 2).line, 2);
        }
    }

    #[test]
    fn renders_a_caret_under_the_span() {
        let src = "local x = 1\nreturn bad + x\n";
        let span = Span::from_offsets(src, 19, 22);
        let d = Diagnostic::error(Lint::UndefinedGlobal, span, "unknown global `bad`")
            .with_label("not defined")
            .with_help("declare it with `local`");
        assert_eq!(
            d.render("s.lua", src),
            "error[undefined_global]: unknown global `bad`\n\
             \x20--> s.lua:2:8\n\
             \x20 |\n\
             2 | return bad + x\n\
             \x20 |        ^^^ not defined\n\
             \x20 = help: declare it with `local`"
        );
    }

    #[test]
    fn renders_declaration_errors_without_a_quote() {
        let d = Diagnostic::declaration_error(Lint::Arity, Target::Key(1), "KEYS[2] is never read");
        assert_eq!(
            d.render("s.lua", ""),
            "error[arity]: KEYS[2] is never read\n --> s.lua"
        );
    }
}
