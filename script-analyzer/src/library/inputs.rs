//! `KEYS` and `ARGV` read in a library: these globals exist for `EVAL`
//! scripts only; a function gets its keys and arguments as its callback's
//! parameters.

use super::Source;
use crate::{Diagnostic, Lint, Span};

/// An error for every read of the globals `KEYS` and `ARGV`.
pub(crate) fn check(src: &Source<'_>, out: &mut Vec<Diagnostic>) {
    for read in &src.model.global_reads {
        let (name, position) = match read.name.as_str() {
            "KEYS" => ("KEYS", "first"),
            "ARGV" => ("ARGV", "second"),
            _ => continue,
        };
        let span = Span::from_offsets(src.text, read.start, read.end);
        out.push(
            Diagnostic::error(
                Lint::Library,
                span,
                format!("`{name}` does not exist in a Redis function"),
            )
            .with_label("a global of EVAL scripts only")
            .with_note(format!(
                "Redis fails the call: \"Script attempted to access nonexistent global variable \
                 '{name}'\""
            ))
            .with_help(format!(
                "a function receives its {} as its callback's {position} parameter: \
                 `function(keys, args) ... end`",
                if name == "KEYS" { "keys" } else { "arguments" }
            )),
        );
    }
}
