//! The script the analyzer reads for one function of a library: the
//! library's text with what the function cannot see blanked out (keeping
//! every line and column), its body as the main chunk, and its parameters
//! renamed to `KEYS` and `ARGV`. Spans found in it are mapped back to the
//! library's text.

use crate::{Diagnostic, Span, Target};

/// The edits that turn a library into a script.
#[derive(Debug, Default)]
pub(crate) struct Rewrite {
    blanks: Vec<(usize, usize)>,
    renames: Vec<(usize, usize, String)>,
}

/// A length-changing edit: virtual bytes `virtual_start..virtual_end` stand
/// for original bytes `original_start..original_end`.
#[derive(Debug, Clone, Copy)]
struct Shift {
    virtual_start: usize,
    virtual_end: usize,
    original_start: usize,
    original_end: usize,
}

/// The rewritten text, and how to find the original places again.
#[derive(Debug)]
pub(crate) struct Rewritten {
    /// The script to analyze.
    pub text: String,
    shifts: Vec<Shift>,
}

impl Rewrite {
    /// Replaces bytes `start..end` with spaces (newlines stay).
    pub fn blank(&mut self, start: usize, end: usize) {
        if start < end {
            self.blanks.push((start, end));
        }
    }

    /// Replaces the token at `start..end` with `with`, unless it is blanked.
    pub fn rename(&mut self, start: usize, end: usize, with: &str) {
        if start < end {
            self.renames.push((start, end, with.to_string()));
        }
    }

    /// Applies the edits to `source`.
    pub fn apply(mut self, source: &str) -> Rewritten {
        let mut blanked = vec![false; source.len()];
        for &(start, end) in &self.blanks {
            for flag in &mut blanked[start.min(source.len())..end.min(source.len())] {
                *flag = true;
            }
        }
        self.renames.sort_by_key(|r| r.0);
        let mut renames = self.renames.into_iter().peekable();
        let mut text = String::with_capacity(source.len());
        let mut shifts = Vec::new();
        let mut chars = source.char_indices().peekable();
        while let Some(&(at, c)) = chars.peek() {
            while renames.peek().is_some_and(|r| r.0 < at) {
                renames.next();
            }
            if let Some((start, end, with)) = renames.next_if(|r| r.0 == at) {
                let visible = end <= source.len() && !blanked[start..end].iter().any(|b| *b);
                if visible && source.is_char_boundary(end) {
                    let virtual_start = text.len();
                    text.push_str(&with);
                    if with.len() != end - start {
                        shifts.push(Shift {
                            virtual_start,
                            virtual_end: text.len(),
                            original_start: start,
                            original_end: end,
                        });
                    }
                    while chars.peek().is_some_and(|&(i, _)| i < end) {
                        chars.next();
                    }
                    continue;
                }
            }
            chars.next();
            if blanked[at] && c != '\n' && c != '\r' {
                text.extend(std::iter::repeat_n(' ', c.len_utf8()));
            } else {
                text.push(c);
            }
        }
        Rewritten { text, shifts }
    }
}

impl Rewritten {
    /// The original offset of virtual offset `at`.
    pub fn original(&self, at: usize) -> usize {
        let mut delta: isize = 0;
        for shift in &self.shifts {
            if at < shift.virtual_start {
                break;
            }
            if at < shift.virtual_end {
                let into = at - shift.virtual_start;
                return shift.original_start + into.min(shift.original_end - shift.original_start);
            }
            delta = shift.original_end as isize - shift.virtual_end as isize;
        }
        at.saturating_add_signed(delta)
    }

    fn span(&self, source: &str, span: Span) -> Span {
        Span::from_offsets(
            source,
            self.original(span.start.offset),
            self.original(span.end.offset),
        )
    }

    /// `diagnostic`, found in the rewritten text, with its places in
    /// `source`.
    pub fn diagnostic(&self, source: &str, mut diagnostic: Diagnostic) -> Diagnostic {
        if let Target::Script(span) = diagnostic.target {
            diagnostic.target = Target::Script(self.span(source, span));
        }
        for label in &mut diagnostic.secondary {
            label.span = self.span(source, label.span);
        }
        diagnostic
    }
}

/// `text` with the word `from` (not part of a longer name) replaced by `to`.
pub(crate) fn rename_word(text: &str, from: &str, to: &str) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + from.len()..].chars().next();
        let whole = !before.is_some_and(is_name) && !after.is_some_and(is_name);
        let before_is_prev = i == 0 && out.chars().next_back().is_some_and(is_name);
        out.push_str(&rest[..i]);
        out.push_str(if whole && !before_is_prev { to } else { from });
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_keep_lines_and_renames_map_back() {
        let source = "ab\ncdé f\nk[1] + k[2]";
        let mut rewrite = Rewrite::default();
        rewrite.blank(0, 7);
        rewrite.rename(10, 11, "KEYS");
        rewrite.rename(17, 18, "KEYS");
        rewrite.rename(1, 2, "XX"); // blanked: ignored
        let out = rewrite.apply(source);
        assert_eq!(out.text, "  \n     f\nKEYS[1] + KEYS[2]");
        // `+` is at 18 in the rewritten text, 15 in the source.
        assert_eq!(out.original(18), 15);
        assert_eq!(out.original(10), 10);
        assert_eq!(out.original(12), 11, "inside a rename: clamped to its end");
        assert_eq!(out.original(out.text.len()), source.len());
    }

    #[test]
    fn words_are_renamed_whole() {
        assert_eq!(
            rename_word("KEYS[3] is read; KEYSX and XKEYS are not", "KEYS", "keys"),
            "keys[3] is read; KEYSX and XKEYS are not"
        );
        assert_eq!(rename_word("`#KEYS`", "KEYS", "k"), "`#k`");
    }
}
