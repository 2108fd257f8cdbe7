//! Reading a lock without touching it: what [`Lock::inspect`](crate::Lock::inspect)
//! and `lockctl status` show. The one place that reads the storage layout
//! back (Redisson's reentrant and read/write layouts).

use crate::base::error::{Error, Result};
use crate::base::names::LockNames;
use crate::holds::shared::Shared;
use crate::protocol::lock_scripts::Inspect;
use std::time::Duration;

/// What a lock's key holds, read in one round trip by
/// [`Lock::inspect`](crate::Lock::inspect) or
/// [`LockClient::inspect`](crate::LockClient::inspect).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockInfo {
    /// The lock's name (its key).
    pub name: String,
    /// What the key holds.
    pub kind: LockKind,
    /// Who holds it, with their hold counts (empty when free or not a lock).
    pub holders: Vec<Holder>,
    /// The remaining lease: `None` when free, or when the key has no expiry.
    pub ttl: Option<Duration>,
    /// The fencing token counter: the token of the latest holder (`None`
    /// when no holder got one, or the counter expired).
    pub token: Option<u64>,
    /// The owners waiting in a fair lock's queue
    /// ([`FairLock`](crate::FairLock)), first in line first; empty for
    /// other locks, and when nobody waits. (Waiters whose deadline passed
    /// may still be listed until the next operation drops them.)
    pub waiting: Vec<String>,
}

/// What a lock's key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockKind {
    /// Nothing: the lock is free.
    Free,
    /// A reentrant lock (Redisson's `RLock` layout).
    Reentrant,
    /// A read/write lock (Redisson's `RReadWriteLock` layout), held in this
    /// mode.
    ReadWrite {
        /// `read` or `write`.
        mode: Mode,
    },
    /// Something that is not a lock: a key of another type, or a hash of
    /// another layout. Locks leave it alone.
    NotALock {
        /// Its Redis type (`string`, `hash`, ...).
        key_type: String,
        /// Why it is not a lock, for people.
        reason: String,
    },
}

/// The mode of a read/write lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Held by readers (and perhaps the writer's own read holds).
    Read,
    /// Held by a writer.
    Write,
}

/// One holder of a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Holder {
    /// The owner, `<client-uuid>:<owner-id>` (Redisson: `<uuid>:<thread-id>`).
    pub owner: String,
    /// Which side it holds.
    pub side: Side,
    /// Its number of holds (re-entries count one each).
    pub count: u64,
}

/// The side a holder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The reentrant lock.
    Exclusive,
    /// The read side of a read/write lock.
    Read,
    /// The write side of a read/write lock.
    Write,
}

/// Reads the lock `name` in one round trip.
pub(crate) async fn inspect(shared: &Shared, name: &str) -> Result<LockInfo> {
    let names = LockNames::new(name)?;
    let mut con = shared.con.clone();
    let (key_type, ttl, token, fields, waiting) = Inspect {
        lock: &names.lock,
        token: names.token(),
        queue: &names.queue(),
    }
    .invoke(&mut con)
    .await
    .map_err(|e| Error::from_redis(name, e))?;
    let mut info = read_layout(name, &key_type, ttl, &token, &fields);
    info.waiting = waiting;
    Ok(info)
}

/// Reads a lock's layout from what `lock_inspect.lua` returned.
pub(crate) fn read_layout(
    name: &str,
    key_type: &str,
    ttl: i64,
    token: &str,
    fields: &[String],
) -> LockInfo {
    let mut info = LockInfo {
        name: name.to_string(),
        kind: LockKind::Free,
        holders: Vec::new(),
        ttl: u64::try_from(ttl).ok().map(Duration::from_millis),
        token: token.parse().ok(),
        waiting: Vec::new(),
    };
    let not_a_lock = |mut info: LockInfo, reason: String| {
        info.kind = LockKind::NotALock {
            key_type: key_type.to_string(),
            reason,
        };
        info.holders.clear();
        info
    };
    match key_type {
        "none" => return info,
        "hash" => {}
        _ => return not_a_lock(info, format!("it holds a {key_type}, not a hash")),
    }
    let pairs = fields
        .chunks_exact(2)
        .map(|pair| (pair[0].as_str(), pair[1].as_str()));
    let mode = pairs
        .clone()
        .find(|(field, _)| *field == "mode")
        .map(|p| p.1);
    info.kind = match mode {
        None => LockKind::Reentrant,
        Some("read") => LockKind::ReadWrite { mode: Mode::Read },
        Some("write") => LockKind::ReadWrite { mode: Mode::Write },
        Some(other) => {
            let reason = format!("its field `mode` is `{other}`, not `read` or `write`");
            return not_a_lock(info, reason);
        }
    };
    for (field, value) in pairs {
        if field == "mode" {
            continue;
        }
        let Ok(count) = value.parse::<u64>() else {
            let reason = format!("its field `{field}` holds `{value}`, not a hold count");
            return not_a_lock(info, reason);
        };
        let (owner, side) = match (&info.kind, field.strip_suffix(":write")) {
            (LockKind::Reentrant, _) => (field, Side::Exclusive),
            (_, Some(owner)) => (owner, Side::Write),
            (_, None) => (field, Side::Read),
        };
        info.holders.push(Holder {
            owner: owner.to_string(),
            side,
            count,
        });
    }
    if info.kind == LockKind::Reentrant && info.holders.len() != 1 {
        let reason = format!(
            "it has {} fields; a reentrant lock has one owner",
            info.holders.len()
        );
        return not_a_lock(info, reason);
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn layouts_are_read() {
        let free = read_layout("a", "none", -2, "", &[]);
        assert_eq!(free.kind, LockKind::Free);
        assert_eq!(free.ttl, None);
        let held = read_layout("a", "hash", 1500, "17", &strings(&["u:3", "2"]));
        assert_eq!(held.kind, LockKind::Reentrant);
        assert_eq!(held.ttl, Some(Duration::from_millis(1500)));
        assert_eq!(held.token, Some(17));
        assert_eq!(
            held.holders,
            vec![Holder {
                owner: "u:3".into(),
                side: Side::Exclusive,
                count: 2
            }]
        );
        let rw = read_layout(
            "a",
            "hash",
            10,
            "",
            &strings(&["mode", "write", "u:1:write", "1", "u:1", "2"]),
        );
        assert_eq!(rw.kind, LockKind::ReadWrite { mode: Mode::Write });
        assert_eq!(rw.holders.len(), 2);
        assert_eq!(rw.holders[0].side, Side::Write);
        assert_eq!(rw.holders[0].owner, "u:1");
        assert_eq!(rw.holders[1].side, Side::Read);
        for (ty, fields) in [
            ("string", strings(&[])),
            ("hash", strings(&["name", "bob"])),
            ("hash", strings(&["mode", "sideways"])),
            ("hash", strings(&["a:1", "1", "b:2", "1"])),
        ] {
            let info = read_layout("a", ty, -1, "", &fields);
            assert!(matches!(info.kind, LockKind::NotALock { .. }), "{info:?}");
            assert!(info.holders.is_empty());
        }
    }
}
