//! Where `redis.call(...)` and `redis.pcall(...)` are in the tokens of a
//! script, and which argument a byte of the text is in: what hover and
//! completion ask.
//!
//! Invariants: a [`CallSite`] is found only for the tokens `redis`, `.`,
//! `call` or `pcall`, `(` in a row (comments between are skipped); its
//! arguments are the top-level comma-separated runs of tokens up to the
//! matching `)`, or up to the end of the text when it is not closed.

use crate::lex::{Kind, Token};
use redlua_analyzer::commands::ArgShape;

/// One `redis.call(` / `redis.pcall(` and its arguments.
#[derive(Debug, Clone)]
pub struct CallSite {
    /// Index of the `call` / `pcall` token.
    pub function: usize,
    /// `true` for `redis.pcall`.
    pub pcall: bool,
    /// Each argument's token indices (first, one past the last).
    pub args: Vec<(usize, usize)>,
}

impl CallSite {
    /// The argument holding token `token`, if any.
    pub fn arg_of(&self, token: usize) -> Option<usize> {
        self.args
            .iter()
            .position(|&(first, end)| (first..end).contains(&token))
    }

    /// Argument `n` as a string or number literal's contents.
    pub fn literal<'t>(&self, tokens: &[Token], text: &'t str, n: usize) -> Option<&'t str> {
        let &(first, end) = self.args.get(n)?;
        if end != first + 1 {
            return None;
        }
        let token = tokens[first];
        match token.kind {
            Kind::String => Some(token.contents(text)),
            Kind::Number => Some(token.text(text)),
            _ => None,
        }
    }

    /// The arguments' shapes, as the command and reply tables take them:
    /// literals, values, and a spread (`unpack(...)`, `...`, or a call in
    /// last position).
    pub fn shapes<'t>(&self, tokens: &[Token], text: &'t str) -> Vec<ArgShape<'t>> {
        let mut shapes = Vec::new();
        for (n, &(first, end)) in self.args.iter().enumerate() {
            if let Some(literal) = self.literal(tokens, text, n) {
                shapes.push(ArgShape::Literal(literal));
                continue;
            }
            let words = &tokens[first..end];
            let last = n + 1 == self.args.len();
            let spread = words
                .iter()
                .any(|t| t.text(text) == "..." || t.text(text) == "unpack")
                || (last && words.last().is_some_and(|t| t.text(text) == ")"));
            if spread {
                shapes.push(ArgShape::Spread);
                break;
            }
            shapes.push(ArgShape::Value);
        }
        shapes
    }
}

/// The tokens without comments.
pub fn code_tokens(text: &str) -> Vec<Token> {
    crate::lex::tokens(text)
        .into_iter()
        .filter(|t| t.kind != Kind::Comment)
        .collect()
}

/// Every call site of `tokens` (comments already removed).
pub fn call_sites(tokens: &[Token], text: &str) -> Vec<CallSite> {
    let word = |i: usize| tokens.get(i).map_or("", |t| t.text(text));
    let mut sites = Vec::new();
    for i in 0..tokens.len() {
        let function = word(i);
        if (function != "call" && function != "pcall")
            || i < 2
            || word(i - 1) != "."
            || word(i - 2) != "redis"
            || word(i + 1) != "("
        {
            continue;
        }
        let mut args = Vec::new();
        let mut depth = 0usize;
        let mut first = i + 2;
        let mut j = i + 2;
        while j < tokens.len() {
            match word(j) {
                "(" | "{" | "[" => depth += 1,
                ")" | "}" | "]" if depth > 0 => depth -= 1,
                ")" => break,
                "," if depth == 0 => {
                    args.push((first, j));
                    first = j + 1;
                }
                _ => {}
            }
            j += 1;
        }
        if first < j {
            args.push((first, j));
        }
        sites.push(CallSite {
            function: i,
            pcall: function == "pcall",
            args,
        });
    }
    sites
}

/// The index of the token that `offset` is in, or that ends at `offset`
/// (the cursor just after a word).
pub fn token_at(tokens: &[Token], offset: usize) -> Option<usize> {
    let word_ending_here = |i: usize| {
        let t = tokens[i];
        t.end == offset && t.kind != Kind::Punct
    };
    let after = tokens.partition_point(|t| t.start <= offset);
    let index = after.checked_sub(1)?;
    let token = tokens[index];
    if token.start == offset && index > 0 && word_ending_here(index - 1) {
        return Some(index - 1); // `redis|.call`: the word before the cursor
    }
    (offset < token.end || word_ending_here(index)).then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_calls_and_their_arguments() {
        let text =
            "local v = redis.pcall('SET', KEYS[1], f(ARGV[1], 2), 'EX', 10)\nredis.call('GET'";
        let tokens = code_tokens(text);
        let sites = call_sites(&tokens, text);
        assert_eq!(sites.len(), 2);
        assert!(sites[0].pcall);
        assert_eq!(sites[0].args.len(), 5);
        assert_eq!(sites[0].literal(&tokens, text, 0), Some("SET"));
        assert_eq!(sites[0].literal(&tokens, text, 4), Some("10"));
        assert_eq!(
            sites[0].shapes(&tokens, text),
            [
                ArgShape::Literal("SET"),
                ArgShape::Value,
                ArgShape::Value,
                ArgShape::Literal("EX"),
                ArgShape::Literal("10"),
            ]
        );
        // Not closed: the arguments run to the end.
        assert_eq!(sites[1].literal(&tokens, text, 0), Some("GET"));
    }

    #[test]
    fn the_token_at_an_offset() {
        let text = "redis.call('GET')";
        let tokens = code_tokens(text);
        assert_eq!(token_at(&tokens, 0), Some(0));
        assert_eq!(token_at(&tokens, 5), Some(0), "just after `redis`");
        assert_eq!(token_at(&tokens, 12), Some(4), "inside the string");
        assert_eq!(token_at(&tokens, 17), None, "after `)`");
    }
}
