use crate::{Lint, Options, analyze, analyze_here};
use std::cell::Cell;

thread_local! {
    /// How many times a script was lexed again to find what follows a
    /// block's last statement.
    pub(super) static LEXED_AGAIN: Cell<usize> = const { Cell::new(0) };
}

/// How many times `source` is lexed again when analyzed here.
fn lexed_again(source: &str) -> usize {
    LEXED_AGAIN.set(0);
    analyze_here(source, &Options::default());
    LEXED_AGAIN.get()
}

#[test]
fn a_script_whose_blocks_visibly_close_is_lexed_once() {
    let mut source = String::new();
    for i in 0..200 {
        source.push_str(&format!(
            "local function f{i}(n)\n  if n then return n -- early\n  end\n  \
             for _ = 1, 2 do break end\n  return {i}\nend\n"
        ));
    }
    source.push_str("return f1(1) --[[ the end ]]\n");
    assert_eq!(lexed_again(&source), 0);
    // What the text does not show is left to the lexer.
    assert_eq!(lexed_again("return 1 return 2"), 1);
    assert_eq!(lexed_again("do return 1 end return 2\x0b"), 1);
}

fn first_error(source: &str) -> String {
    let report = analyze(source, &Options::default());
    let d = &report.diagnostics[0];
    assert_eq!(d.lint, Lint::Syntax);
    d.message.clone()
}

#[test]
fn newer_lua_syntax_is_named() {
    assert_eq!(
        first_error("for i = 1, 3 do\n  if i == 2 then goto done end\nend\n::done::\nreturn 1"),
        "`goto` is Lua 5.2 syntax, but Redis runs Lua 5.1"
    );
    assert_eq!(
        first_error("return 7 // 2"),
        "`//` (floor division) is Lua 5.3 syntax, but Redis runs Lua 5.1"
    );
    assert_eq!(
        first_error("return 1 << 2"),
        "bit shifts are Lua 5.3 syntax, but Redis runs Lua 5.1"
    );
    assert_eq!(
        first_error("return 6 & 3"),
        "`&` is a Lua 5.3 bitwise operator, but Redis runs Lua 5.1"
    );
    assert_eq!(
        first_error("return 6 | 3"),
        "`|` is a Lua 5.3 bitwise operator, but Redis runs Lua 5.1"
    );
    assert_eq!(
        first_error("::top::\nreturn 1"),
        "`::label::` is Lua 5.2 syntax, but Redis runs Lua 5.1"
    );
}

#[test]
fn the_goto_error_points_at_goto() {
    let source = "local x = 1\ngoto skip\nreturn x";
    let d = &analyze(source, &Options::default()).diagnostics[0];
    let span = d.primary_span().unwrap();
    assert_eq!((span.start.line, span.start.column), (2, 1));
}

#[test]
fn other_syntax_errors_keep_the_parser_message() {
    let message = first_error("local = 1");
    assert!(message.starts_with("Lua syntax error: "), "{message}");
    // `goto` as a plain name is fine in Lua 5.1.
    assert!(analyze("local goto = 1 return goto", &Options::default()).is_ok());
}

#[test]
fn a_statement_after_the_last_one_is_an_error() {
    // Redis: "'<eof>' expected near 'return'"; full_moon drops the second
    // `return` silently.
    for source in [
        "return 1 return 2",
        "return 1; return 2",
        "local x = 1\nreturn x\nreturn 2 -- dead",
        "return 1 break",
    ] {
        let report = analyze(source, &Options::default());
        assert_eq!(report.diagnostics.len(), 1, "{source}: {report:?}");
        let d = &report.diagnostics[0];
        assert_eq!(d.lint, Lint::Syntax);
        assert_eq!(
            d.message, "Lua syntax error: a statement follows `return` in the same block",
            "{source}"
        );
    }
    let source = "local x = 1\nreturn x\nreturn 2";
    let d = &analyze(source, &Options::default()).diagnostics[0];
    let span = d.primary_span().unwrap();
    assert_eq!((span.start.line, span.start.column), (3, 1));
    assert_eq!(d.secondary[0].span.start.line, 2);
    assert_eq!(
        d.notes,
        ["Redis refuses the script: '<eof>' expected near 'return'"]
    );
    assert_eq!(
        first_error("break break"),
        "Lua syntax error: a statement follows `break` in the same block"
    );
}

