//! `target_version`: a command, subcommand or option that exists, but not on
//! the target (`HEXPIRE` on Redis 7.0, `ZRANK ... WITHSCORE` before 7.2,
//! `HEXPIRE` on any Valkey). The server fails such a call with "Unknown
//! Redis command called from script", or a syntax error for an option.
//!
//! An option is a literal argument equal to one of the command's tokens
//! (`NX`, `WITHSCORE`), except where a value must be: a key, one of the
//! arguments that come first (`SET key value`), or the value of the
//! previous token (`MATCH pattern`).

use super::{CallArg, Context, RedisCall};
use crate::commands::{self, ArgShape, ArgType, Command};
use crate::target::{Availability, ServerTarget};
use crate::{Diagnostic, Lint, Report, Span};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let target = cx.options.target;
    for call in calls {
        let Some(name_arg) = call.args.first() else {
            continue;
        };
        let Some(command) = name_arg.literal().and_then(commands::lookup) else {
            continue;
        };
        if !command.available_on(target) {
            report.diagnostics.push(missing(
                &format!("`{}`", command.display_name()),
                command.since(),
                target,
                name_arg.span(),
                Refusal::UnknownCommand,
            ));
            continue;
        }
        let mut resolved = command;
        let mut first_option = 1;
        if let Some(sub_arg @ CallArg::Literal(sub, _)) = call.args.get(1)
            && let Some(found) = command.subcommand(sub)
        {
            if !found.available_on(target) {
                let span = Span {
                    start: name_arg.span().start,
                    end: sub_arg.span().end,
                };
                report.diagnostics.push(missing(
                    &format!("`{}`", found.display_name()),
                    found.since(),
                    target,
                    span,
                    Refusal::UnknownCommand,
                ));
                continue;
            }
            resolved = found;
            first_option = 2;
        }
        check_options(call, resolved, first_option, target, report);
    }
}

/// The options of `call` (from argument `first`) that `target` lacks.
fn check_options(
    call: &RedisCall,
    command: &Command,
    first: usize,
    target: ServerTarget,
    report: &mut Report,
) {
    if command.tokens().iter().all(|t| t.available_on(target)) {
        return;
    }
    let shapes: Vec<ArgShape<'_>> = call.args.iter().skip(1).map(CallArg::shape).collect();
    let keys = command.key_positions(&shapes);
    let mut after_value_token = false;
    for (i, arg) in call
        .args
        .iter()
        .enumerate()
        .skip(first + command.positional())
    {
        let value_of_token = std::mem::take(&mut after_value_token);
        if keys.contains(&(i - 1)) || value_of_token {
            continue;
        }
        let Some(token) = arg.literal().and_then(|word| command.token(word)) else {
            continue;
        };
        after_value_token = !matches!(
            token.arg_type(),
            ArgType::PureToken | ArgType::Block | ArgType::OneOf
        );
        if token.available_on(target) {
            continue;
        }
        let what = format!("`{}` option `{}`", command.display_name(), token.name());
        report.diagnostics.push(missing(
            &what,
            token.since(),
            target,
            arg.span(),
            Refusal::SyntaxError,
        ));
    }
}

/// What the server says to a call with something it lacks.
#[derive(Clone, Copy)]
enum Refusal {
    /// A command or subcommand.
    UnknownCommand,
    /// An option.
    SyntaxError,
}

