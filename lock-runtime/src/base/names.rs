//! The Redis keys and channels of a lock, named as Redisson names them:
//!
//! - the lock itself: the name as given (`orders:42`); its fencing token
//!   counter (Redisson's `RFencedLock`): `redisson_lock_token:{orders:42}`;
//! - its channel: `redisson_lock__channel:{orders:42}` for a reentrant lock,
//!   `redisson_rwlock:{orders:42}` for a read/write lock;
//! - a release's latch: `redisson_unlock_latch:{orders:42}:<request-id>`;
//! - a read hold's timeout: `{orders:42}:<owner>:rwlock_timeout:<n>`;
//! - a fair lock's queue and its waiters' deadlines (Redisson's
//!   `RFairLock`): `redisson_lock_queue:{orders:42}` and
//!   `redisson_lock_timeout:{orders:42}`, and each waiter's channel,
//!   `redisson_lock__channel:{orders:42}:<owner>`;
//! - redlua's own keys: a waiting writer's mark (writer-preferring
//!   read/write locks), `{orders:42}:redlua_writer_waiting`; an acquire
//!   attempt's key (short-lived: it stops a late copy of an abandoned
//!   acquire), `{orders:42}:redlua_attempt:<owner>[:<n>]`; a fair lock's
//!   waiters that take a direct handoff (owner -> `<expiry ms>:<try>`, see
//!   `handoff.rs`), `{orders:42}:redlua_handoff`.
//!
//! The braces are a Redis Cluster hash tag: every key of one lock lands in the
//! slot of its name. A name that has braces of its own is used as it is
//! (`redisson_lock__channel:a{b}c`), as Redisson does; a name whose keys would
//! still not share a hash tag is refused.

use crate::base::error::Error;
use std::fmt::Write as _;
use std::sync::Arc;

/// The longest lock name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

/// Redisson's `prefixName`: `prefix:{name}`, or `prefix:name` when the name
/// has braces of its own.
pub(crate) fn prefixed(prefix: &str, name: &str) -> String {
    if name.contains('{') {
        format!("{prefix}:{name}")
    } else {
        format!("{prefix}:{{{name}}}")
    }
}

/// Redisson's `suffixName`: `{name}:suffix`, or `name:suffix` when the name
/// has braces of its own.
pub(crate) fn suffixed(name: &str, suffix: &str) -> String {
    if name.contains('{') {
        format!("{name}:{suffix}")
    } else {
        format!("{{{name}}}:{suffix}")
    }
}

