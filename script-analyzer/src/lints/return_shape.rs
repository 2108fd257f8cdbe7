//! `return_shape`: a table the script returns that Redis converts into
//! something else than it looks like.
//!
//! Redis turns the returned table into an array reply by reading `t[1]`,
//! `t[2]`, ... up to the first nil: so `return {a, nil, b}` replies `[a]`,
//! and a table with string keys (`return {count = n}`) replies an empty
//! array. Checked on table constructors the main chunk returns: a literal
//! `nil` element and keyed fields are errors; an element that may be nil
//! (`tonumber` of text, a local not set on every path, a field never set)
//! is a warning. A returned local table is followed too: fields set by
//! name and no element is an error, an element that may be nil a warning,
//! and so is a table stored at a loop's index on some rounds only
//! (`if keep then out[i] = v end`, see [`super::sparse_stores`]): its
//! array has holes; and so is a table stored at computed string keys only
//! (`h[flat[i]] = flat[i + 1]`): it arrives as an empty array.

use super::chunk_returns::{main_chunk_returns, unparenthesized};
use super::sparse_stores::stores;
use super::{Context, RedisCall};
use crate::facts::{Inferred, Origin, Ty};
use crate::{Diagnostic, Lint, Report};
use full_moon::ast::{Expression, Field, Var};
use std::collections::HashMap;

/// Keys that make a returned table a reply of another kind.
const SPECIAL: &[&str] = &[
    "err",
    "ok",
    "double",
    "map",
    "set",
    "big_number",
    "verbatim_string",
];

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut sparse = None;
    for expr in main_chunk_returns(cx.ast.nodes()) {
        let Expression::TableConstructor(table) = unparenthesized(expr) else {
            let found = sparse.get_or_insert_with(|| stores(cx));
            if !with_holes(cx, expr, &found.sparse, report)
                && !string_keyed(cx, expr, &found.string_keyed, report)
            {
                returned_local(cx, expr, report);
            }
            continue;
        };
        let fields: Vec<&Field> = table.fields().iter().collect();
        // `{err = ...}` and `{ok = ...}` are Redis's error and status replies;
        // RESP3 has more (`{double = ...}`, `{map = ...}`...).
        let special = fields.iter().any(|f| {
            matches!(f, Field::NameKey { key, .. } if SPECIAL.contains(&key.token().to_string().as_str()))
        });
        if special {
            continue;
        }
        let positional = fields
            .iter()
            .filter(|f| matches!(f, Field::NoKey(_)))
            .count();
        let is_nil = |value: &Expression| matches!(unparenthesized(value), Expression::Symbol(t) if t.token().to_string() == "nil");
        let elements: Vec<&Expression> = fields
            .iter()
            .filter_map(|f| match f {
                Field::NoKey(value) => Some(value),
                _ => None,
            })
            .collect();
        // The first literal nil: the elements after it are lost (an error);
        // nils only at the end shorten the array (a warning, unless every
        // element is nil: `{nil, nil}` is a way to write an empty array).
        if let Some(first) = elements.iter().position(|e| is_nil(e)) {
            let lost = elements[first..].iter().any(|e| !is_nil(e));
            let span = cx.span_of(elements[first]);
            if lost {
                report.diagnostics.push(
                    Diagnostic::error(
                        Lint::ReturnShape,
                        span,
                        "the script returns an array with a `nil` in it: Redis's reply stops before it, and the elements after it are lost",
                    )
                    .with_label("the reply is cut here")
                    .with_help("return `false` for a nil element: it arrives as a nil reply and keeps its place"),
                );
            } else if first > 0 {
                report.diagnostics.push(
                    Diagnostic::warning(
                        Lint::ReturnShape,
                        span,
                        "the script returns an array ending in `nil`: Redis's reply stops before it, so the caller gets fewer elements",
                    )
                    .with_label("the reply ends before this")
                    .with_help("return `false` for a nil element: it arrives as a nil reply and keeps its place"),
                );
            }
        }
        for field in &fields {
            match field {
                Field::NoKey(value) => {
                    let value = unparenthesized(value);
                    if is_nil(value) {
                        continue;
                    }
                    let inferred = cx.types.of(value);
                    if let Some(found) = maybe_nil_element(cx.span_of(value), &inferred) {
                        report.diagnostics.push(found);
                    }
                }
                Field::NameKey { key, .. } => {
                    let name = key.token().to_string();
                    let (message, all) = if positional == 0 {
                        (
                            format!(
                                "the script returns a table with string keys (`{name} = ...`): Redis replies with an empty array"
                            ),
                            true,
                        )
                    } else {
                        (
                            format!(
                                "the script returns a table with a string key (`{name} = ...`): Redis drops that field from the reply"
                            ),
                            false,
                        )
                    };
                    let diagnostic = if all {
                        Diagnostic::error(Lint::ReturnShape, cx.span_of(*field), message)
                    } else {
                        Diagnostic::warning(Lint::ReturnShape, cx.span_of(*field), message)
                    };
                    report.diagnostics.push(
                        diagnostic
                            .with_label("only the elements 1, 2, 3... reach the caller")
                            .with_help(
                                "return a flat array (`{'count', n}`), or `cjson.encode(t)`",
                            ),
                    );
                    if all {
                        // One error per table is enough.
                        break;
                    }
                }
                _ => {}
            }
        }
    }
}

