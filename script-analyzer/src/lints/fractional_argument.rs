//! `fractional_argument`: a number that may have a fraction where an
//! integer is needed.
//!
//! Lua 5.1 has only floating-point numbers: `ARGV[1] / 1000` is 1.5 for
//! 1500, and `redis.call('EXPIRE', k, 1.5)` fails with "value is not an
//! integer or out of range" (only for some inputs, which makes it a late
//! surprise). `string.format('%d', 1.5)` silently gives "1". Fires on a
//! value the inference knows may be fractional (a division, `^`, a
//! fractional literal, or arithmetic on one; directly or through locals)
//! passed where the command takes an integer (EXPIRE and friends, SET's
//! EX/PX/EXAT/PXAT, INCRBY, HINCRBY, ranges and counts: every argument the
//! command's JSON types as an integer or a Unix time, in its place, after
//! a token such as `COUNT`, in a `LIMIT offset count` block), or formatted
//! with `%d`.
//! `math.huge` is a fraction here too: Redis refuses it, and so is a
//! division by a number that may be 0 (`period / rate`), even rounded:
//! `math.ceil` of infinity is infinity. A warning: the division may be
//! exact for every input.

use super::typed::{Operand, conversions, each_operand};
use super::{Context, RedisCall};
use crate::commands::{self, ArgType};
use crate::facts::{Inferred, Origin, Ty, unparenthesized};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix};
use full_moon::tokenizer::TokenType;
use full_moon::visitors::Visitor;

/// The fraction a value may have, if the inference knows it may. A value
/// that is nil on some paths (`tonumber` of text) and a fraction on others
/// is a fraction where it is a number.
fn fraction(value: &Inferred) -> Option<&str> {
    match &value.origin {
        Some(Origin::Fraction { why, .. })
            if value.ty.intersects(Ty::FLOAT) && value.ty.minus(Ty::NIL).within(Ty::NUMBER) =>
        {
            Some(why)
        }
        _ => None,
    }
}

/// Whether argument `index` (0 = the first after the command name) of
/// `command` takes an integer, as the command's JSON types it: one of its
/// leading arguments (EXPIRE's seconds, LRANGE's start and stop), or the
/// argument of a token that takes one (see [`integer_by_tokens`]).
fn integer_argument(command: &str, index: usize) -> bool {
    commands::lookup(command).is_some_and(|c| c.takes_integer(index))
}

/// Whether the command's JSON says argument `index` is an integer: it
/// follows a token that takes one (`COUNT 10`, `EX 60`, `EXAT` a Unix
/// time), or is in a `LIMIT offset count` block. `args` are the literals after the command's name.
fn integer_by_tokens(command: &str, index: usize, args: &[Option<&str>]) -> bool {
    let Some(command) = commands::lookup(command) else {
        return false;
    };
    // Tokens come after the positional arguments.
    let token_at = |i: Option<usize>| -> Option<&'static commands::Token> {
        let i = i?;
        if i < command.positional() {
            return None;
        }
        command.token(args.get(i).copied().flatten()?)
    };
    let previous = token_at(index.checked_sub(1));
    if previous.is_some_and(|t| matches!(t.arg_type(), ArgType::Integer | ArgType::UnixTime)) {
        return true;
    }
    // `LIMIT offset count`: both integers.
    [index.checked_sub(1), index.checked_sub(2)]
        .into_iter()
        .any(|i| token_at(i).is_some_and(|t| t.name() == "LIMIT" && t.arg_type() == ArgType::Block))
}

