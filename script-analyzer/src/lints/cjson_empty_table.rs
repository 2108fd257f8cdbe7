//! `cjson_empty_table`: `cjson.encode` of a table that is, or may be,
//! empty.
//!
//! Lua has one table type, and Redis's cjson encodes an empty one as an
//! object: `cjson.encode({})` is `"{}"`, not `"[]"`. A reader that expects a
//! list gets an object. Fires on an empty literal, and on a local table
//! built as an array (elements appended in a loop or a branch: filtered),
//! or holding a command's list reply (LRANGE, SMEMBERS), that may still be
//! empty where it is encoded (no `#t == 0` test on the path); on such a
//! reply held in a field of a local table (`t.items`, tested by
//! `#t.items == 0`) or written in place
//! (`cjson.encode(redis.call('LRANGE', ...))`). Whole or as a member of a
//! table written in the call (`cjson.encode({items = out})`, nested
//! tables too). And on a document `cjson.decode` gave, encoded again,
//! whole or as a member (of a table written in the call, or of a local
//! table): JSON's empty arrays decode to empty tables, which encode back
//! as `{}` (`[]` round-trips to `{}`). A warning: `{}` may be meant.

use super::library_calls::each_library_call;
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Range, unparenthesized};
use crate::{Diagnostic, Lint, Report, Span};
use full_moon::ast::{Expression, Field, TableConstructor};

/// Whether `expr` is a list that may still be empty where it is read: a
/// local table built as an array, a command's list reply held in a local,
/// in a field of one (`t.items`), or written in place, with no test of its
/// length on the path that rules out the empty case.
fn may_be_empty_array(cx: &Context<'_>, expr: &Expression) -> bool {
    let may_be_empty = |len: Range| len.lo <= 0.0 && len.hi > 0.0;
    if let Some(fields) = cx.types.table_fields(expr) {
        return fields.names.is_empty() && fields.len.is_some_and(may_be_empty);
    }
    if let Some(len) = cx.types.list_length(expr) {
        return may_be_empty(len);
    }
    cx.types.inline_list_reply(expr).is_some()
}

/// Whether `expr` is a document `cjson.decode` gave.
fn decoded(cx: &Context<'_>, expr: &Expression) -> bool {
    is_decoded(&cx.types.of(expr))
}

fn is_decoded(value: &Inferred) -> bool {
    matches!(value.origin, Some(Origin::Decoded))
}

/// The label of a decoded document encoded again.
const DECODED: &str = "decoded by `cjson.decode`: its empty arrays are empty tables";

/// Why the list `expr` may be empty.
fn label(cx: &Context<'_>, expr: &Expression) -> String {
    match cx.types.of(expr).origin {
        Some(Origin::Reply { command, .. }) => {
            format!("{command}'s list reply, empty when there is nothing to list")
        }
        _ => "the elements are added on some paths only".to_string(),
    }
}

