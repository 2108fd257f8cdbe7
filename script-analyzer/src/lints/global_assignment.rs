//! `global_assignment`: Redis scripts may not create or change globals.
//!
//! Redis makes the global table read-only: `count = 1` fails at run time with
//! "Attempt to modify a readonly table". An assignment to a name declared
//! with `local` earlier (in this or an enclosing scope) is fine.

use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report, Span, sandbox};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    for write in &cx.model.global_writes {
        if !cx.in_scope(write.start) {
            continue;
        }
        let span = Span::from_offsets(cx.source, write.start, write.end);
        let name = &write.name;
        let function = is_function_declaration(cx.source, write.start);
        let diagnostic = if sandbox::is_global(name) {
            Diagnostic::error(
                Lint::GlobalAssignment,
                span,
                format!("assignment to Redis's global `{name}`"),
            )
            .with_label("Redis's globals are read-only")
            .with_help(format!("use a local instead: `local {name}_ = ...`"))
        } else if function {
            Diagnostic::error(
                Lint::GlobalAssignment,
                span,
                format!("global function `{name}`: Redis scripts may not create globals"),
            )
            .with_label("declares a global")
            .with_help(format!("declare it with `local function {name}`"))
        } else {
            Diagnostic::error(
                Lint::GlobalAssignment,
                span,
                format!(
                    "assignment to undeclared global `{name}`: Redis scripts may not create globals"
                ),
            )
            .with_label("assigns a global")
            .with_help(format!("declare it first with `local {name}`"))
        };
        report.diagnostics.push(diagnostic.with_note(
            "Redis fails such a script at run time: \"Attempt to modify a readonly table\"",
        ));
    }
}

/// Whether the name at `start` follows the keyword `function`.
fn is_function_declaration(source: &str, start: usize) -> bool {
    source
        .get(..start)
        .is_some_and(|before| before.trim_end().ends_with("function"))
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{lint, messages};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::GlobalAssignment, source, 0, 0)
    }

    #[test]
    fn flags_assignments_to_undeclared_names() {
        assert_eq!(
            errors("count = 1"),
            ["assignment to undeclared global `count`: Redis scripts may not create globals"]
        );
        assert_eq!(
            errors("function helper() end"),
            ["global function `helper`: Redis scripts may not create globals"]
        );
        assert_eq!(errors("KEYS = {}"), ["assignment to Redis's global `KEYS`"]);
        assert_eq!(errors("local a; a, b = 1, 2").len(), 1);
    }

    #[test]
    fn assignments_to_locals_are_fine() {
        assert!(errors("local n = 0\nn = n + 1\nreturn n").is_empty());
        assert!(errors("local t = {}\nt.x = 1\nt[1] = 2").is_empty());
        assert!(errors("local function f() end\nf = nil").is_empty());
        assert!(errors("local x\nlocal function g() x = 1 end\nreturn g()").is_empty());
        assert!(errors("for i = 1, 2 do i = i + 1 end").is_empty());
        assert!(errors("local function f(a) a = a or 1 return a end return f()").is_empty());
    }

    #[test]
    fn points_at_the_name() {
        let d = &lint(Lint::GlobalAssignment, "local a = 1\n  total = a", 0, 0)[0];
        let span = d.primary_span().unwrap();
        assert_eq!(
            (span.start.line, span.start.column, span.end.column),
            (2, 3, 8)
        );
        assert_eq!(
            d.help.as_deref(),
            Some("declare it first with `local total`")
        );
    }
}
