//! Values through locals, table fields, reply elements, positions and unpack.

use super::{probe_types, probes, ty};
use crate::facts::*;

#[test]
fn locals_take_every_assigned_value() {
    assert_eq!(ty("local n = 1 return n"), Ty::INT);
    assert_eq!(ty("local n = 1 n = n + 1 return n"), Ty::INT);
    assert_eq!(
        ty("local n = 1 if x then n = 'a' end return n"),
        Ty::INT.union(Ty::STRING)
    );
    assert_eq!(ty("local n return n"), Ty::NIL);
    assert_eq!(ty("local a, b = 1 return b"), Ty::NIL);
    assert_eq!(ty("local a, b = f() return b"), Ty::ANY);
    // Reassigned: the later value replaces the earlier one.
    assert_eq!(
        ty("local v = redis.call('GET', KEYS[1]) v = v or '0' return v"),
        Ty::STRING
    );
    // Set inside a function: still one of the values.
    assert_eq!(
        ty("local n = 0 local function bump() n = 'x' end return n"),
        Ty::INT.union(Ty::STRING)
    );
    assert_eq!(
        ty("local function f(p) return p end return f"),
        Ty::FUNCTION
    );
    assert_eq!(
        ty("for i = 1, 3 do end local t = {} for _, v in ipairs(t) do return v end return 1"),
        Ty::INT
    );
    // A cycle through two locals settles.
    assert_eq!(
        ty("local a, b = 1, 2 for i = 1, 3 do a = b b = a .. '' end return a"),
        Ty::INT.union(Ty::STRING)
    );
}

#[test]
fn fields_of_local_tables_are_followed() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (source, expected) in [
        (
            "local t = {} t.x = redis.call('GET', KEYS[1]) probe(t.x)",
            maybe,
        ),
        (
            "local t = {v = redis.call('GET', KEYS[1])} probe(t.v)",
            maybe,
        ),
        ("local t = {redis.call('GET', KEYS[1])} probe(t[1])", maybe),
        (
            "local t = {} t['x'] = redis.call('GET', KEYS[1]) if t.x then probe(t.x) end",
            Ty::STRING,
        ),
        // Passed to a function, or aliased: not followed.
        (
            "local t = {} t.x = redis.call('GET', KEYS[1]) f(t) probe(t.x)",
            Ty::ANY,
        ),
        ("local t = {} local u = t t.x = 1 probe(t.x)", Ty::ANY),
        // A computed key may be the field.
        (
            "local t = {x = 1} t[ARGV[1]] = 'a' probe(t.x)",
            Ty::INT.union(Ty::STRING),
        ),
        // Removed by a library call whose value is used.
        (
            "local t = {'a', 'b'} local last = table.remove(t) probe(t[2])",
            Ty::ANY,
        ),
    ] {
        assert_eq!(probe_types(source), vec![expected], "{source}");
    }
}

#[test]
fn elements_of_array_replies_have_their_types() {
    let time = probes("probe(redis.call('TIME')[1])");
    assert_eq!(time[0].ty, Ty::STRING);
    assert!(time[0].range.lo >= 1e9, "{:?}", time[0].range);
    let scores = "local r = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n";
    for (body, expected) in [
        (
            "for i, v in ipairs(r) do probe(v) probe(i) end",
            vec![Ty::STRING, Ty::INT],
        ),
        (
            "for i = 1, #r, 2 do probe(r[i + 1]) end",
            vec![Ty::STRING.union(Ty::NIL)],
        ),
        ("for _, v in pairs(r) do probe(v) end", vec![Ty::STRING]),
    ] {
        let source = format!("{scores}{body}");
        assert_eq!(probe_types(&source), expected, "{source}");
    }
    assert_eq!(
        probe_types("for _, v in ipairs(redis.call('MGET', KEYS[1], KEYS[2])) do probe(v) end"),
        vec![Ty::STRING.union(Ty::FALSE)]
    );
    // The inputs: strings.
    assert_eq!(
        probe_types("for _, v in ipairs(ARGV) do probe(v) end"),
        vec![Ty::STRING]
    );
    assert_eq!(
        probe_types("for _, k in pairs(KEYS) do probe(k) end"),
        vec![Ty::STRING]
    );
    // Unless the script stores into them.
    assert_eq!(
        probe_types("ARGV[1] = 5 for _, v in ipairs(ARGV) do probe(v) end"),
        vec![Ty::ANY]
    );
}

