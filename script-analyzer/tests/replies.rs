//! The reply-type table against a real `redis-server`: each call is run from
//! a script, under RESP2 and after `redis.setresp(3)`, and the shape Lua
//! receives must be one the table predicts for those arguments.

mod support;

use redlua_analyzer::commands::ArgShape;
use redlua_analyzer::replies::{self, LuaTypes, Protocol};
use support::{Conn, Reply, Server};

/// Runs `redis.call(unpack(ARGV))` and names the shape of its result.
const PROBE: &str = "local r = redis.call(unpack(ARGV))\n\
    if type(r) == 'table' then\n\
      if r.ok then return 'status' end\n\
      return 'table'\n\
    end\n\
    return tostring(type(r) == 'boolean' and tostring(r) or type(r))";

/// A call and the shape Lua gets, on the data `SETUP` writes.
const CALLS: &[(&[&str], &str)] = &[
    (&["GET", "s"], "string"),
    (&["GET", "missing"], "false"),
    (&["EXISTS", "s"], "number"),
    (&["INCR", "n"], "number"),
    (&["INCRBYFLOAT", "f", "1.5"], "string"),
    (&["EXPIRE", "s", "100"], "number"),
    (&["TTL", "s"], "number"),
    (&["TYPE", "s"], "status"),
    (&["TYPE", "missing"], "status"),
    (&["SET", "k", "v"], "status"),
    (&["SET", "k", "v", "NX"], "false"),
    (&["SET", "k2", "v", "NX"], "status"),
    (&["SET", "k", "v", "XX", "EX", "100"], "status"),
    (&["SET", "k", "w", "GET"], "string"),
    (&["SET", "k3", "v", "GET"], "false"),
    (&["HGET", "h", "f"], "string"),
    (&["HGET", "h", "nope"], "false"),
    (&["HGETALL", "h"], "table"),
    (&["HRANDFIELD", "h"], "string"),
    (&["HRANDFIELD", "h", "1", "WITHVALUES"], "table"),
    (&["LPOP", "l"], "string"),
    (&["LPOP", "l", "2"], "table"),
    (&["LPOP", "missing", "2"], "false"),
    (&["RPOP", "missing"], "false"),
    (&["LPOS", "l2", "a"], "number"),
    (&["LPOS", "l2", "zz"], "false"),
    (&["LPOS", "l2", "a", "COUNT", "0"], "table"),
    (&["SPOP", "st"], "string"),
    (&["SRANDMEMBER", "st", "2"], "table"),
    (&["ZRANGE", "z", "0", "-1"], "table"),
    (&["ZRANGE", "z", "0", "-1", "WITHSCORES"], "table"),
    (&["ZSCORE", "z", "m"], "string"),
    (&["ZSCORE", "z", "nope"], "false"),
    (&["ZADD", "z", "3", "o"], "number"),
    (&["ZADD", "z", "INCR", "1", "m"], "string"),
    (&["ZADD", "z", "NX", "INCR", "1", "m"], "false"),
    (&["ZRANK", "z", "m"], "number"),
    (&["ZRANK", "missing", "m"], "false"),
    (&["ZPOPMIN", "z"], "table"),
    (&["ZRANDMEMBER", "z", "1", "WITHSCORES"], "table"),
    (&["PING"], "status"),
    (&["PING", "hi"], "string"),
    (&["XADD", "x2", "NOMKSTREAM", "*", "f", "v"], "false"),
    (&["XADD", "x", "*", "f", "v"], "string"),
    (&["XREAD", "STREAMS", "x", "0"], "table"),
    (&["XREAD", "STREAMS", "missing", "0"], "false"),
    (&["SCAN", "0"], "table"),
    (&["OBJECT", "ENCODING", "s"], "string"),
    (&["OBJECT", "ENCODING", "missing"], "false"),
    (&["SORT", "l2", "ALPHA"], "table"),
    (&["SORT", "l2", "ALPHA", "STORE", "sorted"], "number"),
    (&["LCS", "a1", "a2"], "string"),
    (&["LCS", "a1", "a2", "LEN"], "number"),
    (&["LCS", "a1", "a2", "IDX"], "table"),
];

const SETUP: &[&[&str]] = &[
    &["SET", "s", "v"],
    &["SET", "k", "v"],
    &["SET", "a1", "ohmytext"],
    &["SET", "a2", "mynewtext"],
    &["HSET", "h", "f", "v"],
    &["RPUSH", "l", "a", "b", "c", "d"],
    &["RPUSH", "l2", "a", "b", "a"],
    &["SADD", "st", "a", "b", "c"],
    &["ZADD", "z", "1", "m", "2", "n"],
];

/// The shape names `PROBE` returns for what the table predicts.
fn names(types: LuaTypes) -> Vec<&'static str> {
    types
        .iter()
        .map(|shape| match shape {
            LuaTypes::NUMBER => "number",
            LuaTypes::STRING => "string",
            LuaTypes::FALSE => "false",
            LuaTypes::STATUS => "status",
            _ => "table",
        })
        .collect()
}

