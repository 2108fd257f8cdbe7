//! `nil_return`: the script may reply nil, and the declared `returns` type
//! cannot hold nil.
//!
//! Redis converts a returned Lua `false` (and `nil`, a bare `return`, a nil
//! command reply such as GET's for a missing key, which Lua sees as `false`)
//! into a nil reply. `Option<T>` takes it as `None`; `i64` and `String`
//! fail to convert it at run time (redis-rs answers with an error). So with
//! a declared type that cannot hold nil
//! ([`Returns::nullable`](crate::Returns::nullable) unset):
//!
//! - no `return` in the main chunk, a returned `false` or `nil` literal, a
//!   bare `return`, or a local that is never anything else is an error;
//! - a returned reply that may be nil (GET, HGET, LPOP...), `tonumber(...)`,
//!   a comparison, or a local, field or reply element holding one of them
//!   where a test on the path has not removed `false` (`if not v then
//!   return 0 end`), is a warning.
//!
//! Without a declared type, a returned `false` (a literal, or a local that
//! is `false` on every path there) is a warning: it arrives as nil, not 0.
//! So is a boolean the main chunk makes (a comparison, `not`, a flag set
//! from `true` and `false`), returned in place or through a local, a field,
//! a loop or a branch. A boolean one of the script's own functions returns
//! is taken as meant (a caller that reads nil as false), as the value facts
//! take what those functions give. A declared type the analyzer does not
//! check ([`ReturnKind::Any`]) is left alone.

use super::chunk_returns::{main_chunk_return_statements, unparenthesized};
use super::typed::{describe, local_of, text};
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty, UseKind};
use crate::{Diagnostic, Lint, Report, ReturnKind, Returns};
use full_moon::ast::{BinOp, Expression, UnOp};

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    match &cx.options.returns {
        None => undeclared(cx, report),
        Some(returns) if returns.nullable || returns.kind == ReturnKind::Any => {}
        Some(returns) => declared(cx, returns, report),
    }
}

/// How certain the nil is.
enum Finding {
    /// Always nil: an error.
    Always(String),
    /// Nil in some runs: a warning.
    Maybe(String),
}

/// Every main-chunk return checked against `returns`, which cannot hold nil.
fn declared(cx: &Context<'_>, returns: &Returns, report: &mut Report) {
    let (held, option) = match &returns.written {
        Some(rust) => (format!("`returns = {rust}`"), format!("`Option<{rust}>`")),
        None => {
            let kind = match returns.kind {
                ReturnKind::Integer => "integer",
                ReturnKind::String => "string",
                ReturnKind::Array => "array",
                ReturnKind::Any => "result",
            };
            (
                format!("the declared {kind} type"),
                "an `Option` of it".to_string(),
            )
        }
    };
    let statements = main_chunk_return_statements(cx.ast.nodes());
    if statements.is_empty() {
        // No `return` at all: the script replies nil, unless it raises.
        if let Some(last) = cx.ast.nodes().stmts().last() {
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::NilReturn,
                    cx.span_of(last),
                    format!(
                        "the script has no `return`, so it replies nil, which {held} cannot hold: declare {option}"
                    ),
                )
                .with_label("the script ends here without a `return`")
                .with_help("return a value of the declared type, or declare an `Option`"),
            );
        }
    }
    for ret in statements {
        let Some(first) = ret.returns().iter().next() else {
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::NilReturn,
                    cx.span_of(ret.token()),
                    format!(
                        "a `return` without a value replies nil, which {held} cannot hold: declare {option}"
                    ),
                )
                .with_label("replies nil")
                .with_help("return a value of the declared type, or declare an `Option`"),
            );
            continue;
        };
        let expr = unparenthesized(first);
        let finding = match find(cx, expr) {
            Some(finding) => finding,
            None => continue,
        };
        let span = cx.span_of(expr);
        let diagnostic = match finding {
            Finding::Always(what) => Diagnostic::error(
                Lint::NilReturn,
                span,
                format!("{what}; it arrives as nil, which {held} cannot hold: declare {option}"),
            )
            .with_label("replies nil"),
            Finding::Maybe(what) => Diagnostic::warning(
                Lint::NilReturn,
                span,
                format!("{what}; it arrives as nil, which {held} cannot hold: declare {option}"),
            )
            .with_label("may reply nil"),
        };
        report.diagnostics.push(diagnostic.with_help(
            "declare an `Option` to get `None`, or return a value of the declared type (`return 0`, `return v or 0`)",
        ));
    }
}

