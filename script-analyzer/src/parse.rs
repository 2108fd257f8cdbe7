//! Parsing with full_moon in Lua 5.1 mode, behind a nesting guard.

use crate::{Diagnostic, Lint, Span};
use full_moon::LuaVersion;
use full_moon::ast::{
    AnonymousFunction, Ast, Block, Do, FunctionDeclaration, GenericFor, If, LastStmt,
    LocalFunction, NumericFor, Repeat, While,
};
use full_moon::node::Node;
use full_moon::tokenizer::{
    Lexer, LexerResult, Symbol, Token, TokenReference, TokenType, TokenizerErrorType,
};
use full_moon::visitors::Visitor;

/// The deepest nesting of brackets and blocks accepted.
///
/// full_moon recurses once per level and would overflow its stack (an abort,
/// which would take a compiler down with it) a few hundred levels deep. Redis's
/// own Lua refuses a chunk past about 200 syntax levels ("chunk has too many
/// syntax levels"), so refusing deeper input loses no script Redis would run.
pub const MAX_NESTING: usize = 200;

/// Parses `source` as Lua 5.1, or returns `syntax` diagnostics.
pub(crate) fn parse(source: &str) -> Result<Ast, Vec<Diagnostic>> {
    if let Some(span) = too_deep(source) {
        return Err(vec![
            Diagnostic::error(
                Lint::Syntax,
                span,
                format!("the script nests deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deeply nested")
            .with_note("Redis refuses such a chunk (\"chunk has too many syntax levels\")"),
        ]);
    }
    if let Some(diagnostic) = stray_backtick(source) {
        return Err(vec![diagnostic]);
    }
    let result = full_moon::parse_fallible(source, LuaVersion::lua51());
    let after_last = after_last_statement(source, result.ast());
    let errors = result.errors();
    if errors.is_empty() {
        return match after_last {
            Some((diagnostic, _)) => Err(vec![diagnostic]),
            None => Ok(result.into_ast()),
        };
    }
    let errors: Vec<Diagnostic> = errors
        .iter()
        .map(|error| {
            let (start, end) = error.range();
            let span = Span::from_offsets(source, start.bytes(), end.bytes());
            Diagnostic::error(Lint::Syntax, span, syntax_message(&error.error_message()))
        })
        .collect();
    // Syntax from a later Lua explains the failure better than the parser's
    // own message, which points at whatever it tripped over next.
    let newer = newer_lua_syntax(source);
    // So does a statement after `return`, when nothing is wrong before the
    // `return`: full_moon's errors from there on are its fallout.
    let first_error = errors.iter().filter_map(start_of).min();
    if let Some((after_last, last_start)) = after_last
        && first_error.is_none_or(|first| first >= last_start)
        && newer
            .as_ref()
            .is_none_or(|newer| start_of(newer) > start_of(&after_last))
    {
        let at = start_of(&after_last);
        return Err(std::iter::once(after_last)
            .chain(errors.into_iter().filter(|e| start_of(e) != at))
            .collect());
    }
    Err(newer.into_iter().chain(errors).collect())
}

/// The first statement after a `return` or `break` in the same block
/// (`return 1 return 2`), which Lua refuses ("'<eof>' expected near
/// 'return'"). full_moon drops it from the main chunk without an error when
/// it is itself a `return` or a `break`, and reports it inside other blocks
/// with a message that does not say why; this one says what Redis says.
///
/// Returns the diagnostic and where the `return` or `break` starts.
fn after_last_statement(source: &str, ast: &Ast) -> Option<(Diagnostic, usize)> {
    let mut blocks = LastStatements {
        source,
        found: Vec::new(),
    };
    blocks.record(ast.nodes(), None);
    blocks.visit_ast(ast);
    // Most blocks visibly end after their last statement: the text alone
    // tells, without lexing the whole script again.
    if blocks
        .found
        .iter()
        .all(|last| surely_closes_block(source, last.end))
    {
        return None;
    }
    #[cfg(test)]
    tests::LEXED_AGAIN.set(tests::LEXED_AGAIN.get() + 1);
    let tokens = match Lexer::new(source, LuaVersion::lua51()).collect() {
        LexerResult::Ok(tokens) | LexerResult::Recovered(tokens, _) => tokens,
        LexerResult::Fatal(_) => return None,
    };
    let tokens: Vec<&Token> = tokens
        .iter()
        .filter(|t| !t.token_type().is_trivia())
        .collect();
    blocks.found.sort_by_key(|last| last.end);
    blocks.found.iter().find_map(|last| {
        let index = tokens.partition_point(|t| t.start_position().bytes() < last.end);
        let next = tokens.get(index)?;
        let ends_block = match next.token_type() {
            TokenType::Eof => true,
            TokenType::Symbol { symbol } => {
                matches!(
                    symbol,
                    Symbol::End | Symbol::Else | Symbol::ElseIf | Symbol::Until
                )
            }
            _ => false,
        };
        (!ends_block).then(|| (last.diagnostic(source, next), last.start))
    })
}

/// Whether the first token at or after byte `from` of `source` closes a
/// block (`end`, `else`, `elseif`, `until`) or is the end of the input, as
/// the text shows with only spaces, line breaks and comments skipped.
/// `false` when that is not sure (any other token, another character, an
/// unclosed comment): the lexer decides then.
fn surely_closes_block(source: &str, from: usize) -> bool {
    let bytes = source.as_bytes();
    let mut at = from;
    loop {
        match bytes.get(at) {
            None => return true,
            Some(b' ' | b'\t' | b'\r' | b'\n') => at += 1,
            Some(b'-') if bytes.get(at + 1) == Some(&b'-') => {
                let body = at + 2;
                let comment_end = match long_bracket_level(&bytes[body..]) {
                    Some(level) => {
                        let close = format!("]{}]", "=".repeat(level));
                        source[body + level + 2..]
                            .find(&close)
                            .map(|i| body + level + 2 + i + close.len())
                    }
                    None => Some(source[body..].find('\n').map_or(source.len(), |i| body + i)),
                };
                match comment_end {
                    Some(end) => at = end,
                    None => return false,
                }
            }
            Some(_) => break,
        }
    }
    let word_end = bytes[at..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(bytes.len(), |n| at + n);
    matches!(&source[at..word_end], "end" | "else" | "elseif" | "until")
        && bytes.get(word_end).is_none_or(u8::is_ascii)
}

/// A `return` or `break` ending a block, and what closes that block.
struct LastStatement {
    /// `return` or `break`.
    keyword: &'static str,
    /// Byte range of the statement, with its `;`.
    start: usize,
    end: usize,
    /// The construct the block belongs to: its closing keyword, its opening
    /// keyword and that keyword's line; `None` for the main chunk.
    construct: Option<(&'static str, &'static str, usize)>,
}

impl LastStatement {
    fn diagnostic(&self, source: &str, next: &Token) -> Diagnostic {
        let keyword = self.keyword;
        let span = Span::from_offsets(
            source,
            next.start_position().bytes(),
            next.end_position().bytes(),
        );
        let last = Span::from_offsets(source, self.start, self.end);
        // Lua's own words, as Redis reports them.
        let lua = match self.construct {
            None => format!("'<eof>' expected near '{next}'"),
            Some((close, open, line)) if line != span.start.line => {
                format!("'{close}' expected (to close '{open}' at line {line}) near '{next}'")
            }
            Some((close, _, _)) => format!("'{close}' expected near '{next}'"),
        };
        let mut diagnostic = Diagnostic::error(
            Lint::Syntax,
            span,
            format!("Lua syntax error: a statement follows `{keyword}` in the same block"),
        )
        .with_label(format!("after `{keyword}`, the block must end here"));
        if last.start.line != span.start.line {
            diagnostic = diagnostic.with_secondary(
                last,
                format!("`{keyword}` must be the last statement of its block"),
            );
        }
        diagnostic
            .with_note(format!("Redis refuses the script: {lua}"))
            .with_help(match keyword {
                "break" => {
                    "remove the unreachable code, or write `do break end` to leave the loop early"
                }
                _ => "remove the unreachable code, or write `do return ... end` to return early",
            })
    }
}

/// Collects the blocks that end with `return` or `break`.
struct LastStatements<'s> {
    source: &'s str,
    found: Vec<LastStatement>,
}

impl LastStatements<'_> {
    /// Records `block`'s last statement, if any; `open` is the keyword that
    /// opens the construct the block belongs to (`None` for the main chunk).
    fn record(&mut self, block: &Block, open: Option<&TokenReference>) {
        let Some((last, semicolon)) = block.last_stmt_with_semicolon() else {
            return;
        };
        let keyword = match last {
            LastStmt::Break(_) => "break",
            _ => "return",
        };
        // Token ends rather than `Node::end_position`, which stops short of
        // the closing bracket of some expressions.
        let tokens = last.tokens().chain(semicolon);
        let (mut start, mut end) = (usize::MAX, 0);
        for token in tokens {
            start = start.min(token.token().start_position().bytes());
            end = end.max(token.token().end_position().bytes());
        }
        if start > end {
            return;
        }
        // The keyword as written: full_moon recovers from some errors by
        // rewriting the construct (a broken `repeat` becomes a `do`).
        let construct = open.map(|open| {
            let at = offset(open).min(self.source.len());
            let word: String = self
                .source
                .get(at..)
                .unwrap_or("")
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            let (close, open_word) = match word.as_str() {
                "repeat" => ("until", "repeat"),
                "if" => ("end", "if"),
                "while" => ("end", "while"),
                "for" => ("end", "for"),
                "function" => ("end", "function"),
                _ => ("end", "do"),
            };
            let line = Span::from_offsets(self.source, at, at).start.line;
            (close, open_word, line)
        });
        self.found.push(LastStatement {
            keyword,
            start,
            end,
            construct,
        });
    }
}

