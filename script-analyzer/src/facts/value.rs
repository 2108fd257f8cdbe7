//! The abstract values: a set of Lua types ([`Ty`]), where the value comes
//! from ([`Origin`]), and the numeric range it lies in ([`Range`]).

use crate::Span;
use crate::replies::LuaTypes;

/// A set of Lua types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Ty(u32);

impl Ty {
    /// No value at all (not yet known, in the fixed point).
    pub const EMPTY: Ty = Ty(0);
    /// `nil`.
    pub const NIL: Ty = Ty(1);
    /// `false`.
    pub const FALSE: Ty = Ty(1 << 1);
    /// `true`.
    pub const TRUE: Ty = Ty(1 << 2);
    /// A number with an integral value.
    pub const INT: Ty = Ty(1 << 3);
    /// A number that may have a fraction.
    pub const FLOAT: Ty = Ty(1 << 4);
    /// A string.
    pub const STRING: Ty = Ty(1 << 5);
    /// A status reply, `{ok = ...}`.
    pub const STATUS: Ty = Ty(1 << 6);
    /// An error table, `{err = ...}` (from `redis.pcall`).
    pub const ERROR: Ty = Ty(1 << 7);
    /// An array reply.
    pub const ARRAY: Ty = Ty(1 << 8);
    /// A flat table of pairs (a map reply, `WITHSCORES`).
    pub const PAIRS: Ty = Ty(1 << 9);
    /// Any other table.
    pub const TABLE: Ty = Ty(1 << 10);
    /// A function.
    pub const FUNCTION: Ty = Ty(1 << 11);
    /// Userdata and the like (`cjson.null`).
    pub const OTHER: Ty = Ty(1 << 12);
    /// A RESP3 map reply, `{map = {...}}`.
    pub const MAP: Ty = Ty(1 << 13);
    /// A RESP3 set reply, `{set = {...}}`.
    pub const SET: Ty = Ty(1 << 14);
    /// A RESP3 double reply, `{double = n}`.
    pub const DOUBLE: Ty = Ty(1 << 15);
    /// A RESP3 big number reply, `{big_number = "..."}`.
    pub const BIG_NUMBER: Ty = Ty(1 << 16);
    /// A RESP3 verbatim string reply, `{verbatim_string = {...}}`.
    pub const VERBATIM: Ty = Ty(1 << 17);
    /// Anything: not known.
    pub const ANY: Ty = Ty((1 << 18) - 1);
    /// Any number.
    pub const NUMBER: Ty = Ty(Self::INT.0 | Self::FLOAT.0);
    /// A boolean.
    pub const BOOL: Ty = Ty(Self::TRUE.0 | Self::FALSE.0);
    /// The values Lua takes for false.
    pub const FALSY: Ty = Ty(Self::NIL.0 | Self::FALSE.0);

    /// Every kind of table.
    pub const TABLES: Ty = Ty(Self::STATUS.0
        | Self::ERROR.0
        | Self::ARRAY.0
        | Self::PAIRS.0
        | Self::TABLE.0
        | Self::MAP.0
        | Self::SET.0
        | Self::DOUBLE.0
        | Self::BIG_NUMBER.0
        | Self::VERBATIM.0);

    /// The types in both `self` and `other`.
    pub const fn intersection(self, other: Ty) -> Ty {
        Ty(self.0 & other.0)
    }

    /// Every type of `self` and of `other`.
    pub const fn union(self, other: Ty) -> Ty {
        Ty(self.0 | other.0)
    }

    /// The types of `self` that are not in `other`.
    pub const fn minus(self, other: Ty) -> Ty {
        Ty(self.0 & !other.0)
    }

    /// Whether `self` and `other` have a type in common.
    pub const fn intersects(self, other: Ty) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether every type of `self` is in `other` (and `self` is not empty).
    pub const fn within(self, other: Ty) -> bool {
        self.0 != 0 && self.0 & !other.0 == 0
    }

    /// Whether every type of `self` is in `other` (or `self` is empty).
    pub const fn subset(self, other: Ty) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether nothing is known.
    pub const fn is_any(self) -> bool {
        self.0 == Self::ANY.0
    }