/// What makes `expr` (returned) nil or `false`, if anything.
fn find(cx: &Context<'_>, expr: &Expression) -> Option<Finding> {
    if let Expression::Symbol(token) = expr {
        return match token.token().to_string().as_str() {
            "false" => Some(Finding::Always("the script returns `false`".to_string())),
            "nil" => Some(Finding::Always("the script returns `nil`".to_string())),
            _ => None,
        };
    }
    let value = cx.types.of(expr);
    if value.ty.is_any() || !value.ty.intersects(Ty::FALSY) {
        return None;
    }
    let local = local_of(cx, expr);
    if value.ty.within(Ty::BOOL) && value.ty != Ty::FALSE {
        // A boolean, wherever it was made (a comparison kept in a local,
        // a field, a flag set in a loop): `false` arrives as nil.
        return Some(Finding::Maybe(format!(
            "`{}` is `true` or `false`",
            text(cx, expr)
        )));
    }
    if value.ty.within(Ty::FALSY) && local.is_some() {
        return Some(Finding::Always(format!(
            "`{}` is always nil or `false` here",
            text(cx, expr)
        )));
    }
    match expr {
        Expression::FunctionCall(_) => maybe_false_value(cx, expr, &value),
        Expression::BinaryOperator { binop, .. } if comparison(binop) => Some(Finding::Maybe(
            format!("`{}` is `true` or `false`", text(cx, expr)),
        )),
        Expression::UnaryOperator {
            unop: UnOp::Not(_), ..
        } => Some(Finding::Maybe(format!(
            "`{}` is `true` or `false`",
            text(cx, expr)
        ))),
        _ => {
            // Handed to the script's own functions or stored: taken as
            // known to be there.
            if let Some(var) = local
                && cx.types.uses(var).iter().any(|u| u.kind == UseKind::Other)
            {
                return None;
            }
            match &value.origin {
                Some(Origin::Reply { .. } | Origin::Tonumber { .. }) => {
                    maybe_false_value(cx, expr, &value)
                }
                Some(Origin::Element { .. }) => Some(Finding::Maybe(describe(cx, expr, &value))),
                _ => None,
            }
        }
    }
}

/// A reply that may be `false`, or `tonumber` (nil when it is not given a
/// number), worded after where it comes from.
fn maybe_false_value(cx: &Context<'_>, expr: &Expression, value: &Inferred) -> Option<Finding> {
    match &value.origin {
        Some(Origin::Reply { .. }) => Some(Finding::Maybe(describe(cx, expr, value))),
        Some(Origin::Tonumber { of }) => {
            let why = match of.as_deref() {
                Some(Origin::Reply { command, shape, .. }) => {
                    format!("when {command} replies `false` ({command} returns {shape})")
                }
                _ => "when its argument is not a number".to_string(),
            };
            Some(Finding::Maybe(format!("`{}` is nil {why}", text(cx, expr))))
        }
        _ => None,
    }
}

/// `==`, `~=`, `<`, `<=`, `>`, `>=`: `true` or `false`.
fn comparison(binop: &BinOp) -> bool {
    matches!(
        binop,
        BinOp::TwoEqual(_)
            | BinOp::TildeEqual(_)
            | BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_)
    )
}

