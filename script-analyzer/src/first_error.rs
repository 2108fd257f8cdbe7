//! What a script that does not parse is told: its first syntax error only
//! (after one, the parser's further errors are mostly its fallout), and
//! what the whole lines before it give when checked on their own. The one
//! reading of a broken script, shared by `lockctl lint` and the language
//! server.

use crate::{Diagnostic, Lint, Options, analyze};

/// Keeps only the first syntax error of a script that does not parse, with
/// a note on what it hides: after one syntax error the parser's further
/// errors are mostly its fallout (one `goto` gave eight). The analyzer puts
/// its best explanation first (syntax of a later Lua, a statement after
/// `return`). What can still be checked is: the lines before that error,
/// when they parse on their own, whose findings are added (only lints
/// about one place, which a part of the script cannot make up).
/// Returns how many syntax errors were left out.
pub fn first_syntax_error_only(
    diagnostics: &mut Vec<Diagnostic>,
    source: &str,
    options: &Options,
) -> usize {
    let syntax = |d: &Diagnostic| d.lint == Lint::Syntax;
    let Some(first) = diagnostics.iter().position(syntax) else {
        return 0;
    };
    let hidden = diagnostics.iter().filter(|d| syntax(d)).count() - 1;
    let mut kept = diagnostics[first].clone();
    if hidden > 0 {
        kept.notes.push(format!(
            "{hidden} more syntax {} after this one not shown: likely its fallout; \
             fix this one and lint again",
            if hidden == 1 {
                "error is"
            } else {
                "errors are"
            }
        ));
    }
    let before = checked_before(source, &kept, options);
    kept.notes.push(match before.lines {
        0 => "the script is checked further once it parses".to_string(),
        1 => "the line before this error was checked as well; the rest is checked once \
              the script parses"
            .to_string(),
        n => format!(
            "the {n} lines before this error were checked as well; the rest is checked \
             once the script parses"
        ),
    });
    let mut kept = vec![kept];
    kept.extend(before.diagnostics);
    *diagnostics = kept;
    hidden
}

/// What the lines before a syntax error gave.
struct Before {
    /// How many lines were checked (0: none, they do not parse alone).
    lines: usize,
    /// Their findings.
    diagnostics: Vec<Diagnostic>,
}

/// Checks the whole lines before `error` on their own. Offsets, lines and
/// columns stay those of the full script, as it starts the same.
fn checked_before(source: &str, error: &Diagnostic, options: &Options) -> Before {
    let none = Before {
        lines: 0,
        diagnostics: Vec::new(),
    };
    let Some(span) = error.primary_span() else {
        return none;
    };
    let mut end = span.start.offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let end = source[..end].rfind('\n').map_or(0, |newline| newline + 1);
    let prefix = &source[..end];
    if prefix.trim().is_empty() {
        return none;
    }
    let report = analyze(prefix, options);
    if report.diagnostics.iter().any(|d| d.lint == Lint::Syntax) {
        return none; // an open block: the part alone is not a script
    }
    let local = [
        Lint::GlobalAssignment,
        Lint::UndefinedGlobal,
        Lint::UnknownMember,
        Lint::UnknownCommand,
        Lint::CommandArity,
        Lint::WriteInReadOnly,
        Lint::LiteralKey,
        Lint::IntegerCondition,
        Lint::TargetVersion,
    ];
    Before {
        lines: prefix.lines().count(),
        diagnostics: report
            .diagnostics
            .into_iter()
            .filter(|d| local.contains(&d.lint))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_syntax_error_is_reported() {
        let source = "local x = 1\ngoto done\nreturn KEYS[1]\n::done::\n";
        let mut report = analyze(source, &Options::default());
        assert!(report.diagnostics.len() > 1, "{:?}", report.diagnostics);
        let hidden = first_syntax_error_only(&mut report.diagnostics, source, &Options::default());
        assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
        assert_eq!(hidden, 7);
        assert!(report.diagnostics[0].message.contains("goto"));
        let notes = report.diagnostics[0].notes.join("\n");
        assert!(
            notes.contains("the line before this error was checked"),
            "{notes}"
        );
        let mut clean = analyze("return 1", &Options::default());
        assert_eq!(
            first_syntax_error_only(&mut clean.diagnostics, "return 1", &Options::default()),
            0
        );
        assert!(clean.diagnostics.is_empty());
    }

    #[test]
    fn the_lines_before_a_syntax_error_are_still_checked() {
        let source = "local v = redis.call('GETT', KEYS[1])\nprint(v)\nif v then\n  x = 1 +\nend\n";
        let mut report = analyze(source, &Options::default());
        first_syntax_error_only(&mut report.diagnostics, source, &Options::default());
        let lints: Vec<Lint> = report.diagnostics.iter().map(|d| d.lint).collect();
        // The error is on line 4; lines 1 to 3 end in an open `if`, so they
        // do not parse alone and nothing else is reported.
        assert_eq!(lints, [Lint::Syntax], "{:?}", report.diagnostics);
        let source = "local v = redis.call('GETT', KEYS[1])\nprint(v)\nx = = 1\n";
        let mut report = analyze(source, &Options::default());
        first_syntax_error_only(&mut report.diagnostics, source, &Options::default());
        let lints: Vec<Lint> = report.diagnostics.iter().map(|d| d.lint).collect();
        assert_eq!(lints[0], Lint::Syntax, "{:?}", report.diagnostics);
        assert!(lints.contains(&Lint::UnknownCommand), "{lints:?}");
        assert!(lints.contains(&Lint::UndefinedGlobal), "{lints:?}");
        assert!(!lints.contains(&Lint::GlobalAssignment), "{lints:?}");
        let notes = report.diagnostics[0].notes.join("\n");
        assert!(notes.contains("the 2 lines before"), "{notes}");
    }
}
