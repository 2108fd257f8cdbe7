//! Values of expressions: literals, operators, library calls, replies in RESP2 and RESP3, ranges.

use super::{probe_types, probes, returned, ty};
use crate::facts::*;

#[test]
fn literals_and_operators() {
    assert_eq!(ty("return 1"), Ty::INT);
    assert_eq!(ty("return 1.5"), Ty::FLOAT);
    assert_eq!(ty("return 'a' .. 1"), Ty::STRING);
    assert_eq!(ty("return 1 + 2 * 3 % 4"), Ty::INT);
    assert_eq!(ty("return 1 / 2"), Ty::NUMBER);
    assert_eq!(ty("return #KEYS"), Ty::INT);
    assert_eq!(ty("return 1 < 2"), Ty::BOOL);
    assert_eq!(ty("return not x"), Ty::BOOL);
    assert_eq!(ty("return nil"), Ty::NIL);
    assert_eq!(ty("return {}"), Ty::TABLE);
    assert_eq!(ty("return ARGV[1]"), Ty::STRING);
    assert_eq!(
        returned("local p = KEYS[2] return p").origin,
        Some(Origin::Input {
            name: "KEYS[2]".to_string()
        })
    );
    assert_eq!(ty("return x"), Ty::ANY);
    assert!(matches!(
        returned("return (ARGV[1] + 0) / 1000").origin,
        Some(Origin::Fraction { .. })
    ));
}

#[test]
fn library_calls() {
    assert_eq!(ty("return tonumber(ARGV[1])"), Ty::NUMBER.union(Ty::NIL));
    assert_eq!(ty("return tonumber(ARGV[1]) or 0"), Ty::NUMBER);
    assert_eq!(ty("return tostring(1)"), Ty::STRING);
    assert_eq!(ty("return math.floor(1 / 2)"), Ty::INT);
    assert_eq!(ty("return math.max(1, 2)"), Ty::INT);
    assert_eq!(ty("return string.format('%d', 1)"), Ty::STRING);
    assert_eq!(ty("return ARGV[1]:sub(1, 2)"), Ty::STRING);
    assert_eq!(ty("return cjson.decode(ARGV[1])"), Ty::ANY);
}

#[test]
fn replies_and_defaults() {
    let get = returned("return redis.call('GET', KEYS[1])");
    assert_eq!(get.ty, Ty::STRING.union(Ty::FALSE));
    assert_eq!(get.reply().map(|r| r.0), Some("GET"));
    assert_eq!(ty("return redis.call('GET', KEYS[1]) or '0'"), Ty::STRING);
    assert_eq!(
        ty("return redis.pcall('INCR', KEYS[1])"),
        Ty::INT.union(Ty::ERROR)
    );
    assert_eq!(ty("return redis.call('HGETALL', KEYS[1])"), Ty::PAIRS);
    assert_eq!(ty("return redis.call('SET', KEYS[1], 1).ok"), Ty::STRING);
    assert_eq!(ty("return redis.call('EVAL', 'return 1', 0)"), Ty::ANY);
    assert_eq!(
        ty("return redis.call('EXISTS', KEYS[1]) == 1 and 'a' or 'b'"),
        Ty::STRING
    );
    let cursor = returned("return redis.call('SCAN', 0)[1]");
    assert_eq!(cursor.ty, Ty::STRING);
    assert!(matches!(cursor.origin, Some(Origin::Cursor { .. })));
}

#[test]
fn replies_after_setresp_3_have_resp3_shapes() {
    assert_eq!(
        ty("redis.setresp(3) return redis.call('GET', KEYS[1])"),
        Ty::STRING.union(Ty::NIL)
    );
    assert_eq!(
        ty("redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn h"),
        Ty::MAP
    );
    assert_eq!(
        ty("redis.setresp(3) return redis.call('ZSCORE', KEYS[1], 'm').double"),
        Ty::NUMBER
    );
    assert_eq!(
        ty("redis.setresp(3) return redis.call('SMEMBERS', KEYS[1]).set"),
        Ty::TABLE
    );
    assert_eq!(
        ty("redis.setresp(3) return redis.call('INFO').verbatim_string"),
        Ty::TABLE
    );
    assert_eq!(
        ty("redis.setresp(3) return redis.pcall('INCR', KEYS[1])"),
        Ty::INT.union(Ty::ERROR)
    );
    // Integers are integers under both protocols.
    assert_eq!(
        ty("redis.setresp(3) redis.setresp(3) return redis.call('EXISTS', KEYS[1])"),
        Ty::INT
    );
}

#[test]
fn resp3_and_assigned_inputs_are_not_typed() {
    // Switched after a call, back to RESP2, inside a block, computed,
    // or only named: replies are not typed.
    for source in [
        "local a = redis.call('GET', KEYS[1]) redis.setresp(3) return redis.call('GET', KEYS[1])",
        "redis.setresp(3) redis.setresp(2) return redis.call('GET', KEYS[1])",
        "if ARGV[1] then redis.setresp(3) end return redis.call('GET', KEYS[1])",
        "redis.setresp(tonumber(ARGV[1])) return redis.call('GET', KEYS[1])",
        "-- redis.setresp(3) is not used\nreturn redis.call('GET', KEYS[1])",
        "local function f() return redis.call('GET', KEYS[1]) end redis.setresp(3) local v = redis.call('GET', KEYS[1]) return v",
    ] {
        assert_eq!(ty(source), Ty::ANY, "{source}");
    }
    assert_eq!(ty("ARGV[1] = tonumber(ARGV[1]) return ARGV[1]"), Ty::ANY);
    assert_eq!(
        ty("local ARGV = {1} ARGV[1] = 2 return KEYS[1]"),
        Ty::STRING
    );
}

#[test]
fn numbers_keep_their_range() {
    let micros =
        probes("local t = redis.call('TIME') probe(tonumber(t[1]) * 1000000 + tonumber(t[2]))");
    assert!(micros[0].range.lo >= 1e15, "{:?}", micros[0].range);
    let seconds = probes("local s = math.floor(tonumber(ARGV[1]) / 1000) probe(s)");
    assert!(matches!(seconds[0].origin, Some(Origin::Rounded { .. })));
    let positive = probes("local n = tonumber(ARGV[1]) if n <= 0 then return end probe(n)");
    assert!(positive[0].range.lo > 0.0, "{:?}", positive[0].range);
    let huge = probes("probe(math.huge)");
    assert!(matches!(huge[0].origin, Some(Origin::Fraction { .. })));
}

#[test]
fn long_conditions_cost_their_length() {
    let terms: Vec<String> = (0..400).map(|i| format!("v{} ~= ARGV[1]", i % 3)).collect();
    let source = format!(
        "local v0, v1, v2 = redis.call('GET', KEYS[1]), 1, 2\nif {} then probe(v0) end\nlocal w = {} or probe(v0)",
        terms.join(" and "),
        terms.join(" or ")
    );
    let started = std::time::Instant::now();
    assert_eq!(probe_types(&source).len(), 2);
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
}
