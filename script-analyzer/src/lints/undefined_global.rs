//! `undefined_global`: reading a name that is neither a local nor part of
//! Redis's Lua sandbox.
//!
//! Redis fails such a script when the line runs: "Script attempted to access
//! nonexistent global variable". Names Lua has but Redis removes (`print`,
//! `require`, `io`, ...) get a note saying why.

use super::{Context, RedisCall};
use crate::similar::best_match;
use crate::{Diagnostic, Lint, Report, Span, sandbox};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    for read in &cx.model.global_reads {
        if !cx.in_scope(read.start) {
            continue;
        }
        let name = read.name.as_str();
        if sandbox::is_global(name) {
            continue;
        }
        if cx.model.global_writes.iter().any(|w| w.name == name) {
            // `global_assignment` already reports the assignment: the read
            // is the same mistake.
            continue;
        }
        let span = Span::from_offsets(cx.source, read.start, read.end);
        let diagnostic = if let Some(why) = sandbox::removed(name) {
            Diagnostic::error(
                Lint::UndefinedGlobal,
                span,
                format!("`{name}` is not available in Redis scripts"),
            )
            .with_label("removed from Redis's Lua sandbox")
            .with_note(why)
        } else {
            let mut candidates: Vec<&str> = sandbox::globals().collect();
            candidates.extend(cx.model.names());
            let mut diagnostic = Diagnostic::error(
                Lint::UndefinedGlobal,
                span,
                format!("unknown global `{name}`"),
            );
            match best_match(name, candidates) {
                Some(similar) => {
                    diagnostic = diagnostic.with_label(format!("did you mean `{similar}`?"))
                }
                None => {
                    diagnostic = diagnostic.with_label("not a local, and not provided by Redis")
                }
            }
            diagnostic.with_note(
                "Redis fails the script when this runs: \"Script attempted to access nonexistent global variable\"",
            )
        };
        report.diagnostics.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{lint, messages};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::UndefinedGlobal, source, 1, 1)
    }

    #[test]
    fn sandbox_names_and_locals_are_known() {
        let src = "local v = redis.call('GET', KEYS[1])\n\
                   local n = tonumber(ARGV[1]) or 0\n\
                   local t = cjson.decode(v); local s = string.format('%d', n)\n\
                   for i, x in ipairs(t) do n = n + math.max(i, bit.band(x, 1)) end\n\
                   return unpack({n, s, type(t), select('#', 1), struct.size('i'), cmsgpack.pack(t)})";
        assert!(errors(src).is_empty(), "{:?}", errors(src));
    }

    #[test]
    fn removed_functions_are_errors_with_a_reason() {
        assert_eq!(
            errors("print('hi')"),
            ["`print` is not available in Redis scripts"]
        );
        assert_eq!(
            errors("local m = require('x')"),
            ["`require` is not available in Redis scripts"]
        );
        assert_eq!(
            errors("io.write('x')"),
            ["`io` is not available in Redis scripts"]
        );
        let d = &lint(Lint::UndefinedGlobal, "dofile('/etc/passwd')", 0, 0)[0];
        assert_eq!(d.notes[0], "Redis scripts cannot read files");
    }

    #[test]
    fn typos_get_a_suggestion() {
        let d = &lint(
            Lint::UndefinedGlobal,
            "return reddis.call('GET', KEYS[1])",
            1,
            0,
        )[0];
        assert_eq!(d.message, "unknown global `reddis`");
        assert_eq!(d.label.as_deref(), Some("did you mean `redis`?"));
        let d = &lint(
            Lint::UndefinedGlobal,
            "local counter = 1\nreturn countr",
            0,
            0,
        )[0];
        assert_eq!(d.label.as_deref(), Some("did you mean `counter`?"));
        let d = &lint(Lint::UndefinedGlobal, "return zzz", 0, 0)[0];
        assert_eq!(
            d.label.as_deref(),
            Some("not a local, and not provided by Redis")
        );
    }

    #[test]
    fn reads_of_an_assigned_global_are_left_to_global_assignment() {
        assert!(errors("count = 1\nreturn count").is_empty());
    }

    #[test]
    fn a_local_out_of_scope_is_global() {
        assert_eq!(
            errors("do local x = 1 end\nreturn x"),
            ["unknown global `x`"]
        );
    }
}
