use super::*;
use crate::{Options, analyze, parse, scope};

fn calls(source: &str) -> Vec<RedisCall> {
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    redis_calls(&Tree {
        source,
        ast: &ast,
        model: &model,
    })
}

/// The calls and escapes found with every alias known before the
/// walk (a first walk collects them): what one walk must find.
fn with_aliases_first(source: &str) -> (Vec<RedisCall>, bool) {
    let ast = parse::parse(source).expect("parses");
    let model = scope::Model::build(&ast);
    let cx = Tree {
        source,
        ast: &ast,
        model: &model,
    };
    let mut first = CallFinder {
        cx: &cx,
        aliases: HashMap::new(),
        followed: HashSet::new(),
        calls: Vec::new(),
        escapes: false,
    };
    first.visit_ast(&ast);
    let mut second = CallFinder {
        cx: &cx,
        aliases: first.aliases,
        followed: first.followed,
        calls: Vec::new(),
        escapes: false,
    };
    second.visit_ast(&ast);
    second.calls.sort_by_key(|c| c.span.start.offset);
    (second.calls, second.escapes)
}

proptest::proptest! {
    /// Aliases declared, used, reassigned and shadowed in any order:
    /// one walk finds what it finds knowing every alias beforehand.
    #[test]
    fn one_walk_finds_the_calls_that_knowing_the_aliases_first_finds(
        parts in proptest::collection::vec(proptest::sample::select(vec![
            "local c = redis.call\n",
            "local p, q = redis.pcall, redis.call\n",
            "c = nil\n",
            "c('GET', KEYS[1])\n",
            "p('SET', KEYS[1], 'v')\n",
            "q('DEL', KEYS[2])\n",
            "local function f() return c('INCR', KEYS[1]) end\n",
            "do local c = redis.call c('HGET', KEYS[1], 'f') end\n",
            "local r = { redis.call }\n",
            "pcall(redis.call, 'GET', KEYS[1])\n",
            "redis.call('EXISTS', KEYS[1])\n",
            "local c = c\n",
        ]), 0..10),
    ) {
        let source = parts.concat();
        let ast = parse::parse(&source).expect("parses");
        let model = scope::Model::build(&ast);
        let one = redis_calls_escaping(&Tree {
            source: &source,
            ast: &ast,
            model: &model,
        });
        proptest::prop_assert_eq!(one, with_aliases_first(&source), "{}", source);
    }
}

fn args(call: &RedisCall) -> Vec<String> {
    call.args
        .iter()
        .map(|a| match a {
            CallArg::Literal(v, _) => format!("{v:?}"),
            CallArg::Key(n, _) => format!("KEYS[{n}]"),
            CallArg::Expr(s) => format!("expr@{}", s.start.offset),
            CallArg::Spread(s) => format!("spread@{}", s.start.offset),
        })
        .collect()
}

#[test]
fn finds_calls_and_pcalls() {
    let src =
        "local v = redis.call('GET', KEYS[1])\nreturn redis.pcall(\"SET\", KEYS[2], v, 'PX', 100)";
    let found = calls(src);
    assert_eq!(found.len(), 2);
    assert!(!found[0].pcall && found[1].pcall);
    assert_eq!(args(&found[0]), [r#""GET""#, "KEYS[1]"]);
    assert_eq!(
        args(&found[1]),
        [r#""SET""#, "KEYS[2]", "expr@72", r#""PX""#, r#""100""#]
    );
    assert_eq!(
        &src[found[0].span.start.offset..found[0].span.end.offset],
        "redis.call('GET', KEYS[1])"
    );
    assert_eq!(
        &src[found[0].callee.start.offset..found[0].callee.end.offset],
        "redis.call"
    );
    assert_eq!(found[0].command_name(), Some("GET"));
}

#[test]
fn literals_are_unescaped() {
    let src = r#"redis.call('a\tb', "q\"\65\066\\", [[
long]], [==[x]]==], 0x10, 1e2, 2.5, '\
')"#;
    let found = calls(src);
    assert_eq!(
        args(&found[0]),
        [
            r#""a\tb""#,
            r#""q\"AB\\""#,
            r#""long""#,
            r#""x]""#,
            r#""16""#,
            r#""100""#,
            r#""2.5""#,
            r#""\n""#
        ]
    );
}

#[test]
fn spreads_only_in_last_position() {
    let found = calls(
        "local function f(...) return redis.call('DEL', unpack(KEYS)) end\nredis.call('MGET', f(), ...)\nredis.call('X', (f()))",
    );
    assert!(matches!(found[0].args[1], CallArg::Spread(_)));
    assert!(matches!(found[1].args[1], CallArg::Expr(_)));
    assert!(matches!(found[1].args[2], CallArg::Spread(_)));
    assert!(
        matches!(found[2].args[1], CallArg::Expr(_)),
        "parentheses keep one value"
    );
}

