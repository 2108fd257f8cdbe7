//! `non_integer_return`: the script's reply is a number that is not an integer.
//!
//! Redis converts a Lua number to an integer reply by truncating it:
//! `return 3.5` answers 3, `return 1 / 2` answers 0. Return a string
//! (`tostring(x)`) or round on purpose (`math.floor(x)`). Local functions may
//! return what they like; only the main chunk's reply is checked, and the
//! elements of an array it returns.

use super::chunk_returns::{main_chunk_returns, unparenthesized};
use super::inputs::number;
use super::typed::text;
use super::{Context, RedisCall};
use crate::facts::{Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{BinOp, Expression, Field};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    for expr in main_chunk_returns(cx.ast.nodes()) {
        check_value(cx, expr, report);
    }
}

fn check_value(cx: &Context<'_>, expr: &Expression, report: &mut Report) {
    let expr = unparenthesized(expr);
    // Only a literal is surely fractional: no script means `return 3.5` to
    // get 3. A division or `^` may be exact (`10 / 2`), and production
    // scripts return a computed number on purpose to have Redis truncate it
    // (redis_rate returns its remaining count, `burst - tat / interval`,
    // through locals): those run correctly, so they get a warning.
    let mut surely = false;
    let why = match expr {
        Expression::Number(token) => match number(token) {
            Some(n) if n.fract() != 0.0 => {
                surely = true;
                format!("{} is not an integer", token.token())
            }
            _ => return,
        },
        Expression::BinaryOperator {
            binop: BinOp::Slash(_),
            ..
        } => "a division gives a fractional number".to_string(),
        Expression::BinaryOperator {
            binop: BinOp::Caret(_),
            ..
        } => "`^` gives a fractional number".to_string(),
        Expression::TableConstructor(table) => {
            for field in table.fields() {
                if let Field::NoKey(value) = field {
                    check_value(cx, value, report);
                }
            }
            return;
        }
        _ => {
            let value = cx.types.of(expr);
            match &value.origin {
                Some(Origin::Fraction { why, .. })
                    if value.ty.within(Ty::NUMBER) && value.ty.intersects(Ty::FLOAT) =>
                {
                    format!("`{}` may have a fraction ({why})", text(cx, expr))
                }
                _ => return,
            }
        }
    };
    let span = cx.span_of(expr);
    let message = format!("the script returns a non-integer number: {why}");
    let diagnostic = if surely {
        Diagnostic::error(Lint::NonIntegerReturn, span, message)
    } else {
        Diagnostic::warning(Lint::NonIntegerReturn, span, message)
    };
    report.diagnostics.push(
        diagnostic
        .with_label("Redis truncates this to an integer")
        .with_help(
            "return `tostring(...)` to keep the fraction, or `math.floor(...)` to round on purpose",
        ),
    );
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::{lint, messages};
    use crate::{Lint, Severity};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::NonIntegerReturn, source, 0, 1)
    }

    fn severities(source: &str) -> Vec<Severity> {
        lint(Lint::NonIntegerReturn, source, 0, 1)
            .into_iter()
            .map(|d| d.severity)
            .collect()
    }

    #[test]
    fn only_a_fractional_literal_is_an_error() {
        assert_eq!(severities("return 3.5"), [Severity::Error]);
        assert_eq!(severities("return {1, 0.25}"), [Severity::Error]);
        // A division may be exact or a deliberate truncation.
        assert_eq!(severities("return ARGV[1] / 2"), [Severity::Warning]);
        assert_eq!(severities("return 2 ^ 0.5"), [Severity::Warning]);
        assert_eq!(
            severities("local r = tonumber(ARGV[1]) / 60 return r"),
            [Severity::Warning]
        );
    }

    #[test]
    fn fractional_replies_are_reported() {
        assert_eq!(
            errors("return 3.5"),
            ["the script returns a non-integer number: 3.5 is not an integer"]
        );
        assert_eq!(
            errors("local a = tonumber(ARGV[1])\nreturn (a / 2)"),
            ["the script returns a non-integer number: a division gives a fractional number"]
        );
        assert_eq!(
            errors("if ARGV[1] then return {1, 0.25} end return 2 ^ 0.5").len(),
            2
        );
        assert_eq!(
            errors(
                "local rate = tonumber(ARGV[1]) / 60
local total = rate * 2 + 1
return total"
            ),
            [
                "the script returns a non-integer number: `total` may have a fraction (a division gives a fractional number)"
            ]
        );
    }

    #[test]
    fn integers_strings_and_functions_pass() {
        assert!(errors("return 3").is_empty());
        assert!(
            errors("return 3.0").is_empty(),
            "an integral float converts exactly"
        );
        assert!(errors("return math.floor(tonumber(ARGV[1]) / 2)").is_empty());
        assert!(errors("return tostring(1.5)").is_empty());
        assert!(errors("local n = math.floor(tonumber(ARGV[1]) / 2) return n").is_empty());
        assert!(errors("local n = tonumber(ARGV[1]) / 2 return n % 1 == 0 and 1 or 0").is_empty());
        assert!(
            errors("local function half(x) return x / 2 end\nreturn math.floor(half(3))")
                .is_empty()
        );
        assert!(
            errors("return {ok = 1.5}").is_empty(),
            "hash parts are dropped by Redis anyway"
        );
    }

    #[test]
    fn computed_fractions_through_fields_loops_and_branches() {
        for source in [
            "local o = {}\no.rate = redis.call('INCR', KEYS[1]) / 60\nreturn o.rate",
            "local avg = 0\nfor i, v in ipairs(redis.call('LRANGE', KEYS[1], 0, 9)) do avg = avg + v / 10 end\nreturn avg",
            "local r = tonumber(ARGV[1])\nif r > 1 then r = r / 2 end\nreturn r",
        ] {
            assert_eq!(severities(source), [Severity::Warning], "{source}");
        }
        for source in [
            "local o = {}\no.rate = math.floor(redis.call('INCR', KEYS[1]) / 60)\nreturn o.rate",
            "local avg = 0\nfor i, v in ipairs(redis.call('LRANGE', KEYS[1], 0, 9)) do avg = avg + v / 10 end\nreturn tostring(avg)",
            "local r = tonumber(ARGV[1])\nif r > 1 then r = r / 2 end\nreturn math.ceil(r)",
        ] {
            assert!(severities(source).is_empty(), "{source}");
        }
    }
}