    /// The Lua view of a reply, plus the error table under `pcall`.
    pub fn from_reply(lua: LuaTypes, pcall: bool) -> Ty {
        let mut ty = Ty::EMPTY;
        for (shape, t) in [
            (LuaTypes::NUMBER, Ty::INT),
            (LuaTypes::STRING, Ty::STRING),
            (LuaTypes::FALSE, Ty::FALSE),
            (LuaTypes::STATUS, Ty::STATUS),
            (LuaTypes::ARRAY, Ty::ARRAY),
            (LuaTypes::PAIRS, Ty::PAIRS),
            (LuaTypes::NIL, Ty::NIL),
            (LuaTypes::MAP, Ty::MAP),
            (LuaTypes::SET, Ty::SET),
            (LuaTypes::DOUBLE, Ty::DOUBLE),
            (LuaTypes::BOOLEAN, Ty::BOOL),
            (LuaTypes::BIG_NUMBER, Ty::BIG_NUMBER),
            (LuaTypes::VERBATIM, Ty::VERBATIM),
        ] {
            if lua.contains(shape) {
                ty = ty.union(t);
            }
        }
        if pcall { ty.union(Ty::ERROR) } else { ty }
    }
}

/// Where a value comes from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The reply of a `redis.call` / `redis.pcall`.
    Reply {
        /// The command as messages show it: `GET`, `CONFIG GET`.
        command: String,
        /// What the reply table says Lua receives (without the error table).
        shape: LuaTypes,
        /// `redis.pcall`.
        pcall: bool,
        /// The call.
        span: Span,
    },
    /// `tonumber(x)`, where `x` came from `of` (if known).
    Tonumber {
        /// The origin of the argument.
        of: Option<Box<Origin>>,
    },
    /// The cursor (first element) of a SCAN-family reply: a string.
    Cursor {
        /// `SCAN`, `HSCAN`, ...
        command: String,
    },
    /// An input: `KEYS[n]` or `ARGV[n]`, as written.
    Input {
        /// `ARGV[1]`.
        name: String,
    },
    /// An input the caller does not pass (`ARGV[5]` when 4 arguments are
    /// declared): nil.
    Missing {
        /// `ARGV[5]`.
        name: String,
    },
    /// A string built by `..` from an input (`'^' .. ARGV[1]`).
    Concat {
        /// The input, as written: `ARGV[1]`.
        input: String,
    },
    /// An element of a command's array reply.
    Element {
        /// The command as messages show it: `HGETALL`.
        command: String,
    },
    /// A document `cjson.decode` gives: JSON's empty
    /// arrays and empty objects both become empty tables, so that
    /// `cjson.encode` writes each empty array of it back as `{}`.
    Decoded,
    /// A reply, or an element of one, that the script is taken to reason
    /// about: a record's field it names (`local state, queue =
    /// unpack(redis.call('HMGET', ...))`), what its own function returns.
    /// Its types stay (a string or `false`), and where it comes from, but
    /// its nil reply explains no `false`.
    Trusted {
        /// The reply or element ([`Origin::Reply`], [`Origin::Element`]).
        of: Box<Origin>,
    },
    /// `math.floor` or `math.ceil` of a division, which small inputs
    /// round to 0.
    Rounded {
        /// Where.
        span: Span,
    },
    /// A difference, which may be 0 or negative.
    Difference {
        /// Where.
        span: Span,
    },
    /// `true` or `false`, made where it is by the code being walked: a
    /// comparison, `not`, a literal. (What the script's own functions
    /// return is not: a boolean one gives is meant as one.)
    Boolean {
        /// The operator or literal.
        span: Span,
    },
    /// A computation that may give a fraction.
    Fraction {
        /// Why: "a division gives a fractional number".
        why: String,
        /// Where.
        span: Span,
        /// It may be infinite (or not a number): a division by a number
        /// that may be 0, `math.huge`. Rounding keeps it so.
        infinite: bool,
    },
}

impl Origin {
    /// The same, its places moved by `moved`.
    pub(crate) fn moved(mut self, moved: &impl Fn(Span) -> Span) -> Origin {
        match &mut self {
            Origin::Reply { span, .. }
            | Origin::Rounded { span }
            | Origin::Difference { span }
            | Origin::Boolean { span }
            | Origin::Fraction { span, .. } => *span = moved(*span),
            Origin::Tonumber { of: Some(of) } | Origin::Trusted { of } => {
                **of = of.as_ref().clone().moved(moved);
            }
            Origin::Tonumber { of: None }
            | Origin::Cursor { .. }
            | Origin::Input { .. }
            | Origin::Missing { .. }
            | Origin::Concat { .. }
            | Origin::Element { .. }
            | Origin::Decoded => {}
        }
        self
    }

    /// Whether a value from here may be `false` or nil because of where it
    /// comes from: a reply that may be nil, an element of one, an input the
    /// caller does not pass, or `tonumber` of one of those.
    pub(crate) fn explains_false(&self) -> bool {
        let falsy = LuaTypes::FALSE.union(LuaTypes::NIL);
        match self {
            Origin::Reply { shape, .. } => shape.intersects(falsy),
            Origin::Element { .. } | Origin::Missing { .. } => true,
            Origin::Tonumber { of: Some(of) } => matches!(
                **of,
                Origin::Reply { .. } | Origin::Element { .. } | Origin::Missing { .. }
            ),
            _ => false,
        }
    }