fn offset(token: &TokenReference) -> usize {
    token.token().start_position().bytes()
}

impl Visitor for LastStatements<'_> {
    fn visit_do(&mut self, node: &Do) {
        self.record(node.block(), Some(node.do_token()));
    }

    fn visit_while(&mut self, node: &While) {
        self.record(node.block(), Some(node.while_token()));
    }

    fn visit_numeric_for(&mut self, node: &NumericFor) {
        self.record(node.block(), Some(node.for_token()));
    }

    fn visit_generic_for(&mut self, node: &GenericFor) {
        self.record(node.block(), Some(node.for_token()));
    }

    fn visit_repeat(&mut self, node: &Repeat) {
        self.record(node.block(), Some(node.repeat_token()));
    }

    fn visit_if(&mut self, node: &If) {
        let open = Some(node.if_token());
        self.record(node.block(), open);
        for else_if in node.else_if().into_iter().flatten() {
            self.record(else_if.block(), open);
        }
        if let Some(block) = node.else_block() {
            self.record(block, open);
        }
    }

    fn visit_anonymous_function(&mut self, node: &AnonymousFunction) {
        self.record(node.body().block(), Some(node.function_token()));
    }

    fn visit_function_declaration(&mut self, node: &FunctionDeclaration) {
        self.record(node.body().block(), Some(node.function_token()));
    }

    fn visit_local_function(&mut self, node: &LocalFunction) {
        self.record(node.body().block(), Some(node.function_token()));
    }
}

