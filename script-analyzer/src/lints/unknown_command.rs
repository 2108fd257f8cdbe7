//! `unknown_command`: a literal command name no supported Redis or Valkey
//! has, a literal subcommand the command does not have, or a command the
//! target refuses to run from scripts (`noscript`: `SUBSCRIBE`, `MULTI`,
//! `EVAL`, `SCRIPT LOAD`, and in Redis 7.0 `BLPOP`, ...). A command that
//! exists, but not on the target, is `target_version`'s.

use super::{CallArg, Context, RedisCall};
use crate::commands;
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let target = cx.options.target;
    for call in calls {
        let Some(name_arg) = call.args.first() else {
            continue;
        };
        let Some(name) = name_arg.literal() else {
            continue;
        };
        let Some(command) = commands::lookup(name) else {
            let mut d = Diagnostic::error(
                Lint::UnknownCommand,
                name_arg.span(),
                format!("unknown Redis command `{name}`"),
            )
            .with_note("Redis fails the call with \"Unknown Redis command called from script\"")
            .with_note(format!(
                "the analyzer knows the commands of {}; allow `unknown_command` for module commands",
                crate::ServerTarget::names()
            ));
            if let Some(suggestion) = commands::suggest(name) {
                d = d.with_label(format!("did you mean `{suggestion}`?"));
            } else {
                d = d.with_label("not a Redis command");
            }
            report.diagnostics.push(d);
            continue;
        };
        if !command.available_on(target) {
            continue;
        }
        let mut resolved = command;
        if !command.subcommands().is_empty()
            && let Some(sub_arg @ CallArg::Literal(sub, _)) = call.args.get(1)
        {
            match command.subcommand(sub) {
                Some(found) if found.available_on(target) => resolved = found,
                Some(_) => continue,
                None => {
                    let prefix = command.name().len() + 1;
                    let names = command
                        .subcommands()
                        .iter()
                        .filter(|c| c.available_on(target))
                        .map(|c| &c.name()[prefix..]);
                    let mut d = Diagnostic::error(
                        Lint::UnknownCommand,
                        sub_arg.span(),
                        format!("`{}` has no subcommand `{sub}`", command.display_name()),
                    );
                    d = match crate::similar::best_match(&sub.to_ascii_lowercase(), names) {
                        Some(s) => {
                            d.with_label(format!("did you mean `{}`?", s.to_ascii_uppercase()))
                        }
                        None => d.with_label("unknown subcommand"),
                    };
                    report.diagnostics.push(d.with_note(
                        "Redis fails the call with \"Unknown Redis command called from script\"",
                    ));
                    continue;
                }
            }
        }
        if !resolved.allowed_in_scripts_on(target) {
            let span = if std::ptr::eq(resolved, command) {
                name_arg.span()
            } else {
                let sub = call.args[1].span();
                crate::Span {
                    start: name_arg.span().start,
                    end: sub.end,
                }
            };
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::UnknownCommand,
                    span,
                    format!(
                        "`{}` cannot be called from a script",
                        resolved.display_name()
                    ),
                )
                .with_label(format!(
                    "{} refuses this command in scripts",
                    target.display_name()
                ))
                .with_note(
                    "Redis fails the call with \"This Redis command is not allowed from script\"",
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{lint, messages};

    fn msgs(source: &str) -> Vec<String> {
        messages(Lint::UnknownCommand, source, 1, 0)
    }

    #[test]
    fn known_commands_pass() {
        assert!(msgs("return redis.call('GET', KEYS[1])").is_empty());
        assert!(msgs("return redis.call('hincrby', KEYS[1], 'f', 1)").is_empty());
        assert!(msgs("return redis.pcall('Object', 'Encoding', KEYS[1])").is_empty());
        assert!(msgs("return redis.call('XINFO', 'STREAM', KEYS[1])").is_empty());
        // Computed names are not checked.
        assert!(msgs("local c = ARGV[1]; return redis.call(c, KEYS[1])").is_empty());
        assert!(msgs("return redis.call('OBJECT', ARGV[1], KEYS[1])").is_empty());
    }

    #[test]
    fn unknown_command_with_suggestion() {
        let d = lint(
            Lint::UnknownCommand,
            "return redis.call('hincrbyy', KEYS[1], 'n', 1)",
            1,
            0,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].message, "unknown Redis command `hincrbyy`");
        assert_eq!(d[0].label.as_deref(), Some("did you mean `hincrby`?"));
        let span = d[0].primary_span().unwrap();
        assert_eq!((span.start.column, span.end.column), (19, 29));
        let d = lint(
            Lint::UnknownCommand,
            "return redis.call('frobnicate')",
            0,
            0,
        );
        assert_eq!(d[0].label.as_deref(), Some("not a Redis command"));
    }

    #[test]
    fn unknown_subcommand() {
        let d = lint(
            Lint::UnknownCommand,
            "return redis.call('OBJECT', 'ENCODNG', KEYS[1])",
            1,
            0,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].message, "`OBJECT` has no subcommand `ENCODNG`");
        assert_eq!(d[0].label.as_deref(), Some("did you mean `ENCODING`?"));
    }

    #[test]
    fn commands_refused_in_scripts() {
        assert_eq!(
            msgs("redis.call('SUBSCRIBE', 'ch')"),
            ["`SUBSCRIBE` cannot be called from a script"]
        );
        assert_eq!(
            msgs("redis.call('multi')"),
            ["`MULTI` cannot be called from a script"]
        );
        assert_eq!(
            msgs("redis.call('EVAL', 'return 1', 0)"),
            ["`EVAL` cannot be called from a script"]
        );
        assert_eq!(
            msgs("redis.pcall('SCRIPT', 'LOAD', 'return 1')"),
            ["`SCRIPT LOAD` cannot be called from a script"]
        );
    }

    #[test]
    fn blocking_commands_are_refused_by_redis_7_0_only() {
        let src = "return redis.call('BLPOP', KEYS[1], 0)";
        assert_eq!(msgs(src), ["`BLPOP` cannot be called from a script"]);
        for target in [
            crate::ServerTarget::Redis7_2,
            crate::ServerTarget::Redis7_4,
            crate::ServerTarget::Valkey8_0,
        ] {
            let options = crate::Options {
                target,
                ..Default::default()
            };
            let d = crate::lints::test_util::lint_with(Lint::UnknownCommand, src, &options);
            assert!(d.is_empty(), "{target}: {d:?}");
        }
    }

    #[test]
    fn commands_of_other_targets_are_not_unknown() {
        // HEXPIRE is Redis 7.4's: `target_version` says so, not this lint.
        assert!(msgs("return redis.call('HEXPIRE', KEYS[1], 10, 'FIELDS', 1, 'f')").is_empty());
        assert!(msgs("return redis.call('CLIENT', 'NO-TOUCH', 'ON')").is_empty());
    }

    #[test]
    fn can_be_allowed() {
        let options = crate::Options {
            allow: vec![Lint::UnknownCommand],
            ..Default::default()
        };
        let d = crate::lints::test_util::lint_with(
            Lint::UnknownCommand,
            "redis.call('nope')",
            &options,
        );
        assert!(d.is_empty());
    }
}