/// Without a declared type: a returned `false` literal outside a table,
/// or a boolean the main chunk makes (see the module's documentation).
fn undeclared(cx: &Context<'_>, report: &mut Report) {
    for ret in main_chunk_return_statements(cx.ast.nodes()) {
        let Some(first) = ret.returns().iter().next() else {
            continue;
        };
        let expr = unparenthesized(first);
        let value = cx.types.of(expr);
        let is_false = matches!(expr, Expression::Symbol(t) if t.token().to_string() == "false")
            || local_of(cx, expr).is_some() && value.ty == Ty::FALSE;
        if !is_false {
            // A boolean the main chunk makes (a comparison, `not`, a flag
            // set from literals), held in a local, a field or returned in
            // place: its `false` is nil for the caller.
            if value.ty.within(Ty::BOOL)
                && value.ty.intersects(Ty::FALSE)
                && let Some(Origin::Boolean { span }) = value.origin
            {
                report.diagnostics.push(
                    Diagnostic::warning(
                        Lint::NilReturn,
                        cx.span_of(expr),
                        format!(
                            "the script returns `{}`, `true` or `false`: Redis replies 1 for `true` and nil for `false`, not 0",
                            text(cx, expr)
                        ),
                    )
                    .with_label("`false` arrives as nil")
                    .with_secondary(span, "a boolean made here")
                    .with_help("return `v and 1 or 0` for an integer, or declare the caller's type (`Option<T>`) to read nil as false"),
                );
            }
            continue;
        }
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::NilReturn,
                cx.span_of(expr),
                "the script returns `false`, which Redis converts to a nil reply, not 0",
            )
            .with_label("arrives as nil")
            .with_help("return 0 (or `cond and 1 or 0`) for an integer, or `nil` to mean a nil reply (the caller's type must hold it: `Option<T>`)"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint_with;
    use crate::{Diagnostic, Lint, Options, ReturnKind, Returns, Severity};

    fn found(source: &str, returns: Option<Returns>) -> Vec<Diagnostic> {
        let options = Options {
            returns,
            ..Options::default()
        };
        lint_with(Lint::NilReturn, source, &options)
    }

    fn errors(source: &str, returns: Returns) -> Vec<String> {
        let found = found(source, Some(returns));
        assert!(
            found.iter().all(|d| d.severity == Severity::Error),
            "{found:?}"
        );
        found.into_iter().map(|d| d.message).collect()
    }

    fn warnings(source: &str, returns: Option<Returns>) -> Vec<String> {
        let found = found(source, returns);
        assert!(
            found.iter().all(|d| d.severity == Severity::Warning),
            "{found:?}"
        );
        found.into_iter().map(|d| d.message).collect()
    }

    fn i64() -> Returns {
        Returns::of(ReturnKind::Integer).written("i64")
    }

    fn string() -> Returns {
        Returns::of(ReturnKind::String).written("String")
    }

    #[test]
    fn certain_nils_are_errors() {
        assert_eq!(
            errors("if ARGV[1] then return 1 end return false", i64()),
            [
                "the script returns `false`; it arrives as nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            errors("return nil", i64()),
            [
                "the script returns `nil`; it arrives as nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            errors("if ARGV[1] then return end return 1", i64()),
            [
                "a `return` without a value replies nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            errors(
                "redis.call('SET', KEYS[1], ARGV[1])\nif ARGV[2] then return end",
                i64()
            )
            .len(),
            1
        );
        assert_eq!(
            errors(
                "local n = redis.call('INCR', KEYS[1])\nredis.call('EXPIRE', KEYS[1], 10)",
                i64()
            ),
            [
                "the script has no `return`, so it replies nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            errors("local n return (n)", Returns::of(ReturnKind::Array)),
            [
                "`n` is always nil or `false` here; it arrives as nil, which the declared array type cannot hold: declare an `Option` of it"
            ]
        );
    }

    #[test]
    fn possible_nils_are_warnings() {
        assert_eq!(
            warnings("return redis.call('GET', KEYS[1])", Some(string())),
            [
                "GET returns a string or `false` (a nil reply); it arrives as nil, which `returns = String` cannot hold: declare `Option<String>`"
            ]
        );
        assert_eq!(
            warnings(
                "local v = redis.call('HGET', KEYS[1], 'f') return v",
                Some(string())
            ),
            [
                "HGET returns a string or `false` (a nil reply); it arrives as nil, which `returns = String` cannot hold: declare `Option<String>`"
            ]
        );
        assert_eq!(
            warnings("return tonumber(ARGV[1])", Some(i64())),
            [
                "`tonumber(ARGV[1])` is nil when its argument is not a number; it arrives as nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            warnings("return tonumber(redis.call('GET', KEYS[1]))", Some(i64())).len(),
            1
        );
        assert_eq!(
            warnings("return redis.call('EXISTS', KEYS[1]) == 1", Some(i64())),
            [
                "`redis.call('EXISTS', KEYS[1]) == 1` is `true` or `false`; it arrives as nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
        assert_eq!(
            warnings("return redis.call('LPOP', KEYS[1])", Some(string())).len(),
            1
        );
        assert_eq!(
            warnings(
                "local held = redis.call('GET', KEYS[1]) == ARGV[1]\nreturn held",
                Some(i64())
            ),
            [
                "`held` is `true` or `false`; it arrives as nil, which `returns = i64` cannot hold: declare `Option<i64>`"
            ]
        );
    }

    #[test]
    fn booleans_the_main_chunk_makes_are_warnings_without_a_declared_type() {
        assert_eq!(
            warnings(
                "local held = redis.call('GET', KEYS[1]) == ARGV[1]\nreturn held",
                None
            ),
            [
                "the script returns `held`, `true` or `false`: Redis replies 1 for `true` and nil for `false`, not 0"
            ]
        );
        for source in [
            // In place.
            "return redis.call('EXISTS', KEYS[1]) == 1",
            "return not redis.call('GET', KEYS[1])",
            // Through a field, then a local.
            "local s = {}\ns.ok = redis.call('TTL', KEYS[1]) > 0\nlocal ok = s.ok\nreturn ok",
            // A flag set in a `while` loop.
            "local seen = false\nlocal i = 1\nwhile i <= #KEYS do\n  if redis.call('EXISTS', KEYS[i]) == 1 then seen = true end\n  i = i + 1\nend\nreturn seen",
            // A flag set on one branch of an `elseif` chain.
            "local ok = true\nif ARGV[1] == 'a' then ok = 1 == 1 elseif ARGV[1] == 'b' then ok = false end\nreturn ok",
        ] {
            assert_eq!(warnings(source, None).len(), 1, "{source}");
        }
        for source in [
            // What the script's own function returns is meant.
            "local function maxed(k)\n  if redis.call('LLEN', k) > 10 then return true end\n  return false\nend\nreturn maxed(KEYS[1])",
            "local function maxed(k) return redis.call('LLEN', k) > 10 end\nlocal m = maxed(KEYS[1])\nreturn m",
            // Turned into an integer, or never `false`.
            "local ok = redis.call('EXISTS', KEYS[1]) == 1\nreturn ok and 1 or 0",
            "return true",
            // Inside a table, `false` keeps its place.
            "return {redis.call('EXISTS', KEYS[1]) == 1}",
            // Not only a boolean.
            "local v = redis.call('EXISTS', KEYS[1]) == 1 or ARGV[1]\nreturn v",
        ] {
            assert!(
                warnings(source, None).is_empty(),
                "{source}: {:?}",
                warnings(source, None)
            );
        }
    }

    #[test]
    fn false_without_a_declared_type_is_a_warning() {
        assert_eq!(
            warnings("if ARGV[1] then return 1 end return false", None),
            ["the script returns `false`, which Redis converts to a nil reply, not 0"]
        );
        // Inside a table, `false` keeps its place as a nil element.
        assert!(warnings("return {1, false}", None).is_empty());
        assert!(warnings("return nil", None).is_empty());
        assert!(warnings("return redis.call('GET', KEYS[1])", None).is_empty());
        assert!(warnings("local function f() return false end return 1", None).is_empty());
        // A local that is `false` there, after a branch.
        assert_eq!(
            warnings("local ok = false\nif ARGV[1] == 'x' then ok = 1 end\nif ok then return ok end\nreturn ok", None).len(),
            1
        );
        assert!(
            warnings(
                "local ok = false\nif ARGV[1] == 'x' then ok = 1 end\nreturn ok",
                None
            )
            .is_empty()
        );
    }

    #[test]
    fn possible_nils_through_fields_loops_and_branches() {
        for source in [
            "local o = {}\no.v = redis.call('GET', KEYS[1])\nreturn o.v",
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'x' then return 1 end\nreturn v",
            "local v\nfor _, k in ipairs(KEYS) do v = redis.call('GET', k) end\nreturn v or 0",
            "local r = redis.call('MGET', KEYS[1], KEYS[1])\nreturn r[1]",
        ] {
            let found = found(source, Some(string()));
            let expected = usize::from(!source.contains("or 0"));
            assert_eq!(found.len(), expected, "{source}: {found:?}");
        }
        for source in [
            "local o = {}\no.v = redis.call('GET', KEYS[1])\nif not o.v then return '' end\nreturn o.v",
            "local v = redis.call('GET', KEYS[1])\nwhile not v do v = redis.call('GET', KEYS[1]) end\nreturn v",
            "local r = redis.call('MGET', KEYS[1], KEYS[1])\nreturn r[1] or ''",
        ] {
            assert!(found(source, Some(string())).is_empty(), "{source}");
        }
    }

    #[test]
    fn types_that_hold_nil_and_defaults_pass() {
        let nullable = [
            Returns::nullable(ReturnKind::Integer).written("Option<i64>"),
            // `redis::Value`.
            Returns::nullable(ReturnKind::Any),
            // A type the analyzer does not check (`f64`, an alias).
            Returns::of(ReturnKind::Any),
        ];
        for returns in nullable {
            for source in [
                "return false",
                "return nil",
                "return",
                "return redis.call('GET', KEYS[1])",
                "return tonumber(ARGV[1])",
            ] {
                assert!(
                    found(source, Some(returns.clone())).is_empty(),
                    "{source} with {returns:?}"
                );
            }
        }
        for source in [
            "return redis.call('GET', KEYS[1]) or 0",
            "return tonumber(ARGV[1]) or 0",
            "return redis.call('INCR', KEYS[1])",
            "return (redis.call('EXISTS', KEYS[1]) == 1) and 1 or 0",
            "local v = redis.call('GET', KEYS[1]) if not v then return 0 end return v",
            "local v = redis.call('GET', KEYS[1]) if v == false then v = '0' end return v",
            "local function f() return nil end return 1",
            "if ARGV[1] then return 1 else return 2 end",
            "return cjson.decode(ARGV[1])",
            "return {false, nil}",
        ] {
            assert!(found(source, Some(i64())).is_empty(), "{source}");
        }
    }
}
