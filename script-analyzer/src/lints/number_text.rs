//! `number_text`: a number turned into text that does not say it.
//!
//! Redis's Lua (5.1) formats numbers with 14 significant digits (`%.14g`),
//! in `tostring`, `..` and `cjson.encode`: from 1e14 on, a number comes out
//! in exponent form or rounded (`tostring(1700000000000000)` is
//! `"1.7e+15"`). Microsecond timestamps (TIME's seconds times 1e6), and
//! snowflake ids, make keys, members and JSON that no longer match.
//! Numbers are doubles, too: an integer past 2^53 is not exact, so a
//! literal past it is already another number, and arithmetic past it
//! rounds.
//!
//! Redis 7.2 before 7.2.5 (and Valkey 7.2 before 7.2.5) turn a number
//! passed to `redis.call` into text with the shortest form that reads
//! back, which is exponent form for an integer that ends in eight zeros
//! or more: a counter at 300000000 is sent as `3e+8`, which commands that
//! take an integer refuse, and which keys and members keep as it is.
//!
//! Fires (an error) on a number the value facts say is at least 1e14 in
//! size where it is turned into text; and (a warning) on an integer
//! literal past 2^53, on arithmetic whose least result is past 2^53, on
//! `tonumber` of text past 2^53, and on an integer reply (INCR, HINCRBY)
//! of a key the script sets to a number past 2^53 (an id seeded from a
//! 64-bit value): once, where the rounding happens;
//! on a number with a fraction and 10 digits or more before the point (a
//! timestamp in seconds with its microseconds) turned into text, which
//! keeps 4 digits of its fraction;
//! on `tonumber` of an input put in a table that `cjson.encode` writes
//! (the caller's digits, cut to 14: a fraction of a timestamp, an id);
//! on a 7.2 target, (a warning) on a number argument of `redis.call` that
//! may be 1e8 or more in size (a counter, an id, a timestamp in
//! milliseconds), through locals, fields, loops and branches.

use super::library_calls::each_library_call;
use super::typed::{Operand, each_operand, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty, number};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Expression, Field};
use full_moon::visitors::Visitor;

/// Where `%.14g` switches to exponent form.
const EXPONENT_FROM: f64 = 1e14;

/// The last integer a double holds exactly with all below it.
const EXACT_UP_TO: f64 = 9_007_199_254_740_992.0;

/// From this size on, some integers (the multiples of 1e8) are written in
/// exponent form by Redis 7.2's argument conversion.
const SHORTEST_EXPONENT_FROM: f64 = 1e8;

/// Whether the target converts number arguments with the shortest form.
fn shortest_form_arguments(target: crate::ServerTarget) -> bool {
    target.version() == (7, 2)
}

/// Whether `value` may be a number of at least 1e8 in size (a string
/// argument is sent as it is).
fn may_reach_exponent_form(value: &Inferred) -> bool {
    !value.ty.is_any()
        && value.ty.intersects(Ty::NUMBER)
        && (value.range.hi >= SHORTEST_EXPONENT_FROM || value.range.lo <= -SHORTEST_EXPONENT_FROM)
}

/// The input `value` is `tonumber` of, when nothing bounds its size: the
/// caller's digits, which may be more than 14 (a timestamp with a
/// fraction, a 64-bit id).
fn caller_number(value: &Inferred) -> Option<&str> {
    if !value.ty.within(Ty::NUMBER.union(Ty::NIL))
        || (value.range.lo > -EXPONENT_FROM && value.range.hi < EXPONENT_FROM)
    {
        return None;
    }
    match &value.origin {
        Some(Origin::Tonumber { of: Some(of) }) => match &**of {
            Origin::Input { name } => Some(name),
            _ => None,
        },
        _ => None,
    }
}

