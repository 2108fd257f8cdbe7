//! The engine's tests: what it says of values, through locals, fields,
//! reply elements, loops, branches and functions.

use super::*;
use crate::calls::{Tree, redis_calls};
use crate::{parse, scope};
use full_moon::ast::LastStmt;

/// What the inference says about the main chunk's last `return`.
fn returned(source: &str) -> Inferred {
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
        panic!("no return in {source}");
    };
    types.of(ret.returns().iter().next().expect("a value"))
}

fn ty(source: &str) -> Ty {
    returned(source).ty
}

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

/// The value of the argument of each `probe(...)` call, in source order.
fn probes(source: &str) -> Vec<Inferred> {
    use full_moon::visitors::Visitor;
    struct Probes<'t, 'a> {
        types: &'t Types<'a>,
        found: Vec<(usize, Inferred)>,
    }
    impl Visitor for Probes<'_, '_> {
        fn visit_function_call(&mut self, call: &FunctionCall) {
            let suffixes: Vec<&Suffix> = call.suffixes().collect();
            if let (Prefix::Name(name), [Suffix::Call(Call::AnonymousCall(args))]) =
                (call.prefix(), suffixes.as_slice())
                && name.token().to_string() == "probe"
                && let FunctionArgs::Parentheses { arguments, .. } = &**args
                && let Some(arg) = arguments.iter().next()
            {
                let at = name.start_position().map_or(0, |p| p.bytes());
                self.found.push((at, self.types.of(arg)));
            }
        }
    }
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let mut probes = Probes {
        types: &types,
        found: Vec::new(),
    };
    probes.visit_ast(&ast);
    probes.found.sort_by_key(|(at, _)| *at);
    probes.found.into_iter().map(|(_, v)| v).collect()
}

fn probe_types(source: &str) -> Vec<Ty> {
    probes(source).into_iter().map(|v| v.ty).collect()
}

const GET: &str = "local v = redis.call('GET', KEYS[1])\n";

#[test]
fn a_guard_removes_false_and_nothing_else() {
    let string = Ty::STRING;
    let maybe = Ty::STRING.union(Ty::FALSE);
    for (body, expected) in [
        ("probe(v)", vec![maybe]),
        ("if v then probe(v) end probe(v)", vec![string, maybe]),
        ("if not v then return 0 end probe(v)", vec![string]),
        ("if v == false then return 0 end probe(v)", vec![string]),
        (
            "if v ~= false then probe(v) else probe(v) end",
            vec![string, Ty::FALSE],
        ),
        ("if v and probe(v) then end", vec![string]),
        ("local w = v or probe(v)", vec![Ty::FALSE]),
        (
            "if type(v) ~= 'string' then return end probe(v)",
            vec![string],
        ),
        ("if not v or v == '' then return end probe(v)", vec![string]),
        ("assert(v) probe(v)", vec![string]),
        ("if not v then error('missing') end probe(v)", vec![string]),
        ("if not v then v = '0' end probe(v)", vec![string]),
        ("if x then v = 1 end probe(v)", vec![maybe.union(Ty::INT)]),
        ("if tonumber(v) then probe(v) end", vec![string]),
        ("if v > 'a' then end probe(v)", vec![string]),
        // Never reached: no value.
        ("if false and probe(v) then end", vec![Ty::EMPTY]),
        ("if v == nil then probe(v) end", vec![Ty::EMPTY]),
    ] {
        let source = format!("{GET}{body}");
        assert_eq!(probe_types(&source), expected, "{source}");
    }
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
fn loops_settle_and_ranges_widen() {
    let n = probes("local n = 0 while redis.call('LPOP', KEYS[1]) do n = n + 1 end probe(n)");
    assert_eq!(n[0].ty, Ty::INT);
    assert_eq!(n[0].range, Range::new(0.0, f64::INFINITY));
    let v = probe_types(&format!(
        "{GET}for i = 1, 3 do probe(v) v = redis.call('GET', KEYS[i]) or 'x' end probe(v)"
    ));
    assert_eq!(
        v,
        vec![Ty::STRING.union(Ty::FALSE), Ty::STRING.union(Ty::FALSE)]
    );
    let i = probes("for i = 1, 10 do probe(i) end");
    assert_eq!(i[0].range, Range::new(1.0, 10.0));
    let broke = probe_types(&format!(
        "{GET}while true do if v then break end v = redis.call('GET', KEYS[2]) end probe(v)"
    ));
    assert_eq!(broke, vec![Ty::STRING]);
}

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

#[test]
fn a_guard_on_an_element_of_a_reply_keeps_what_the_element_is() {
    let found = probes(
        "local r = redis.call('HMGET', KEYS[1], 'a', 'b')\nif r[1] then probe(r[1]) end\nif r[2] and ARGV[1] then probe(r[2]) end",
    );
    assert_eq!(found.len(), 2);
    for value in found {
        assert_eq!(value.ty, Ty::STRING);
        assert_eq!(
            value.origin,
            Some(Origin::Element {
                command: "HMGET".to_string()
            })
        );
    }
}

#[test]
fn a_table_filled_in_a_loop_over_a_reply_is_as_long_as_the_reply() {
    let source = "local out = {}\nfor _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  if id ~= ARGV[1] then table.insert(out, id) end\nend\nreturn out";
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
        panic!("no return");
    };
    let fields = types
        .table_fields(ret.returns().iter().next().expect("a value"))
        .expect("followed");
    assert!(matches!(
        fields.filled_from,
        Some(Origin::Reply { ref command, .. }) if command == "SMEMBERS"
    ));
    // Filled from the inputs: no reply.
    let source = "local out = {}\nfor _, k in ipairs(KEYS) do table.insert(out, k) end\nreturn out";
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
        panic!("no return");
    };
    let fields = types
        .table_fields(ret.returns().iter().next().expect("a value"))
        .expect("followed");
    assert_eq!(fields.filled_from, None);
}

