//! The typed contract with the Lua scripts: what their arguments mean and
//! what their replies say, decoded in one place.
//!
//! A reply that is a set of codes declares them here once, as named
//! constants listed in its `ReplyCodes`; its decoder matches on those
//! constants, and `#[redis_script(..., codes)]` (`lock_scripts.rs`) checks
//! every `return` of the scripts against them at compile time.

use redis::{FromRedisValue, ParsingError, RedisWrite, ToRedisArgs, Value};
use std::time::Duration;

/// Declares the codes of a reply type: a constant for each, and its
/// [`ReplyCodes`](crate::reply::ReplyCodes), every code in one shape
/// (`Integer`, `Pair` or `Triple`).
macro_rules! codes {
    ($type:ident: $shape:ident { $($name:ident = $code:expr),* $(,)? }) => {
        impl $type {
            $(const $name: i64 = $code;)*
        }
        impl $crate::reply::ReplyCodes for $type {
            const CODES: &'static [$crate::reply::ReplyCode] =
                &[$($crate::reply::ReplyCode::$shape($type::$name)),*];
        }
    };
}
pub(crate) use codes;

/// What an acquire script answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquired {
    /// `{1, token}`: the owner now holds the lock. `token` is the new
    /// fencing token, or 0 for a re-entry (which keeps the holder's token).
    Held { token: u64 },
    /// `{0, ttl}`: another owner holds it; `ttl` is its remaining lease
    /// (`None`, sent as -1: the key has no expiry).
    Busy { ttl: Option<Duration> },
    /// `{2, 0}`: re-entry refused: the owner holds nothing (any more).
    NotHeld,
    /// `{3, 0}`: the attempt was abandoned (undone) before this copy of it
    /// ran.
    Abandoned,
}

codes!(Acquired: Pair { HELD = 1, BUSY = 0, NOT_HELD = 2, ABANDONED = 3 });

impl FromRedisValue for Acquired {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let (code, value): (i64, i64) = FromRedisValue::from_redis_value(v)?;
        match code {
            Acquired::HELD => Ok(Acquired::Held {
                token: u64::try_from(value).unwrap_or(0),
            }),
            Acquired::BUSY => Ok(Acquired::Busy {
                ttl: u64::try_from(value).ok().map(Duration::from_millis),
            }),
            Acquired::NOT_HELD => Ok(Acquired::NotHeld),
            Acquired::ABANDONED => Ok(Acquired::Abandoned),
            other => Err(format!("unknown acquire reply code {other}").into()),
        }
    }
}

/// What a release script answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// `1`: the lock (or the write side) is free now; waiters were told.
    Freed,
    /// `0`: the owner still holds it (other holds of the same owner remain).
    StillHeld,
    /// `-1`: the owner did not hold it: nothing changed.
    NotHeld,
    /// `-2`, undo only: the acquire never took effect, and now never will.
    NeverTook,
}

codes!(Released: Integer { FREED = 1, STILL_HELD = 0, NOT_HELD = -1, NEVER_TOOK = -2 });

impl FromRedisValue for Released {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let code: i64 = FromRedisValue::from_redis_value(v)?;
        match code {
            Released::FREED => Ok(Released::Freed),
            Released::STILL_HELD => Ok(Released::StillHeld),
            Released::NOT_HELD => Ok(Released::NotHeld),
            Released::NEVER_TOOK => Ok(Released::NeverTook),
            other => Err(format!("unknown release reply code {other}").into()),
        }
    }
}

/// The message a release publishes on the lock's channel (Redisson's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeMessage {
    /// `0`: one waiter per client may take the lock.
    One,
    /// `1`: every waiter should try again (read/write locks).
    All,
}

impl WakeMessage {
    fn as_bytes(self) -> &'static [u8] {
        match self {
            WakeMessage::One => b"0",
            WakeMessage::All => b"1",
        }
    }

    /// The message a payload carries, if it is one.
    pub(crate) fn parse(payload: &[u8]) -> Option<WakeMessage> {
        [WakeMessage::One, WakeMessage::All]
            .into_iter()
            .find(|m| m.as_bytes() == payload)
    }
}

impl ToRedisArgs for WakeMessage {
    fn write_redis_args<W: ?Sized + RedisWrite>(&self, out: &mut W) {
        out.write_arg(self.as_bytes());
    }
}

/// How a release script announces a release: with `PUBLISH`, or with
/// `SPUBLISH` on a sharded channel (Redis Cluster 7+, where waiters
/// `SSUBSCRIBE` on the node that owns the lock's slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Publish {
    /// `PUBLISH`: a single server, or a cluster without sharded pub/sub.
    Plain,
    /// `SPUBLISH`: a cluster with sharded pub/sub.
    Sharded,
}

/// What a release script is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReleaseMode {
    /// Release one hold (idempotent through the latch).
    Release,
    /// Undo an abandoned acquire, if and only if it took effect.
    Undo,
}

/// A yes/no argument, sent as `1` / `0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flag(pub bool);

/// The side of a read/write lock, as its `mode` field spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Read,
    Write,
}

/// The word each value of an argument type is sent as.
macro_rules! words {
    ($($type:ty { $($value:pat => $word:literal),* $(,)? })*) => {$(
        impl redis::ToRedisArgs for $type {
            fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
                out.write_arg(match self { $($value => $word),* });
            }
        }
    )*};
}
pub(crate) use words;

words! {
    Publish { Publish::Plain => b"publish", Publish::Sharded => b"spublish" }
    ReleaseMode { ReleaseMode::Release => b"release", ReleaseMode::Undo => b"undo" }
    Flag { Flag(true) => b"1", Flag(false) => b"0" }
    Side { Side::Read => b"read", Side::Write => b"write" }
}

/// A duration as the scripts take it: whole milliseconds, rounded up, at
/// least 1 (for a checked lease, at most [`MAX_LEASE`](crate::MAX_LEASE)).
pub(crate) fn millis(d: Duration) -> u64 {
    let ms = d.as_millis() + u128::from(!d.subsec_nanos().is_multiple_of(1_000_000));
    u64::try_from(ms).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_decode() {
        let pair = |a, b| Value::Array(vec![Value::Int(a), Value::Int(b)]);
        assert_eq!(
            Acquired::from_redis_value(pair(1, 42)).unwrap(),
            Acquired::Held { token: 42 }
        );
        assert_eq!(
            Acquired::from_redis_value(pair(0, 1500)).unwrap(),
            Acquired::Busy {
                ttl: Some(Duration::from_millis(1500))
            }
        );
        assert_eq!(
            Acquired::from_redis_value(pair(0, -1)).unwrap(),
            Acquired::Busy { ttl: None }
        );
        assert_eq!(
            Acquired::from_redis_value(pair(2, 0)).unwrap(),
            Acquired::NotHeld
        );
        assert!(Acquired::from_redis_value(pair(9, 0)).is_err());
        assert_eq!(
            Released::from_redis_value(Value::Int(-2)).unwrap(),
            Released::NeverTook
        );
        assert!(Released::from_redis_value(Value::Nil).is_err());
        assert_eq!(WakeMessage::parse(b"1"), Some(WakeMessage::All));
        assert_eq!(WakeMessage::parse(b"x"), None);
        assert_eq!(Flag(true).to_redis_args(), vec![b"1".to_vec()]);
        assert_eq!(Publish::Plain.to_redis_args(), vec![b"publish".to_vec()]);
        assert_eq!(Publish::Sharded.to_redis_args(), vec![b"spublish".to_vec()]);
    }
}
