//! The scripts of the counted primitives (`scripts/semaphore_*.lua`,
//! `leased_*.lua`, `count_down_latch_change.lua`) as typed calls, with
//! their arguments and replies (their codes declared and checked as in
//! `replies.rs`); their keys are Redisson's (see `counted_names.rs`). A
//! semaphore's channel carries the permits available after each change
//! that leaves some; a latch's carries `0` when it opens and `1` when a new
//! count is set.
//!
//! Every write but an acquire carries a request latch, so that a retry
//! after a lost reply returns the first result and changes nothing more;
//! an acquire carries its attempt key instead (see `permits.rs`).

// The generated items these calls do not use (pipelines, `load`, ...).
#![allow(dead_code)]

use crate::protocol::lock_scripts::scripts;
use crate::protocol::replies::{Publish, codes, words};
use redis::{FromRedisValue, ParsingError, Value};
use redlua_macros::redis_script;

/// What a semaphore acquire answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// `{1, available}`: the attempt holds its permits; `available` are left.
    Yes { available: i64 },
    /// `{0, available}`: too few permits: `available` there are.
    No { available: i64 },
    /// `{3, 0}`: the attempt was abandoned (undone) before this copy of it ran.
    Abandoned,
}

codes!(Taken: Pair { YES = 1, NO = 0, ABANDONED = 3 });

impl FromRedisValue for Taken {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let (code, available): (i64, i64) = FromRedisValue::from_redis_value(v)?;
        match code {
            Taken::YES => Ok(Taken::Yes { available }),
            Taken::NO => Ok(Taken::No { available }),
            Taken::ABANDONED => Ok(Taken::Abandoned),
            other => Err(format!("unknown semaphore acquire reply code {other}").into()),
        }
    }
}

/// What a change script answered: whether it changed anything (`{1,
/// value}`) or not (`{0, value}`), and the value (permits available, or a
/// latch's count) after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changed {
    pub changed: bool,
    pub value: i64,
}

codes!(Changed: Pair { CHANGED = 1, UNCHANGED = 0 });

impl FromRedisValue for Changed {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let (code, value): (i64, i64) = FromRedisValue::from_redis_value(v)?;
        let changed = match code {
            Changed::CHANGED => true,
            Changed::UNCHANGED => false,
            other => return Err(format!("unknown change reply code {other}").into()),
        };
        Ok(Changed { changed, value })
    }
}

/// How a semaphore is changed (`semaphore_change.lua`'s `ARGV[1]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SemaphoreChange {
    /// Give back permits (at least 1).
    Release,
    /// Add permits (negative: take them away).
    Add,
    /// Set the permits available.
    Set,
    /// Set them if the semaphore does not exist.
    TrySet,
    /// A leased semaphore: make the permits available plus those taken
    /// this many.
    SetTotal,
}

/// How a count-down latch is changed (`count_down_latch_change.lua`'s `ARGV[1]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatchChange {
    /// Count down by one.
    CountDown,
    /// Set the count if there is none.
    TrySet,
    /// Delete the latch (it opens).
    Delete,
}

words! {
    SemaphoreChange {
        SemaphoreChange::Release => b"release",
        SemaphoreChange::Add => b"add",
        SemaphoreChange::Set => b"set",
        SemaphoreChange::TrySet => b"try_set",
        SemaphoreChange::SetTotal => b"set_total",
    }
    LatchChange {
        LatchChange::CountDown => b"count_down",
        LatchChange::TrySet => b"try_set",
        LatchChange::Delete => b"delete",
    }
}

/// What a semaphore's channel is named after (Redisson's `prefixName`:
/// `redisson_sc:{name}`).
pub(crate) const SEMAPHORE_CHANNEL_PREFIX: &str = "redisson_sc";

/// The permits available that a message on a semaphore's channel announces
/// (Redisson's `SemaphorePubSub` reads it as a number); `None` for any
/// other channel or payload.
pub(crate) fn permits_message(channel: &str, payload: &[u8]) -> Option<i64> {
    let semaphore = channel
        .strip_prefix(SEMAPHORE_CHANNEL_PREFIX)
        .is_some_and(|rest| rest.starts_with(':'));
    if !semaphore {
        return None;
    }
    std::str::from_utf8(payload).ok()?.parse().ok()
}

/// What a leased acquire answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeasedTaken {
    /// `{1, token, available}`: the attempt holds its permits, with this
    /// fencing token; `available` are left.
    Yes { token: u64, available: i64 },
    /// `{0, wait, available}`: too few permits; the first permit taken
    /// expires in `wait` (`None`, sent as -1: none is taken).
    No {
        wait: Option<std::time::Duration>,
        available: i64,
    },
    /// `{3, 0, 0}`: the attempt was abandoned (undone) before this copy of
    /// it ran.
    Abandoned,
}

codes!(LeasedTaken: Triple { YES = 1, NO = 0, ABANDONED = 3 });

impl FromRedisValue for LeasedTaken {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let (code, a, available): (i64, i64, i64) = FromRedisValue::from_redis_value(v)?;
        match code {
            LeasedTaken::YES => Ok(LeasedTaken::Yes {
                token: u64::try_from(a).unwrap_or(0),
                available,
            }),
            LeasedTaken::NO => Ok(LeasedTaken::No {
                wait: u64::try_from(a).ok().map(std::time::Duration::from_millis),
                available,
            }),
            LeasedTaken::ABANDONED => Ok(LeasedTaken::Abandoned),
            other => Err(format!("unknown leased acquire reply code {other}").into()),
        }
    }
}

