//! `return_type`: the declared `returns` type cannot hold what the script
//! evidently returns, e.g. a table or a string literal where `returns = i64`.
//!
//! Only literal replies are judged (a table constructor, a string or number
//! literal, `true`): what a `redis.call` returns depends on the data.

use super::chunk_returns::{main_chunk_returns, unparenthesized};
use super::{Context, RedisCall};
use crate::facts::Ty;
use crate::{Diagnostic, Lint, Report, ReturnKind};
use full_moon::ast::Expression;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let Some(expected) = cx.options.returns.as_ref().map(|r| r.kind) else {
        return;
    };
    for expr in main_chunk_returns(cx.ast.nodes()) {
        let expr = unparenthesized(expr);
        let (found, reply) = match expr {
            Expression::TableConstructor(_) => (ReturnKind::Array, "an array".to_string()),
            Expression::String(_) => (ReturnKind::String, "a string".to_string()),
            Expression::Number(_) => (ReturnKind::Integer, "an integer".to_string()),
            Expression::Symbol(token) if token.token().to_string() == "true" => {
                (ReturnKind::Integer, "the integer 1".to_string())
            }
            _ => match inferred(cx, expr) {
                Some(found) => found,
                None => continue,
            },
        };
        let compatible = match expected {
            ReturnKind::Any => true,
            // redis-rs parses integers from strings that hold one.
            ReturnKind::Integer => found == ReturnKind::Integer,
            // An integer reply converts to a string.
            ReturnKind::String => found != ReturnKind::Array,
            ReturnKind::Array => found == ReturnKind::Array,
        };
        if compatible {
            continue;
        }
        let wanted = match expected {
            ReturnKind::Integer => "an integer",
            ReturnKind::String => "a string",
            ReturnKind::Array => "an array",
            ReturnKind::Any => "anything",
        };
        let span = cx.span_of(expr);
        let here = if reply.contains("returns") {
            "this reply".to_string()
        } else {
            reply.clone()
        };
        report.diagnostics.push(
            Diagnostic::error(
                Lint::ReturnType,
                span,
                format!("the script returns {reply}, but `returns` expects {wanted}"),
            )
            .with_label(format!("Redis replies with {here} here"))
            .with_help("change `returns = ...` to a type that holds this reply, or `redis::Value`"),
        );
    }
}

/// What a returned command reply is, when the inference knows it for sure:
/// an integer, a status (a string for the caller), or an array.
fn inferred(cx: &Context<'_>, expr: &Expression) -> Option<(ReturnKind, String)> {
    let value = cx.types.of(expr);
    let (command, shape, pcall) = value.reply()?;
    if pcall {
        return None;
    }
    let kind = if value.ty.within(Ty::INT) {
        ReturnKind::Integer
    } else if value.ty.within(Ty::STATUS) {
        ReturnKind::String
    } else if value.ty.within(Ty::ARRAY.union(Ty::PAIRS)) {
        ReturnKind::Array
    } else {
        return None;
    };
    Some((kind, format!("what {command} returns, {shape}")))
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint_with;
    use crate::{Lint, Options, ReturnKind};

    fn errors(source: &str, returns: ReturnKind) -> Vec<String> {
        let options = Options {
            returns: Some(returns.into()),
            ..Options::default()
        };
        lint_with(Lint::ReturnType, source, &options)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn mismatches_are_errors() {
        assert_eq!(
            errors("return {1, 2}", ReturnKind::Integer),
            ["the script returns an array, but `returns` expects an integer"]
        );
        assert_eq!(
            errors("if x then return 'ok' end return 1", ReturnKind::Integer),
            ["the script returns a string, but `returns` expects an integer"]
        );
        assert_eq!(errors("return 5", ReturnKind::Array).len(), 1);
        assert_eq!(errors("return {}", ReturnKind::String).len(), 1);
        assert_eq!(
            errors("return redis.call('HGETALL', KEYS[1])", ReturnKind::Integer),
            [
                "the script returns what HGETALL returns, a flat table of pairs (`{k1, v1, k2, v2, ...}`), but `returns` expects an integer"
            ]
        );
        assert_eq!(
            errors(
                "local n = redis.call('INCR', KEYS[1]) return n",
                ReturnKind::Array
            )
            .len(),
            1
        );
        assert_eq!(
            errors("return redis.call('SET', KEYS[1], 1)", ReturnKind::Integer).len(),
            1
        );
    }

    #[test]
    fn compatible_or_unknown_replies_pass() {
        assert!(errors("return redis.call('GET', KEYS[1])", ReturnKind::Integer).is_empty());
        assert!(errors("return redis.call('INCR', KEYS[1])", ReturnKind::String).is_empty());
        assert!(
            errors(
                "return redis.call('LRANGE', KEYS[1], 0, -1)",
                ReturnKind::Array
            )
            .is_empty()
        );
        assert!(errors("return redis.pcall('INCR', KEYS[1])", ReturnKind::Integer).is_empty());
        assert!(
            errors(
                "return redis.call('SET', KEYS[1], 1, 'NX')",
                ReturnKind::Integer
            )
            .is_empty()
        );
        assert!(errors("return 1", ReturnKind::String).is_empty());
        assert!(errors("return nil", ReturnKind::Integer).is_empty());
        assert!(errors("return {1}", ReturnKind::Any).is_empty());
        assert!(
            errors(
                "local function f() return {} end return 1",
                ReturnKind::Integer
            )
            .is_empty()
        );
    }
}