/// A field of a table given to `cjson.encode` that is the caller's
/// number, read back as a number: the JSON holds 14 significant digits of it.
fn encoded_caller_number(
    cx: &Context<'_>,
    field: &str,
    table: &Expression,
    input: &str,
    found: &mut Report,
) {
    found.diagnostics.push(
        Diagnostic::warning(
            Lint::NumberText,
            cx.span_of(table),
            format!(
                "the field {field} of `{}` is `tonumber` of {input}: `cjson.encode` writes it with 14 significant digits, so a number with more (a timestamp with a fraction, a 64-bit id) comes out rounded",
                text(cx, table)
            ),
        )
        .with_label("the caller's digits, cut to 14")
        .with_help("keep the text as it came, or make sure the caller's numbers have at most 14 significant digits"),
    );
}

/// From this size on, `%.14g` leaves 4 digits or fewer for a fraction.
const TEN_DIGITS: f64 = 1e9;

/// Whether `value` is a number that may have a fraction and is surely of
/// 10 digits or more before the point (but less than 1e14): a timestamp in
/// seconds with its microseconds, which `%.14g` cuts.
fn long_fraction(value: &Inferred) -> bool {
    value.ty.within(Ty::NUMBER)
        && value.ty.intersects(Ty::FLOAT)
        && matches!(
            value.origin,
            Some(Origin::Fraction {
                infinite: false,
                ..
            })
        )
        && ((value.range.lo >= TEN_DIGITS && value.range.hi < EXPONENT_FROM)
            || (value.range.hi <= -TEN_DIGITS && value.range.lo > -EXPONENT_FROM))
}

/// Whether `value` is surely a number of at least 1e14 in size.
fn large(value: &Inferred) -> bool {
    value.ty.within(Ty::NUMBER)
        && (value.range.lo >= EXPONENT_FROM || value.range.hi <= -EXPONENT_FROM)
}

