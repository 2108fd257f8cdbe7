//! Replies declared by their codes: a Rust type that decodes a script's
//! reply states, once, the codes the script answers with
//! ([`ReplyCodes`]), and `#[redis_script(..., returns = T, codes)]` checks
//! every `return` of the script against them at compile time.
//!
//! Invariant: the macro emits one `const` assertion per `return` the
//! analyzer reads a code from, calling [`declares`] with what the script
//! returns there; a code the type does not declare fails the build, with
//! the script's file and line in the message.

/// One reply a script may give, as its Lua `return` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyCode {
    /// `return n`: the integer `n`.
    Integer(i64),
    /// `return {n, value}`: a pair whose first element is the integer `n`
    /// (the second is the reply's value: a token, a TTL, ...).
    Pair(i64),
    /// `return {n, a, b}`: a table of three elements whose first is the
    /// integer `n` (the others are the reply's values).
    Triple(i64),
}

/// A script reply whose Lua shape is a set of codes: a type with this
/// trait decodes the reply (with `redis::FromRedisValue`) and lists here
/// every code it decodes, so that a script that returns another fails to
/// compile.
///
/// ```
/// use redlua::script::{ReplyCode, ReplyCodes};
///
/// /// What `scripts/claim.lua` answers: `{1, token}` or `{0, ttl}`.
/// enum Claimed {
///     Won { token: u64 },
///     Busy { ttl_ms: i64 },
/// }
///
/// impl Claimed {
///     const WON: i64 = 1;
///     const BUSY: i64 = 0;
/// }
///
/// impl ReplyCodes for Claimed {
///     const CODES: &'static [ReplyCode] = &[ReplyCode::Pair(Self::WON), ReplyCode::Pair(Self::BUSY)];
/// }
/// ```
///
/// With `#[redis_script("scripts/claim.lua", returns = Claimed, codes)]`, a
/// `return {2, 0}` in the script is a compile error naming its line.
pub trait ReplyCodes {
    /// Every reply the type decodes.
    const CODES: &'static [ReplyCode];
}

/// Whether `codes` declares every code `lo..=hi` in the shape a `return`
/// gives: an integer, or (`table`) a table of `len` elements whose first is
/// the code. Called by the assertions `#[redis_script(..., codes)]` emits.
#[doc(hidden)]
pub const fn declares(codes: &[ReplyCode], table: bool, lo: i64, hi: i64, len: usize) -> bool {
    let mut code = lo;
    while code <= hi {
        let mut found = false;
        let mut i = 0;
        while i < codes.len() {
            found |= match codes[i] {
                ReplyCode::Integer(n) => !table && n == code,
                ReplyCode::Pair(n) => table && len == 2 && n == code,
                ReplyCode::Triple(n) => table && len == 3 && n == code,
            };
            i += 1;
        }
        if !found {
            return false;
        }
        if code == hi {
            break;
        }
        code += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODES: &[ReplyCode] = &[
        ReplyCode::Pair(1),
        ReplyCode::Pair(0),
        ReplyCode::Integer(-1),
    ];

    #[test]
    fn a_return_is_declared_only_in_its_shape_and_range() {
        assert!(declares(CODES, true, 0, 1, 2));
        assert!(declares(CODES, false, -1, -1, 0));
        // Another code, shape or length.
        assert!(!declares(CODES, true, 2, 2, 2));
        assert!(!declares(CODES, false, 1, 1, 0));
        assert!(!declares(CODES, true, 1, 1, 3));
        assert!(declares(&[ReplyCode::Triple(1)], true, 1, 1, 3));
        assert!(!declares(&[ReplyCode::Triple(1)], true, 1, 1, 2));
        // One code of the range missing.
        assert!(!declares(CODES, false, -1, 0, 0));
        // The ends of i64 do not overflow.
        assert!(!declares(CODES, false, i64::MAX, i64::MAX, 0));
        assert!(declares(
            &[ReplyCode::Integer(i64::MAX)],
            false,
            i64::MAX,
            i64::MAX,
            0
        ));
    }
}
