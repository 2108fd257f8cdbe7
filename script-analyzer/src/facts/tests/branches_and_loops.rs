//! Values through branches and loops: guards, joins of paths, loops that settle.

use super::{GET, probe_types, probes};
use crate::calls::{Tree, redis_calls};
use crate::facts::*;
use crate::{parse, scope};
use full_moon::ast::LastStmt;

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