fn as_text(cx: &Context<'_>, expr: &Expression, how: &str, report: &mut Report) {
    let value = cx.types.of(expr);
    if long_fraction(&value) {
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::NumberText,
                cx.span_of(expr),
                format!(
                    "`{}` has a fraction and 10 digits or more before the point (a timestamp in seconds): {how} writes 14 significant digits, so its fraction is cut to 4 digits",
                    text(cx, expr)
                ),
            )
            .with_label("rounded to 14 significant digits")
            .with_help("format it yourself (`string.format('%.6f', t)`), or keep whole milliseconds or microseconds"),
        );
        return;
    }
    if !large(&value) {
        return;
    }
    report.diagnostics.push(
        Diagnostic::error(
            Lint::NumberText,
            cx.span_of(expr),
            format!(
                "`{}` is a number of 1e14 or more: {how} writes it with 14 significant digits, in exponent form (`1.7e+15`)",
                text(cx, expr)
            ),
        )
        .with_label("not the digits of the number")
        .with_help("format it yourself: `string.format('%.0f', n)` for an integer, or keep it in two parts"),
    );
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut found = Report::default();
    let shortest = shortest_form_arguments(cx.options.target);
    each_operand(cx, |expr, operand| {
        if operand == Operand::Concat {
            as_text(cx, expr, "`..`", &mut found);
        }
        if shortest && operand == Operand::CommandArg && may_reach_exponent_form(&cx.types.of(expr))
        {
            found.diagnostics.push(
                Diagnostic::warning(
                    Lint::NumberText,
                    cx.span_of(expr),
                    format!(
                        "`{}` may be a number of 1e8 or more: {} before 7.2.5 sends a number argument that ends in eight zeros in exponent form (300000000 as `3e+8`)",
                        text(cx, expr),
                        cx.options.target.display_name()
                    ),
                )
                .with_label("sent as text in the shortest form")
                .with_help("pass it as text yourself: `string.format('%d', n)`, or require 7.2.5 or later"),
            );
        }
    });
    each_library_call(cx, |call| match call.name.as_str() {
        "tostring" => {
            if let Some(arg) = call.args.first() {
                as_text(cx, arg, "`tostring`", &mut found);
            }
        }
        "cjson.encode" => {
            let Some(arg) = call.args.first() else {
                return;
            };
            match crate::facts::unparenthesized(arg) {
                Expression::TableConstructor(table) => {
                    for field in table.fields() {
                        let value = match field {
                            Field::NoKey(value) => value,
                            Field::NameKey { value, .. } | Field::ExpressionKey { value, .. } => {
                                value
                            }
                            #[allow(unreachable_patterns)]
                            _ => continue,
                        };
                        as_text(cx, value, "`cjson.encode`", &mut found);
                        let field = match field {
                            Field::NameKey { key, .. } => format!("`.{}`", key.token()),
                            _ => "here".to_string(),
                        };
                        if let Some(input) = caller_number(&cx.types.of(value)) {
                            encoded_caller_number(cx, &field, value, input, &mut found);
                        }
                    }
                }
                other => {
                    // A followed local table: its fields where it is encoded.
                    if let Some(fields) = cx.types.table_fields(other) {
                        let large = fields
                            .names_with_values
                            .iter()
                            .map(|(name, value)| (format!("`.{name}`"), value))
                            .chain(
                                fields
                                    .elements
                                    .iter()
                                    .map(|(i, value)| (format!("`[{i}]`"), value)),
                            )
                            .find(|(_, value)| large(value));
                        let caller = fields
                            .names_with_values
                            .iter()
                            .find_map(|(name, value)| Some((name, caller_number(value)?)));
                        if large.is_none()
                            && let Some((name, input)) = caller
                        {
                            encoded_caller_number(
                                cx,
                                &format!("`.{name}`"),
                                other,
                                input,
                                &mut found,
                            );
                        }
                        if let Some((field, _)) = large {
                            found.diagnostics.push(
                                Diagnostic::error(
                                    Lint::NumberText,
                                    cx.span_of(other),
                                    format!(
                                        "the field {field} of `{}` is a number of 1e14 or more: `cjson.encode` writes it with 14 significant digits, in exponent form (`1.7e+15`)",
                                        text(cx, other)
                                    ),
                                )
                                .with_label("not the digits of the number")
                                .with_help("format it yourself: `string.format('%.0f', n)` for an integer, or keep it in two parts"),
                            );
                        }
                        return;
                    }
                    as_text(cx, other, "`cjson.encode`", &mut found)
                }
            }
        }
        _ => {}
    });
    let mut inexact = Inexact {
        cx,
        found: Vec::new(),
    };
    cx.visit(&mut inexact);
    // Once where the rounding happens: not again for arithmetic on it.
    let spans: Vec<crate::Span> = inexact
        .found
        .iter()
        .filter_map(|d| d.primary_span())
        .collect();
    inexact.found.retain(|d| {
        d.primary_span().is_none_or(|outer| {
            !spans.iter().any(|inner| {
                *inner != outer
                    && outer.start.offset <= inner.start.offset
                    && inner.end.offset <= outer.end.offset
            })
        })
    });
    found.diagnostics.extend(inexact.found);
    report.diagnostics.extend(found.diagnostics);
}

/// `tonumber(...)`, the global.
fn is_tonumber(cx: &Context<'_>, call: &full_moon::ast::FunctionCall) -> bool {
    matches!(call.prefix(), full_moon::ast::Prefix::Name(name)
        if name.token().to_string() == "tonumber" && cx.model.is_global(name))
        && call.suffixes().count() == 1
}

/// Integers a double does not hold exactly.
struct Inexact<'c, 'a> {
    cx: &'c Context<'a>,
    found: Vec<Diagnostic>,
}