/// The followed fields of the table the main chunk's last `return` gives.
fn returned_fields(source: &str) -> Option<TableFields> {
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let calls = redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    });
    let types = Types::build(source, &ast, &model, &calls, None);
    let Some(LastStmt::Return(ret)) = ast.nodes().last_stmt() else {
        panic!("no return in {source}");
    };
    types.table_fields(ret.returns().iter().next().expect("a value"))
}

#[test]
fn a_name_set_on_one_path_survives_the_join_as_maybe_nil() {
    for source in [
        // Two constructors.
        "local r
if ARGV[1] == 'a' then r = {ok = 1} else r = {0} end
return r",
        // A store on one path.
        "local r = {}
if ARGV[1] == 'a' then r.owner = ARGV[2] end
return r",
        // A store on some rounds of a loop.
        "local r = {}
for _, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then r.found = k end
end
return r",
    ] {
        let fields = returned_fields(source).expect("followed");
        let [(name, value)] = fields.names_with_values.as_slice() else {
            panic!("{source}: {:?}", fields.names_with_values);
        };
        assert!(
            value.ty.intersects(Ty::NIL) && !value.ty.within(Ty::NIL),
            "{source}: {name} is {:?}",
            value.ty
        );
    }
    // Set on every path: not nil.
    let fields = returned_fields(
        "local r = {}
if ARGV[1] == 'a' then r.n = 1 else r.n = 2 end
return r",
    )
    .expect("followed");
    assert_eq!(fields.names_with_values[0].1.ty, Ty::INT);
    // A store at a key computed as a string may add any name: a name of
    // one path only is nil on the other, or what that path stored there.
    let fields = returned_fields(
        "local r = {}
if ARGV[1] == 'a' then r.n = 1 else r[ARGV[2]] = 'x' end
return r",
    )
    .expect("followed");
    assert_eq!(fields.names, ["n"]);
    assert_eq!(
        fields.names_with_values[0].1.ty,
        Ty::INT.union(Ty::NIL).union(Ty::STRING)
    );
    // At a key that may be a position, the names are no longer known.
    let fields = returned_fields(
        "local r = {}
if ARGV[1] == 'a' then r.n = 1 else r[tonumber(ARGV[2])] = 2 end
return r",
    )
    .expect("followed");
    assert!(fields.names.is_empty(), "{:?}", fields.names);
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
fn a_join_keeps_the_origin_that_may_be_false() {
    let command = |v: &Inferred| match &v.origin {
        Some(Origin::Reply { command, .. }) => Some(command.clone()),
        Some(Origin::Tonumber { of: Some(of) }) => match &**of {
            Origin::Reply { command, .. } => Some(format!("tonumber {command}")),
            _ => None,
        },
        _ => None,
    };
    for (source, expected) in [
        // A literal on the other path.
        (
            "local v\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) else v = 'x' end\nprobe(v)",
            Some("GET"),
        ),
        // An input on the other path.
        (
            "local v = ARGV[2]\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) end\nprobe(v)",
            Some("GET"),
        ),
        // Two replies that may both be nil: the first is named.
        (
            "local v\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) else v = redis.call('HGET', KEYS[1], 'f') end\nprobe(v)",
            Some("GET"),
        ),
        (
            "local v = redis.call('GET', KEYS[1])\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[2]) end\nprobe(v)",
            Some("GET"),
        ),
        // `tonumber` of an input, or of a reply that may be nil.
        (
            "local v = tonumber(ARGV[2])\nif ARGV[1] == 'a' then v = tonumber(redis.call('GET', KEYS[1])) end\nprobe(v)",
            Some("tonumber GET"),
        ),
        // In a loop: the reply of the last round, or the start value.
        (
            "local v = ARGV[2]\nfor i = 1, 3 do v = redis.call('LPOP', KEYS[1]) end\nprobe(v)",
            Some("LPOP"),
        ),
        // A reply that is never nil, and an input: nothing explains one side.
        (
            "local v = ARGV[2]\nif ARGV[1] == 'a' then v = redis.call('INCR', KEYS[1]) end\nprobe(v)",
            None,
        ),
        // Guarded on its path: the other side's origin is not falsy either.
        (
            "local v = ARGV[2]\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) or '0' end\nprobe(v)",
            None,
        ),
        // Two arrays: neither may be nil, and Lua sees both alike, so the
        // join stays a reply (of one of them).
        (
            "local v = redis.call('LRANGE', KEYS[1], 0, -1)\nif ARGV[1] == 'a' then v = redis.call('SMEMBERS', KEYS[2]) end\nprobe(v)",
            Some("SMEMBERS"),
        ),
        // A reply and a number of another shape: nothing.
        (
            "local v = redis.call('LRANGE', KEYS[1], 0, -1)\nif ARGV[1] == 'a' then v = redis.call('INCR', KEYS[2]) end\nprobe(v)",
            None,
        ),
    ] {
        let found = probes(source);
        assert_eq!(found.len(), 1, "{source}");
        assert_eq!(
            command(&found[0]).as_deref(),
            expected,
            "{source}: {found:?}"
        );
    }
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
