//! A forgiving Lua tokenizer for the editor's questions about a place in the
//! text ("is the cursor in the first argument of `redis.call`?"), which must
//! be answered while the script is half-typed and does not parse.
//!
//! Invariants: it accepts any text and never fails; tokens are in order,
//! do not overlap, and their offsets are character boundaries of the text.
//! A string or comment left open ends at the end of its line (a quoted
//! string) or of the text (a long bracket), marked as not closed.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A name or keyword.
    Name,
    /// A string literal, quoted or long-bracketed.
    String,
    /// A number literal.
    Number,
    /// An operator or punctuation (`.`, `(`, `==`, ...), or a character Lua
    /// does not know.
    Punct,
    /// A comment.
    Comment,
}

/// One token: its kind and bytes `start..end` of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Its first byte.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// For a string: where its contents start and end (inside the quotes).
    pub inner: (usize, usize),
    /// For a string or long comment: whether it is closed. A line comment
    /// is not: it runs to the end of its line.
    pub closed: bool,
}

impl Token {
    /// The token's text.
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }

    /// A string's contents, as written (escapes left as they are).
    pub fn contents<'t>(&self, text: &'t str) -> &'t str {
        &text[self.inner.0..self.inner.1]
    }
}

/// The tokens of `text`, comments included.
pub fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        let simple = |kind, end| Token {
            kind,
            start,
            end,
            inner: (start, start),
            closed: true,
        };
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if text[i..].starts_with("--") {
            let token = match long_bracket(bytes, i + 2) {
                Some(level) => {
                    let (inner_end, end, closed) = close_long(text, i + 2, level);
                    Token {
                        kind: Kind::Comment,
                        start,
                        end,
                        inner: (i + 2, inner_end),
                        closed,
                    }
                }
                None => Token {
                    closed: false,
                    ..simple(Kind::Comment, line_end(bytes, i))
                },
            };
            i = token.end;
            out.push(token);
            continue;
        }
        if b == b'['
            && let Some(level) = long_bracket(bytes, i)
        {
            let open = i + level + 2;
            let (inner_end, end, closed) = close_long(text, i, level);
            out.push(Token {
                kind: Kind::String,
                start,
                end,
                inner: (open, inner_end),
                closed,
            });
            i = end;
            continue;
        }
        if b == b'\'' || b == b'"' {
            let mut j = i + 1;
            let mut closed = false;
            while j < bytes.len() {
                match bytes[j] {
                    b'\\' => j = (j + 2).min(bytes.len()),
                    b'\n' | b'\r' => break,
                    c if c == b => {
                        closed = true;
                        break;
                    }
                    _ => j += 1,
                }
            }
            let j = boundary(text, j);
            let end = if closed { j + 1 } else { j };
            out.push(Token {
                kind: Kind::String,
                start,
                end,
                inner: (i + 1, j),
                closed,
            });
            i = end;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            let end = scan(bytes, i, |c| c.is_ascii_alphanumeric() || c == b'_');
            out.push(simple(Kind::Name, end));
            i = end;
            continue;
        }
        if b.is_ascii_digit() || (b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < bytes.len() {
                let c = bytes[j];
                let exponent_sign = (c == b'+' || c == b'-')
                    && j > i
                    && matches!(bytes[j - 1], b'e' | b'E' | b'p' | b'P');
                if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exponent_sign {
                    j += 1;
                } else {
                    break;
                }
            }
            out.push(simple(Kind::Number, j));
            i = j;
            continue;
        }
        let len = ["...", "..", "==", "~=", "<=", ">=", "::"]
            .iter()
            .find(|op| text[i..].starts_with(**op))
            .map_or_else(
                || text[i..].chars().next().map_or(1, char::len_utf8),
                |op| op.len(),
            );
        out.push(simple(Kind::Punct, i + len));
        i += len;
    }
    out
}

/// `[[`, `[=[`, ... at `at`: its level (the number of `=`).
fn long_bracket(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let level = bytes[at + 1..].iter().take_while(|&&c| c == b'=').count();
    (bytes.get(at + 1 + level) == Some(&b'[')).then_some(level)
}

/// The end of the long bracket opened at `open` with `level`: where its
/// contents end, where it ends, and whether it is closed.
fn close_long(text: &str, open: usize, level: usize) -> (usize, usize, bool) {
    let from = open + level + 2;
    let close = format!("]{}]", "=".repeat(level));
    match text[from..].find(&close) {
        Some(at) => (from + at, from + at + close.len(), true),
        None => (text.len(), text.len(), false),
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    scan(bytes, from, |c| c != b'\n' && c != b'\r')
}

fn scan(bytes: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    from + bytes[from..].iter().take_while(|&&c| keep(c)).count()
}

/// `at`, moved forward to a character boundary of `text`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str, bool)> {
        tokens(text)
            .iter()
            .map(|t| (t.kind, t.text(text), t.closed))
            .collect()
    }

    #[test]
    fn reads_calls_strings_and_comments() {
        use Kind::*;
        assert_eq!(
            kinds("-- hi\nredis.call('GET', KEYS[1]) --[==[ x ]==] [[s]] 1e-3 ~= \"a\\\"b"),
            [
                (Comment, "-- hi", false),
                (Name, "redis", true),
                (Punct, ".", true),
                (Name, "call", true),
                (Punct, "(", true),
                (String, "'GET'", true),
                (Punct, ",", true),
                (Name, "KEYS", true),
                (Punct, "[", true),
                (Number, "1", true),
                (Punct, "]", true),
                (Punct, ")", true),
                (Comment, "--[==[ x ]==]", true),
                (String, "[[s]]", true),
                (Number, "1e-3", true),
                (Punct, "~=", true),
                (String, "\"a\\\"b", false),
            ]
        );
    }

    #[test]
    fn open_strings_end_at_the_line_and_odd_bytes_are_tokens() {
        let text = "x = 'ab\ny = é\u{0}[==[";
        let all = tokens(text);
        let string = all.iter().find(|t| t.kind == Kind::String).unwrap();
        assert_eq!((string.contents(text), string.closed), ("ab", false));
        assert!(
            all.iter()
                .all(|t| text.is_char_boundary(t.start) && text.is_char_boundary(t.end))
        );
        assert!(!all.last().unwrap().closed);
    }
}
