//! `shebang_flag`: a `#!lua flags=...` flag the target does not know
//! (`allow-key-locking`, `no_writes`). The server refuses to load the
//! script: "Unexpected flag in script shebang".

use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report, Span};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let target = cx.options.target;
    let known = target.shebang_flags();
    for (flag, start) in flags(cx.source) {
        if known.contains(&flag) {
            continue;
        }
        let span = Span::from_offsets(cx.source, start, start + flag.len());
        let mut d = Diagnostic::error(
            Lint::ShebangFlag,
            span,
            if flag.is_empty() {
                "empty flag in the script's shebang".to_string()
            } else {
                format!("unknown shebang flag `{flag}`")
            },
        )
        .with_note(format!(
            "{} refuses to load the script: \"Unexpected flag in script shebang\"",
            target.display_name()
        ))
        .with_note(format!(
            "the flags {} knows are {}",
            target.display_name(),
            known.join(", ")
        ));
        d = match crate::similar::best_match(flag, known.iter().copied()) {
            Some(s) => d.with_label(format!("did you mean `{s}`?")),
            None => d.with_label(format!("not a flag of {}", target.display_name())),
        };
        report.diagnostics.push(d);
    }
}

/// The flags of a `#!lua ... flags=a,b ...` first line, with the byte offset
/// of each, split as the server splits them (on spaces, then on commas).
fn flags(source: &str) -> Vec<(&str, usize)> {
    let line = source.split('\n').next().unwrap_or("");
    let Some(rest) = line.strip_prefix("#!") else {
        return Vec::new();
    };
    let mut words = rest.split([' ', '\t', '\r']).filter(|w| !w.is_empty());
    if words.next() != Some("lua") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for word in words {
        let Some(list) = word.strip_prefix("flags=") else {
            continue;
        };
        if list.is_empty() {
            continue;
        }
        // `word` and `list` are slices of `source`.
        let mut offset = list.as_ptr() as usize - source.as_ptr() as usize;
        for flag in list.split(',') {
            out.push((flag, offset));
            offset += flag.len() + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint_with;
    use crate::{Lint, Options, ServerTarget};

    fn diags(source: &str) -> Vec<crate::Diagnostic> {
        lint_with(Lint::ShebangFlag, source, &Options::default())
    }

    #[test]
    fn known_flags_pass() {
        for target in ServerTarget::ALL {
            let options = Options {
                target: *target,
                ..Options::default()
            };
            let src = "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1";
            assert!(lint_with(Lint::ShebangFlag, src, &options).is_empty());
        }
        assert!(diags("#!lua\nreturn 1").is_empty());
        assert!(diags("return 1").is_empty());
        assert!(diags("#!lua flags=\nreturn 1").is_empty());
    }

    #[test]
    fn allow_key_locking_is_refused() {
        let src = "#!lua flags=no-writes,allow-key-locking\nreturn 1";
        let d = diags(src);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].message, "unknown shebang flag `allow-key-locking`");
        assert_eq!(d[0].label.as_deref(), Some("not a flag of Redis 7.0"));
        let span = d[0].primary_span().unwrap();
        assert_eq!(
            &src[span.start.offset..span.end.offset],
            "allow-key-locking"
        );
        assert!(d[0].notes.iter().any(|n| n
            == "the flags Redis 7.0 knows are no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys"));
        for target in ServerTarget::ALL {
            let options = Options {
                target: *target,
                ..Options::default()
            };
            assert_eq!(
                lint_with(Lint::ShebangFlag, src, &options).len(),
                1,
                "{target}"
            );
        }
    }

    #[test]
    fn misspelt_flags_get_a_suggestion() {
        let d = diags("#!lua flags=no_writes\nreturn 1");
        assert_eq!(d[0].label.as_deref(), Some("did you mean `no-writes`?"));
        // Flags are case-sensitive, as the server compares them.
        let d = diags("#!lua flags=No-Writes\nreturn 1");
        assert_eq!(d[0].message, "unknown shebang flag `No-Writes`");
        let d = diags("#!lua flags=no-writes,,allow-oom\nreturn 1");
        assert_eq!(d[0].message, "empty flag in the script's shebang");
    }
}
