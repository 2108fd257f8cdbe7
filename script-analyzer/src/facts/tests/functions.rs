//! Values through functions: upvalues, the script's own functions, parameters, table fields.

use super::{GET, probe_types, probes};
use crate::facts::*;

#[test]
fn functions_see_every_value_of_their_upvalues() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    assert_eq!(
        probe_types(&format!(
            "{GET}local function f() probe(v) end if not v then return end f()"
        )),
        vec![maybe]
    );
    assert_eq!(
        probe_types("local n = 0 local function set() n = 'x' end set() probe(n)"),
        vec![Ty::INT.union(Ty::STRING)]
    );
    assert_eq!(
        probe_types("local function f(v) if not v then return end probe(v) end"),
        vec![Ty::ANY.minus(Ty::FALSY)]
    );
}

#[test]
fn a_call_of_the_scripts_own_function_gives_what_it_returns() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (source, expected) in [
        // `local function`, then a local holding the result.
        (
            "local function get(k) return redis.call('GET', k) end\nlocal v = get(KEYS[1])\nprobe(v)",
            maybe,
        ),
        // `local f = function`, through a field.
        (
            "local get = function(k) return redis.call('HGET', k, 'f') end\nlocal t = {}\nt.v = get(KEYS[1])\nprobe(t.v)",
            maybe,
        ),
        // In a branch.
        (
            "local get = function(k) return redis.call('HGET', k, 'f') end\nlocal v = 'x'\nif ARGV[1] then v = get(KEYS[1]) end\nprobe(v)",
            maybe,
        ),
        // Guarded inside: no `false`.
        (
            "local function get(k) return redis.call('GET', k) or '0' end\nprobe(get(KEYS[1]))",
            Ty::STRING,
        ),
        // Falling off the end is nil.
        (
            "local function get(k) if k then return redis.call('INCR', k) end end\nprobe(get(KEYS[1]))",
            Ty::INT.union(Ty::NIL),
        ),
        // In a loop.
        (
            "local function ids(k) return redis.call('SMEMBERS', k) end\nfor i = 1, 2 do probe(ids(KEYS[i])) end",
            Ty::ARRAY,
        ),
        // A recursive function: what its own call returns is not known.
        (
            "local function f(n) if n > 0 then return f(n - 1) end return 1 end\nprobe(f(3))",
            Ty::ANY,
        ),
        // A local assigned another function too: not known.
        (
            "local get = function(k) return 1 end\nif ARGV[1] then get = function(k) return 'x' end end\nprobe(get(KEYS[1]))",
            Ty::ANY,
        ),
    ] {
        let found = probes(source);
        assert_eq!(found.len(), 1, "{source}");
        assert_eq!(found[0].ty, expected, "{source}: {found:?}");
    }
    // The reply it comes from is kept, but not as the reason it may be
    // false (it is trusted); number hazards over parameters are not kept.
    let found =
        probes("local function ids(k) return redis.call('SMEMBERS', k) end\nprobe(ids(KEYS[1]))");
    assert_eq!(found[0].reply().map(|r| r.0), Some("SMEMBERS"));
    let found =
        probes("local function get(k) return redis.call('GET', k) end\nprobe(get(KEYS[1]))");
    assert_eq!(found[0].ty, Ty::STRING.union(Ty::FALSE));
    assert!(
        matches!(&found[0].origin, Some(Origin::Trusted { of }) if matches!(**of, Origin::Reply { .. })),
        "{found:?}"
    );
    assert!(found[0].from_redis());
    assert!(!found[0].origin.as_ref().is_some_and(Origin::explains_false));
    let found = probes("local function half(n) return n / 2 end\nprobe(half(ARGV[1]))");
    assert_eq!(found[0].origin, None);
}

#[test]
fn parameters_receive_what_every_call_passes() {
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (source, expected) in [
        // A reply passed directly.
        (
            "local function f(v)\n  probe(v)\nend\nf(redis.call('GET', KEYS[1]))",
            maybe,
        ),
        // Two calls: joined; a narrowed local in a branch adds no `false`.
        (
            "local function f(v)\n  probe(v)\nend\nlocal x = redis.call('GET', KEYS[1])\nif x then f(x) end\nf('a')",
            Ty::STRING,
        ),
        // Through a field, in a loop.
        (
            "local function f(n)\n  probe(n)\nend\nlocal t = {}\nt.n = 1\nfor i = 1, 3 do f(t.n) end",
            Ty::INT,
        ),
        // A parameter no call passes is nil; one past a call's values unknown.
        ("local function f(a, b)\n  probe(b)\nend\nf(1)", Ty::NIL),
        (
            "local function f(a, b)\n  probe(b)\nend\nf(unpack(ARGV))",
            Ty::ANY,
        ),
        // The function is used otherwise too: its calls are not all seen.
        (
            "local function f(v)\n  probe(v)\nend\nf(1)\nlocal g = f",
            Ty::ANY,
        ),
        ("local function f(v)\n  probe(v)\nend\npcall(f, 1)", Ty::ANY),
    ] {
        let found = probes(source);
        assert_eq!(found.len(), 1, "{source}");
        assert_eq!(found[0].ty, expected, "{source}: {found:?}");
    }
    // A local handed over keeps its types, not the nil reply it may be.
    let found =
        probes("local function f(v)\n  probe(v)\nend\nlocal x = redis.call('GET', KEYS[1])\nf(x)");
    assert_eq!(found[0].ty, maybe);
    assert_eq!(found[0].origin, None);
}

#[test]
fn a_call_of_a_function_a_tables_field_holds_gives_what_it_returns() {
    for call in ["Store.get(KEYS[1])", "Store:fetch(KEYS[1])"] {
        let source = format!(
            "local Store = {{}}\nfunction Store.get(key)\n  return redis.call('GET', key)\nend\nfunction Store:fetch(key)\n  return redis.call('GET', key)\nend\nprobe({call})"
        );
        let found = probes(&source);
        assert_eq!(found[0].ty, Ty::STRING.union(Ty::FALSE), "{source}");
        assert!(found[0].from_redis(), "{source}: {found:?}");
    }
    // A field stored into otherwise, or a table a local does not always
    // hold: not known.
    for source in [
        "local Store = {}\nfunction Store.get(key)\n  return redis.call('GET', key)\nend\nStore.get = function(key) return 1 end\nprobe(Store.get(KEYS[1]))",
        "local Store = {}\nfunction Store.get(key)\n  return redis.call('GET', key)\nend\nif ARGV[1] then Store = {} end\nprobe(Store.get(KEYS[1]))",
    ] {
        assert!(
            probes(source)[0].ty.is_any(),
            "{source}: {:?}",
            probes(source)
        );
    }
}
