//! The value of an element of a value: a reply's element by index (the
//! types Redis gives each position, under RESP2 and RESP3), a status's
//! `ok`, and what iterating over a reply gives.

use crate::calls::CallArg;
use crate::commands::ArgShape;
use crate::facts::value::{Inferred, Origin, Range, Ty};
use crate::facts::{Key, SCANS, Types};
use crate::replies::{self, LuaTypes, Protocol};

/// Commands whose array reply holds strings (RESP2).
const STRING_ARRAYS: &[&str] = &[
    "LRANGE",
    "SMEMBERS",
    "KEYS",
    "ZRANGE",
    "ZREVRANGE",
    "ZRANGEBYSCORE",
    "ZREVRANGEBYSCORE",
    "ZRANGEBYLEX",
    "ZREVRANGEBYLEX",
    "HKEYS",
    "HVALS",
    "SINTER",
    "SUNION",
    "SDIFF",
    "SRANDMEMBER",
    "SPOP",
    "LPOP",
    "RPOP",
    "HRANDFIELD",
    "ZRANDMEMBER",
    "HGETALL",
    "CONFIG GET",
    "ZPOPMIN",
    "ZPOPMAX",
];

/// Commands whose array reply holds strings or `false` (nil replies).
const NULLABLE_ARRAYS: &[&str] = &["MGET", "HMGET"];

/// The earliest and latest Unix time `TIME` may give, in seconds.
const TIME_SECONDS: (f64, f64) = (1.0e9, 1.0e10);

impl Types<'_> {
    /// `value[key]`: a reply's element, a status's `ok`, the one field of
    /// a RESP3 reply table; otherwise not known.
    pub(crate) fn index(&self, value: &Inferred, key: Option<&Key>) -> Inferred {
        if let Some(element) = self.element(value, key) {
            return element;
        }
        if value.ty == Ty::STATUS && key == Some(&Key::Name("ok".to_string())) {
            return Inferred::of(Ty::STRING);
        }
        // The one field of a RESP3 reply table: `redis.call('ZSCORE', k, m).double`.
        let table = value.ty.minus(Ty::FALSY.union(Ty::ERROR));
        for (shape, field, ty) in [
            (Ty::MAP, "map", Ty::TABLE),
            (Ty::SET, "set", Ty::TABLE),
            (Ty::DOUBLE, "double", Ty::NUMBER),
            (Ty::BIG_NUMBER, "big_number", Ty::STRING),
            (Ty::VERBATIM, "verbatim_string", Ty::TABLE),
        ] {
            if table == shape && key == Some(&Key::Name(field.to_string())) {
                return Inferred::of(ty);
            }
        }
        Inferred::any()
    }

    /// Whether the caller passes `KEYS[n]` / `ARGV[n]` (`table` names
    /// which), as the declared counts say; `None` when they do not say.
    pub(super) fn passed(&self, table: &str, n: f64) -> Option<bool> {
        let declared = self.declared?;
        let (count, variadic) = if table == "KEYS" {
            (declared.keys, declared.keys_variadic)
        } else {
            (declared.args, declared.args_variadic)
        };
        if variadic || n.fract() != 0.0 || n < 1.0 {
            return None;
        }
        Some(n <= count as f64)
    }

    /// An element of an array reply: `key` is the literal index, `None`
    /// for a computed one.
    pub(super) fn element(&self, value: &Inferred, key: Option<&Key>) -> Option<Inferred> {
        let (command, _, pcall) = value.reply()?;
        if pcall || value.ty.intersects(Ty::ERROR) {
            return None;
        }
        let number = match key {
            Some(Key::Number(n)) => Some(*n),
            Some(Key::Name(_)) => return None,
            None => None,
        };
        if SCANS.contains(&command) && value.ty.intersects(Ty::ARRAY) {
            return match number {
                Some(1.0) => Some(Inferred::of(Ty::STRING).with_origin(Origin::Cursor {
                    command: command.to_string(),
                })),
                Some(2.0) => Some(Inferred::of(Ty::ARRAY)),
                _ => None,
            };
        }
        if self.protocol == Some(Protocol::Resp3)
            && value.ty.within(Ty::ARRAY.union(Ty::NIL))
            && self.flat_under_resp2(value)
        {
            // Pairs come as `{member, score}` arrays under RESP3.
            let pair = Inferred::of(Ty::ARRAY).with_origin(Origin::Element {
                command: command.to_string(),
            });
            return Some(Inferred {
                ty: Ty::ARRAY.union(Ty::NIL),
                ..pair
            });
        }
        if self.protocol != Some(Protocol::Resp2)
            || !value.ty.within(Ty::ARRAY.union(Ty::PAIRS).union(Ty::FALSE))
        {
            return None;
        }
        let element = |ty: Ty| {
            Inferred::of(ty).with_origin(Origin::Element {
                command: command.to_string(),
            })
        };
        if command == "TIME" {
            return Some(match number {
                Some(1.0) => element(Ty::STRING).within(Range::new(TIME_SECONDS.0, TIME_SECONDS.1)),
                Some(2.0) => element(Ty::STRING).within(Range::new(0.0, 999_999.0)),
                _ => element(Ty::STRING.union(Ty::NIL)),
            });
        }
        // Past the end, any index gives nil.
        if STRING_ARRAYS.contains(&command) {
            return Some(element(Ty::STRING.union(Ty::NIL)));
        }
        if NULLABLE_ARRAYS.contains(&command) {
            // One element per key or field asked for.
            let asked = self.requested(value).unwrap_or(0);
            let inside = number.is_some_and(|n| n >= 1.0 && n <= asked as f64);
            let ty = Ty::STRING.union(Ty::FALSE);
            return Some(element(if inside { ty } else { ty.union(Ty::NIL) }));
        }
        None
    }

    /// Whether the call of the reply `value` gives a flat table of pairs
    /// under RESP2 (WITHSCORES, ZPOPMIN, HRANDFIELD ... WITHVALUES).
    pub(super) fn flat_under_resp2(&self, value: &Inferred) -> bool {
        let Some(Origin::Reply { span, .. }) = &value.origin else {
            return false;
        };
        let Some(call) = self.calls.get(&(span.start.offset, span.end.offset)) else {
            return false;
        };
        let shapes: Vec<ArgShape<'_>> = call.args.iter().map(CallArg::shape).collect();
        replies::of_call_in(Protocol::Resp2, &shapes)
            .is_some_and(|lua| lua.contains(LuaTypes::PAIRS))
    }

    /// How many keys (MGET) or fields (HMGET) the call of the reply
    /// `value` asks for, when none of its arguments spreads.
    pub(super) fn requested(&self, value: &Inferred) -> Option<usize> {
        let Some(Origin::Reply { command, span, .. }) = &value.origin else {
            return None;
        };
        let call = self.calls.get(&(span.start.offset, span.end.offset))?;
        if call.has_spread() {
            return None;
        }
        let fixed = if command == "HMGET" { 2 } else { 1 };
        call.args.len().checked_sub(fixed)
    }

    /// What iterating over `value` with `ipairs` / `pairs` gives as
    /// values: an element of a reply, never nil.
    pub(crate) fn iterated(&self, value: &Inferred) -> Inferred {
        match self.element(value, None) {
            Some(element) => Inferred {
                ty: element.ty.minus(Ty::NIL),
                ..element
            },
            None => Inferred::any(),
        }
    }
}