#[test]
fn keys_need_a_literal_positive_index() {
    let found = calls(
        "local i = 1\nredis.call('GET', KEYS[i]); redis.call('GET', KEYS[0]); redis.call('GET', KEYS[3] .. ':x'); redis.call('GET', (KEYS[2]))",
    );
    assert!(matches!(found[0].args[1], CallArg::Expr(_)));
    assert!(matches!(found[1].args[1], CallArg::Expr(_)));
    assert!(matches!(found[2].args[1], CallArg::Expr(_)));
    assert!(matches!(found[3].args[1], CallArg::Key(2, _)));
}

#[test]
fn other_spellings() {
    let found = calls(
        "redis['call']('PING'); redis.call 'PING'; local x = redis.call('HGETALL', KEYS[1])[1]; pcall(redis.call, 'INCR', KEYS[1])",
    );
    assert_eq!(found.len(), 4);
    assert_eq!(args(&found[1]), [r#""PING""#]);
    assert_eq!(found[2].command_name(), Some("HGETALL"));
    assert!(found[3].pcall);
    assert_eq!(args(&found[3]), [r#""INCR""#, "KEYS[1]"]);
}

#[test]
fn aliases_never_reassigned_are_followed() {
    let found = calls(
        "local rcall = redis.call\nlocal p = redis.pcall\nreturn rcall('GET', KEYS[1]), p('TYPE', KEYS[1])",
    );
    assert_eq!(found.len(), 2);
    assert!(!found[0].pcall && found[1].pcall);
    let found = calls("local rcall = redis.call\nrcall = print\nreturn rcall('GET', KEYS[1])");
    assert!(found.is_empty());
}

#[test]
fn shadowed_redis_is_not_redis() {
    let found = calls("local redis = {call = function() end}\nredis.call('NOPE')");
    assert!(found.is_empty());
}

#[test]
fn info_records_the_line_of_each_literal_command() {
    let source = "local n = redis.call('GET', KEYS[1])\n\
                  local ok = redis.pcall('hset', KEYS[1], 'f', 1)\n\
                  redis.call(ARGV[1], KEYS[1])\n\
                  redis.call('DEL', KEYS[1]); redis.call('Publish', 'c', 'm')\n\
                  local call = redis.call\n\
                  call(\n  'incr', KEYS[1])\n\
                  return redis.call(\n\
                    'pexpire', KEYS[1], 10)\n";
    let report = analyze(source, &Options::default());
    let lines: Vec<(usize, &str)> = report
        .info
        .command_lines
        .iter()
        .map(|(line, name)| (*line, name.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (1, "get"),
            (2, "hset"),
            (4, "del"),
            (4, "publish"),
            (6, "incr"),
            (8, "pexpire"),
        ]
    );
}

#[test]
fn info_records_commands_and_writes() {
    let writes = |src: &str| analyze(src, &Options::default()).info.writes;
    assert!(writes("local r = redis; return r.call('GET', KEYS[1])"));
    assert!(writes("return redis[ARGV[1]]('GET', KEYS[1])"));
    assert!(!writes(
        "return redis.sha1hex(ARGV[1]), redis['call']('GET', KEYS[1])"
    ));
    let report = analyze("return redis.call('GET', KEYS[1])", &Options::default());
    assert_eq!(report.info.commands.iter().collect::<Vec<_>>(), ["get"]);
    assert!(!report.info.writes);
    let report = analyze(
        "redis.call('Get', KEYS[1]); redis.call('PUBLISH', 'c', 'm')",
        &Options::default(),
    );
    assert_eq!(
        report.info.commands.iter().collect::<Vec<_>>(),
        ["get", "publish"]
    );
    assert!(report.info.writes);
    assert!(
        analyze("return redis.call(ARGV[1], KEYS[1])", &Options::default())
            .info
            .writes
    );
    assert!(
        analyze(
            "local t = {f = redis.call}; return t.f('SET', KEYS[1], 1)",
            &Options::default()
        )
        .info
        .writes
    );
    assert!(
        !analyze(
            "local c = redis.call; return c('GET', KEYS[1])",
            &Options::default()
        )
        .info
        .writes
    );
    assert!(
        analyze(
            "local c = redis.call; return c('DEL', KEYS[1])",
            &Options::default()
        )
        .info
        .writes
    );
    assert!(
        analyze(
            "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$')",
            &Options::default()
        )
        .info
        .writes
    );
    assert!(
        !analyze(
            "redis.call('XINFO', 'STREAM', KEYS[1])",
            &Options::default()
        )
        .info
        .writes
    );
    assert!(
        analyze(
            "redis.call('XGROUP', ARGV[1], KEYS[1], 'g', '$')",
            &Options::default()
        )
        .info
        .writes
    );
}
