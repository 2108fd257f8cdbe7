//! `write_in_read_only`: a write command (including PUBLISH, SPUBLISH and
//! PFCOUNT, which Redis counts as writes in scripts) called from a script run
//! with `EVALSHA_RO` or marked `#!lua flags=no-writes`. Redis fails such a
//! call with "Write commands are not allowed from read-only scripts".

use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    if !cx.read_only {
        return;
    }
    let why = if cx.options.read_only {
        "the script is declared `read_only` (run with EVALSHA_RO)"
    } else {
        "the script's shebang says `#!lua flags=no-writes`"
    };
    for call in calls {
        // A computed name, or a subcommand we cannot see, is not reported.
        let Some(command) = call.resolved_command() else {
            continue;
        };
        if !command.is_write() {
            continue;
        }
        let name = command.display_name();
        let mut d = Diagnostic::error(
            Lint::WriteInReadOnly,
            call.args[0].span(),
            format!("`{name}` writes, but this script is read-only"),
        )
        .with_label("a write command")
        .with_note(why)
        .with_note(
            "Redis fails the call with \"Write commands are not allowed from read-only scripts\"",
        );
        if !command.flags().contains(crate::commands::Flags::WRITE) {
            d = d.with_note(format!(
                "Redis treats `{name}` as a write in scripts: it is propagated to replicas"
            ));
        }
        report.diagnostics.push(d);
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::{lint_with, messages};
    use crate::{Lint, Options};

    fn ro(source: &str) -> Vec<String> {
        let options = Options {
            read_only: true,
            ..Options::default()
        };
        lint_with(Lint::WriteInReadOnly, source, &options)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn reads_pass() {
        assert!(ro("return redis.call('GET', KEYS[1])").is_empty());
        assert!(ro("return redis.call('XINFO', 'STREAM', KEYS[1])").is_empty());
        assert!(ro("return redis.call('OBJECT', 'ENCODING', KEYS[1])").is_empty());
        // Computed names are not reported.
        assert!(ro("return redis.call(ARGV[1], KEYS[1])").is_empty());
        assert!(ro("return redis.call('XGROUP', ARGV[1], KEYS[1], 'g', '$')").is_empty());
    }

    #[test]
    fn writes_are_reported() {
        assert_eq!(
            ro("redis.call('SET', KEYS[1], 1)"),
            ["`SET` writes, but this script is read-only"]
        );
        assert_eq!(
            ro("redis.call('publish', 'ch', 'm'); redis.call('SPUBLISH', 'ch', 'm')"),
            [
                "`PUBLISH` writes, but this script is read-only",
                "`SPUBLISH` writes, but this script is read-only"
            ]
        );
        assert_eq!(
            ro("redis.pcall('XGROUP', 'CREATE', KEYS[1], 'g', '$')"),
            ["`XGROUP CREATE` writes, but this script is read-only"]
        );
    }

    #[test]
    fn shebang_makes_a_script_read_only() {
        let src = "#!lua flags=no-writes\nreturn redis.call('DEL', KEYS[1])";
        assert_eq!(
            messages(Lint::WriteInReadOnly, src, 1, 0),
            ["`DEL` writes, but this script is read-only"]
        );
        assert!(
            messages(
                Lint::WriteInReadOnly,
                "return redis.call('DEL', KEYS[1])",
                1,
                0
            )
            .is_empty()
        );
        let d = crate::lints::test_util::lint(Lint::WriteInReadOnly, src, 1, 0);
        assert!(d[0].notes[0].contains("no-writes"), "{:?}", d[0].notes);
    }
}
