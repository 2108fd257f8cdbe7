use super::*;
use ArgShape::{Literal as L, Spread, Value};

fn keys(command: &str, args: &[ArgShape<'_>]) -> Vec<usize> {
    lookup(command).unwrap().key_positions(args)
}

#[test]
fn leading_integer_arguments_are_those_the_json_types_as_integers() {
    for (command, places) in [
        ("expire", &[1][..]),
        ("pexpireat", &[1]),
        ("setex", &[1]),
        ("psetex", &[1]),
        ("incrby", &[1]),
        ("decrby", &[1]),
        ("hincrby", &[2]),
        ("lrange", &[1, 2]),
        ("ltrim", &[1, 2]),
        ("getrange", &[1, 2]),
        ("zremrangebyrank", &[1, 2]),
        ("lindex", &[1]),
        ("lset", &[1]),
        ("lrem", &[1]),
        ("setrange", &[1]),
        ("setbit", &[1, 2]),
        ("restore", &[1]),
        ("lpop", &[1]),
        ("spop", &[1]),
        ("srandmember", &[1]),
        ("hrandfield", &[1]),
        ("zpopmin", &[1]),
    ] {
        let found = lookup(command).unwrap();
        for place in 0..5 {
            assert_eq!(
                found.takes_integer(place),
                places.contains(&place),
                "{command} {place}"
            );
        }
    }
    // Scores and increments of sorted sets are doubles.
    assert!(!lookup("zincrby").unwrap().takes_integer(1));
    assert!(!lookup("zadd").unwrap().takes_integer(1));
    assert!(!lookup("incrbyfloat").unwrap().takes_integer(1));
}

#[test]
fn table_is_sorted_and_complete() {
    assert_eq!(ServerTarget::Redis7_0.source().0, "7.0.15");
    for target in ServerTarget::ALL {
        assert!(!target.source().0.is_empty(), "{target}");
    }
    assert!(all().windows(2).all(|w| w[0].name < w[1].name));
    for command in all() {
        assert!(
            command
                .subcommands
                .windows(2)
                .all(|w| w[0].name < w[1].name)
        );
        for sub in command.subcommands {
            assert!(
                sub.name.starts_with(&format!("{}|", command.name)),
                "{}",
                sub.name
            );
        }
    }
    assert!(all().len() > 200, "{}", all().len());
}

#[test]
fn lookups_ignore_case() {
    assert_eq!(lookup("GET").unwrap().name(), "get");
    assert_eq!(lookup("hIncrBy").unwrap().name(), "hincrby");
    assert!(lookup("hincrbyy").is_none());
    assert!(lookup("").is_none());
    assert!(
        lookup("object|encoding").is_none(),
        "a subcommand is not a command"
    );
    let object = lookup("object").unwrap();
    let encoding = object.subcommand("ENCODING").unwrap();
    assert_eq!(encoding.name(), "object|encoding");
    assert_eq!(encoding.display_name(), "OBJECT ENCODING");
    assert!(object.subcommand("nope").is_none());
    assert_eq!(
        lookup("xinfo")
            .unwrap()
            .subcommand("stream")
            .unwrap()
            .arity(),
        -3
    );
    assert!(lookup("client").unwrap().subcommand("kill").is_some());
}

#[test]
fn flags() {
    let set = lookup("set").unwrap();
    assert!(set.is_write() && set.allowed_in_scripts());
    assert!(set.flags().contains(Flags::WRITE.union(Flags::DENYOOM)));
    assert_eq!(format!("{:?}", set.flags()), r#"{"write", "denyoom"}"#);
    assert!(!lookup("get").unwrap().is_write());
    // Scripts treat these as writes though COMMAND does not say so.
    for name in ["publish", "spublish", "pfcount"] {
        let c = lookup(name).unwrap();
        assert!(c.is_write() && !c.flags().contains(Flags::WRITE), "{name}");
    }
    for name in [
        "subscribe",
        "multi",
        "exec",
        "eval",
        "evalsha",
        "fcall",
        "wait",
    ] {
        assert!(!lookup(name).unwrap().allowed_in_scripts(), "{name}");
    }
    let script = lookup("script").unwrap();
    assert!(script.allowed_in_scripts());
    assert!(!script.subcommand("load").unwrap().allowed_in_scripts());
    let xgroup = lookup("xgroup").unwrap();
    assert!(!xgroup.is_write() && xgroup.may_write());
    assert!(xgroup.subcommand("create").unwrap().is_write());
}

#[test]
fn arity_counts_the_name() {
    let get = lookup("get").unwrap();
    assert_eq!(get.arity(), 2);
    assert!(get.accepts(2) && !get.accepts(1) && !get.accepts(3));
    let hset = lookup("hset").unwrap();
    assert_eq!(hset.arity(), -4);
    assert!(!hset.accepts(3) && hset.accepts(4) && hset.accepts(10));
    let encoding = lookup("object").unwrap().subcommand("encoding").unwrap();
    assert!(encoding.accepts(3) && !encoding.accepts(2));
}

#[test]
fn simple_key_positions() {
    assert_eq!(keys("get", &[L("k")]), [0]);
    assert_eq!(keys("set", &[Value, L("v"), L("PX"), L("100")]), [0]);
    assert_eq!(keys("mset", &[L("a"), L("1"), L("b"), L("2")]), [0, 2]);
    assert_eq!(keys("del", &[L("a"), Value, L("c")]), [0, 1, 2]);
    assert_eq!(keys("del", &[L("a"), Spread]), [0]);
    assert_eq!(keys("del", &[Spread]), Vec::<usize>::new());
    assert_eq!(keys("rename", &[L("a"), L("b")]), [0, 1]);
    assert_eq!(
        keys("publish", &[L("channel"), L("msg")]),
        Vec::<usize>::new()
    );
    assert_eq!(
        keys("spublish", &[L("channel"), L("msg")]),
        Vec::<usize>::new()
    );
    assert_eq!(keys("blpop", &[L("a"), L("b"), L("0")]), [0, 1]);
    // With a spread, only what is a key however long it is.
    assert_eq!(keys("blpop", &[L("a"), L("b"), Spread]), [0]);
    assert_eq!(keys("ping", &[]), Vec::<usize>::new());
}

#[test]
fn keynum_key_positions() {
    assert_eq!(
        keys("zunionstore", &[L("dest"), L("2"), L("a"), L("b")]),
        [0, 2, 3]
    );
    assert_eq!(
        keys(
            "zunionstore",
            &[
                L("dest"),
                L("2"),
                L("a"),
                L("b"),
                L("WEIGHTS"),
                L("1"),
                L("2")
            ]
        ),
        [0, 2, 3]
    );
    // An unknown count: only the destination is surely a key.
    assert_eq!(
        keys("zunionstore", &[L("dest"), Value, L("a"), L("b")]),
        [0]
    );
    assert_eq!(
        keys("zunionstore", &[L("dest"), L("2"), L("a"), Spread]),
        [0, 2]
    );
    assert_eq!(keys("lmpop", &[L("2"), L("a"), L("b"), L("LEFT")]), [1, 2]);
    assert_eq!(
        keys("eval_ro", &[L("return 1"), L("1"), L("k"), L("arg")]),
        [2]
    );
    assert_eq!(keys("zunionstore", &[L("dest"), L("x"), L("a")]), [0]);
    assert_eq!(keys("zunionstore", &[L("dest"), L("-3"), L("a")]), [0]);
    let huge = i64::MAX.to_string();
    assert_eq!(keys("zunionstore", &[L("dest"), L(&huge), L("a")]), [0, 2]);
    assert_eq!(keys("lmpop", &[L(&huge), L("a"), Spread]), [1]);
}

#[test]
fn keyword_key_positions() {
    // XREAD COUNT 10 STREAMS a b 0 0
    let args = [
        L("COUNT"),
        L("10"),
        L("STREAMS"),
        L("a"),
        L("b"),
        L("0"),
        L("0"),
    ];
    assert_eq!(keys("xread", &args), [3, 4]);
    let args = [L("count"), L("10"), L("streams"), Value, L("0")];
    assert_eq!(keys("xread", &args), [3]);
    // 'COUNT' is no key, and no STREAMS means no known keys.
    assert_eq!(
        keys("xread", &[L("COUNT"), L("1"), Spread]),
        Vec::<usize>::new()
    );
    let args = [L("GROUP"), L("g"), L("c"), L("STREAMS"), L("s"), L(">")];
    assert_eq!(keys("xreadgroup", &args), [4]);
    // GEORADIUS key lon lat radius m STORE dest
    let args = [
        L("k"),
        L("0"),
        L("0"),
        L("1"),
        L("m"),
        L("STORE"),
        L("dest"),
    ];
    assert_eq!(keys("georadius", &args), [0, 6]);
    // MIGRATE host port "" 0 5000 KEYS a b
    let args = [
        L("h"),
        L("1"),
        L(""),
        L("0"),
        L("5000"),
        L("KEYS"),
        L("a"),
        L("b"),
    ];
    assert_eq!(keys("migrate", &args), [2, 6, 7]);
    // Searching back from an unknown end finds nothing.
    let args = [L("h"), L("1"), L(""), L("0"), L("5000"), L("KEYS"), Spread];
    assert_eq!(keys("migrate", &args), [2]);
}

#[test]
fn subcommand_key_positions() {
    assert_eq!(keys("object", &[L("ENCODING"), L("k")]), [1]);
    assert_eq!(keys("object", &[L("encoding"), Value]), [1]);
    assert_eq!(keys("xinfo", &[L("STREAM"), L("s"), L("FULL")]), [1]);
    assert_eq!(keys("xgroup", &[L("CREATE"), L("s"), L("g"), L("$")]), [1]);
    assert_eq!(
        keys("client", &[L("KILL"), L("ID"), L("1")]),
        Vec::<usize>::new()
    );
    // An unknown subcommand: nothing is known.
    assert_eq!(keys("object", &[Value, L("k")]), Vec::<usize>::new());
}

#[test]
fn key_positions_never_panic() {
    let min = i64::MIN.to_string();
    let max = i64::MAX.to_string();
    let words = [
        "0", "1", "2", "-1", "STREAMS", "KEYS", "STORE", &min, &max, "",
    ];
    let mut commands: Vec<&Command> = all().iter().collect();
    commands.extend(all().iter().flat_map(|c| c.subcommands()));
    for command in commands {
        let prefix: Vec<ArgShape<'_>> = command
            .name()
            .split('|')
            .skip(1)
            .map(ArgShape::Literal)
            .collect();
        for len in 0..8 {
            for word in words {
                for tail in [None, Some(Value), Some(Spread)] {
                    let mut args = prefix.clone();
                    args.extend(std::iter::repeat_n(L(word), len));
                    args.extend(tail);
                    for p in command.key_positions(&args) {
                        assert!(p < args.len(), "{} {args:?}", command.name());
                    }
                }
            }
        }
    }
}

#[test]
fn suggestions() {
    assert_eq!(suggest("hincrbyy"), Some("hincrby"));
    assert_eq!(suggest("HGTE"), Some("hget"));
    assert_eq!(suggest("zzzzzzzzzzz"), None);
    assert_eq!(suggest("get"), None);
}