/// The diagnostic for `what`, which exists on the targets of `since` only.
fn missing(
    what: &str,
    since: Availability,
    target: ServerTarget,
    span: Span,
    refusal: Refusal,
) -> Diagnostic {
    let vendor = target.vendor();
    let (message, label, suggested) = match since.first(vendor) {
        Some(first) => (
            format!(
                "{what} needs {} or later; the target is {target}",
                first.display_name()
            ),
            format!("not in {}", target.display_name()),
            Some(first),
        ),
        None => {
            let other = since.redis.or(since.valkey);
            let elsewhere =
                other.map_or(String::new(), |t| format!(" ({} has it)", t.display_name()));
            (
                format!(
                    "{what} does not exist in {}{elsewhere}; the target is {target}",
                    vendor.display_name()
                ),
                format!("no {} has it", vendor.display_name()),
                other,
            )
        }
    };
    let mut d = Diagnostic::error(Lint::TargetVersion, span, message)
        .with_label(label)
        .with_note(format!(
            "{} fails the call with {}",
            target.display_name(),
            match refusal {
                Refusal::UnknownCommand => "\"Unknown Redis command called from script\"",
                Refusal::SyntaxError => "a syntax error (or a wrong number of arguments)",
            }
        ));
    if let Some(t) = suggested {
        d = d.with_help(format!(
            "to run on {} instead, set `target = \"{t}\"` in `#[redis_script(...)]`, `target = \"{t}\"` under `[package.metadata.redlua]` in Cargo.toml, or `lockctl lint --target {t}`",
            t.display_name()
        ));
    }
    d
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint_with;
    use crate::{Declared, Lint, Options, ServerTarget};

    fn msgs_on(target: ServerTarget, source: &str) -> Vec<String> {
        let options = Options {
            declared: Some(Declared::exact(2, 2)),
            target,
            ..Options::default()
        };
        lint_with(Lint::TargetVersion, source, &options)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    const HEXPIRE: &str = "return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])";

    #[test]
    fn command_newer_than_the_target() {
        assert_eq!(
            msgs_on(ServerTarget::Redis7_0, HEXPIRE),
            ["`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0"]
        );
        assert_eq!(
            msgs_on(ServerTarget::Redis7_2, HEXPIRE),
            ["`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.2"]
        );
        assert!(msgs_on(ServerTarget::Redis7_4, HEXPIRE).is_empty());
        let waitaof = "return redis.call('WAITAOF', 1, 0, 0)";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_0, waitaof),
            ["`WAITAOF` needs Redis 7.2 or later; the target is redis-7.0"]
        );
    }

    #[test]
    fn the_diagnostic_says_how_to_change_the_target() {
        let options = Options::default();
        let d = lint_with(Lint::TargetVersion, HEXPIRE, &options);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].label.as_deref(), Some("not in Redis 7.0"));
        let span = d[0].primary_span().unwrap();
        assert_eq!(&HEXPIRE[span.start.offset..span.end.offset], "'HEXPIRE'");
        assert_eq!(
            d[0].help.as_deref(),
            Some(
                "to run on Redis 7.4 instead, set `target = \"redis-7.4\"` in `#[redis_script(...)]`, \
                 `target = \"redis-7.4\"` under `[package.metadata.redlua]` in Cargo.toml, \
                 or `lockctl lint --target redis-7.4`"
            )
        );
    }

    #[test]
    fn command_of_the_other_vendor() {
        assert_eq!(
            msgs_on(ServerTarget::Valkey8_0, HEXPIRE),
            ["`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"]
        );
        let show = "return redis.call('SCRIPT', 'SHOW', ARGV[1])";
        assert!(msgs_on(ServerTarget::Valkey8_0, show).is_empty());
        assert_eq!(
            msgs_on(ServerTarget::Valkey7_2, show),
            ["`SCRIPT SHOW` needs Valkey 8.0 or later; the target is valkey-7.2"]
        );
        assert_eq!(
            msgs_on(ServerTarget::Redis7_4, show),
            ["`SCRIPT SHOW` does not exist in Redis (Valkey 8.0 has it); the target is redis-7.4"]
        );
    }

    #[test]
    fn subcommand_newer_than_the_target() {
        let src = "redis.call('CLIENT', 'NO-TOUCH', 'ON')";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_0, src),
            ["`CLIENT NO-TOUCH` needs Redis 7.2 or later; the target is redis-7.0"]
        );
        assert!(msgs_on(ServerTarget::Redis7_2, src).is_empty());
        assert!(msgs_on(ServerTarget::Valkey7_2, src).is_empty());
    }

    #[test]
    fn option_newer_than_the_target() {
        let src = "return redis.call('ZRANK', KEYS[1], ARGV[1], 'withscore')";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_0, src),
            ["`ZRANK` option `WITHSCORE` needs Redis 7.2 or later; the target is redis-7.0"]
        );
        assert!(msgs_on(ServerTarget::Redis7_2, src).is_empty());
        let src = "return redis.call('HSCAN', KEYS[1], 0, 'NOVALUES')";
        assert_eq!(
            msgs_on(ServerTarget::Valkey7_2, src),
            ["`HSCAN` option `NOVALUES` needs Valkey 8.0 or later; the target is valkey-7.2"]
        );
        assert!(msgs_on(ServerTarget::Valkey8_0, src).is_empty());
        let src = "return redis.call('ZSCAN', KEYS[1], 0, 'NOSCORES')";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_4, src),
            [
                "`ZSCAN` option `NOSCORES` does not exist in Redis (Valkey 8.0 has it); the target is redis-7.4"
            ]
        );
    }

    #[test]
    fn redis_8() {
        let set_ifeq = "return redis.call('SET', KEYS[1], ARGV[1], 'IFEQ', ARGV[2])";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_0, set_ifeq),
            ["`SET` option `IFEQ` needs Redis 8.4 or later; the target is redis-7.0"]
        );
        assert_eq!(
            msgs_on(ServerTarget::Redis8_2, set_ifeq),
            ["`SET` option `IFEQ` needs Redis 8.4 or later; the target is redis-8.2"]
        );
        assert!(msgs_on(ServerTarget::Redis8_4, set_ifeq).is_empty());
        assert_eq!(
            msgs_on(ServerTarget::Valkey8_0, set_ifeq),
            [
                "`SET` option `IFEQ` does not exist in Valkey (Redis 8.4 has it); the target is valkey-8.0"
            ]
        );
        let hgetex = "return redis.call('HGETEX', KEYS[1], 'EX', 60, 'FIELDS', 1, ARGV[1])";
        assert_eq!(
            msgs_on(ServerTarget::Redis7_4, hgetex),
            ["`HGETEX` needs Redis 8.0 or later; the target is redis-7.4"]
        );
        assert!(msgs_on(ServerTarget::Redis8_0, hgetex).is_empty());
        let xdelex = "return redis.call('XDELEX', KEYS[1], 'KEEPREF', 'IDS', 1, ARGV[1])";
        assert_eq!(
            msgs_on(ServerTarget::Redis8_0, xdelex),
            ["`XDELEX` needs Redis 8.2 or later; the target is redis-8.0"]
        );
        assert!(msgs_on(ServerTarget::Redis8_2, xdelex).is_empty());
        let bitop = "return redis.call('BITOP', 'DIFF', KEYS[1], KEYS[2])";
        assert_eq!(
            msgs_on(ServerTarget::Redis8_0, bitop),
            ["`BITOP` option `DIFF` needs Redis 8.2 or later; the target is redis-8.0"]
        );
        assert!(msgs_on(ServerTarget::Redis8_2, bitop).is_empty());
        let claim = "return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'CLAIM', 1000, 'STREAMS', KEYS[1], '>')";
        assert_eq!(
            msgs_on(ServerTarget::Redis8_2, claim),
            ["`XREADGROUP` option `CLAIM` needs Redis 8.4 or later; the target is redis-8.2"]
        );
        assert!(msgs_on(ServerTarget::Redis8_4, claim).is_empty());
        // What Redis 7.4 has, Redis 8 has.
        assert!(msgs_on(ServerTarget::Redis8_0, HEXPIRE).is_empty());
    }

    #[test]
    fn options_of_every_target_pass() {
        for target in ServerTarget::ALL {
            let src = "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PX', 100)\n\
                       redis.call('BITOP', 'AND', KEYS[1], KEYS[2])\n\
                       redis.call('ZADD', KEYS[1], 'GT', 'CH', 1, 'm')";
            assert!(msgs_on(*target, src).is_empty(), "{target}");
        }
        // A key or a value that happens to spell a newer token is a value.
        let src = "return redis.call('HSCAN', 'NOVALUES', 0)";
        assert!(msgs_on(ServerTarget::Redis7_0, src).is_empty());
        let src = "return redis.call('SET', KEYS[1], 'IFEQ')";
        assert!(msgs_on(ServerTarget::Redis7_0, src).is_empty());
        let src = "return redis.call('HSCAN', KEYS[1], 0, 'MATCH', 'NOVALUES')";
        assert!(msgs_on(ServerTarget::Redis7_0, src).is_empty());
        let src = "return redis.call('HSCAN', KEYS[1], 0, 'MATCH', '*', 'NOVALUES')";
        assert_eq!(msgs_on(ServerTarget::Redis7_0, src).len(), 1);
        // Computed names and arguments are not checked.
        assert!(
            msgs_on(
                ServerTarget::Redis7_0,
                "return redis.call(ARGV[1], KEYS[1])"
            )
            .is_empty()
        );
        assert!(
            msgs_on(
                ServerTarget::Redis7_0,
                "return redis.call('ZRANK', KEYS[1], ARGV[1], ARGV[2])"
            )
            .is_empty()
        );
    }

    #[test]
    fn can_be_allowed() {
        let options = Options {
            allow: vec![Lint::TargetVersion],
            ..Options::default()
        };
        assert!(lint_with(Lint::TargetVersion, HEXPIRE, &options).is_empty());
    }
}
