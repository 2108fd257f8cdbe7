//! The expansion of whole attributes, from tokens to tokens: what each
//! phase contributes, seen in the generated code.

mod script {
    use crate::attr::Kind;
    use crate::run;

    fn expand_str(attr: &str, item: &str) -> String {
        run(Kind::Script, attr.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    #[test]
    fn expansion_includes_the_file_relative_to_the_manifest_dir() {
        // Run by Cargo, CARGO_MANIFEST_DIR is lock-macros/.
        let out = expand_str(
            r#""../scripts/counter.lua", returns = i64"#,
            "struct Count<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        let manifest_dir = env!("CARGO_MANIFEST_DIR");
        assert!(
            !out.contains(manifest_dir),
            "absolute path in expansion: {out}"
        );
        assert!(
            out.contains(
                r#"include_str ! (:: core :: concat ! (:: core :: env ! ("CARGO_MANIFEST_DIR") , "/" , "../scripts/counter.lua"))"#
            ),
            "{out}"
        );
        let source = std::fs::read(format!("{manifest_dir}/../scripts/counter.lua")).unwrap();
        let sha1 = sha1_smol::Sha1::from(&source).digest().to_string();
        assert!(
            out.contains(&format!("SHA1 : & 'static str = \"{sha1}\"")),
            "{out}"
        );
        assert!(out.contains("KEY_COUNT : usize = 1usize"), "{out}");
        assert!(out.contains("ARG_COUNT : usize = 2usize"), "{out}");
        assert!(out.contains("read_only : false"), "{out}");
        assert!(out.contains(":: redlua :: __private :: ScriptDef"), "{out}");
        // The helper attributes are gone from the struct.
        assert!(
            !out.contains("# [key]") && !out.contains("# [arg]"),
            "{out}"
        );
    }

    #[test]
    fn calls_lists_the_line_of_each_literal_command() {
        let out = expand_str(
            r#""tests/ui/scripts/calls_by_line.lua", returns = i64"#,
            "struct S<'a> { #[key] a: &'a str, #[key] b: &'a str, #[arg] command: &'a str }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains(
                r#"pub const CALLS : & 'static [(u32 , & 'static str)] = & [(2u32 , "INCR") , (3u32 , "HSET") , (5u32 , "DEL") , (5u32 , "PUBLISH")] ;"#
            ),
            "{out}"
        );
    }

    #[test]
    fn crate_option_changes_the_runtime_path() {
        let out = expand_str(
            r#""../scripts/counter.lua", crate = crate, allow(arity)"#,
            "struct Count { #[key] counter: String }",
        );
        assert!(out.contains("crate :: __private :: ScriptDef"), "{out}");
        assert!(!out.contains(":: redlua"), "{out}");
        let out = expand_str(
            r#""../scripts/counter.lua", crate = ::my::reexport, allow(arity)"#,
            "struct Count { #[key] counter: String }",
        );
        assert!(
            out.contains(":: my :: reexport :: __private :: ScriptCall"),
            "{out}"
        );
    }

    #[test]
    fn a_missing_file_still_emits_the_items() {
        let out = expand_str(r#""nope/missing.lua""#, "struct Nothing;");
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("cannot read Lua script `nope/missing.lua`"),
            "{out}"
        );
        assert!(out.contains("pub fn invoke_blocking"), "{out}");
        assert!(!out.contains("include_str"), "{out}");
    }

    #[test]
    fn absolute_paths_are_refused() {
        for path in ["/etc/x.lua", "\\\\server\\x.lua", "C:\\\\x.lua", "c:/x.lua"] {
            let out = expand_str(&format!("{path:?}"), "struct S;");
            assert!(out.contains("is absolute"), "{path}: {out}");
            assert!(!out.contains("include_str"), "{path}: {out}");
            assert!(!out.contains("cannot read"), "{path}: {out}");
        }
        // Inside the crate: the relative path is suggested.
        let inside = format!("{}/../scripts/counter.lua", env!("CARGO_MANIFEST_DIR"));
        let out = expand_str(&format!("{inside:?}"), "struct S;");
        assert!(
            out.contains("write `\\\"../scripts/counter.lua\\\"`"),
            "{out}"
        );
    }

    #[test]
    fn the_target_option_decides_what_the_script_may_call() {
        let item = "struct Expire<'a> { #[key] hash: &'a str, #[arg] seconds: u64, #[arg] field: &'a str }";
        let out = expand_str(r#""tests/ui/scripts/hexpire.lua""#, item);
        assert!(
            out.contains("`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0"),
            "{out}"
        );
        // The target comes from lock-macros/Cargo.toml, which sets none: the
        // crate depends on that file.
        assert!(out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand_str(
            r#""tests/ui/scripts/hexpire.lua", target = "redis-7.4""#,
            item,
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand_str(
            r#""tests/ui/scripts/hexpire.lua", target = "valkey-8.0""#,
            item,
        );
        assert!(
            out.contains(
                "`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"
            ),
            "{out}"
        );
    }

    #[test]
    fn warnings_become_deprecation_warnings_at_the_path() {
        let item = "struct Bump<'a> { #[key] counter: &'a str }";
        let out = expand_str(r#""tests/ui/scripts/get_plus_one.lua""#, item);
        assert!(!out.contains("compile_error"), "{out}");
        // One `#[deprecated]` constant per warning, in an anonymous const
        // named after the lint, with the rendered message as its note.
        assert_eq!(out.matches("deprecated").count(), 1, "{out}");
        assert!(out.contains("const _ : () = { "), "{out}");
        assert!(out.contains("fn maybe_false ()"), "{out}");
        assert!(
            out.contains("`+` on `false` raises an error [maybe_false]"),
            "{out}"
        );
        assert!(
            out.contains("--> tests/ui/scripts/get_plus_one.lua:1:11"),
            "{out}"
        );
        assert!(
            out.contains("1 | local n = redis.call('GET', KEYS[1]) + 1"),
            "{out}"
        );
        assert!(
            out.contains("add `allow(maybe_false)` to `#[redis_script(...)]`"),
            "{out}"
        );
        // Allowed: gone.
        let out = expand_str(
            r#""tests/ui/scripts/get_plus_one.lua", allow(maybe_false)"#,
            item,
        );
        assert!(!out.contains("deprecated"), "{out}");
        // A script without warnings emits none.
        let out = expand_str(
            r#""../scripts/counter.lua", returns = i64"#,
            "struct Count<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("deprecated"), "{out}");
    }

    #[test]
    fn bad_options_are_reported() {
        for (attr, message) in [
            ("", "expected the path of a Lua script"),
            ("42", "as a string literal"),
            (r#""""#, "the script path is empty"),
            (
                r#""a.lua", read_only, read_only"#,
                "option `read_only` is given twice",
            ),
            (r#""a.lua", read_only = true"#, "`read_only` takes no value"),
            (
                r#""a.lua", retruns = i64"#,
                "unknown option `retruns`: did you mean `returns`?",
            ),
            (
                r#""a.lua", readonly"#,
                "unknown option `readonly`: did you mean `read_only`?",
            ),
            (
                r#""a.lua", cache = 1"#,
                "unknown option `cache`: expected `returns = Type`",
            ),
            (
                r#""a.lua", allow(literal_keys)"#,
                "unknown lint `literal_keys`: did you mean `literal_key`?",
            ),
            (
                r#""a.lua", allow(nope)"#,
                "unknown lint `nope`; the lints are `arity`",
            ),
            (
                r#""a.lua", allow(syntax)"#,
                "`syntax` lint cannot be allowed",
            ),
            (
                r#""a.lua", target = "redis-7.3""#,
                "unknown target `redis-7.3` (did you mean `redis-7.2`?); the targets are redis-7.0,",
            ),
            (
                r#""a.lua", target = redis_7_4"#,
                "expected the target as a string literal, one of redis-7.0,",
            ),
            (
                r#""a.lua", targte = "redis-7.4""#,
                "unknown option `targte`: did you mean `target`?",
            ),
        ] {
            let out = expand_str(attr, "struct S;");
            assert!(out.contains(message), "{attr}: {out}");
            assert!(out.contains("struct S"), "{attr}: {out}");
        }
    }
}

mod function {
    use crate::attr::Kind;
    use crate::run;

    fn expand(attr: &str, item: &str) -> String {
        run(Kind::Function, attr.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    const LIB: &str = r#""../scripts/counters_lib.lua""#;

    #[test]
    fn expansion_describes_the_function() {
        let out = expand(
            &format!("{LIB}, name = \"bump\", returns = i64"),
            "struct Bump<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("LIBRARY_NAME : & 'static str = \"counters\""),
            "{out}"
        );
        assert!(
            out.contains("FUNCTION_NAME : & 'static str = \"bump\""),
            "{out}"
        );
        assert!(out.contains("read_only : false"), "{out}");
        assert!(
            out.contains(":: redlua :: __private :: FunctionCall"),
            "{out}"
        );
        assert!(out.contains("called with `FCALL`"), "{out}");
        // The lines of the function's own calls, numbered in the library.
        assert!(
            out.contains(r#"CALLS : & 'static [(u32 , & 'static str)] = & [(6u32 , "INCRBY") , (7u32 , "EXPIRE")] ;"#),
            "{out}"
        );
        let out = expand(
            &format!("{LIB}, name = \"total\", crate = crate"),
            "struct Total { #[key(variadic)] counters: Vec<String> }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("read_only : true"), "{out}");
        assert!(out.contains("crate :: __private :: FunctionDef"), "{out}");
        assert!(
            out.contains("`counters` (`counters[1..]`)"),
            "the docs name the parameter: {out}"
        );
        assert!(
            out.contains(r#"CALLS : & 'static [(u32 , & 'static str)] = & [(19u32 , "GET")] ;"#),
            "{out}"
        );
    }

    #[test]
    fn an_unknown_function_gets_a_did_you_mean() {
        let out = expand(&format!("{LIB}, name = \"bmup\""), "struct S;");
        assert!(
            out.contains(
                "library `counters` (`../scripts/counters_lib.lua`) registers no function `bmup`: did you mean `bump`?"
            ),
            "{out}"
        );
        assert!(out.contains("its functions are `bump`, `total`"), "{out}");
        // Still emits the items, so that only this error shows.
        assert!(out.contains("pub fn invoke_blocking"), "{out}");
    }

    #[test]
    fn function_options_are_checked() {
        for (attr, message) in [
            (
                LIB.to_string(),
                "which function of the library? add `name = \\\"function\\\"`",
            ),
            (
                format!("{LIB}, name = \"bump\", read_only"),
                "a function is read-only when its library registers it",
            ),
            (
                format!("{LIB}, nmae = \"bump\""),
                "unknown option `nmae`: did you mean `name`?",
            ),
            (
                format!("{LIB}, name = bump"),
                "expected the function's name as a string literal",
            ),
            ("".to_string(), "expected the path of a Lua library"),
            (
                format!("{LIB}, name = \"bump\", allow(library)"),
                "the `library` lint cannot be allowed",
            ),
        ] {
            let out = expand(&attr, "struct S;");
            assert!(out.contains(message), "{attr}: {out}");
        }
    }

    #[test]
    fn the_target_option_decides_what_the_function_may_call() {
        let lib = r#""tests/ui/scripts/library_hexpire.lua", name = "expire_field""#;
        let item =
            "struct Touch<'a> { #[key] hash: &'a str, #[arg] seconds: u64, #[arg] field: &'a str }";
        // No target: the crate's (lock-macros/Cargo.toml sets none), so the
        // default redis-7.0, and the crate depends on its Cargo.toml.
        let out = expand(lib, item);
        assert!(
            out.contains("`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0"),
            "{out}"
        );
        assert!(out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand(&format!(r#"{lib}, target = "redis-7.4""#), item);
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand(&format!(r#"{lib}, target = "valkey-8.0""#), item);
        assert!(
            out.contains(
                "`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"
            ),
            "{out}"
        );
        let out = expand(&format!(r#"{lib}, target = "redis-7.3""#), item);
        assert!(out.contains("unknown target `redis-7.3`"), "{out}");
    }

    #[test]
    fn warnings_become_deprecation_warnings_at_the_path() {
        let lib = r#""tests/ui/scripts/library_warning.lua", name = "bump""#;
        let item = "struct Bump<'a> { #[key] counter: &'a str, #[arg] by: i64 }";
        let out = expand(lib, item);
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("deprecated"), "{out}");
        assert!(out.contains("[maybe_false]"), "{out}");
        assert!(
            out.contains("add `allow(maybe_false)` to `#[redis_function(...)]`"),
            "{out}"
        );
        let out = expand(&format!("{lib}, allow(maybe_false)"), item);
        assert!(!out.contains("deprecated"), "{out}");
    }

    #[test]
    fn declared_fields_are_checked_against_the_function() {
        let out = expand(
            &format!("{LIB}, name = \"bump\""),
            "struct Bump { #[key] counter: String, #[arg] by: i64 }",
        );
        assert!(out.contains("args[2]"), "{out}");
        assert!(out.contains("--> ../scripts/counters_lib.lua:7:"), "{out}");
    }
}

/// The attribute's documentation and the analyzer's lint registry.
mod lint_table {
    /// The lints the attribute's documentation lists, in order.
    fn documented() -> Vec<String> {
        include_str!("lib.rs")
            .lines()
            .skip_while(|l| *l != "/// | lint | finds |")
            .take_while(|l| l.starts_with("/// |"))
            .filter_map(|l| l.strip_prefix("/// | `"))
            .filter_map(|l| l.split('`').next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_documentation_lists_every_lint_of_the_registry_once() {
        let registry: Vec<String> = redlua_analyzer::Lint::ALL
            .iter()
            .map(|l| l.name().to_string())
            .collect();
        assert_eq!(documented(), registry);
    }
}