impl Visitor for Inexact<'_, '_> {
    fn visit_expression(&mut self, expr: &Expression) {
        match expr {
            Expression::Number(token) => {
                // The literal's own digits: parsing to a double rounds them.
                let written = token.token().to_string();
                let exact = match written.parse::<u128>() {
                    Ok(n) => (n as f64) as u128 == n,
                    Err(_) => {
                        number(token).is_none_or(|n| n.fract() != 0.0 || n.abs() <= EXACT_UP_TO)
                    }
                };
                if !exact {
                    self.found.push(
                        Diagnostic::warning(
                            Lint::NumberText,
                            self.cx.span_of(token),
                            format!(
                                "`{}` is past 2^53: Lua numbers are doubles, and this one is not exact",
                                token.token()
                            ),
                        )
                        .with_label("rounded when the script is read")
                        .with_help("keep such ids as strings, and let Redis do the arithmetic (INCRBY)"),
                    );
                }
            }
            Expression::FunctionCall(call) => {
                let value = self.cx.types.of(expr);
                // A double of 2^53 may be the rounding of 2^53 + 1.
                let past = value.range.lo >= EXACT_UP_TO || value.range.hi <= -EXACT_UP_TO;
                if !past {
                    return;
                }
                if let Some((command, _, _)) = value.reply()
                    && value.ty.intersects(Ty::INT)
                {
                    self.found.push(
                        Diagnostic::warning(
                            Lint::NumberText,
                            self.cx.span_of(expr),
                            format!(
                                "{command} may reply a number past 2^53 here (the script sets this key to one): Lua receives it as a double, which does not hold it exactly"
                            ),
                        )
                        .with_label("rounded on its way into Lua")
                        .with_help("read the value back as text (`GET`) where its digits matter, and keep such ids as strings"),
                    );
                } else if is_tonumber(self.cx, call) {
                    self.found.push(
                        Diagnostic::warning(
                            Lint::NumberText,
                            self.cx.span_of(expr),
                            "`tonumber` of text past 2^53: Lua numbers are doubles, and this one is not exact".to_string(),
                        )
                        .with_label("rounded")
                        .with_help("keep such ids as strings, and let Redis do the arithmetic (INCRBY)"),
                    );
                }
            }
            Expression::BinaryOperator { lhs, rhs, .. } => {
                let value = self.cx.types.of(expr);
                // An operand already past 2^53 was rounded where it was made.
                let operand_past = [lhs, rhs].into_iter().any(|side| {
                    let side = self.cx.types.of(side);
                    side.range.lo >= EXACT_UP_TO || side.range.hi <= -EXACT_UP_TO
                });
                if value.ty.within(Ty::NUMBER)
                    && !operand_past
                    && (value.range.lo > EXACT_UP_TO || value.range.hi < -EXACT_UP_TO)
                {
                    self.found.push(
                        Diagnostic::warning(
                            Lint::NumberText,
                            self.cx.span_of(expr),
                            "this arithmetic gives numbers past 2^53, which Lua's doubles do not hold exactly".to_string(),
                        )
                        .with_label("rounded")
                        .with_help("keep such ids as strings, and let Redis do the arithmetic (INCRBY)"),
                    );
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn found(source: &str) -> Vec<(Severity, String)> {
        lint(Lint::NumberText, source, 1, 1)
            .into_iter()
            .map(|d| (d.severity, d.message))
            .collect()
    }

    const MICROS: &str =
        "local t = redis.call('TIME')\nlocal us = tonumber(t[1]) * 1000000 + tonumber(t[2])\n";

    #[test]
    fn large_numbers_turned_into_text() {
        assert_eq!(
            found(&format!("{MICROS}return tostring(us)")),
            [(
                Severity::Error,
                "`us` is a number of 1e14 or more: `tostring` writes it with 14 significant digits, in exponent form (`1.7e+15`)".to_string()
            )]
        );
        for body in [
            // `..`, through a field.
            "local o = {}\no.at = us\nredis.call('SET', KEYS[1] .. ':' .. o.at, 1)",
            // cjson.encode of a table with it.
            "return cjson.encode({at = us, n = 1})",
            // cjson.encode of a local table with it, set in a branch.
            "local doc = {n = 1}\nif ARGV[1] then doc.at = us else doc.at = us + 1 end\nreturn cjson.encode(doc)",
            // In a loop, after a branch that leaves it large.
            "for i = 1, 3 do if us > 0 then redis.call('RPUSH', KEYS[1], 'at ' .. us + i) end end",
        ] {
            let source = format!("{MICROS}{body}");
            assert_eq!(found(&source).len(), 1, "{source}: {:?}", found(&source));
        }
        assert_eq!(
            found("return 9007199254740993"),
            [(
                Severity::Warning,
                "`9007199254740993` is past 2^53: Lua numbers are doubles, and this one is not exact".to_string()
            )]
        );
        assert_eq!(
            found(&format!(
                "{MICROS}return redis.call('SET', KEYS[1], us * 1000)"
            ))
            .len(),
            1
        );
    }

    #[test]
    fn ids_seeded_past_2_pow_53_lose_precision_in_lua() {
        for source in [
            // An INCR of a key seeded with a 64-bit id, through a local.
            "redis.call('SETNX', KEYS[1], '9007199254740993')\nlocal id = redis.call('INCR', KEYS[1])\nreturn id",
            // `tonumber` of the seed read back, through a field.
            "redis.call('SET', KEYS[1], '201605131024011014')\nlocal o = {}\no.id = tonumber(redis.call('GET', KEYS[1]))\nreturn o.id + 1",
            // A hash field, in a loop, past a branch.
            "if redis.call('HEXISTS', KEYS[1], 'next') == 0 then redis.call('HSET', KEYS[1], 'next', 9007199254740994) end\nfor i = 1, 3 do redis.call('RPUSH', KEYS[1], redis.call('HINCRBY', KEYS[1], 'next', 1)) end",
            // `tonumber` of a literal id, then arithmetic: once.
            "local base = tonumber('18446744073709551')\nreturn base + 1",
        ] {
            let found = found(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert_eq!(found[0].0, Severity::Warning);
            assert!(found[0].1.contains("2^53"), "{found:?}");
        }
    }

    #[test]
    fn counters_not_seeded_past_2_pow_53_pass() {
        for source in [
            "local id = redis.call('INCR', KEYS[1])\nreturn id",
            // Seeded small, or from the caller (nothing says how large).
            "redis.call('SETNX', KEYS[1], '1000')\nreturn redis.call('INCR', KEYS[1])",
            "redis.call('SETNX', KEYS[1], ARGV[1])\nreturn redis.call('INCR', KEYS[1])",
            // A large seed, but also another value: the key is not known.
            "redis.call('SET', KEYS[1], '9007199254740993')\nif ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end\nreturn redis.call('INCR', KEYS[1])",
            // Another key, another field.
            "redis.call('SET', KEYS[1], '9007199254740993')\nreturn redis.call('INCR', KEYS[2])",
            "redis.call('HSET', KEYS[1], 'a', '9007199254740993')\nreturn redis.call('HINCRBY', KEYS[1], 'b', 1)",
            // Read back as text: exact.
            "redis.call('SET', KEYS[1], '9007199254740993')\nredis.call('INCR', KEYS[1])\nreturn redis.call('GET', KEYS[1])",
            "return tonumber('9007199254740991')",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    fn on_7_2(source: &str) -> Vec<String> {
        let options = crate::Options {
            declared: Some(crate::Declared::exact(2, 2)),
            target: crate::ServerTarget::Redis7_2,
            ..crate::Options::default()
        };
        crate::lints::test_util::lint_with(Lint::NumberText, source, &options)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn large_number_arguments_on_7_2_may_be_sent_in_exponent_form() {
        for source in [
            // A counter, through a local reassigned in a branch.
            "local id = ARGV[1]\nif id == '' then id = redis.call('INCR', KEYS[1]) end\nredis.call('SET', KEYS[2], id)",
            // Milliseconds from TIME, through a field.
            "local t = redis.call('TIME')\nlocal o = {}\no.ms = t[1] * 1000 + math.floor(t[2] / 1000)\nredis.call('ZADD', KEYS[1], o.ms, ARGV[1])",
            // `tonumber` of an input, in a loop.
            "local n = tonumber(ARGV[2])\nfor i = 1, 3 do redis.call('HINCRBY', KEYS[1], ARGV[1], n) end",
        ] {
            let found = on_7_2(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("300000000 as `3e+8`"), "{found:?}");
        }
        // The same scripts on 7.0 send the digits.
        let counter = "local id = redis.call('INCR', KEYS[1])\nredis.call('SET', KEYS[2], id)";
        assert!(found(counter).is_empty());
        assert_eq!(on_7_2(counter).len(), 1);
    }

    #[test]
    fn small_numbers_and_text_arguments_on_7_2_pass() {
        for source in [
            "redis.call('SET', KEYS[1], ARGV[1], 'EX', 60)",
            "local n = redis.call('INCR', KEYS[1])\nredis.call('SET', KEYS[2], tostring(n))",
            "local left = math.min(tonumber(ARGV[1]) or 0, 1000)\nif left > 0 then redis.call('EXPIRE', KEYS[1], left) end",
            "for i = 1, 10 do redis.call('RPUSH', KEYS[1], i) end",
        ] {
            assert!(on_7_2(source).is_empty(), "{source}: {:?}", on_7_2(source));
        }
    }

    #[test]
    fn the_callers_numbers_encoded_as_json_are_cut_to_14_digits() {
        for source in [
            // A decoded document, a field set from an input, in a loop.
            "for _, job in ipairs(redis.call('LRANGE', KEYS[1], 0, 9)) do\n  local doc = cjson.decode(job)\n  doc.at = tonumber(ARGV[1])\n  redis.call('RPUSH', KEYS[2], cjson.encode(doc))\nend",
            // A constructor's field, through a local.
            "local at = tonumber(ARGV[1])\nreturn cjson.encode({at = at, k = KEYS[1]})",
            // A local table, past a branch that sets another field.
            "local doc = {}\ndoc.at = tonumber(ARGV[1])\nif KEYS[1] == 'a' then doc.kind = 'x' end\nreturn cjson.encode(doc)",
        ] {
            let found = found(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert_eq!(found[0].0, Severity::Warning);
            assert!(
                found[0].1.contains("cut") || found[0].1.contains("rounded"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn the_callers_text_or_bounded_numbers_encoded_as_json_pass() {
        for source in [
            "local doc = cjson.decode(redis.call('GET', KEYS[1]))\ndoc.at = ARGV[1]\nreturn cjson.encode(doc)",
            "return cjson.encode({n = math.min(tonumber(ARGV[1]), 100), k = KEYS[1]})",
            "local n = tonumber(ARGV[1])\nif n > 1000 then return 0 end\nif n < 0 then return 1 end\nreturn cjson.encode({n = n, k = KEYS[1]})",
            "return cjson.encode({n = math.floor(tonumber(ARGV[1]) / 2), k = KEYS[1]})",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    const SECONDS: &str = "local t = redis.call('TIME')\nlocal now = t[1] + t[2] / 1000000\n";

    #[test]
    fn timestamps_with_a_fraction_turned_into_text_lose_it() {
        for body in [
            "return tostring(now)",
            // Through a field, concatenated.
            "local o = {}\no.at = now\nredis.call('SET', KEYS[1], 'at ' .. o.at)",
            // Encoded in a loop, past a branch.
            "for i = 1, 3 do\n  local at = now + i / 10\n  if i > 1 then redis.call('RPUSH', KEYS[1], cjson.encode({at = at})) end\nend",
        ] {
            let source = format!("{SECONDS}{body}");
            let found = found(&source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert_eq!(found[0].0, Severity::Warning);
            assert!(
                found[0].1.contains("fraction is cut to 4 digits"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn whole_or_short_numbers_turned_into_text_pass() {
        for body in [
            "return tostring(t[1] * 1000 + math.floor(t[2] / 1000))",
            "return tostring(t[2] / 1000)",
            "return string.format('%.6f', now)",
            "return tostring(now - t[1])",
        ] {
            let source = format!("{SECONDS}{body}");
            assert!(found(&source).is_empty(), "{source}: {:?}", found(&source));
        }
    }

    #[test]
    fn small_or_unknown_numbers_pass() {
        for body in [
            "return tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))",
            "return string.format('%.0f', us)",
            "return redis.call('ZADD', KEYS[1], us, ARGV[1])",
            "local id = tonumber(ARGV[1]) return tostring(id)",
            "local o = {}\no.at = t[1]\nreturn KEYS[1] .. o.at",
            "return cjson.encode({at = t[1] .. t[2]})",
            "local doc = {n = 1}\ndoc.at = string.format('%.0f', us)\nreturn cjson.encode(doc)",
            "return 9007199254740992",
        ] {
            let source = format!("{MICROS}{body}");
            assert!(found(&source).is_empty(), "{source}: {:?}", found(&source));
        }
    }
}
