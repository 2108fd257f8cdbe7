//! `cjson_empty_table`: `cjson.encode` of an empty table literal.
//!
//! Lua has one table type, and Redis's cjson encodes an empty one as an
//! object: `cjson.encode({})` is `"{}"`, not `"[]"`. A reader that expects a
//! list gets an object. A warning: `{}` may be meant.

use super::library_calls::each_library_call;
use super::{Context, RedisCall};
use crate::facts::unparenthesized;
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::Expression;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_library_call(cx, |call| {
        if call.name != "cjson.encode" {
            return;
        }
        let Some(Expression::TableConstructor(table)) =
            call.args.first().map(|a| unparenthesized(a))
        else {
            return;
        };
        if !table.fields().is_empty() {
            return;
        }
        report.diagnostics.push(
            Diagnostic::warning(
                Lint::CjsonEmptyTable,
                cx.span_of(call.call),
                "`cjson.encode({})` gives the object \"{}\", not the array \"[]\"",
            )
            .with_label("an empty Lua table encodes as a JSON object")
            .with_help("write the JSON text \"[]\" yourself when the list is empty"),
        );
    });
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::messages;

    fn warnings(source: &str) -> Vec<String> {
        messages(Lint::CjsonEmptyTable, source, 1, 0)
    }

    #[test]
    fn empty_tables_encoded() {
        assert_eq!(
            warnings("redis.call('SET', KEYS[1], cjson.encode({})) return 1"),
            ["`cjson.encode({})` gives the object \"{}\", not the array \"[]\""]
        );
        assert!(warnings("redis.call('SET', KEYS[1], cjson.encode({1})) return 1").is_empty());
        assert!(
            warnings("local t = {} redis.call('SET', KEYS[1], cjson.encode(t)) return 1")
                .is_empty()
        );
        assert!(warnings("redis.call('SET', KEYS[1], cjson.encode({a = 1})) return 1").is_empty());
    }
}
