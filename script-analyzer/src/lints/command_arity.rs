//! `command_arity`: a `redis.call` whose literal argument count the command
//! does not accept (Redis fails it with "Wrong number of args calling Redis
//! command from script"). Calls with a spread argument (`unpack(ARGV)`, a
//! call in last position, `...`) are not checked.

use super::{Context, RedisCall};
use crate::{Diagnostic, Lint, Report};

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    let target = cx.options.target;
    for call in calls {
        if call.args.is_empty() {
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::CommandArity,
                    call.span,
                    "`redis.call` needs at least a command name",
                )
                .with_label("no arguments")
                .with_note("Redis fails the call with \"Please specify at least one argument for this redis lib call\""),
            );
            continue;
        }
        if call.has_spread() {
            continue;
        }
        let Some(command) = call.resolved_command() else {
            continue;
        };
        if !command.available_on(target)
            || !command.allowed_in_scripts_on(target)
            || command.accepts_on(target, call.args.len())
        {
            continue;
        }
        // Words of the command's name: 1, or 2 for a subcommand.
        let words = if command.name().contains('|') { 2 } else { 1 };
        let arity = command.arity_on(target);
        let wanted = arity.unsigned_abs() as usize - words;
        let passed = call.args.len().saturating_sub(words);
        let amount = if arity < 0 {
            format!("at least {}", plural(wanted))
        } else {
            format!("exactly {}", plural(wanted))
        };
        let name = command.display_name();
        report.diagnostics.push(
            Diagnostic::error(
                Lint::CommandArity,
                call.span,
                format!(
                    "`{name}` takes {amount} after its name, but this call passes {passed}"
                ),
            )
            .with_label(format!("{} after `{name}`", plural(passed)))
            .with_note("Redis fails the call with \"Wrong number of args calling Redis command from script\""),
        );
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 argument".to_string()
    } else {
        format!("{n} arguments")
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn msgs(source: &str) -> Vec<String> {
        messages(Lint::CommandArity, source, 3, 3)
    }

    #[test]
    fn right_counts_pass() {
        assert!(msgs("redis.call('GET', KEYS[1])").is_empty());
        assert!(msgs("redis.call('HSET', KEYS[1], 'a', 1, 'b', 2)").is_empty());
        assert!(msgs("redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])").is_empty());
        assert!(msgs("redis.call('OBJECT', 'ENCODING', KEYS[1])").is_empty());
        assert!(msgs("redis.call('PING')").is_empty());
    }

    #[test]
    fn wrong_counts() {
        assert_eq!(
            msgs("redis.call('HSET', KEYS[1])"),
            ["`HSET` takes at least 3 arguments after its name, but this call passes 1"]
        );
        assert_eq!(
            msgs("redis.call('get', KEYS[1], KEYS[2])"),
            ["`GET` takes exactly 1 argument after its name, but this call passes 2"]
        );
        assert_eq!(
            msgs("redis.pcall('OBJECT', 'ENCODING')"),
            ["`OBJECT ENCODING` takes exactly 1 argument after its name, but this call passes 0"]
        );
        assert_eq!(
            msgs("redis.call('PEXPIRE', KEYS[1])"),
            ["`PEXPIRE` takes at least 2 arguments after its name, but this call passes 1"]
        );
        assert_eq!(
            msgs("redis.call()"),
            ["`redis.call` needs at least a command name"]
        );
    }

    #[test]
    fn arity_of_the_target() {
        // ZRANK takes WITHSCORE since Redis 7.2: arity 3 in 7.0, -3 after.
        let src = "return redis.call('ZRANK', KEYS[1], ARGV[1], 'WITHSCORE')";
        assert_eq!(
            msgs(src),
            ["`ZRANK` takes exactly 2 arguments after its name, but this call passes 3"]
        );
        let options = crate::Options {
            target: crate::ServerTarget::Redis7_2,
            ..Default::default()
        };
        assert!(crate::lints::test_util::lint_with(Lint::CommandArity, src, &options).is_empty());
    }

    #[test]
    fn spreads_and_unknowns_are_not_checked() {
        assert!(msgs("redis.call('HSET', KEYS[1], unpack(ARGV))").is_empty());
        assert!(msgs("local function f(...) return redis.call('DEL', ...) end").is_empty());
        assert!(msgs("redis.call('MSET', f())").is_empty());
        assert!(msgs("redis.call(ARGV[1])").is_empty());
        assert!(msgs("redis.call('nope')").is_empty());
        // An unknown subcommand is `unknown_command`'s business.
        assert!(msgs("redis.call('OBJECT', ARGV[1])").is_empty());
    }
}