fn start_of(diagnostic: &Diagnostic) -> Option<usize> {
    diagnostic.primary_span().map(|span| span.start.offset)
}

/// A backtick outside strings and comments, which Lua refuses. full_moon's
/// lexer takes it for a string quote of another Lua dialect and panics, so
/// it is looked for on a copy where backticks are `$`, another character
/// Lua 5.1 has no token for.
fn stray_backtick(source: &str) -> Option<Diagnostic> {
    if !source.contains('`') {
        return None;
    }
    let mut copy = source.replace('`', "$");
    // The lexer reads a `#!` first line as a whole-input shebang: blank it.
    if copy.starts_with("#!") {
        let end = copy.find('\n').unwrap_or(copy.len());
        copy.replace_range(..end, &" ".repeat(end));
    }
    let errors = match Lexer::new(&copy, LuaVersion::lua51()).collect() {
        LexerResult::Ok(_) => return None,
        LexerResult::Recovered(_, errors) | LexerResult::Fatal(errors) => errors,
    };
    errors.iter().find_map(|error| {
        let at = error.range().0.bytes();
        (source.as_bytes().get(at) == Some(&b'`')).then(|| {
            Diagnostic::error(
                Lint::Syntax,
                Span::from_offsets(source, at, at + 1),
                "Lua syntax error: unexpected character '`'",
            )
            .with_label("not Lua")
        })
    })
}