pub(crate) fn check(cx: &Context<'_>, calls: &[RedisCall], report: &mut Report) {
    // Command arguments.
    let mut arguments = Vec::new();
    each_operand(cx, |expr, operand| {
        if operand == Operand::CommandArg {
            let span = cx.span_of(expr);
            let value = cx.types.of(expr);
            if let Some(why) = fraction(&value) {
                let infinite =
                    matches!(value.origin, Some(Origin::Fraction { infinite: true, .. }));
                arguments.push((span, why.to_string(), infinite));
            }
        }
    });
    for (span, why, infinite) in arguments {
        for call in calls {
            let Some(position) = call.args.iter().position(|a| a.span() == span) else {
                continue;
            };
            let Some(command) = call.command_name().map(str::to_ascii_uppercase) else {
                continue;
            };
            let literals: Vec<Option<&str>> =
                call.args.iter().skip(1).map(|a| a.literal()).collect();
            if position == 0
                || !(integer_argument(&command, position - 1)
                    || integer_by_tokens(&command, position - 1, &literals))
            {
                continue;
            }
            report.diagnostics.push(
                Diagnostic::warning(
                    Lint::FractionalArgument,
                    span,
                    format!("{command} needs an integer here, and this number may have a fraction: {why}"),
                )
                .with_label(if infinite {
                    "Redis refuses `inf` and `1.5`: \"value is not an integer or out of range\""
                } else {
                    "Redis refuses `1.5`: \"value is not an integer or out of range\""
                })
                .with_help("round it on purpose: `math.floor(...)`"),
            );
        }
    }
    // string.format('%d', ...).
    let mut formats = Formats {
        cx,
        found: Vec::new(),
    };
    cx.visit(&mut formats);
    report.diagnostics.extend(formats.found);
}

struct Formats<'c, 'a> {
    cx: &'c Context<'a>,
    found: Vec<Diagnostic>,
}

