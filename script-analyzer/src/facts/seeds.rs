//! Keys the script writes with literal numbers, and what reading them back
//! gives: `redis.call('SET', KEYS[1], '9007199254740993')` then
//! `redis.call('INCR', KEYS[1])` replies a number past 2^53, which Lua's
//! doubles do not hold exactly.
//!
//! Invariants: a key (or a hash field) is seeded only when every write of
//! it that the script makes (SET, SETNX, GETSET, SETEX, PSETEX, HSET,
//! HSETNX, HMSET) is of a literal number, and the key and field are named
//! the same way in each (`KEYS[1]`, a literal field); a write of anything
//! else, or a key named by an expression the table cannot compare, leaves
//! it unseeded. The range of a seeded key is the hull of its literals. A
//! reply read from a seeded key (GET, HGET: the text; INCR, HINCRBY and
//! INCRBY / HINCRBY by a literal that is not negative: at least the least
//! seed) takes that range; other scripts may write the key too, so lints
//! word what they find from it as "may".

use super::value::Range;
use crate::calls::{CallArg, RedisCall};
use std::collections::HashMap;

/// The seeded keys of a script.
#[derive(Default, PartialEq)]
pub(super) struct Seeds {
    /// By key (its text in the script) and field (`None` for a string key):
    /// the hull of the literals written, or `None` once something else is.
    keys: HashMap<(String, Option<String>), Option<Range>>,
}

/// The text of the key argument at `at`, if it names the key the same way
/// wherever it is written: `KEYS[n]`, a literal or a plain expression.
fn key_text(source: &str, call: &RedisCall, at: usize) -> Option<String> {
    let arg = call.args.get(at)?;
    match arg {
        CallArg::Spread(_) => None,
        CallArg::Key(n, _) => Some(format!("KEYS[{n}]")),
        CallArg::Literal(text, _) => Some(format!("'{text}'")),
        CallArg::Expr(span) => source
            .get(span.start.offset..span.end.offset)
            .map(str::to_owned),
    }
}

/// The number a literal argument is, if it is one.
fn literal_number(arg: &CallArg) -> Option<f64> {
    let text = arg.literal()?.trim();
    let n: f64 = text.parse().ok()?;
    n.is_finite().then_some(n)
}

impl Seeds {
    /// The seeds of the script whose calls are `calls`.
    pub fn of(source: &str, calls: &[RedisCall]) -> Seeds {
        let mut seeds = Seeds::default();
        for call in calls {
            let Some(command) = call.command_name().map(str::to_ascii_uppercase) else {
                continue;
            };
            // (field place, value place) pairs, after the key at place 1.
            let writes: Vec<(Option<usize>, usize)> = match command.as_str() {
                "SET" | "SETNX" | "GETSET" => vec![(None, 2)],
                "SETEX" | "PSETEX" => vec![(None, 3)],
                "HSET" | "HSETNX" | "HMSET" => (2..call.args.len())
                    .step_by(2)
                    .map(|f| (Some(f), f + 1))
                    .collect(),
                _ => continue,
            };
            let Some(key) = key_text(source, call, 1) else {
                continue;
            };
            for (field, value) in writes {
                let field = match field {
                    None => None,
                    Some(at) => match call.args.get(at).and_then(CallArg::literal) {
                        Some(name) => Some(name.to_owned()),
                        // A computed field may be any field of the key.
                        None => {
                            seeds.poison_key(&key);
                            continue;
                        }
                    },
                };
                let number = call.args.get(value).and_then(literal_number);
                let entry = seeds
                    .keys
                    .entry((key.clone(), field))
                    .or_insert_with(|| number.map(Range::exact));
                *entry = match (*entry, number) {
                    (Some(range), Some(n)) => Some(range.hull(Range::exact(n))),
                    _ => None,
                };
            }
        }
        seeds
    }

    /// Every field of `key` is no longer seeded.
    fn poison_key(&mut self, key: &str) {
        for ((k, _), range) in self.keys.iter_mut() {
            if k == key {
                *range = None;
            }
        }
        self.keys.insert((key.to_owned(), None), None);
    }

    /// The range of the reply of `call` (`command`, as messages show it),
    /// when it reads a seeded key.
    pub fn reply_range(&self, source: &str, call: &RedisCall, command: &str) -> Option<Range> {
        if self.keys.is_empty() {
            return None;
        }
        let key = key_text(source, call, 1)?;
        let field = |at: usize| {
            call.args
                .get(at)
                .and_then(CallArg::literal)
                .map(str::to_owned)
        };
        let seeded =
            |field: Option<String>| self.keys.get(&(key.clone(), field)).copied().flatten();
        let not_negative = |at: usize| {
            call.args
                .get(at)
                .and_then(literal_number)
                .is_some_and(|n| n >= 0.0)
        };
        match command {
            "GET" => seeded(None),
            "HGET" => seeded(Some(field(2)?)),
            "INCR" => seeded(None).map(|r| Range::new(r.lo, f64::INFINITY)),
            "INCRBY" if not_negative(2) => seeded(None).map(|r| Range::new(r.lo, f64::INFINITY)),
            "HINCRBY" if not_negative(3) => {
                seeded(Some(field(2)?)).map(|r| Range::new(r.lo, f64::INFINITY))
            }
            _ => None,
        }
    }
}