    /// What two origins that explain no `false` say of their join: the
    /// replies of two calls Lua sees alike (both `redis.pcall` or neither,
    /// the same reply shape) stay a reply, the first; a rounding or a
    /// difference on either side, which may be 0, makes the join so; a
    /// boolean made on one side gives way to the other side's origin;
    /// else nothing.
    fn joined(a: Origin, b: Origin) -> Option<Origin> {
        match (&a, &b) {
            (
                Origin::Reply {
                    shape: sa,
                    pcall: pa,
                    ..
                },
                Origin::Reply {
                    shape: sb,
                    pcall: pb,
                    ..
                },
            ) => (sa == sb && pa == pb).then_some(a),
            (Origin::Rounded { .. } | Origin::Difference { .. }, _) => Some(a),
            (_, Origin::Rounded { .. } | Origin::Difference { .. }) => Some(b),
            // A boolean made on either side says the join may be one; any
            // other origin says more.
            (Origin::Boolean { .. }, _) => Some(b),
            (_, Origin::Boolean { .. }) => Some(a),
            _ => None,
        }
    }

    /// The origin that makes a computation on `values` fractional: an
    /// infinite one first, else the first fraction.
    pub(crate) fn fraction_of<'v>(
        values: impl IntoIterator<Item = &'v Inferred>,
    ) -> Option<Origin> {
        let mut found: Option<&Origin> = None;
        for value in values {
            match &value.origin {
                Some(o @ Origin::Fraction { infinite: true, .. }) => return Some(o.clone()),
                Some(o @ Origin::Fraction { .. }) => {
                    found.get_or_insert(o);
                }
                _ => {}
            }
        }
        found.cloned()
    }
}

/// The bounds of a number, or of a string's value as a number: `lo <= n
/// <= hi`. Bounds that are not known are infinite.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    /// The least value.
    pub lo: f64,
    /// The greatest value.
    pub hi: f64,
}

impl PartialEq for Range {
    fn eq(&self, other: &Range) -> bool {
        self.lo.to_bits() == other.lo.to_bits() && self.hi.to_bits() == other.hi.to_bits()
    }
}

impl Eq for Range {}

impl Default for Range {
    fn default() -> Range {
        Range::ANY
    }
}

impl Range {
    /// Any number.
    pub const ANY: Range = Range {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    /// `lo..=hi`; any number if that is not a range.
    pub fn new(lo: f64, hi: f64) -> Range {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            Range::ANY
        } else {
            Range { lo, hi }
        }
    }

    /// Exactly `n`.
    pub fn exact(n: f64) -> Range {
        Range::new(n, n)
    }

    /// Whether nothing is known.
    pub fn is_any(self) -> bool {
        self == Range::ANY
    }

    /// Both ranges.
    pub fn hull(self, other: Range) -> Range {
        Range::new(self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// `self` widened where `next` grew: a bound that moves goes to
    /// infinity, so that loops settle.
    pub fn widen(self, next: Range) -> Range {
        let lo = if next.lo < self.lo {
            f64::NEG_INFINITY
        } else {
            self.lo
        };
        let hi = if next.hi > self.hi {
            f64::INFINITY
        } else {
            self.hi
        };
        Range::new(lo, hi)
    }

    /// The range of `a op b`, from the four corners (NaN: any).
    fn corners(self, other: Range, op: impl Fn(f64, f64) -> f64) -> Range {
        let values = [
            op(self.lo, other.lo),
            op(self.lo, other.hi),
            op(self.hi, other.lo),
            op(self.hi, other.hi),
        ];
        if values.iter().any(|v| v.is_nan()) {
            return Range::ANY;
        }
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Range::new(lo, hi)
    }

    /// `self + other`.
    pub fn plus(self, other: Range) -> Range {
        Range::new(self.lo + other.lo, self.hi + other.hi)
    }

    /// `self - other`.
    pub fn minus(self, other: Range) -> Range {
        Range::new(self.lo - other.hi, self.hi - other.lo)
    }

    /// `self * other`.
    pub fn times(self, other: Range) -> Range {
        self.corners(other, |a, b| a * b)
    }

    /// `self / other`: known only when `other` keeps one sign.
    pub fn divided(self, other: Range) -> Range {
        if other.lo > 0.0 || other.hi < 0.0 {
            self.corners(other, |a, b| a / b)
        } else {
            Range::ANY
        }
    }

    /// `-self`.
    pub fn negated(self) -> Range {
        Range::new(-self.hi, -self.lo)
    }

    /// `math.floor(self)`.
    pub fn floor(self) -> Range {
        Range::new(self.lo.floor(), self.hi.floor())
    }

    /// `math.ceil(self)`.
    pub fn ceil(self) -> Range {
        Range::new(self.lo.ceil(), self.hi.ceil())
    }
}

/// What the inference says about an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inferred {
    /// The types it may have.
    pub ty: Ty,
    /// Where it comes from, when that is one thing; where paths join, the
    /// side that explains what the joined value may be (a fraction, a nil
    /// reply that makes it `false`).
    pub origin: Option<Origin>,
    /// The number it may be, once converted to one.
    pub range: Range,
}

impl Inferred {
    pub(crate) fn of(ty: Ty) -> Inferred {
        Inferred {
            ty,
            origin: None,
            range: Range::ANY,
        }
    }