/// The first use of Lua 5.2+ syntax (`goto`, `::label::`, `//`, bitwise
/// operators), which Redis's Lua 5.1 does not have.
fn newer_lua_syntax(source: &str) -> Option<Diagnostic> {
    let (tokens, errors) = match Lexer::new(source, LuaVersion::lua51()).collect() {
        LexerResult::Ok(tokens) => (tokens, Vec::new()),
        LexerResult::Recovered(tokens, errors) => (tokens, errors),
        LexerResult::Fatal(errors) => (Vec::new(), errors),
    };
    // A character Lua 5.1 has no token for: `&`, `|`, `~` alone.
    let from_characters = errors.iter().find_map(|error| match error.error() {
        TokenizerErrorType::UnexpectedToken(c) => {
            newer_lua_character(source, error.range().0.bytes(), *c)
        }
        _ => None,
    });
    let from_tokens = newer_lua_tokens(source, &tokens);
    [from_characters, from_tokens]
        .into_iter()
        .flatten()
        .min_by_key(|d| d.primary_span().map(|s| s.start.offset))
}

/// `goto name`, `::`, `//`, `<<`, `>>` among Lua 5.1 tokens.
fn newer_lua_tokens(source: &str, tokens: &[Token]) -> Option<Diagnostic> {
    let tokens: Vec<&Token> = tokens
        .iter()
        .filter(|t| !t.token_type().is_trivia())
        .collect();
    for pair in tokens.windows(2) {
        let (first, second) = (pair[0], pair[1]);
        let start = first.start_position().bytes();
        let adjacent = first.end_position().bytes() == second.start_position().bytes();
        let first_text = first.to_string();
        let second_text = second.to_string();
        let (what, help) = match (first_text.as_str(), second_text.as_str()) {
            ("goto", _) if matches!(second.token_type(), TokenType::Identifier { .. }) => (
                "`goto` is Lua 5.2 syntax, but Redis runs Lua 5.1",
                "use a loop with `break`, or an `if` around the rest of the block",
            ),
            (":", ":") if adjacent => (
                "`::label::` is Lua 5.2 syntax, but Redis runs Lua 5.1",
                "Lua 5.1 has no labels or `goto`",
            ),
            ("/", "/") if adjacent => (
                "`//` (floor division) is Lua 5.3 syntax, but Redis runs Lua 5.1",
                "write `math.floor(a / b)`",
            ),
            ("<", "<") | (">", ">") if adjacent => (
                "bit shifts are Lua 5.3 syntax, but Redis runs Lua 5.1",
                "use `bit.lshift(a, n)` / `bit.rshift(a, n)`",
            ),
            _ => continue,
        };
        let end = second.end_position().bytes();
        return Some(
            Diagnostic::error(Lint::Syntax, Span::from_offsets(source, start, end), what)
                .with_label("not Lua 5.1")
                .with_help(help),
        );
    }
    None
}

/// The diagnostic for a Lua 5.3 bitwise operator character at `offset`.
fn newer_lua_character(source: &str, offset: usize, c: char) -> Option<Diagnostic> {
    let function = match c {
        '&' => "bit.band(a, b)",
        '|' => "bit.bor(a, b)",
        '~' => "bit.bxor(a, b)` or `bit.bnot(a)",
        _ => return None,
    };
    Some(
        Diagnostic::error(
            Lint::Syntax,
            Span::from_offsets(source, offset, offset + c.len_utf8()),
            format!("`{c}` is a Lua 5.3 bitwise operator, but Redis runs Lua 5.1"),
        )
        .with_label("not Lua 5.1")
        .with_help(format!("use the `bit` library: `{function}`")),
    )
}

/// full_moon's messages, phrased for a Lua 5.1 reader.
fn syntax_message(message: &str) -> String {
    // Tokenizer messages end with " (1:10 to 1:11)": the caret shows that.
    let message = match message.rfind(" (") {
        Some(i) if message.ends_with(')') && message[i..].contains(" to ") => &message[..i],
        _ => message,
    };
    let mut message = message.trim().to_string();
    if let Some(first) = message.get(..1) {
        let lower = first.to_lowercase();
        message.replace_range(..1, &lower);
    }
    format!("Lua syntax error: {message}")
}

