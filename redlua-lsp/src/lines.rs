//! Byte offsets of a document and the protocol's positions, both ways.
//!
//! A protocol position is a 0-based line and a column counted in the
//! negotiated units: UTF-16 code units (the protocol's default) or bytes
//! (`utf-8`, when the client offers it). Lines end at `\n`, `\r\n` or a
//! lone `\r`, as the protocol says.
//!
//! Invariants: every offset [`LineIndex::offset`] returns is within the text
//! and on a character boundary, whatever position it is given (a line past
//! the end is the end; a column past the line's end is the line's end; a
//! column inside a character is that character's start).

use lsp_types::{Position, PositionEncodingKind, Range};

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// UTF-16 code units: the protocol's default.
    #[default]
    Utf16,
    /// Bytes of UTF-8.
    Utf8,
}

impl Encoding {
    /// The kind to announce in the server's capabilities.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf8 => PositionEncodingKind::UTF8,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf8 => c.len_utf8(),
        }
    }
}

/// The line starts of one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset of each line's first byte; the first is 0.
    starts: Vec<usize>,
    encoding: Encoding,
}

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &str, encoding: Encoding) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            let ends_line = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if ends_line {
                starts.push(i + 1);
            }
        }
        LineIndex { starts, encoding }
    }

    /// The protocol position of byte `offset` of `text` (clamped to it).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        // Between the `\r` and `\n` of a line break: the line's end.
        let offset = offset.min(self.line_end(text, line));
        let column: usize = text[start..offset]
            .chars()
            .map(|c| self.encoding.units(c))
            .sum();
        Position::new(saturate(line), saturate(column))
    }

    /// The protocol range of bytes `start..end` of `text`.
    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(
            self.position(text, start),
            self.position(text, end.max(start)),
        )
    }

    /// The byte offset of `position` in `text` (see the invariants above).
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.starts.get(line) else {
            return text.len();
        };
        let end = self.line_end(text, line);
        let mut units = 0;
        for (i, c) in text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += self.encoding.units(c);
            if units > position.character as usize {
                return start + i; // inside a character: its start
            }
        }
        end
    }

    /// Where line `line`'s text ends, before its line break.
    fn line_end(&self, text: &str, line: usize) -> usize {
        let next = self.starts.get(line + 1).copied().unwrap_or(text.len());
        let body = &text[self.starts[line]..next];
        let trimmed = body
            .strip_suffix("\r\n")
            .or_else(|| body.strip_suffix('\n'))
            .or_else(|| body.strip_suffix('\r'))
            .unwrap_or(body);
        self.starts[line] + trimmed.len()
    }

    /// How many lines the text has (a text ending in a line break has an
    /// empty last line).
    #[cfg(test)]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_code_units() {
        let text = "a😀b\r\nx\ry";
        let index = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(index.line_count(), 3);
        // 'b' is after a 4-byte, 2-unit character.
        assert_eq!(index.position(text, 5), Position::new(0, 3));
        assert_eq!(index.offset(text, Position::new(0, 3)), 5);
        // Inside the surrogate pair: the character's start.
        assert_eq!(index.offset(text, Position::new(0, 2)), 1);
        // Past the line's end: before its `\r\n`.
        assert_eq!(index.offset(text, Position::new(0, 99)), 6);
        // A lone `\r` ends a line.
        assert_eq!(index.position(text, 10), Position::new(2, 0));
        assert_eq!(index.offset(text, Position::new(9, 0)), text.len());
        // Inside the `\r\n`: the line's end.
        assert_eq!(index.position(text, 7), Position::new(0, 4));
    }

    #[test]
    fn utf8_columns_count_bytes() {
        let text = "é=1";
        let index = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(index.position(text, 2), Position::new(0, 2));
        assert_eq!(index.offset(text, Position::new(0, 1)), 0);
        assert_eq!(
            index.position(text, 1),
            Position::new(0, 0),
            "not a boundary"
        );
    }
}