    /// The same value, known to lie in `range`.
    pub(crate) fn within(self, range: Range) -> Inferred {
        Inferred { range, ..self }
    }

    /// The same value, from `origin`.
    pub(crate) fn with_origin(self, origin: Origin) -> Inferred {
        Inferred {
            origin: Some(origin),
            ..self
        }
    }

    /// An array of the reply `origin` (a table filled from it).
    pub fn of_reply_array(origin: Origin) -> Inferred {
        Inferred::of(Ty::ARRAY).with_origin(origin)
    }

    pub(crate) fn any() -> Inferred {
        Inferred::of(Ty::ANY)
    }

    /// Whether the value comes from Redis: a reply, an element of one, or
    /// one of those the script is taken to reason about.
    pub fn from_redis(&self) -> bool {
        match &self.origin {
            Some(Origin::Reply { .. } | Origin::Element { .. }) => true,
            Some(Origin::Trusted { of }) => {
                matches!(**of, Origin::Reply { .. } | Origin::Element { .. })
            }
            _ => false,
        }
    }

    /// Where the value comes from, seen through [`Origin::Trusted`].
    pub fn source(&self) -> Option<&Origin> {
        match &self.origin {
            Some(Origin::Trusted { of }) => Some(of),
            other => other.as_ref(),
        }
    }

    /// The command reply this is, if it is one.
    pub fn reply(&self) -> Option<(&str, LuaTypes, bool)> {
        match &self.origin {
            Some(Origin::Reply {
                command,
                shape,
                pcall,
                ..
            }) => Some((command, *shape, *pcall)),
            _ => None,
        }
    }

    /// Either this value or `other`.
    pub(crate) fn merge(self, other: Inferred) -> Inferred {
        let origin = match (self.origin, other.origin) {
            (Some(a), Some(b)) if a == b => Some(a),
            // An infinite number, then a fraction, on either side is what
            // makes the join so.
            (Some(a @ Origin::Fraction { infinite: true, .. }), Some(_))
            | (Some(_), Some(a @ Origin::Fraction { infinite: true, .. })) => Some(a),
            (Some(a @ Origin::Fraction { .. }), Some(_))
            | (Some(_), Some(a @ Origin::Fraction { .. })) => Some(a),
            // A side that may be `false` or nil because of where it comes
            // from (a nil reply, a missing input) is what makes the join so.
            (Some(a), Some(b)) => {
                let a_falsy = self.ty.intersects(Ty::FALSY) && a.explains_false();
                let b_falsy = other.ty.intersects(Ty::FALSY) && b.explains_false();
                match (a_falsy, b_falsy) {
                    (true, _) => Some(a),
                    (false, true) => Some(b),
                    (false, false) => Origin::joined(a, b),
                }
            }
            // An element of a reply is nil only past the reply's end; a nil
            // from a side that comes from nowhere known (`local last`, then
            // set in a loop over the reply) is not explained by it.
            (Some(Origin::Element { .. }), None)
                if !self.ty.intersects(Ty::NIL) && other.ty.intersects(Ty::NIL) =>
            {
                None
            }
            (None, Some(Origin::Element { .. }))
                if !other.ty.intersects(Ty::NIL) && self.ty.intersects(Ty::NIL) =>
            {
                None
            }
            (a, b) => a.or(b),
        };
        // A value that is no value at all (not reached yet) adds no range.
        let range = if self.ty == Ty::EMPTY {
            other.range
        } else if other.ty == Ty::EMPTY {
            self.range
        } else {
            self.range.hull(other.range)
        };
        Inferred {
            ty: self.ty.union(other.ty),
            origin,
            range,
        }
    }
}