#[test]
fn nested_blocks_say_what_redis_says() {
    // Each note is Redis 7's error for the same script.
    for (source, note) in [
        (
            "if true then return 1 return 2 end",
            "'end' expected near 'return'",
        ),
        (
            "if true then\n return 1\n return 2 end",
            "'end' expected (to close 'if' at line 1) near 'return'",
        ),
        (
            "if true then return 1 else return 2 return 3 end",
            "'end' expected near 'return'",
        ),
        (
            "repeat\n break\n local x = 1 until true",
            "'until' expected (to close 'repeat' at line 1) near 'local'",
        ),
        (
            "local f = function()\n return 1\n x = 2\nend",
            "'end' expected (to close 'function' at line 1) near 'x'",
        ),
        (
            "for i=1,2 do\n break\n break end",
            "'end' expected (to close 'for' at line 1) near 'break'",
        ),
        (
            "while true do\n return 1 return 2 end",
            "'end' expected (to close 'while' at line 1) near 'return'",
        ),
    ] {
        let report = analyze(source, &Options::default());
        let d = &report.diagnostics[0];
        assert_eq!(d.lint, Lint::Syntax, "{source}");
        assert!(
            d.message
                .starts_with("Lua syntax error: a statement follows `"),
            "{source}: {}",
            d.message
        );
        assert_eq!(
            d.notes,
            [format!("Redis refuses the script: {note}")],
            "{source}"
        );
    }
    // An earlier error comes first.
    let report = analyze("local x = 1 + return 1 return 2", &Options::default());
    assert_eq!(
        report.diagnostics[0].message,
        "Lua syntax error: expected expression after binary operator"
    );
}

#[test]
fn a_last_statement_alone_is_fine() {
    for source in [
        "return 1",
        "return 1;",
        "return",
        "do return 1 end return 2",
        "return 1 -- a comment\n",
        "for i = 1, 2 do break end return 0",
        "return ARGV[1]",
        "local t = {} return t['a'](1)[2]",
        "local function f() if KEYS[1] then return 1 else return 2 end end return f()",
        "repeat local x = 1 break until true return 0",
        "local f = function() return end return 0",
    ] {
        let report = analyze(source, &Options::default());
        assert!(report.is_ok(), "{source}: {:?}", report.diagnostics);
    }
}

#[test]
fn backticks_outside_strings_are_syntax_errors() {
    assert_eq!(
        first_error("local x = 1\nreturn `x`"),
        "Lua syntax error: unexpected character '`'"
    );
    let report = analyze("return '`' -- `\n", &Options::default());
    assert!(report.is_ok(), "{:?}", report.diagnostics);
    assert_eq!(
        first_error("#!lua flags=no-writes\n`"),
        "Lua syntax error: unexpected character '`'"
    );
    let report = analyze("#!lua flags=no-writes `\nreturn 1", &Options::default());
    assert!(report.is_ok(), "{:?}", report.diagnostics);
}

/// The next token at or after byte `from`, as the lexer reads the
/// whole text: `None` for the end of the input.
fn lexed_next(source: &str, from: usize) -> Option<String> {
    use full_moon::tokenizer::{Lexer, LexerResult, TokenType};
    let tokens = match Lexer::new(source, full_moon::LuaVersion::lua51()).collect() {
        LexerResult::Ok(tokens) | LexerResult::Recovered(tokens, _) => tokens,
        LexerResult::Fatal(_) => return Some("<fatal>".into()),
    };
    tokens
        .iter()
        .filter(|t| !t.token_type().is_trivia())
        .find(|t| t.start_position().bytes() >= from)
        .filter(|t| !matches!(t.token_type(), TokenType::Eof))
        .map(ToString::to_string)
}

#[test]
fn a_block_seen_to_close_is_one_the_lexer_sees_closing() {
    for (source, closes) in [
        ("return 1 end", true),
        ("return 1 -- done\n  else", true),
        ("return 1 --[==[ ]] end ]==] until x", true),
        ("return 1", true),
        ("return 1 -- trailing", true),
        ("return 1 ending()", false),
        ("return 1 end\u{e9}", false),
        ("return 1 --[[ unclosed end", false),
        ("return 1\x0bend", false),
        ("return 1 return 2", false),
    ] {
        assert_eq!(super::surely_closes_block(source, 8), closes, "{source:?}");
    }
}

proptest::proptest! {
    /// Whatever follows a token, a block the text shows closing there
    /// is one the lexer reads closing.
    #[test]
    fn the_text_never_claims_a_close_the_lexer_does_not_read(
        parts in proptest::collection::vec(proptest::sample::select(vec![
            " ", "\n", "\t", "\r", "\x0b", "--", "[[", "]]", "[=[", "]=]", "=", "end",
            "else", "elseif", "until", "endx", "_", "x", "1", "'", "\"", ";", "-",
            "\u{e9}", "(", ")",
        ]), 0..12),
    ) {
        // `from` is where a token ends, as for a last statement.
        let source = format!("return (1){}", parts.concat());
        if super::surely_closes_block(&source, 10) {
            let next = lexed_next(&source, 10);
            proptest::prop_assert!(
                matches!(next.as_deref(), None | Some("end" | "else" | "elseif" | "until")),
                "{source:?}: {next:?}"
            );
        }
    }
}

#[test]
fn shebang_flags() {
    assert_eq!(
        super::shebang_flags("#!lua flags=no-writes,allow-oom\nreturn 1"),
        Some(vec!["no-writes".to_string(), "allow-oom".to_string()])
    );
    assert_eq!(super::shebang_flags("#!lua\nreturn 1"), Some(vec![]));
    assert_eq!(super::shebang_flags("return 1"), None);
}