/// The members of a table constructor given to `cjson.encode` (nested
/// constructors too) that are arrays that may be empty, by name or place.
fn empty_members(
    cx: &Context<'_>,
    table: &TableConstructor,
    found: &mut Vec<(String, Span, String)>,
) {
    let mut place = 0;
    for field in table.fields() {
        let (name, value): (String, &Expression) = match field {
            Field::NoKey(value) => {
                place += 1;
                (format!("[{place}]"), value)
            }
            Field::NameKey { key, value, .. } => (format!(".{}", key.token()), value),
            Field::ExpressionKey { key, value, .. } => {
                (format!("[{}]", key.to_string().trim()), value)
            }
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        match unparenthesized(value) {
            Expression::TableConstructor(inner) => empty_members(cx, inner, found),
            value if decoded(cx, value) => {
                found.push((
                    format!("`{name}` (`{}`)", value.to_string().trim()),
                    cx.span_of(value),
                    DECODED.to_string(),
                ));
            }
            value if may_be_empty_array(cx, value) => {
                found.push((
                    format!("`{name}` (`{}`)", value.to_string().trim()),
                    cx.span_of(value),
                    label(cx, value),
                ));
            }
            _ => {}
        }
    }
}

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    each_library_call(cx, |call| {
        if call.name != "cjson.encode" {
            return;
        }
        let Some(arg) = call.args.first().map(|a| unparenthesized(a)) else {
            return;
        };
        if decoded(cx, arg) {
            report.diagnostics.push(
                Diagnostic::warning(
                    Lint::CjsonEmptyTable,
                    cx.span_of(call.call),
                    "this is a document `cjson.decode` gave, encoded again: each empty array in it is written back as the object \"{}\", not \"[]\"",
                )
                .with_label(DECODED)
                .with_help("store the JSON text as it came when it is not changed, or fix up its empty arrays"),
            );
            return;
        }
        if let Some(fields) = cx.types.table_fields(arg) {
            let members = fields
                .names_with_values
                .iter()
                .map(|(name, value)| (format!(".{name}"), value))
                .chain(
                    fields
                        .elements
                        .iter()
                        .map(|(i, value)| (format!("[{i}]"), value)),
                );
            for (member, _) in members.filter(|(_, value)| is_decoded(value)) {
                report.diagnostics.push(
                    Diagnostic::warning(
                        Lint::CjsonEmptyTable,
                        cx.span_of(call.call),
                        format!("the member `{member}` of this table is a document `cjson.decode` gave, encoded again: each empty array in it is written back as the object \"{{}}\", not \"[]\""),
                    )
                    .with_label(DECODED)
                    .with_help("keep the member's JSON text as it came, or fix up its empty arrays"),
                );
            }
        }
        let followed = cx.types.table_fields(arg).is_some()
            || cx.types.list_length(arg).is_some()
            || cx.types.inline_list_reply(arg).is_some();
        if followed {
            // Built as an array, and may still be empty.
            if may_be_empty_array(cx, arg) {
                let label = label(cx, arg);
                report.diagnostics.push(
                    Diagnostic::warning(
                        Lint::CjsonEmptyTable,
                        cx.span_of(call.call),
                        "this table may be empty here, and `cjson.encode` gives the object \"{}\" for an empty table, not the array \"[]\"",
                    )
                    .with_label(label)
                    .with_help("write the JSON text \"[]\" yourself when the list is empty (`#t == 0`)"),
                );
            }
            return;
        }
        let Expression::TableConstructor(table) = arg else {
            return;
        };
        if !table.fields().is_empty() {
            let mut members = Vec::new();
            empty_members(cx, table, &mut members);
            for (member, span, label) in members {
                let message = if label == DECODED {
                    format!(
                        "the member {member} is a document `cjson.decode` gave, encoded again: each empty array in it is written back as the object \"{{}}\", not \"[]\""
                    )
                } else {
                    format!(
                        "the member {member} is a list that may be empty here, and `cjson.encode` gives the object \"{{}}\" for an empty table, not the array \"[]\""
                    )
                };
                report.diagnostics.push(
                    Diagnostic::warning(Lint::CjsonEmptyTable, span, message)
                    .with_label(label)
                    .with_help("encode the list yourself when it is empty (`#t == 0`), or have the reader accept `{}`"),
                );
            }
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

    #[test]
    fn decoded_documents_encoded_again() {
        for source in [
            // Whole, through a local changed in place.
            "local doc = cjson.decode(ARGV[1])\ndoc.seen = ARGV[2]\nreturn cjson.encode(doc)",
            // Through `assert`, into a parameter.
            "local function save(data)\n  data = assert(cjson.decode(data), 'not JSON')\n  redis.call('SET', KEYS[1], cjson.encode(data))\nend\nsave(ARGV[1])\nreturn 1",
            // As a member of a local table.
            "local out = {}\nout.at = ARGV[1]\nout.job = cjson.decode(ARGV[2])\nreturn cjson.encode(out)",
            // As a member of a table written in the call.
            "return cjson.encode({at = ARGV[1], job = cjson.decode(ARGV[2])})",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(
                found[0].contains("`cjson.decode` gave, encoded again"),
                "{found:?}"
            );
        }
        for source in [
            // A field of it, read as text, is no document.
            "local doc = cjson.decode(ARGV[1])\nreturn cjson.encode({name = tostring(doc.name)})",
            // A table built anew.
            "local doc = cjson.decode(ARGV[1])\nlocal out = {}\nout.name = ARGV[2]\nreturn cjson.encode(out)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn tables_that_may_be_empty_where_encoded() {
        for source in [
            // Filtered in a loop.
            "local out = {}\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  if v ~= '' then table.insert(out, v) end\nend\nreturn cjson.encode(out)",
            // Appended in a branch.
            "local out = {}\nif ARGV[1] then out[#out + 1] = ARGV[1] end\nreturn cjson.encode(out)",
            // Collected from a reply.
            "local out = {}\nfor i, v in ipairs(redis.call('SMEMBERS', KEYS[1])) do out[i] = v end\nredis.call('SET', KEYS[1], cjson.encode(out))",
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
    fn list_replies_kept_in_a_local_may_be_empty() {
        for source in [
            "local members = redis.call('SMEMBERS', KEYS[1])\nreturn cjson.encode(members)",
            "local list = {}\nif ARGV[1] == 'all' then list = redis.call('LRANGE', KEYS[1], 0, -1) end\nreturn cjson.encode(list)",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
        }
        for source in [
            // Tested for the empty case on the path.
            "local members = redis.call('SMEMBERS', KEYS[1])\nif #members == 0 then return '[]' end\nreturn cjson.encode(members)",
            // Never empty.
            "local t = redis.call('TIME')\nreturn cjson.encode(t)",
            "local v = redis.call('MGET', KEYS[1], KEYS[2])\nreturn cjson.encode(v)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn members_that_may_be_empty_lists() {
        for source in [
            // Filtered in a loop, as a named member.
            "local out = {}\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  if v ~= '' then table.insert(out, v) end\nend\nreturn cjson.encode({items = out, n = #out})",
            // Appended in a branch, in a nested table.
            "local ids = {}\nif ARGV[1] then ids[#ids + 1] = ARGV[1] end\nreturn cjson.encode({page = {ids = ids}})",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert!(found[0].contains("may be empty"), "{found:?}");
        }
    }

    #[test]
    fn list_replies_written_in_place_or_held_in_a_field_may_be_empty() {
        for source in [
            // In place, whole or as a member.
            "return cjson.encode(redis.call('LRANGE', KEYS[1], 0, -1))",
            "return cjson.encode({items = redis.call('SMEMBERS', KEYS[1])})",
            "return cjson.encode((redis.call('ZRANGE', KEYS[1], 0, -1)))",
            // In place, in a loop over the keys.
            "local out = {}\nfor i, k in ipairs(KEYS) do\n  out[i] = cjson.encode(redis.call('SMEMBERS', k))\nend\nreturn out",
            // In a field.
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\nreturn cjson.encode(page.items)",
            "local page = {items = redis.call('LRANGE', KEYS[1], 0, 9)}\nreturn cjson.encode(page.items)",
            // In a field, set on one branch: a reply on that path.
            "local page = {items = {'none'}}\nif ARGV[1] == 'all' then page.items = redis.call('SMEMBERS', KEYS[1]) end\nreturn cjson.encode(page.items)",
            // Tested on another path only.
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\nif KEYS[1] == 'x' and #page.items == 0 then return '[]' end\nreturn cjson.encode(page.items)",
        ] {
            let found = warnings(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
        }
        for source in [
            // Tested on the path.
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\nif #page.items == 0 then return '[]' end\nreturn cjson.encode(page.items)",
            // Never empty, or not a list.
            "return cjson.encode(redis.call('TIME'))",
            "return cjson.encode(redis.call('MGET', KEYS[1], ARGV[1]))",
            "return cjson.encode(redis.call('HGET', KEYS[1], ARGV[1]))",
            "local page = {}\npage.items = redis.call('TIME')\nreturn cjson.encode(page.items)",
            // Filled since, where the walk does not follow it.
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\ntable.insert(page.items, KEYS[1])\nreturn cjson.encode(page.items)",
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\npage.items[#page.items + 1] = KEYS[1]\nreturn cjson.encode(page.items)",
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\nlocal l = page.items\nl[#l + 1] = KEYS[1]\nreturn cjson.encode(page.items)",
            // Replaced by a list surely filled.
            "local page = {}\npage.items = redis.call('LRANGE', KEYS[1], 0, 9)\npage.items = {KEYS[1]}\nreturn cjson.encode(page.items)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn every_form_the_registry_describes_is_reported() {
        let documentation = Lint::CjsonEmptyTable.documentation();
        for (named, source) in [
            ("cjson.encode({})", "return cjson.encode({})"),
            (
                "filled in a loop",
                "local out = {}\nfor _, k in ipairs(KEYS) do\n  if redis.call('EXISTS', k) == 1 then out[#out + 1] = k end\nend\nreturn cjson.encode(out)",
            ),
            (
                "or a branch",
                "local out = {}\nif redis.call('EXISTS', KEYS[1]) == 1 then out[1] = KEYS[1] end\nreturn cjson.encode(out)",
            ),
            (
                "written in place",
                "return cjson.encode(redis.call('LRANGE', KEYS[1], 0, -1))",
            ),
            (
                "held in a local",
                "local m = redis.call('SMEMBERS', KEYS[1])\nreturn cjson.encode(m)",
            ),
            (
                "a table's field",
                "local p = {}\np.items = redis.call('LRANGE', KEYS[1], 0, -1)\nreturn cjson.encode(p.items)",
            ),
            (
                "as a member",
                "local m = redis.call('SMEMBERS', KEYS[1])\nreturn cjson.encode({items = m})",
            ),
        ] {
            assert!(
                documentation.contains(named),
                "the registry does not name `{named}`: {documentation}"
            );
            assert_eq!(warnings(source).len(), 1, "{named}: {source}");
        }
    }

    #[test]
    fn members_surely_filled_unknown_or_empty_objects_pass() {
        for source in [
            "local out = {KEYS[1]}\nfor _, v in ipairs(ARGV) do table.insert(out, v) end\nreturn cjson.encode({items = out})",
            "return cjson.encode({meta = {}, n = 1})",
            "local out = {}\nfor _, v in ipairs(ARGV) do table.insert(out, v) end\nif #out == 0 then return '{\"items\":[]}' end\nreturn cjson.encode({items = out})",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }

    #[test]
    fn tables_surely_filled_or_objects_pass() {
        for source in [
            "local out = {KEYS[1]}\nfor _, v in ipairs(ARGV) do table.insert(out, v) end\nreturn cjson.encode(out)",
            "local out = {}\nout[#out + 1] = KEYS[1]\nreturn cjson.encode(out)",
            "local out = {}\nout.n = 0\nfor _, v in ipairs(ARGV) do out.n = out.n + 1 end\nreturn cjson.encode(out)",
            "local out = {}\nfor _, v in ipairs(ARGV) do table.insert(out, v) end\nif #out == 0 then return '[]' end\nreturn cjson.encode(out)",
            // A map: stored at keys that are surely names.
            "local out = {}\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do out['m:' .. m] = 1 end\nreturn cjson.encode(out)",
        ] {
            assert!(
                warnings(source).is_empty(),
                "{source}: {:?}",
                warnings(source)
            );
        }
    }
}
