//! The analyzer never panics and never overflows its stack, whatever it is fed.

use proptest::prelude::*;
use redlua_analyzer::{Declared, Lint, MAX_NESTING, Options, analyze};

fn options() -> Options {
    Options {
        declared: Some(Declared::exact(2, 2)),
        read_only: true,
        returns: Some(redlua_analyzer::ReturnKind::Integer),
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
    ) {
        let script = format!(
            "local v = {first}\nlocal w = {second}\nif {third} then v = {fourth} end\n\
             while v == w do w = v .. w v = {third} end\n\
             redis.call('SET', KEYS[1], v)\nreturn {{v, w, {fourth}}}"
        );
        let _ = analyze(&script, &options());
        let _ = analyze(&script, &Options::default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// `nil_comparison` fires on a reply compared with nil exactly when the
    /// reply table knows the reply (no known reply is ever nil under RESP2),
    /// and never once the script may switch to RESP3.
    #[test]
    fn nil_comparison_follows_the_reply_table(
        command in command_name(),
        args in proptest::collection::vec(call_argument(), 0..5),
        through_local in any::<bool>(),
        resp3 in any::<bool>(),
    ) {
        use redlua_analyzer::commands::ArgShape;
        use redlua_analyzer::replies;
        if args.iter().rev().skip(1).any(|(_, s)| matches!(s, ArgShape::Spread)) {
            return Ok(());
        }
        let mut shapes = vec![ArgShape::Literal(command)];
        shapes.extend(args.iter().map(|(_, shape)| *shape));
        let known = replies::of_call(&shapes).is_some();
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
        prop_assert_eq!(fired, known && !resp3, "{}", script);
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