impl Visitor for Formats<'_, '_> {
    fn visit_function_call(&mut self, call: &FunctionCall) {
        let Prefix::Name(string) = call.prefix() else {
            return;
        };
        if string.token().to_string() != "string" || !self.cx.model.is_global(string) {
            return;
        }
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let [
            Suffix::Index(index),
            Suffix::Call(Call::AnonymousCall(args)),
        ] = suffixes.as_slice()
        else {
            return;
        };
        if crate::facts::index_key(index) != Some(crate::facts::Key::Name("format".to_string())) {
            return;
        }
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return;
        };
        let values: Vec<&Expression> = arguments.iter().collect();
        let Some(Expression::String(format)) = values.first().map(|e| unparenthesized(e)) else {
            return;
        };
        let TokenType::StringLiteral { literal, .. } = format.token_type() else {
            return;
        };
        for (i, conversion) in conversions(literal).into_iter().enumerate() {
            if !matches!(conversion, 'd' | 'i' | 'x' | 'X' | 'o' | 'u' | 'c') {
                continue;
            }
            let Some(value) = values.get(i + 1) else {
                continue;
            };
            let inferred = self.cx.types.of(value);
            let Some(why) = fraction(&inferred) else {
                continue;
            };
            self.found.push(
                Diagnostic::warning(
                    Lint::FractionalArgument,
                    self.cx.span_of(*value),
                    format!("`%{conversion}` needs an integer, and this number may have a fraction: {why}"),
                )
                .with_label("Lua drops the fraction silently: `string.format('%d', 1.5)` is \"1\"")
                .with_help("round it on purpose (`math.floor(...)`), or format it with `%s` or `%.2f`"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn warnings(source: &str) -> Vec<String> {
        let found = lint(Lint::FractionalArgument, source, 1, 2);
        assert!(found.iter().all(|d| d.severity == Severity::Warning));
        found.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn fractions_where_integers_go() {
        assert_eq!(
            warnings("return redis.call('EXPIRE', KEYS[1], ARGV[1] / 1000) + #ARGV[2]"),
            [
                "EXPIRE needs an integer here, and this number may have a fraction: a division gives a fractional number"
            ]
        );
        assert_eq!(
            warnings("local ttl = tonumber(ARGV[1]) / 1000 + 1\nredis.call('SET', KEYS[1], ARGV[2], 'EX', ttl) return 1").len(),
            1
        );
        assert_eq!(
            warnings("redis.call('INCRBY', KEYS[1], 1.5) return ARGV[1] .. ARGV[2]"),
            [
                "INCRBY needs an integer here, and this number may have a fraction: 1.5 is not an integer"
            ]
        );
        assert_eq!(
            warnings("return string.format('%s=%d', ARGV[2], ARGV[1] / 2) .. KEYS[1]"),
            [
                "`%d` needs an integer, and this number may have a fraction: a division gives a fractional number"
            ]
        );
    }

    #[test]
    fn integers_and_float_arguments_pass() {
        for source in [
            "return redis.call('EXPIRE', KEYS[1], math.floor(ARGV[1] / 1000)) + #ARGV[2]",
            "return redis.call('EXPIRE', KEYS[1], ARGV[1]) + #ARGV[2]",
            "return redis.call('ZADD', KEYS[1], ARGV[1] / 2, ARGV[2])",
            "return redis.call('INCRBYFLOAT', KEYS[1], ARGV[1] / 2) .. ARGV[2]",
            "redis.call('SET', KEYS[1], ARGV[1] / 2) return ARGV[2]",
            "return string.format('%s %.2f %%d', ARGV[2], ARGV[1] / 2) .. KEYS[1]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn integer_arguments_from_the_command_tables() {
        for source in [
            // A LIMIT count, through a local.
            "local n = tonumber(ARGV[1]) / 2\nreturn redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, n)",
            // A COUNT, through a field, in a loop.
            "local o = {}\no.batch = tonumber(ARGV[1]) * 0.5\nfor i = 1, 2 do redis.call('SSCAN', KEYS[1], 0, 'COUNT', o.batch) end",
            // A tonumber of a fraction.
            "local n = tonumber('2.5')\nreturn redis.call('INCRBY', KEYS[1], n)",
            // A float counter.
            "local s = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])\nreturn redis.call('EXPIRE', KEYS[1], tonumber(s))",
            // math.huge where an integer goes, past a branch.
            "local n = math.huge\nif ARGV[1] ~= '' then n = 10 end\nreturn redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, n)",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn leading_integer_arguments_come_from_the_command_json() {
        for source in [
            // LREM's count, through a local.
            "local n = tonumber(ARGV[1]) / 2\nreturn redis.call('LREM', KEYS[1], n, ARGV[2])",
            // SETBIT's offset, through a field.
            "local o = {}\no.bit = ARGV[1] / 8\nreturn redis.call('SETBIT', KEYS[1], o.bit, 1)",
            // ZPOPMIN's optional count, in a loop.
            "for i = 1, 3 do redis.call('ZPOPMIN', KEYS[1], i / 2) end",
            // A Unix time after EXAT, past a branch.
            "local at = tonumber(ARGV[1])\nif at > 1e12 then at = at / 1000 end\nredis.call('SET', KEYS[1], ARGV[2], 'EXAT', at)",
            // BITCOUNT's start, in an optional block.
            "return redis.call('BITCOUNT', KEYS[1], ARGV[1] / 8, -1)",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn fractions_passed_to_the_scripts_own_functions() {
        for source in [
            "local function add(key, n)\n  return redis.call('INCRBY', key, n)\nend\nadd(KEYS[1], ARGV[1] / 2)\nreturn add(KEYS[1], 1)",
            "local expire = function(key, ttl) redis.call('EXPIRE', key, ttl) end\nlocal o = {}\no.ttl = tonumber(ARGV[1]) / 1000\nif ARGV[2] then expire(KEYS[1], o.ttl) end",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
        for source in [
            "local function add(key, n)\n  return redis.call('INCRBY', key, n)\nend\nadd(KEYS[1], math.floor(ARGV[1] / 2))\nreturn add(KEYS[1], 1)",
            "local function add(key, n)\n  return redis.call('INCRBY', key, n)\nend\nlocal f = add\nf(KEYS[1], ARGV[1] / 2)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn arguments_the_server_reads_as_doubles_pass() {
        for source in [
            // The JSON types ZINCRBY's increment as an integer; ZADD's parsing reads it.
            "local n = tonumber(ARGV[1]) / 2\nreturn redis.call('ZINCRBY', KEYS[1], n, ARGV[2])",
            // LREM's element is a string.
            "return redis.call('LREM', KEYS[1], 0, ARGV[1] / 2)",
            "local o = {}\no.v = ARGV[1] / 8\nreturn redis.call('SETRANGE', KEYS[1], 0, o.v)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn a_division_by_an_input_that_may_be_0_stays_infinite_when_rounded() {
        for source in [
            // Through locals and a product, rounded up, in a branch.
            "local interval = ARGV[1] / ARGV[2]\nlocal wait = interval * 3\nif wait > 0 then redis.call('EXPIRE', KEYS[1], math.ceil(wait)) end",
            // Through a field, then a sum with a finite fraction, rounded down.
            "local t = {}\nt.per = 60 / tonumber(ARGV[2])\nlocal now = redis.call('TIME')\nlocal at = now[2] / 1000000 + t.per\nredis.call('SET', KEYS[1], ARGV[1], 'PX', math.floor(at * 1000))",
            // In a loop, through `math.max`.
            "local ttl = 1\nfor i = 1, 3 do ttl = math.max(ttl, ARGV[1] / (ARGV[2] - i)) end\nredis.call('PEXPIRE', KEYS[1], math.floor(ttl))",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("keeps it infinite"), "{found:?}");
        }
    }

    #[test]
    fn rounded_divisions_by_numbers_that_are_not_0_pass() {
        for source in [
            // A literal divisor.
            "local interval = ARGV[1] / 1000\nredis.call('EXPIRE', KEYS[1], math.ceil(interval))",
            "redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1]) / 1000) + #ARGV[2])",
            // A divisor tested above 0 first.
            "local rate = tonumber(ARGV[2])\nif not rate or rate <= 0 then return 0 end\nredis.call('EXPIRE', KEYS[1], math.ceil(ARGV[1] / rate))",
            // A divisor that is a length plus one.
            "redis.call('EXPIRE', KEYS[1], math.floor(ARGV[1] / (#ARGV[2] + 1)))",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn rounded_or_float_token_arguments_pass() {
        for source in [
            "local n = math.floor(tonumber(ARGV[1]) / 2)\nreturn redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, n)",
            "local o = {}\no.batch = tonumber(ARGV[1]) * 2\nfor i = 1, 2 do redis.call('SSCAN', KEYS[1], 0, 'COUNT', o.batch) end",
            "local n = tonumber('25')\nreturn redis.call('INCRBY', KEYS[1], n)",
            "local s = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])\nreturn redis.call('EXPIRE', KEYS[1], math.floor(tonumber(s)))",
            // Scores are often integer timestamps.
            "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\nif not s then return 0 end\nreturn redis.call('EXPIRE', KEYS[1], tonumber(s))",
            // ZRANGEBYSCORE's min and max are doubles.
            "return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1] / 2, math.huge)",
            "local n = math.huge\nif ARGV[1] ~= '' then n = 10 else n = 20 end\nreturn redis.call('ZRANGEBYSCORE', KEYS[1], 0, 10, 'LIMIT', 0, n)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn formats_of_fractions_through_fields_loops_and_branches() {
        for source in [
            "local o = {}\no.half = tonumber(ARGV[1]) / 2\nreturn string.format('%d', o.half) .. KEYS[1] .. ARGV[2]",
            "local s = ''\nfor i = 1, 3 do s = s .. string.format('%d,', i / 2) end\nreturn s .. KEYS[1] .. ARGV[1] .. ARGV[2]",
            "local n = 1\nif ARGV[1] then n = n * 1.5 end\nreturn string.format('%d', n) .. KEYS[1] .. ARGV[2]",
            // Nil on one path (`tonumber` of text), a fraction on another.
            "local n = tonumber(ARGV[1])\nif ARGV[2] == 'half' then n = n / 2 end\nredis.call('PEXPIRE', KEYS[1], n)",
        ] {
            assert_eq!(
                warnings(source).len(),
                1,
                "{source}: {:?}",
                warnings(source)
            );
        }
        for source in [
            "local o = {}\no.half = math.floor(tonumber(ARGV[1]) / 2)\nreturn string.format('%d', o.half) .. KEYS[1] .. ARGV[2]",
            "local s = ''\nfor i = 1, 3 do s = s .. string.format('%d,', i * 2) end\nreturn s .. KEYS[1] .. ARGV[1] .. ARGV[2]",
            "local n = 1\nif ARGV[1] then n = n * 1.5 end\nreturn string.format('%.1f', n) .. KEYS[1] .. ARGV[2]",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
