//! `table_comparison`: a value compared with a table constructor.
//!
//! Lua compares tables by identity: a table is equal only to itself, and a
//! constructor (`{}`, `{1, 2}`) makes a new table each time it runs. So
//! `v == {}` is always false and `v ~= {}` always true, whatever `v` holds
//! (an HMGET element, a decoded document, a local, a field). To ask
//! whether a table is empty, use `next(t) == nil`; whether a reply is
//! missing, `not v`.

use super::typed::{each_comparison, text};
use super::{Context, RedisCall};
use crate::facts::unparenthesized;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() {
            return;
        }
        let (value, table) = match (is_constructor(cmp.lhs), is_constructor(cmp.rhs)) {
            (false, true) => (cmp.lhs, cmp.rhs),
            (true, false) => (cmp.rhs, cmp.lhs),
            _ => return,
        };
        let message = format!(
            "`{}` is compared with a new table (`{}`): a table is equal only to itself, so \
             `{}` is always {}",
            text(cx, value),
            text(cx, table),
            cmp.op,
            cmp.always()
        );
        report.diagnostics.push(
            Diagnostic::error(Lint::TableComparison, cx.span_of(cmp.whole), message)
                .with_label("tables compare by identity")
                .with_help(
                    "test an empty table with `next(t) == nil`, a missing reply with `not v`",
                ),
        );
    });
}

fn is_constructor(expr: &Expression) -> bool {
    matches!(unparenthesized(expr), Expression::TableConstructor(_))
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::TableComparison, source, 1, 1)
    }

    #[test]
    fn values_compared_with_a_table_constructor() {
        assert_eq!(
            errors(
                "local failure = redis.call('HGET', KEYS[1], 'failure')\nif failure == {} then return 0 end\nreturn 1"
            ),
            [
                "`failure` is compared with a new table (`{}`): a table is equal only to itself, so `==` is always false"
            ]
        );
        for source in [
            "local doc = cjson.decode(ARGV[1])\nif {} ~= doc.tags then return 1 end\nreturn 0",
            "if redis.call('SMEMBERS', KEYS[1]) == ({}) then return 0 end\nreturn 1",
            "local t = {'a'}\nif t == {'a'} then return 1 end\nreturn ARGV[1]",
        ] {
            assert_eq!(errors(source).len(), 1, "{source}");
        }
    }

    #[test]
    fn other_comparisons_pass() {
        for source in [
            "local t = redis.call('SMEMBERS', KEYS[1])\nif next(t) == nil then return 0 end\nreturn ARGV[1]",
            "local empty = {}\nlocal t = empty\nif t == empty then return 1 end\nreturn ARGV[1] .. KEYS[1]",
            "if #redis.call('SMEMBERS', KEYS[1]) == 0 then return 0 end\nreturn ARGV[1]",
        ] {
            assert!(errors(source).is_empty(), "{source}: {:?}", errors(source));
        }
    }
}
