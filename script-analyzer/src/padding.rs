//! A copy of a script in which some statements have room to grow:
//! spaces after their last token, before their last line break. Lines and
//! columns are the script's; byte offsets are mapped both ways
//! ([`Layout`]). An editor's analysis works on such a copy, so that a
//! change inside one of those statements moves nothing else.

use crate::{Diagnostic, Label, Span, Target};
use std::sync::Arc;

/// A name found with its value, by its bytes ([`Layout::parts`]).
pub(crate) trait Placed {
    /// Where it starts.
    fn start(&self) -> usize;
}

/// `names` in the order of the text; at one place, the first found.
pub(crate) fn sorted<T: Placed>(mut names: Vec<T>) -> Vec<T> {
    names.sort_by_key(Placed::start);
    names
}

/// Where the script's text is in its padded copy: the units, each given
/// room to grow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) slots: Vec<Slot>,
}

/// One unit's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Where it starts in the padded copy.
    pub(crate) padded: usize,
    /// Where it starts in the text.
    pub(crate) text: usize,
    /// Its bytes up to its last line break (not included).
    pub(crate) len: usize,
    /// The bytes from its start to its last line break in the padded
    /// copy: `len`, then spaces.
    pub(crate) room: usize,
}

/// The room given a unit of `len` bytes.
fn room(len: usize) -> usize {
    len + 64 + len / 2
}

impl Layout {
    /// The padded copy of `text` whose units are `units` (start, length up
    /// to the last line break), and its layout.
    pub(crate) fn pad(text: &str, units: &[(usize, usize)]) -> (String, Layout) {
        let mut padded = String::with_capacity(text.len() + units.len() * 96);
        let mut slots = Vec::with_capacity(units.len());
        let mut copied = 0;
        for &(start, len) in units {
            padded.push_str(&text[copied..start]);
            let at = padded.len();
            padded.push_str(&text[start..start + len]);
            let room = room(len);
            padded.extend(std::iter::repeat_n(' ', room - len));
            slots.push(Slot {
                padded: at,
                text: start,
                len,
                room,
            });
            copied = start + len;
        }
        padded.push_str(&text[copied..]);
        (padded, Layout { slots })
    }

    /// The offset in the padded copy of byte `offset` of the text.
    pub(crate) fn to_padded(&self, offset: usize) -> usize {
        let i = self.slots.partition_point(|s| s.text <= offset);
        let Some(slot) = i.checked_sub(1).map(|i| self.slots[i]) else {
            return offset;
        };
        if offset < slot.text + slot.len {
            slot.padded + (offset - slot.text)
        } else {
            slot.padded + slot.room + (offset - slot.text - slot.len)
        }
    }

    /// The offset in the text of byte `offset` of the padded copy (the
    /// room of a unit is where its line ends).
    pub(crate) fn to_text(&self, offset: usize) -> usize {
        let i = self.slots.partition_point(|s| s.padded <= offset);
        let Some(slot) = i.checked_sub(1).map(|i| self.slots[i]) else {
            return offset;
        };
        if offset < slot.padded + slot.len {
            slot.text + (offset - slot.padded)
        } else if offset < slot.padded + slot.room {
            slot.text + slot.len
        } else {
            slot.text + slot.len + (offset - slot.padded - slot.room)
        }
    }

    /// `span` of the padded copy, in `text`.
    pub(crate) fn span(&self, text: &str, span: Span) -> Span {
        Span::from_offsets(
            text,
            self.to_text(span.start.offset),
            self.to_text(span.end.offset),
        )
    }

    /// `diagnostics` of the padded copy, in `text`.
    pub(crate) fn diagnostics(&self, text: &str, diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
        diagnostics
            .iter()
            .map(|d| {
                let mut d = d.clone();
                if let Target::Script(span) = d.target {
                    d.target = Target::Script(self.span(text, span));
                }
                d.secondary = d
                    .secondary
                    .iter()
                    .map(|label| Label {
                        span: self.span(text, label.span),
                        message: label.message.clone(),
                    })
                    .collect();
                d
            })
            .collect()
    }

    /// The bytes of unit `i` in the padded copy (up to its room).
    pub(crate) fn unit(&self, i: usize) -> (usize, usize) {
        let slot = self.slots[i];
        (slot.padded, slot.padded + slot.len)
    }

    /// `names` (of the padded copy) in runs: before the first unit, the
    /// first unit, between it and the next, ..., after the last.
    pub(crate) fn parts<T: Placed + Clone>(&self, names: Vec<T>) -> Vec<Arc<[T]>> {
        let names = sorted(names);
        let mut parts = Vec::with_capacity(self.slots.len() * 2 + 1);
        let mut rest = names.as_slice();
        for slot in &self.slots {
            for end in [slot.padded, slot.padded + slot.room] {
                let at = rest.partition_point(|n| n.start() < end);
                parts.push(Arc::from(&rest[..at]));
                rest = &rest[at..];
            }
        }
        parts.push(Arc::from(rest));
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_both_ways_and_the_room_is_the_line_end() {
        let text = "a\nfunction f()\nend\nb\nfunction g()\nend\r\nc";
        let f = text.find("function f").unwrap();
        let g = text.find("function g").unwrap();
        let units = [
            (f, "function f()\nend".len()),
            (g, "function g()\nend".len()),
        ];
        let (padded, layout) = Layout::pad(text, &units);
        assert_eq!(padded.lines().count(), text.lines().count());
        for t in 0..=text.len() {
            let v = layout.to_padded(t);
            assert_eq!(layout.to_text(v), t, "byte {t}");
            assert_eq!(padded.as_bytes().get(v), text.as_bytes().get(t), "byte {t}");
        }
        // The spaces after `end` are where the line ends.
        let end = f + units[0].1;
        let slot = layout.slots[0];
        assert!(
            padded[slot.padded + slot.len..slot.padded + slot.room]
                .bytes()
                .all(|b| b == b' ')
        );
        assert_eq!(layout.to_text(slot.padded + slot.len + 3), end);
    }
}
