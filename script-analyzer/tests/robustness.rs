//! The analyzer never panics and never overflows its stack, whatever it is fed.

use proptest::prelude::*;
use redlua_analyzer::{Declared, Lint, MAX_NESTING, Options, analyze};

fn options() -> Options {
    Options {
        declared: Some(Declared::exact(2, 2)),
        read_only: true,
        returns: Some(redlua_analyzer::ReturnKind::Integer.into()),
        ..Options::default()
    }
}

/// Runs `f` on a thread with a small stack (test threads have 2 MiB; rustc
/// runs proc macros with more), so a deep recursion shows up here first.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{}{}", open.repeat(depth), middle, close.repeat(depth))
}

/// Scripts nested `depth` levels in each of the ways Lua nests.
fn nestings(depth: usize) -> Vec<String> {
    vec![
        format!("return {}", nested("(", "1", ")", depth)),
        format!("return {}", nested("{", "1", "}", depth)),
        nested("do ", "", " end ", depth),
        nested("if true then ", "", " end ", depth),
        nested("while true do ", "", " end ", depth),
        nested("repeat ", "", " until true ", depth),
        nested("for i = 1, 2 do ", "", " end ", depth),
        format!(
            "local f = {}",
            nested("function() return ", "1", " end", depth)
        ),
        format!("return {}", nested("not ", "true", "", depth)),
        format!("return {}", nested("- ", "1", "", depth)),
        format!("return {}", nested("f(", "1", ")", depth)),
        format!("return 1{}", " .. 1".repeat(depth)),
        format!("return {}1", "a[".repeat(depth)) + &"]".repeat(depth),
    ]
}

#[test]
fn long_suffix_chains_are_fine() {
    // Lua parses `a[1][1]...` and `f()()...` in a loop: no nesting.
    on_small_stack(|| {
        for (head, tail) in [
            ("return KEYS", "[1]"),
            ("return f", "()"),
            ("return x", ":m()"),
        ] {
            let long = format!("{head}{}", tail.repeat(5_000));
            assert!(
                analyze(&long, &Options::default())
                    .errors()
                    .all(|d| d.lint != Lint::Syntax)
            );
        }
    });
}

#[test]
fn deep_nesting_is_refused_with_an_error() {
    on_small_stack(|| {
        for script in nestings(5_000) {
            let report = analyze(&script, &options());
            assert!(!report.is_ok(), "{}", &script[..40]);
            if report.diagnostics[0].lint != Lint::Syntax {
                eprintln!("not refused: {}", &script[..60]);
            }
            assert_eq!(
                report.diagnostics[0].lint,
                Lint::Syntax,
                "{}",
                &script[..40]
            );
        }
    });
}

#[test]
fn nesting_up_to_the_limit_is_analyzed() {
    on_small_stack(|| {
        for script in nestings(MAX_NESTING - 10) {
            // Must not crash; whatever it says is fine (most are not valid Redis scripts).
            let _ = analyze(&script, &options());
        }
        let ok = format!("return {}", nested("(", "1", ")", MAX_NESTING - 10));
        assert!(analyze(&ok, &Options::default()).is_ok());
    });
}

#[test]
fn the_refusal_points_at_the_deep_place() {
    let script = format!(
        "local a = 1\nreturn {}",
        nested("(", "1", ")", MAX_NESTING + 5)
    );
    let report = analyze(&script, &Options::default());
    let d = &report.diagnostics[0];
    assert_eq!(d.lint, Lint::Syntax);
    assert_eq!(
        d.message,
        format!("the script nests deeper than {MAX_NESTING} levels")
    );
    let span = d.primary_span().unwrap();
    assert_eq!(span.start.line, 2);
}

#[test]
fn large_inputs_finish() {
    let mut script = String::new();
    for i in 0..20_000 {
        script.push_str(&format!(
            "local v{i} = redis.call('GET', KEYS[1]) .. ARGV[1]\n"
        ));
    }
    script.push_str("return 1\n");
    let report = analyze(&script, &options());
    assert!(report.errors().all(|d| d.lint != Lint::Syntax));
}