/// Checks a name (`what` it is, in messages) whose keys are `derived`:
/// not empty, at most [`MAX_NAME_LEN`] bytes, and every key in the name's
/// slot (`whose` keys, in the message).
pub(crate) fn check_name(
    name: &str,
    what: &str,
    whose: &str,
    derived: &[String],
) -> Result<(), Error> {
    let reason = if name.is_empty() {
        format!("{what} must not be empty")
    } else if name.len() > MAX_NAME_LEN {
        format!("{what} must be at most 1024 bytes")
    } else if derived.iter().any(|key| hash_tag(key) != hash_tag(name)) {
        format!(
            "its braces would put {whose} keys in different Redis Cluster slots; \
             use at most one non-empty {{...}} hash tag"
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidName {
        name: name.chars().take(80).collect(),
        reason,
    })
}

/// The part of `key` that Redis Cluster hashes: the content of the first
/// `{...}` when it is not empty, else the whole key.
pub(crate) fn hash_tag(key: &str) -> &str {
    if let Some(open) = key.find('{')
        && let Some(len) = key[open + 1..].find('}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// Number of hash slots of a Redis Cluster.
pub(crate) const SLOTS: u16 = 16384;

/// The Redis Cluster hash slot of `key`: CRC16 (XMODEM) of its hash tag,
/// modulo 16384, as the Redis Cluster specification defines it.
pub(crate) fn slot(key: &str) -> u16 {
    crc16::State::<crc16::XMODEM>::calculate(hash_tag(key).as_bytes()) % SLOTS
}

/// The keys of one lock. Those that every acquire or release sends are
/// written once, when the lock handle is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockNames {
    /// The hash holding owner -> hold count (shared: the registry's keys of
    /// the lock's holds hold it too).
    pub lock: Arc<str>,
    /// The channel released locks are announced on.
    pub channel: String,
    /// The fencing token counter.
    token: String,
    /// What every acquire attempt's key starts with.
    attempt_prefix: String,
    /// What every release's latch starts with.
    latch_prefix: String,
}

impl LockNames {
    /// Validates `name` and derives the keys of a reentrant lock.
    pub(crate) fn new(name: &str) -> Result<LockNames, Error> {
        LockNames::with_channel(name, "redisson_lock__channel")
    }

    /// Validates `name` and derives the keys of a read/write lock.
    pub(crate) fn read_write(name: &str) -> Result<LockNames, Error> {
        LockNames::with_channel(name, "redisson_rwlock")
    }

    fn with_channel(name: &str, channel: &str) -> Result<LockNames, Error> {
        let names = LockNames {
            lock: name.into(),
            channel: prefixed(channel, name),
            token: prefixed("redisson_lock_token", name),
            attempt_prefix: suffixed(name, "redlua_attempt:"),
            latch_prefix: prefixed("redisson_unlock_latch", name) + ":",
        };
        let derived = [
            names.channel.clone(),
            names.latch("0"),
            names.timeouts("0:0"),
            names.writer_mark(),
            names.token().to_string(),
            names.attempt("0:0", Some(0)),
            names.queue(),
            names.deadlines(),
            names.waiter_channel("0:0"),
            names.handoffs(),
        ];
        check_name(name, "a lock name", "the lock's", &derived)?;
        Ok(names)
    }

    /// The latch of the release with this request id.
    pub(crate) fn latch(&self, request_id: &str) -> String {
        let mut latch = String::with_capacity(self.latch_prefix.len() + request_id.len());
        latch.push_str(&self.latch_prefix);
        latch.push_str(request_id);
        latch
    }

    /// The prefix of `owner`'s read hold timeouts (`<prefix>:<n>`).
    pub(crate) fn timeouts(&self, owner: &str) -> String {
        format!("{}:{owner}:rwlock_timeout", self.timeouts_prefix())
    }

    /// What every owner's read hold timeouts start with.
    pub(crate) fn timeouts_prefix(&self) -> String {
        if self.lock.contains('{') {
            self.lock.to_string()
        } else {
            format!("{{{}}}", self.lock)
        }
    }

    /// The fencing token counter, Redisson's `RFencedLock` key.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The key of an acquire attempt: the one that made `owner` a holder
    /// (`reentry: None`), or re-entry number `n` of it.
    pub(crate) fn attempt(&self, owner: &str, reentry: Option<u64>) -> String {
        // Room for `:<n>`: a colon and up to 20 digits of a u64.
        let mut attempt = String::with_capacity(self.attempt_prefix.len() + owner.len() + 21);
        attempt.push_str(&self.attempt_prefix);
        attempt.push_str(owner);
        if let Some(n) = reentry {
            let _ = write!(attempt, ":{n}");
        }
        attempt
    }

    /// A fair lock's queue of waiting owners (Redisson's `RFairLock`).
    pub(crate) fn queue(&self) -> String {
        prefixed("redisson_lock_queue", &self.lock)
    }

    /// A fair lock's waiters' deadlines, owner -> ms since the epoch.
    pub(crate) fn deadlines(&self) -> String {
        prefixed("redisson_lock_timeout", &self.lock)
    }

    /// A fair lock's waiters that take a direct handoff, owner -> their
    /// offer (`<expiry ms>:<try>`, see `handoff.rs`).
    pub(crate) fn handoffs(&self) -> String {
        suffixed(&self.lock, "redlua_handoff")
    }

    /// The channel a fair lock's waiter `owner` is woken on: the lock's
    /// channel, `:<owner>`.
    pub(crate) fn waiter_channel(&self, owner: &str) -> String {
        format!("{}:{owner}", self.channel)
    }

    /// The pattern that matches the channels of every fair lock waiter of
    /// the client `client_id` (`<channel>:<client_id>:*`, the glob
    /// characters of the rest escaped).
    pub(crate) fn waiter_pattern(&self, client_id: &str) -> String {
        let mut pattern = String::new();
        for c in format!("{}:{client_id}:", self.channel).chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('*');
        pattern
    }

    /// The mark a waiting writer leaves when writers are preferred.
    pub(crate) fn writer_mark(&self) -> String {
        suffixed(&self.lock, "redlua_writer_waiting")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redisson_names() {
        let names = LockNames::new("orders:42").unwrap();
        assert_eq!(&*names.lock, "orders:42");
        assert_eq!(names.channel, "redisson_lock__channel:{orders:42}");
        assert_eq!(
            names.latch("ab12"),
            "redisson_unlock_latch:{orders:42}:ab12"
        );
        assert_eq!(names.token(), "redisson_lock_token:{orders:42}");
        assert_eq!(names.attempt("u:7", None), "{orders:42}:redlua_attempt:u:7");
        assert_eq!(
            names.attempt("u:7", Some(3)),
            "{orders:42}:redlua_attempt:u:7:3"
        );
        assert_eq!(names.queue(), "redisson_lock_queue:{orders:42}");
        assert_eq!(names.deadlines(), "redisson_lock_timeout:{orders:42}");
        assert_eq!(names.handoffs(), "{orders:42}:redlua_handoff");
        assert_eq!(
            names.waiter_channel("u:7"),
            "redisson_lock__channel:{orders:42}:u:7"
        );
        assert_eq!(
            names.waiter_pattern("u"),
            "redisson_lock__channel:{orders:42}:u:*"
        );
        let globby = LockNames::new(r"a*b?[c]\d").unwrap();
        assert_eq!(
            globby.waiter_pattern("u"),
            r"redisson_lock__channel:{a\*b\?\[c\]\\d}:u:*"
        );
        let tagged = LockNames::new("user{7}:cart").unwrap();
        assert_eq!(tagged.queue(), "redisson_lock_queue:user{7}:cart");
        assert_eq!(hash_tag(&tagged.waiter_channel("u:7")), "7");
    }

    #[test]
    fn read_write_names() {
        let names = LockNames::read_write("doc:1").unwrap();
        assert_eq!(names.channel, "redisson_rwlock:{doc:1}");
        assert_eq!(names.timeouts("u:7"), "{doc:1}:u:7:rwlock_timeout");
        assert_eq!(names.timeouts_prefix(), "{doc:1}");
        assert_eq!(names.writer_mark(), "{doc:1}:redlua_writer_waiting");
        let tagged = LockNames::read_write("doc{1}").unwrap();
        assert_eq!(tagged.timeouts("u:7"), "doc{1}:u:7:rwlock_timeout");
        assert_eq!(tagged.writer_mark(), "doc{1}:redlua_writer_waiting");
    }

    #[test]
    fn names_with_a_hash_tag_keep_it() {
        let names = LockNames::new("user{7}:cart").unwrap();
        assert_eq!(names.channel, "redisson_lock__channel:user{7}:cart");
        assert_eq!(hash_tag(&names.channel), "7");
        assert_eq!(hash_tag(&names.latch("x")), "7");
    }

    #[test]
    fn names_whose_keys_would_split_are_refused() {
        for bad in ["{}x", "a{}{b}", "}{"] {
            // "}{": the channel `p:}{` hashes whole, the name hashes whole too,
            // but differently: refused.
            let result = LockNames::new(bad);
            assert!(
                matches!(result, Err(Error::InvalidName { .. })),
                "{bad}: {result:?}"
            );
        }
        assert!(matches!(LockNames::new(""), Err(Error::InvalidName { .. })));
        assert!(LockNames::new(&"x".repeat(MAX_NAME_LEN + 1)).is_err());
    }

    #[test]
    fn slots() {
        // The specification's check value, and slots redis-server reports.
        assert_eq!(slot("123456789"), 0x31C3 % SLOTS);
        assert_eq!(slot("a"), 15495);
        assert_eq!(slot("b"), 3300);
        assert_eq!(slot("c"), 7365);
        assert_eq!(slot("foo"), 12182);
        assert_eq!(slot("{foo}:bar"), 12182);
        assert_eq!(slot(""), 0);
        let names = LockNames::new("user{7}:cart").unwrap();
        assert_eq!(slot(&names.channel), slot(&names.lock));
    }

    #[test]
    fn hash_tags() {
        assert_eq!(hash_tag("{a}b"), "a");
        assert_eq!(hash_tag("a{}b"), "a{}b");
        assert_eq!(hash_tag("a{b"), "a{b");
        assert_eq!(hash_tag("x{y}{z}"), "y");
    }
}