/// The error `leased_acquire.lua` answers, before writing anything, when
/// the pool (available plus taken) is smaller than the permits asked for.
pub(crate) const POOL_TOO_SMALL: &str = "redlua: more permits than the pool";

scripts! {
    /// Takes permits of a semaphore, once per attempt.
    TakePermits("scripts/semaphore_acquire.lua", returns = Taken, codes)
    keys { semaphore, attempt }
    args {
        permits: u64,
        attempt_ttl_ms: u64,
    }

    /// Gives an abandoned acquire's permits back if it took them, and closes
    /// the attempt: 1 when permits were given back.
    UndoPermits("scripts/semaphore_undo.lua", returns = i64)
    keys { semaphore, channel, attempt }
    args {
        permits: u64,
        attempt_ttl_ms: u64,
        publish: Publish,
    }

    /// Releases, adds or sets a semaphore's permits, once per request.
    ChangeSemaphore("scripts/semaphore_change.lua", returns = Changed, codes)
    keys { semaphore, channel, latch, timeouts }
    args {
        change: SemaphoreChange,
        permits: i64,
        latch_ttl_ms: u64,
        publish: Publish,
    }

    /// Takes leased permits `ids` (16 bytes each), once per attempt.
    TakeLeased("scripts/leased_acquire.lua", returns = LeasedTaken, codes)
    keys { semaphore, timeouts, channel, attempt, token }
    args {
        lease_ms: u64,
        attempt_ttl_ms: u64,
        token_ttl_ms: u64,
        publish: Publish,
        ..ids: Vec<&'a [u8]>,
    }

    /// Gives leased permits back, once per request: how many of the ids were
    /// still taken, and how many of those had expired.
    ReleaseLeased("scripts/leased_release.lua", returns = (i64, i64))
    keys { semaphore, timeouts, channel, latch }
    args {
        latch_ttl_ms: u64,
        publish: Publish,
        ..ids: Vec<&'a [u8]>,
    }

    /// Renews leased permits: 1 per id renewed, 0 per id gone.
    RenewLeased("scripts/leased_renew.lua", returns = Vec<i64>)
    keys { semaphore, timeouts, channel }
    args {
        lease_ms: u64,
        publish: Publish,
        ..ids: Vec<&'a [u8]>,
    }

    /// Undoes an abandoned leased acquire: how many permits came back.
    UndoLeased("scripts/leased_undo.lua", returns = i64)
    keys { semaphore, timeouts, channel, attempt }
    args {
        attempt_ttl_ms: u64,
        publish: Publish,
        ..ids: Vec<&'a [u8]>,
    }

    /// Counts a latch down, sets its count, or deletes it, once per request.
    ChangeLatch("scripts/count_down_latch_change.lua", returns = Changed, codes)
    keys { latch, channel, request }
    args {
        change: LatchChange,
        count: u64,
        latch_ttl_ms: u64,
        publish: Publish,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::ToRedisArgs;

    #[test]
    fn the_pool_error_is_the_one_the_script_answers() {
        let script = include_str!("../../scripts/leased_acquire.lua");
        assert!(script.contains(&format!("error_reply('ERR {POOL_TOO_SMALL}')")));
    }

    #[test]
    fn replies_and_messages_decode() {
        let pair = |a, b| Value::Array(vec![Value::Int(a), Value::Int(b)]);
        assert_eq!(
            Taken::from_redis_value(pair(1, 3)).unwrap(),
            Taken::Yes { available: 3 }
        );
        assert_eq!(
            Taken::from_redis_value(pair(0, -2)).unwrap(),
            Taken::No { available: -2 }
        );
        assert_eq!(
            Taken::from_redis_value(pair(3, 0)).unwrap(),
            Taken::Abandoned
        );
        assert!(Taken::from_redis_value(pair(2, 0)).is_err());
        let triple = |a, b, c| Value::Array(vec![Value::Int(a), Value::Int(b), Value::Int(c)]);
        assert_eq!(
            LeasedTaken::from_redis_value(triple(1, 9, 2)).unwrap(),
            LeasedTaken::Yes {
                token: 9,
                available: 2
            }
        );
        assert_eq!(
            LeasedTaken::from_redis_value(triple(0, -1, 0)).unwrap(),
            LeasedTaken::No {
                wait: None,
                available: 0
            }
        );
        assert!(LeasedTaken::from_redis_value(triple(2, 0, 0)).is_err());
        assert_eq!(
            Changed::from_redis_value(pair(0, 7)).unwrap(),
            Changed {
                changed: false,
                value: 7
            }
        );
        assert!(Changed::from_redis_value(pair(2, 7)).is_err());
        assert_eq!(permits_message("redisson_sc:{s}", b"12"), Some(12));
        assert_eq!(permits_message("redisson_sc:{s}", b"1"), Some(1));
        assert_eq!(permits_message("redisson_sc:{s}", b"-1"), Some(-1));
        assert_eq!(permits_message("redisson_sc:{s}", b"x"), None);
        // A lock's `1` wakes every waiter: not a count.
        assert_eq!(permits_message("redisson_rwlock:{s}", b"1"), None);
        assert_eq!(
            SemaphoreChange::TrySet.to_redis_args(),
            vec![b"try_set".to_vec()]
        );
        assert_eq!(
            LatchChange::CountDown.to_redis_args(),
            vec![b"count_down".to_vec()]
        );
    }
}