/// What a special key's value must be for Redis to make its kind of
/// reply of the table (`{ok = 'OK'}` is a status, `{ok = 1}` an empty
/// array).
fn special_kind(name: &str) -> Option<Ty> {
    match name {
        "ok" | "err" | "big_number" => Some(Ty::STRING),
        "double" => Some(Ty::NUMBER.union(Ty::STRING)),
        "map" | "set" | "verbatim_string" => Some(Ty::TABLES),
        _ => None,
    }
}

/// A warning for an element that may be nil (and is not always).
fn maybe_nil_element(span: crate::Span, value: &Inferred) -> Option<Diagnostic> {
    if !value.ty.intersects(Ty::NIL) || value.ty.is_any() || value.ty.within(Ty::NIL) {
        return None;
    }
    // An element of a reply is nil only past its end, which the script
    // may know it is not.
    if matches!(value.origin, Some(Origin::Element { .. })) {
        return None;
    }
    Some(if matches!(value.origin, Some(Origin::Tonumber { .. })) {
        Diagnostic::warning(
            Lint::ReturnShape,
            span,
            "the script returns an array with an element that is nil when `tonumber` fails: Redis's reply stops before it",
        )
        .with_label("nil when the text is not a number")
        .with_help("give it a default: `tonumber(...) or 0`")
    } else {
        Diagnostic::warning(
            Lint::ReturnShape,
            span,
            "the script returns an array with an element that may be nil: Redis's reply stops before it",
        )
        .with_label("may be nil here")
        .with_help("give it a default, or `false`: a `false` element arrives as a nil reply and keeps its place")
    })
}

/// A returned local table stored at a loop's index on some rounds only:
/// whether it was reported.
fn with_holes(
    cx: &Context<'_>,
    expr: &Expression,
    sparse: &HashMap<usize, crate::Span>,
    report: &mut Report,
) -> bool {
    let Expression::Var(Var::Name(token)) = unparenthesized(expr) else {
        return false;
    };
    let Some(store) = cx.types.local(token).and_then(|t| sparse.get(&t)) else {
        return false;
    };
    report.diagnostics.push(
        Diagnostic::warning(
            Lint::ReturnShape,
            cx.span_of(expr),
            format!(
                "the script returns `{}`, stored at a loop's index only on some rounds (line {}): its array has holes, and Redis's reply stops at the first",
                token.token(),
                store.start.line
            ),
        )
        .with_label("an array with holes")
        .with_help("append instead (`t[#t + 1] = v`, `table.insert(t, v)`), so that the kept values stay consecutive"),
    );
    true
}

/// A returned local table with no element for sure, stored at string keys
/// only (`t[field] = value` in a loop over HGETALL): whether it was
/// reported.
fn string_keyed(
    cx: &Context<'_>,
    expr: &Expression,
    keyed: &HashMap<usize, crate::Span>,
    report: &mut Report,
) -> bool {
    let Expression::Var(Var::Name(token)) = unparenthesized(expr) else {
        return false;
    };
    let Some(store) = cx.types.local(token).and_then(|t| keyed.get(&t)) else {
        return false;
    };
    // Followed from an empty constructor, with no element set by position.
    let Some(fields) = cx.types.table_fields(expr) else {
        return false;
    };
    if fields.len.is_none_or(|len| len.lo > 0.0) || !fields.elements.is_empty() {
        return false;
    }
    report.diagnostics.push(
        Diagnostic::warning(
            Lint::ReturnShape,
            cx.span_of(expr),
            format!(
                "the script returns `{}`, stored at string keys only (line {}): Redis replies with an empty array",
                token.token(),
                store.start.line
            ),
        )
        .with_label("only the elements 1, 2, 3... reach the caller")
        .with_help("return a flat array (`{field, value, ...}`), or `cjson.encode(t)`"),
    );
    true
}