#[test]
fn invalid_utf8_lossy_and_odd_bytes() {
    for script in [
        "\u{0}",
        "\u{feff}return 1",
        "return '\\",
        "--[[",
        "[==[",
        "#!lua",
        "#!",
        "\r\n\r",
        "return 0x",
        "a.b.c:d",
    ] {
        let _ = analyze(script, &options());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(source in "\\PC{0,200}") {
        let _ = analyze(&source, &options());
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let source = String::from_utf8_lossy(&bytes);
        let _ = analyze(&source, &options());
    }

    #[test]
    fn never_panics_on_lua_like_token_soup(
        tokens in proptest::collection::vec(
            prop_oneof![
                Just("local"), Just("function"), Just("end"), Just("return"), Just("if"), Just("then"),
                Just("do"), Just("for"), Just("in"), Just("="), Just("("), Just(")"), Just("{"), Just("}"),
                Just("["), Just("]"), Just("KEYS"), Just("ARGV"), Just("redis"), Just("."), Just(","),
                Just("call"), Just("'GET'"), Just("1"), Just("0.5"), Just("/"), Just(".."), Just("#"),
                Just("x"), Just("not"), Just("repeat"), Just("until"), Just("--"), Just("[["), Just("]]"),
                Just("\n"), Just("'"), Just("\""), Just("-"), Just(":"), Just("..."),
            ],
            0..60,
        )
    ) {
        let _ = analyze(&tokens.join(" "), &options());
    }
}

/// A `redis.call` argument: a literal, a key, a computed value or a spread.
fn call_argument() -> impl Strategy<Value = (String, redlua_analyzer::commands::ArgShape<'static>)>
{
    use redlua_analyzer::commands::ArgShape;
    prop_oneof![
        prop_oneof![
            Just("GET"),
            Just("NX"),
            Just("XX"),
            Just("WITHSCORES"),
            Just("COUNT"),
            Just("INCR"),
            Just("ENCODING"),
            Just("0"),
            Just("-1"),
            Just("2"),
            Just("STORE"),
            Just("IDX"),
        ]
        .prop_map(|word| (format!("'{word}'"), ArgShape::Literal(word))),
        Just(("KEYS[1]".to_string(), ArgShape::Value)),
        Just(("ARGV[1]".to_string(), ArgShape::Value)),
        Just(("unpack(ARGV)".to_string(), ArgShape::Spread)),
    ]
}

/// Command names: integer replies, replies that depend on the arguments,
/// unknown ones, and odd case.
fn command_name() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("EXISTS"),
        Just("exists"),
        Just("SETNX"),
        Just("DEL"),
        Just("GET"),
        Just("SET"),
        Just("LPOP"),
        Just("ZADD"),
        Just("ZRANGE"),
        Just("TYPE"),
        Just("OBJECT"),
        Just("PING"),
        Just("EVAL"),
        Just("NOPE"),
        Just("HGETALL"),
        Just("LPOS"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The reply table never panics on any arguments, and `integer_condition`
    /// fires on a call used as a condition exactly when the table says the
    /// call replies with an integer.
    #[test]
    fn integer_condition_follows_the_reply_table(
        command in command_name(),
        args in proptest::collection::vec(call_argument(), 0..5),
        through_local in any::<bool>(),
        negated in any::<bool>(),
    ) {
        use redlua_analyzer::commands::ArgShape;
        use redlua_analyzer::replies::{self, LuaTypes};
        let mut shapes = vec![ArgShape::Literal(command)];
        shapes.extend(args.iter().map(|(_, shape)| *shape));
        let integer = replies::of_call(&shapes) == Some(LuaTypes::NUMBER);
        // A spread argument may only be last in Lua's argument expansion; the
        // analyzer treats an earlier one as one value, so keep it last.
        let mut text: Vec<String> = vec![format!("'{command}'")];
        text.extend(args.iter().map(|(t, _)| t.clone()));
        if args.iter().rev().skip(1).any(|(_, s)| matches!(s, ArgShape::Spread)) {
            return Ok(());
        }
        let call = format!("redis.call({})", text.join(", "));
        let not = if negated { "not " } else { "" };
        let script = if through_local {
            format!("local r = {call}\nif {not}r then return 1 end\nreturn 0")
        } else {
            format!("if {not}{call} then return 1 end\nreturn 0")
        };
        let report = analyze(&script, &Options::default());
        let fired = report.diagnostics.iter().any(|d| d.lint == Lint::IntegerCondition);
        prop_assert_eq!(fired, integer, "{}", script);
    }

    #[test]
    fn reply_lookup_never_panics(
        words in proptest::collection::vec("[a-zA-Z|_-]{0,12}", 0..6),
        spread_at in proptest::option::of(0usize..6),
    ) {
        use redlua_analyzer::commands::ArgShape;
        let mut shapes: Vec<ArgShape<'_>> = words.iter().map(|w| ArgShape::Literal(w)).collect();
        if let Some(at) = spread_at {
            shapes.insert(at.min(shapes.len()), ArgShape::Spread);
        }
        let _ = redlua_analyzer::replies::of_call(&shapes);
        for word in &words {
            let _ = redlua_analyzer::replies::lookup(word);
        }
    }
}

/// Small expressions the type inference has rules for.
fn typed_expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("redis.call('GET', KEYS[1])".to_string()),
        Just("redis.pcall('INCR', KEYS[1])".to_string()),
        Just("redis.call('HGETALL', KEYS[1])".to_string()),
        Just("redis.call('SCAN', v)[1]".to_string()),
        Just("redis.call('SET', KEYS[1], v, 'NX')".to_string()),
        Just("tonumber(ARGV[1])".to_string()),
        Just("ARGV[1]".to_string()),
        Just("v".to_string()),
        Just("w".to_string()),
        Just("nil".to_string()),
        Just("false".to_string()),
        Just("1.5".to_string()),
        Just("'0'".to_string()),
        Just("#KEYS".to_string()),
        Just("cjson.null".to_string()),
        Just("cjson.decode(ARGV[1]).f".to_string()),
        Just("redis.call('ZSCORE', KEYS[1], v)".to_string()),
        Just("redis.call('SMEMBERS', KEYS[1])".to_string()),
        Just("redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')".to_string()),
        Just("redis.call('LPOP', KEYS[1], w)".to_string()),
        Just("redis.call('INFO')".to_string()),
        Just("redis.call('EXISTS', KEYS[1])".to_string()),
        Just("redis.call(ARGV[1], KEYS[1])".to_string()),
        Just("redis.call('XREAD', 'STREAMS', KEYS[1], '0')".to_string()),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                "==|~=|<|>=|\\+|-|\\*|/|%|\\^|\\.\\.|and|or",
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            inner.clone().prop_map(|a| format!("tonumber({a})")),
            inner.clone().prop_map(|a| format!("not {a}")),
            inner.clone().prop_map(|a| format!("{{{a}, 1}}")),
            inner.clone().prop_map(|a| format!("({a}).ok")),
            inner.clone().prop_map(|a| format!("({a}).double")),
            inner.clone().prop_map(|a| format!("({a}).map")),
            inner.clone().prop_map(|a| format!("({a})[2]")),
            inner.clone().prop_map(|a| format!("-{a}")),
            inner.clone().prop_map(|a| format!("#{a}")),
            inner.clone().prop_map(|a| format!("tostring({a})")),
            inner.prop_map(|a| format!("math.floor({a})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The inference never panics and always settles, whatever locals
    /// feed each other (including cycles through reassignment).
    #[test]
    fn inference_never_panics(
        first in typed_expression(),
        second in typed_expression(),
        third in typed_expression(),
        fourth in typed_expression(),
        protocol in prop_oneof![
            Just(""),
            Just("redis.setresp(3)\n"),
            Just("redis.setresp(2)\n"),
        ],
    ) {
        let script = format!(
            "{protocol}local v = {first}\nlocal w = {second}\nif {third} then v = {fourth} end\n\
             while v == w do w = v .. w v = {third} end\n\
             local function f(x) return x + {second} end\n\
             if v < f(w) or not ({fourth}) then w = (v or 0) * 2 / {first} end\n\
             redis.call('SET', KEYS[1], v)\nreturn {{v, w, {fourth}}}"
        );
        let report = analyze(&script, &options());
        // The analysis ends with a result: an internal error is a panic
        // caught on the analysis thread.
        prop_assert!(
            !report.diagnostics.iter().any(|d| d.message.contains("internal error")),
            "{}",
            script
        );
        let _ = analyze(&script, &Options::default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// `nil_comparison` fires on a reply compared with nil exactly when the
    /// reply table knows the reply and it is never nil: always under RESP2
    /// (a nil arrives as `false`), and under RESP3 (after
    /// `redis.setresp(3)`) for replies that have no null.
    #[test]
    fn nil_comparison_follows_the_reply_table(
        command in command_name(),
        args in proptest::collection::vec(call_argument(), 0..5),
        through_local in any::<bool>(),
        resp3 in any::<bool>(),
    ) {
        use redlua_analyzer::commands::ArgShape;
        use redlua_analyzer::replies::{self, LuaTypes, Protocol};
        if args.iter().rev().skip(1).any(|(_, s)| matches!(s, ArgShape::Spread)) {
            return Ok(());
        }
        let mut shapes = vec![ArgShape::Literal(command)];
        shapes.extend(args.iter().map(|(_, shape)| *shape));
        let protocol = if resp3 { Protocol::Resp3 } else { Protocol::Resp2 };
        let never_nil = replies::of_call_in(protocol, &shapes)
            .is_some_and(|t| !t.intersects(LuaTypes::NIL));
        let mut text: Vec<String> = vec![format!("'{command}'")];
        text.extend(args.iter().map(|(t, _)| t.clone()));
        let call = format!("redis.call({})", text.join(", "));
        let prelude = if resp3 { "redis.setresp(3)\n" } else { "" };
        let script = if through_local {
            format!("{prelude}local r = {call}\nif r == nil then return 1 end\nreturn 0")
        } else {
            format!("{prelude}if {call} == nil then return 1 end\nreturn 0")
        };
        let report = analyze(&script, &Options::default());
        let fired = report.diagnostics.iter().any(|d| d.lint == Lint::NilComparison);
        prop_assert_eq!(fired, never_nil, "{}", script);
    }
}

/// The production corpus's scripts (`tests/corpus/production`), which
/// exercise the inference on real code.
fn production_scripts() -> &'static [String] {
    static SCRIPTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/production");
        let mut scripts = Vec::new();
        for project in std::fs::read_dir(&root).expect("the production corpus") {
            let project = project.expect("readable entry").path();
            if !project.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&project).expect("readable project") {
                let file = file.expect("readable entry").path();
                if file.extension().is_some_and(|e| e == "lua") {
                    scripts.push(std::fs::read_to_string(&file).expect("readable script"));
                }
            }
        }
        scripts.sort();
        assert!(scripts.len() >= 150, "{}", scripts.len());
        scripts
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Production scripts cut anywhere, spliced into one another, or with a
    /// `redis.setresp(3)` put in front: the analysis (inference included)
    /// never panics.
    #[test]
    fn spliced_production_scripts_never_panic(
        first in any::<proptest::sample::Index>(),
        second in any::<proptest::sample::Index>(),
        cut in any::<proptest::sample::Index>(),
        resume in any::<proptest::sample::Index>(),
        resp3 in any::<bool>(),
    ) {
        let scripts = production_scripts();
        let a = first.get(scripts);
        let b = second.get(scripts);
        let floor = |s: &str, i: usize| (0..=i.min(s.len())).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        let head = &a[..floor(a, cut.index(a.len() + 1))];
        let tail = &b[floor(b, resume.index(b.len() + 1))..];
        let prelude = if resp3 { "redis.setresp(3)\n" } else { "" };
        let script = format!("{prelude}{head}{tail}");
        let report = analyze(&script, &Options::default());
        prop_assert!(
            !report.diagnostics.iter().any(|d| d.message.contains("internal error")),
            "{}",
            script
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any command of the table, on any target, with its own tokens, keys,
    /// values and spreads as arguments: the analysis never panics, and
    /// `target_version` flags the command exactly when the target lacks it.
    #[test]
    fn targets_never_panic_and_date_commands_right(
        command in 0usize..1000,
        target in 0usize..100,
        picks in proptest::collection::vec((0usize..100, 0u8..4), 0..8),
        shebang in proptest::option::of(prop_oneof![
            Just("no-writes"), Just("allow-key-locking"), Just(""), Just("no-writes,,allow-oom"),
        ]),
    ) {
        use redlua_analyzer::commands;
        use redlua_analyzer::ServerTarget;
        let all: Vec<&commands::Command> = commands::all()
            .iter()
            .flat_map(|c| std::iter::once(c).chain(c.subcommands()))
            .collect();
        let command = all[command % all.len()];
        let target = ServerTarget::ALL[target % ServerTarget::ALL.len()];
        let mut args: Vec<String> = command
            .name()
            .split('|')
            .map(|w| format!("'{w}'"))
            .collect();
        for (i, kind) in picks {
            args.push(match (kind, command.tokens()) {
                (0, tokens) if !tokens.is_empty() => format!("'{}'", tokens[i % tokens.len()].name()),
                (1, _) => "KEYS[1]".to_string(),
                (2, _) => "unpack(ARGV)".to_string(),
                _ => format!("'{i}'"),
            });
        }
        let head = shebang.map_or(String::new(), |flags| format!("#!lua flags={flags}\n"));
        let script = format!("{head}return redis.pcall({})", args.join(", "));
        let options = Options { target, ..Options::default() };
        let report = analyze(&script, &options);
        let top = commands::lookup(command.name().split('|').next().unwrap()).unwrap();
        let dated = report
            .diagnostics
            .iter()
            .any(|d| d.lint == Lint::TargetVersion && !d.message.contains(" option "));
        let missing = !top.available_on(target) || !command.available_on(target);
        prop_assert_eq!(dated, missing, "{} on {}: {:?}", script, target, report.diagnostics);
    }
}

/// Analyzes `source` as a library and checks that the analysis did not
/// crash (a crash is caught and reported as an internal error).
fn analyze_library_fully(source: &str) {
    let report = redlua_analyzer::analyze_library(source, &library_options());
    assert!(
        report
            .all_diagnostics()
            .iter()
            .all(|d| !d.message.contains("internal error")),
        "crashed on {source:?}"
    );
}

/// Options for a library: one function declared, as the macro does.
fn library_options() -> redlua_analyzer::LibraryOptions {
    redlua_analyzer::LibraryOptions {
        function: Some("f".to_string()),
        options: options(),
    }
}

#[test]
fn libraries_nested_deeply_are_refused_not_crashed() {
    on_small_stack(|| {
        for script in nestings(5_000) {
            let library = format!(
                "#!lua name=l\nredis.register_function('f', function(keys, args) {script} end)"
            );
            let report = redlua_analyzer::analyze_library(&library, &library_options());
            assert!(!report.is_ok(), "{}", &script[..40]);
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn libraries_never_panic_on_arbitrary_text(source in "(#!lua name=l\n)?\\PC{0,200}") {
        analyze_library_fully(&source);
    }

    #[test]
    fn libraries_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let source = String::from_utf8_lossy(&bytes);
        analyze_library_fully(&source);
    }

    #[test]
    fn libraries_never_panic_on_registration_soup(
        tokens in proptest::collection::vec(
            prop_oneof![
                Just("redis.register_function"), Just("redis"), Just("."), Just("register_function"),
                Just("("), Just(")"), Just("{"), Just("}"), Just(","), Just("="), Just("'f'"), Just("'g'"),
                Just("function_name"), Just("callback"), Just("flags"), Just("'no-writes'"), Just("'bogus'"),
                Just("function"), Just("(keys, args)"), Just("(k)"), Just("end"), Just("return"),
                Just("keys[1]"), Just("args[1]"), Just("KEYS[1]"), Just("ARGV"), Just("local"), Just("f"),
                Just("redis.call('GET', keys[1])"), Just("redis.call"), Just("\n"), Just("#!lua name=x"),
                Just("é"), Just("--"), Just("[["), Just("]]"), Just("..."), Just(";"), Just("if"), Just("then"),
            ],
            0..60,
        )
    ) {
        let source = format!("#!lua name=l\n{}", tokens.join(" "));
        analyze_library_fully(&source);
    }
}