/// Finds the first place where the script nests deeper than [`MAX_NESTING`]
/// syntax levels, counting the way Lua 5.1's parser recurses: every open
/// bracket and block (`function`, `do`, `then`, `repeat`) is a level, and so
/// is every operator that makes the parser recurse within an expression
/// (unary `not`, `#`, `-`, and the right-associative `..` and `^`) until the
/// expression can have ended (a statement keyword, `=` or `;` at the same
/// bracket level). Strings and comments are skipped.
///
/// The count errs on the high side only, so it refuses nothing that Redis's
/// Lua (which stops at 200 levels: "chunk has too many syntax levels") would
/// run.
fn too_deep(source: &str) -> Option<Span> {
    let bytes = source.as_bytes();
    // For each open bracket or block, the operators counted at its level.
    let mut levels: Vec<usize> = vec![0];
    let mut depth: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        i += 1;
        match c {
            b'-' if bytes.get(i) == Some(&b'-') => {
                i += 1;
                if let Some(level) = long_bracket_level(&bytes[i..]) {
                    i = skip_long_bracket(bytes, i, level);
                } else {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' | b'\'' => {
                while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'[' if long_bracket_level(&bytes[start..]).is_some() => {
                let level = long_bracket_level(&bytes[start..]).unwrap_or(0);
                i = skip_long_bracket(bytes, start, level);
                continue;
            }
            b'(' | b'{' | b'[' => open(&mut levels, &mut depth),
            b')' | b'}' | b']' => close(&mut levels, &mut depth),
            b'-' | b'#' | b'^' => operator(&mut levels, &mut depth),
            b'.' if bytes.get(i) == Some(&b'.') && bytes.get(i + 1) != Some(&b'.') => {
                i += 1;
                operator(&mut levels, &mut depth);
            }
            b'=' | b';' => end_expression(&mut levels, &mut depth),
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match &source[start..i] {
                    "function" | "do" | "then" | "repeat" => open(&mut levels, &mut depth),
                    "end" | "until" => close(&mut levels, &mut depth),
                    "not" => operator(&mut levels, &mut depth),
                    "local" | "return" | "if" | "elseif" | "else" | "while" | "for" | "break"
                    | "in" => end_expression(&mut levels, &mut depth),
                    _ => {}
                }
            }
            _ => continue,
        }
        if depth > MAX_NESTING {
            return Some(Span::from_offsets(source, start, i));
        }
    }
    None
}

fn open(levels: &mut Vec<usize>, depth: &mut usize) {
    levels.push(0);
    *depth += 1;
}

fn close(levels: &mut Vec<usize>, depth: &mut usize) {
    if levels.len() > 1 {
        let operators = levels.pop().unwrap_or(0);
        *depth = depth.saturating_sub(operators + 1);
    }
}

fn operator(levels: &mut [usize], depth: &mut usize) {
    if let Some(current) = levels.last_mut() {
        *current += 1;
        *depth += 1;
    }
}

fn end_expression(levels: &mut [usize], depth: &mut usize) {
    if let Some(current) = levels.last_mut() {
        *depth -= *current;
        *current = 0;
    }
}

/// If `rest` starts a long bracket `[==[`, its level (the number of `=`).
fn long_bracket_level(rest: &[u8]) -> Option<usize> {
    if rest.first() != Some(&b'[') {
        return None;
    }
    let level = rest[1..].iter().take_while(|&&b| b == b'=').count();
    (rest.get(1 + level) == Some(&b'[')).then_some(level)
}

/// The index just past the long bracket of `level` that starts at `start`.
fn skip_long_bracket(bytes: &[u8], start: usize, level: usize) -> usize {
    let mut i = start + level + 2;
    while i < bytes.len() {
        if bytes[i] == b']'
            && bytes[i + 1..].iter().take(level).all(|&b| b == b'=')
            && bytes.get(i + 1 + level) == Some(&b']')
            && bytes.len() > i + level
        {
            return i + level + 2;
        }
        i += 1;
    }
    bytes.len()
}

/// The flags of a `#!lua flags=a,b` first line, if the script has one.
pub(crate) fn shebang_flags(source: &str) -> Option<Vec<String>> {
    let first = source.lines().next()?;
    let rest = first.strip_prefix("#!")?;
    let mut words = rest.split_whitespace();
    if words.next() != Some("lua") {
        return Some(Vec::new());
    }
    Some(
        words
            .filter_map(|w| w.strip_prefix("flags="))
            .flat_map(|f| f.split(','))
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

#[cfg(test)]
mod tests;