/// A returned local table whose fields the value facts follow: string
/// keys only (an empty array), or elements that may be nil.
fn returned_local(cx: &Context<'_>, expr: &Expression, report: &mut Report) {
    let Some(table) = cx.types.table_fields(expr) else {
        return;
    };
    // The names that may hold a value where the table is returned (set on
    // some path, to something else than nil). A special key that may be
    // its reply's kind (`{ok = 'OK'}`, `{err = msg}`) is taken as meant.
    let mut meant = false;
    let named: Vec<&str> = table
        .names_with_values
        .iter()
        .filter(|(name, value)| {
            meant |= special_kind(name).is_some_and(|kind| value.ty.intersects(kind));
            !value.ty.within(Ty::NIL)
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if !named.is_empty() && !meant {
        let no_elements = table.len.is_some_and(|len| len.hi <= 0.0);
        // Elements on some paths only: on another, only the names.
        // (`t[1]` set, never nil: there is an element.)
        let first = table
            .elements
            .iter()
            .any(|(i, v)| *i == 1 && !v.ty.intersects(Ty::NIL));
        let maybe_no_elements = !first && table.len.is_some_and(|len| len.lo <= 0.0);
        if no_elements {
            report.diagnostics.push(
                Diagnostic::error(
                    Lint::ReturnShape,
                    cx.span_of(expr),
                    format!(
                        "the script returns a table with string keys only (`{}`): Redis replies with an empty array",
                        named.join("`, `")
                    ),
                )
                .with_label("only the elements 1, 2, 3... reach the caller")
                .with_help("return a flat array (`{'count', n}`), or `cjson.encode(t)`"),
            );
            return;
        }
        if maybe_no_elements {
            report.diagnostics.push(
                Diagnostic::warning(
                    Lint::ReturnShape,
                    cx.span_of(expr),
                    format!(
                        "the script may return a table with string keys (`{}`) and no element: Redis replies with an empty array, and drops those fields on every path",
                        named.join("`, `")
                    ),
                )
                .with_label("only the elements 1, 2, 3... reach the caller")
                .with_help("return a flat array on every path (`{'count', n}`), or `cjson.encode(t)`"),
            );
            return;
        }
    }
    for (_, value) in &table.elements {
        if let Some(found) = maybe_nil_element(cx.span_of(expr), value) {
            report
                .diagnostics
                .push(found.with_label("an element of this table may be nil"));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn found(source: &str) -> Vec<(Severity, String)> {
        lint(Lint::ReturnShape, source, 1, 1)
            .into_iter()
            .map(|d| (d.severity, d.message))
            .collect()
    }

    #[test]
    fn arrays_redis_converts_otherwise() {
        assert_eq!(
            found("return {KEYS[1], nil, ARGV[1]}"),
            [(
                Severity::Error,
                "the script returns an array with a `nil` in it: Redis's reply stops before it, and the elements after it are lost"
                    .to_string()
            )]
        );
        let trailing = found("return {KEYS[1], ARGV[1], nil}");
        assert_eq!(trailing.len(), 1);
        assert_eq!(trailing[0].0, Severity::Warning);
        assert_eq!(
            found("return {count = redis.call('INCR', KEYS[1]), last = ARGV[1]}"),
            [(Severity::Error, "the script returns a table with string keys (`count = ...`): Redis replies with an empty array".to_string())]
        );
        let mixed = found("return {KEYS[1], ARGV[1], n = 2}");
        assert_eq!(mixed.len(), 1);
        assert_eq!(mixed[0].0, Severity::Warning);
        let tonumber = found("return {KEYS[1], tonumber(ARGV[1])}");
        assert_eq!(tonumber.len(), 1);
        assert_eq!(tonumber[0].0, Severity::Warning);
    }

    #[test]
    fn plain_arrays_pass() {
        for source in [
            "return {KEYS[1], false, ARGV[1]}",
            // BullMQ's way to write an empty array.
            "if ARGV[1] then return {nil, nil} end return {KEYS[1]}",
            "return {KEYS[1], tonumber(ARGV[1]) or 0}",
            "return {redis.call('GET', KEYS[1]), ARGV[1]}",
            "local function f() return {a = 1, nil} end return {KEYS[1], ARGV[1]}",
            "return cjson.encode({count = 1, k = KEYS[1], a = ARGV[1]})",
            "if ARGV[1] == '' then return {err = 'empty'} end return {ok = KEYS[1]}",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    #[test]
    fn tables_followed_through_locals_fields_loops_and_branches() {
        assert_eq!(
            found("local r = {}\nr.count = redis.call('INCR', KEYS[1])\nr.last = ARGV[1]\nreturn r"),
            [(Severity::Error, "the script returns a table with string keys only (`count`, `last`): Redis replies with an empty array".to_string())]
        );
        for source in [
            // A local not set on every path.
            "local a\nif ARGV[1] == 'x' then a = 1 end\nreturn {a, KEYS[1]}",
            // An element of a table, set in a branch to a maybe-nil value.
            "local r = {KEYS[1], 0}\nif ARGV[1] then r[2] = tonumber(ARGV[1]) end\nreturn r",
            // String keys set in a loop, no element.
            "local r = {}\nr.n = 0\nfor _, k in ipairs(KEYS) do r.n = r.n + 1 end\nreturn r",
            // A reply's element that may be false, turned into nil.
            "local v = redis.call('MGET', KEYS[1], KEYS[1])\nlocal n = v[2] or nil\nreturn {n, ARGV[1]}",
        ] {
            assert_eq!(found(source).len(), 1, "{source}: {:?}", found(source));
        }
    }

    #[test]
    fn tables_stored_at_a_loops_index_on_some_rounds_have_holes() {
        for source in [
            // `pairs` over a reply, a filter on the value.
            "local keep = redis.call('GET', KEYS[1])\nlocal out = {}\nfor i, v in pairs(redis.call('SMEMBERS', ARGV[1])) do\n  if v ~= keep then out[i] = v end\nend\nreturn out",
            // Stored in both branches of an `if` without an `else`.
            "local out = {}\nfor i = 1, #KEYS do\n  if ARGV[1] == 'x' then out[i] = 1 elseif ARGV[1] == 'y' then out[i] = 2 end\nend\nreturn out",
            // A numeric loop, the store in an `elseif`, inside a `do`.
            "local items = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal picked = {}\nfor n = 1, #items do\n  do\n    if items[n] == ARGV[1] then\n    elseif #items[n] > 3 then picked[n] = items[n] end\n  end\nend\nreturn picked",
        ] {
            let found = found(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert_eq!(found[0].0, Severity::Warning);
            assert!(found[0].1.contains("its array has holes"), "{found:?}");
        }
    }

    #[test]
    fn tables_stored_at_string_keys_only_arrive_empty() {
        for source in [
            // Keys from a flat HGETALL reply, in a numeric loop.
            "local flat = redis.call('HGETALL', KEYS[1])\nlocal h = {}\nfor i = 1, #flat, 2 do h[flat[i]] = flat[i + 1] end\nreturn h",
            // Keys built by `..`, in a branch of a loop over a reply.
            "local seen = {}\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  if m ~= ARGV[1] then seen['m:' .. m] = true end\nend\nreturn seen",
            // An input as the key, through a local.
            "local field = ARGV[1]\nlocal out = {}\nout[field] = redis.call('GET', KEYS[1])\nreturn out",
        ] {
            let found = found(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
            assert_eq!(found[0].0, Severity::Warning);
            assert!(found[0].1.contains("string keys only"), "{found:?}");
        }
    }

    #[test]
    fn tables_with_elements_or_number_keys_pass() {
        for source in [
            // Appended to as well.
            "local h = {}\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do h[m] = true table.insert(h, m) end\nreturn h",
            // Stored at a number computed from a string.
            "local h = {}\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do h[tonumber(m)] = m end\nreturn h",
            // An element set by the constructor.
            "local h = {ARGV[1]}\nh[KEYS[1]] = 1\nreturn h",
            // Encoded rather than returned as an array.
            "local h = {}\nh[ARGV[1]] = KEYS[1]\nreturn cjson.encode(h)",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    #[test]
    fn tables_filled_on_every_round_or_appended_to_pass() {
        for source in [
            // Every round stores its index.
            "local out = {}\nfor i, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do out[i] = v .. ARGV[1] end\nreturn out",
            // A branch picks the value, the store is on every round.
            "local out = {}\nfor i = 1, 3 do\n  local v = ARGV[1]\n  if i == 2 then v = KEYS[1] end\n  out[i] = v\nend\nreturn out",
            // Kept values appended.
            "local out = {}\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  if v ~= ARGV[1] then out[#out + 1] = v end\nend\nreturn out",
            // Stored in every branch of an `if` with an `else`.
            "local out = {}\nfor i = 1, #KEYS do\n  if redis.call('EXISTS', KEYS[i]) == 1 then\n    if ARGV[1] == 'x' then out[i] = 2 else out[i] = 1 end\n  elseif ARGV[1] == 'y' then out[i] = 3\n  else\n    out[i] = 0\n  end\nend\nreturn out",
            // The index of another loop than the store's own.
            "local out = {}\nlocal n = 0\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do\n  if v ~= ARGV[1] then n = n + 1 out[n] = v end\nend\nreturn out",
            // A function written in the loop stores later, not in the loop.
            "local out = {}\nfor i = 1, 2 do\n  out[i] = KEYS[1]\n  local f = function() if ARGV[1] == 'x' then out[i] = ARGV[1] end end\n  f()\nend\nreturn out",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    #[test]
    fn string_keys_set_on_some_paths_of_a_returned_table() {
        for source in [
            // A record on one branch, an array on the other.
            "local res\nif redis.call('EXISTS', KEYS[1]) == 1 then\n  res = {ok = 1}\nelse\n  res = {0}\nend\nreturn res",
            // A name stored on one branch of an empty table.
            "local r = {}\nif ARGV[1] == 'x' then\n  r.owner = KEYS[1]\nelse\n  r[1] = 0\nend\nreturn r",
            // A name stored on some rounds of a loop.
            "local r = {}\nfor _, k in ipairs(KEYS) do\n  if redis.call('EXISTS', k) == 1 then r[k] = 1 r.last = k end\nend\nreturn r",
            // An `elseif` chain, the record in the middle.
            "local r = {0}\nif ARGV[1] == 'a' then r = {1}\nelseif ARGV[1] == 'b' then r = {err_code = 2}\nend\nreturn r",
        ] {
            let found = found(source);
            assert_eq!(found.len(), 1, "{source}: {found:?}");
        }
        // Names only on every path that sets one: an error.
        assert_eq!(
            found("local r = {}\nif ARGV[1] == 'x' then r.a = 1 end\nreturn r"),
            [(Severity::Error, "the script returns a table with string keys only (`a`): Redis replies with an empty array".to_string())]
        );
    }

    #[test]
    fn reply_kinds_and_arrays_on_every_path_pass() {
        for source in [
            // A status reply on one path, an array on the other.
            "local res\nif redis.call('EXISTS', KEYS[1]) == 1 then\n  res = {ok = 'OK'}\nelse\n  res = {0}\nend\nreturn res",
            "local res = {0}\nif ARGV[1] == '' then res = {err = 'empty'} end\nreturn res",
            // Arrays on every path.
            "local res\nif ARGV[1] == 'a' then res = {1} else res = {0, 1} end\nreturn res",
            // A name set to nil on the other path only.
            "local r = {1}\nif ARGV[1] == 'a' then r = {2, n = nil} end\nreturn r",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }

    #[test]
    fn arrays_followed_through_locals_pass() {
        for source in [
            "local a = 0\nif ARGV[1] == 'x' then a = 1 end\nreturn {a, KEYS[1]}",
            "local r = {KEYS[1], 0}\nif ARGV[1] then r[2] = tonumber(ARGV[1]) or 0 end\nreturn r",
            "local r = {}\nfor _, k in ipairs(KEYS) do r[#r + 1] = k end\nreturn r",
            "local r = {}\nr.n = 1\nreturn cjson.encode(r)",
            "local r = {}\nr.n = 1\nr[1] = 'a'\nreturn r",
            "local v = redis.call('LRANGE', KEYS[1], 0, 1)\nreturn {v[2] or false, ARGV[1]}",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }
}