#[test]
fn replies_match_a_real_server() {
    let server = Server::start();
    let mut conn = Conn::new(server.port());
    for command in SETUP {
        let reply = conn.call(command);
        assert!(matches!(reply, Reply::Ok(_)), "{command:?}: {reply:?}");
    }
    let mut wrong = Vec::new();
    for (call, expected) in CALLS {
        let mut command = vec!["EVAL", PROBE, "0"];
        command.extend_from_slice(call);
        let observed = match conn.call(&command) {
            Reply::Ok(shape) => shape,
            Reply::Error(e) => panic!("{call:?}: {e}"),
        };
        assert_eq!(observed, *expected, "{call:?}: the server changed");
        let shapes: Vec<ArgShape<'_>> = call.iter().map(|a| ArgShape::Literal(a)).collect();
        let predicted = replies::of_call(&shapes).unwrap_or_else(|| panic!("{call:?}: unknown"));
        if !names(predicted).contains(&observed.as_str()) {
            wrong.push(format!(
                "{call:?}: Lua got {observed}, the table says {predicted:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Switches to RESP3, runs `redis.call(unpack(ARGV))` and names the shape of
/// its result.
const PROBE3: &str = "redis.setresp(3)\n\
    local r = redis.call(unpack(ARGV))\n\
    if r == nil then return 'nil' end\n\
    if type(r) == 'table' then\n\
      for _, field in ipairs({'ok', 'map', 'set', 'double', 'big_number', 'verbatim_string'}) do\n\
        if r[field] ~= nil then return field end\n\
      end\n\
      return 'table'\n\
    end\n\
    return type(r)";

/// A call and the shape Lua gets under RESP3, on the data `SETUP` writes.
const CALLS3: &[(&[&str], &str)] = &[
    (&["GET", "s"], "string"),
    (&["GET", "missing"], "nil"),
    (&["EXISTS", "s"], "number"),
    (&["INCRBYFLOAT", "f3", "1.5"], "string"),
    (&["TYPE", "s"], "ok"),
    (&["SET", "k", "v"], "ok"),
    (&["SET", "k", "v", "NX"], "nil"),
    (&["SET", "k", "w", "GET"], "string"),
    (&["HGET", "h", "nope"], "nil"),
    (&["HGETALL", "h"], "map"),
    (&["HGETALL", "missing"], "map"),
    (&["HRANDFIELD", "h", "1", "WITHVALUES"], "table"),
    (&["LPOP", "l3", "2"], "table"),
    (&["LPOP", "missing", "2"], "nil"),
    (&["SMEMBERS", "st"], "set"),
    (&["SINTER", "st"], "set"),
    (&["SUNION", "st"], "set"),
    (&["SDIFF", "st"], "set"),
    (&["SPOP", "st3", "1"], "set"),
    (&["SPOP", "missing"], "nil"),
    (&["SRANDMEMBER", "st", "2"], "table"),
    (&["HKEYS", "h"], "table"),
    (&["ZRANGE", "z", "0", "-1"], "table"),
    (&["ZRANGE", "z", "0", "-1", "WITHSCORES"], "table"),
    (&["ZSCORE", "z", "m"], "double"),
    (&["ZSCORE", "z", "nope"], "nil"),
    (&["ZINCRBY", "z", "1", "n"], "double"),
    (&["ZADD", "z", "INCR", "1", "m"], "double"),
    (&["ZADD", "z", "NX", "INCR", "1", "m"], "nil"),
    (&["ZRANK", "missing", "m"], "nil"),
    (&["ZPOPMIN", "z3"], "table"),
    (&["ZMSCORE", "z", "m", "nope"], "table"),
    (&["XREAD", "STREAMS", "x", "0"], "map"),
    (&["XREAD", "STREAMS", "missing", "0"], "nil"),
    (&["OBJECT", "ENCODING", "missing"], "nil"),
    (&["LCS", "a1", "a2", "IDX"], "map"),
    (&["PING"], "ok"),
    (&["INFO", "server"], "verbatim_string"),
    (
        &["LOLWUT", "VERSION", "5", "1", "1", "1"],
        "verbatim_string",
    ),
    (&["GEODIST", "g", "a", "b"], "string"),
];

const SETUP3: &[&[&str]] = &[
    &["RPUSH", "l3", "a", "b", "c"],
    &["SADD", "st3", "a", "b"],
    &["ZADD", "z3", "1", "m"],
    &["XADD", "x", "*", "f", "v"],
    &["GEOADD", "g", "13.36", "38.11", "a", "15.08", "37.50", "b"],
];

/// The shape names `PROBE3` returns for what the table predicts.
fn names3(types: LuaTypes) -> Vec<&'static str> {
    types
        .iter()
        .map(|shape| match shape {
            LuaTypes::NUMBER => "number",
            LuaTypes::STRING => "string",
            LuaTypes::NIL => "nil",
            LuaTypes::STATUS => "ok",
            LuaTypes::MAP => "map",
            LuaTypes::SET => "set",
            LuaTypes::DOUBLE => "double",
            LuaTypes::BOOLEAN => "boolean",
            LuaTypes::BIG_NUMBER => "big_number",
            LuaTypes::VERBATIM => "verbatim_string",
            _ => "table",
        })
        .collect()
}

#[test]
fn resp3_replies_match_a_real_server() {
    let server = Server::start();
    let mut conn = Conn::new(server.port());
    for command in SETUP.iter().chain(SETUP3) {
        let reply = conn.call(command);
        assert!(matches!(reply, Reply::Ok(_)), "{command:?}: {reply:?}");
    }
    let mut wrong = Vec::new();
    for (call, expected) in CALLS3 {
        let mut command = vec!["EVAL", PROBE3, "0"];
        command.extend_from_slice(call);
        let observed = match conn.call(&command) {
            Reply::Ok(shape) => shape,
            Reply::Error(e) => panic!("{call:?}: {e}"),
        };
        assert_eq!(observed, *expected, "{call:?}: the server changed");
        let shapes: Vec<ArgShape<'_>> = call.iter().map(|a| ArgShape::Literal(a)).collect();
        let predicted = replies::of_call_in(Protocol::Resp3, &shapes)
            .unwrap_or_else(|| panic!("{call:?}: unknown"));
        if !names3(predicted).contains(&observed.as_str()) {
            wrong.push(format!(
                "{call:?}: Lua got {observed}, the RESP3 table says {predicted:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