#[test]
fn a_name_read_from_a_table_filled_at_computed_string_keys() {
    // `HGETALL` made a table: a name is one of the values, or nil.
    let found = probes(
        "local raw = redis.call('HGETALL', KEYS[1])
local job = {}
for i = 1, #raw, 2 do
  job[raw[i]] = raw[i + 1]
end
probe(job.attempts)
if job.attempts then probe(job.attempts) end",
    );
    assert_eq!(found[0].ty, Ty::STRING.union(Ty::NIL));
    assert!(matches!(&found[0].origin, Some(Origin::Element { command }) if command == "HGETALL"));
    assert_eq!(found[1].ty, Ty::STRING);
    // A name also set by the script keeps its own value too.
    let found = probes(
        "local t = {count = 1}
for _, k in ipairs(ARGV) do t[k] = 'x' end
probe(t.count)
probe(t.other)",
    );
    assert_eq!(found[0].ty, Ty::INT.union(Ty::STRING));
    assert_eq!(found[1].ty, Ty::STRING.union(Ty::NIL));
    // Keys that may be positions leave names unknown.
    let found = probes("local t = {}\nfor i, v in ipairs(ARGV) do t[i] = v end\nprobe(t.count)");
    assert!(found[0].ty.is_any(), "{found:?}");
}

#[test]
fn values_stored_at_positions_are_what_ipairs_and_computed_reads_give() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (source, expected) in [
        // Appended in a loop, read back by `ipairs`.
        (
            "local t = {}\nfor _, k in ipairs(KEYS) do t[#t + 1] = redis.call('GET', k) end\nfor _, v in ipairs(t) do probe(v) end",
            maybe,
        ),
        // `table.insert`, read back at a computed position: nil past the end.
        (
            "local t = {}\nfor _, k in ipairs(KEYS) do table.insert(t, redis.call('HGET', k, 'f')) end\nfor i = 1, 3 do probe(t[i]) end",
            maybe.union(Ty::NIL),
        ),
        // A constructor's list, then a branch that appends only tested values.
        (
            "local t = {'a'}\nlocal v = redis.call('GET', KEYS[1])\nif v then t[#t + 1] = v end\nfor _, x in ipairs(t) do probe(x) end",
            Ty::STRING,
        ),
        // A key surely a name is not a position.
        (
            "local t = {}\nt['n:' .. ARGV[1]] = redis.call('GET', KEYS[1])\nfor _, x in ipairs(t) do probe(x) end",
            Ty::EMPTY,
        ),
        // A computed key that may be a name: any field.
        ("local t = {a = 1}\nlocal k = ARGV[1]\nprobe(t[k])", Ty::ANY),
        // Stored through a function: not followed.
        (
            "local t = {}\nlocal function add(v) t[#t + 1] = v end\nadd(1)\nfor _, x in ipairs(t) do probe(x) end",
            Ty::ANY,
        ),
    ] {
        let found = probes(source);
        assert_eq!(found.len(), 1, "{source}");
        assert_eq!(found[0].ty, expected, "{source}: {found:?}");
    }
}

#[test]
fn unpack_gives_each_name_its_element() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (source, expected) in [
        (
            "local a, b = unpack(redis.call('HMGET', KEYS[1], 'x', 'y'))\nprobe(b)",
            maybe,
        ),
        (
            "local t = redis.call('TIME')\nlocal s, us = unpack(t)\nprobe(us)",
            Ty::STRING,
        ),
        (
            "local t = {1, 'a'}\nlocal n, s = table.unpack(t)\nprobe(s)",
            Ty::STRING,
        ),
        (
            "local k, a, b = KEYS[1], unpack(redis.call('MGET', KEYS[1], KEYS[2]))\nprobe(b)",
            maybe,
        ),
        // Past what was asked for: nil too.
        (
            "local a, b, c = unpack(redis.call('HMGET', KEYS[1], 'x', 'y'))\nprobe(c)",
            maybe.union(Ty::NIL),
        ),
        // Not known: anything.
        (
            "local a, b = unpack(cjson.decode(ARGV[1]))\nprobe(b)",
            Ty::ANY,
        ),
    ] {
        let found = probes(source);
        assert_eq!(found.len(), 1, "{source}");
        assert_eq!(found[0].ty, expected, "{source}: {found:?}");
    }
}
