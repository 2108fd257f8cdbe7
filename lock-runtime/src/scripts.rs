//! The lock scripts (`scripts/*.lua`), as typed calls.
//!
//! Every Redis operation of the locks that changes state is one of these
//! scripts; their layout is Redisson's (see the crate documentation).

// The generated items the locks do not use (pipelines, `load`, ...).
#![allow(dead_code)]

use redlua_macros::redis_script;

/// Acquires or re-enters a lock: `None` when held, else the lock's TTL in ms.
#[redis_script("scripts/lock_acquire.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct Acquire<'a> {
    #[key]
    pub lock: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
}

/// Releases one hold: `Some(1)` freed, `Some(0)` still held, `None` not
/// held, `Some(-1)` the expected count (if not "") did not match.
#[redis_script("scripts/lock_release.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct Release<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub latch: &'a str,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub publish: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub expected: &'a str,
}

/// Deletes a lock whoever holds it: 1 when there was one.
#[redis_script("scripts/lock_force_release.lua", returns = i64, crate = crate)]
pub(crate) struct ForceRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub publish: &'a str,
}

/// Renews a batch of leases: one 1 (renewed) or 0 (gone) per lock.
/// `fields` holds two entries per lock: the field, and the read hold
/// timeouts' prefix ("" when not a read hold).
#[redis_script("scripts/lock_renew.lua", returns = Vec<i64>, crate = crate)]
pub(crate) struct Renew<'a> {
    #[key(variadic)]
    pub locks: Vec<&'a str>,
    #[arg]
    pub lease_ms: u64,
    #[arg(variadic)]
    pub fields: Vec<&'a str>,
}

/// Reads a lock's state: (exists 0/1, TTL ms, the owner's hold count).
#[redis_script("scripts/lock_state.lua", returns = (i64, i64, i64), crate = crate)]
pub(crate) struct State<'a> {
    #[key]
    pub lock: &'a str,
    #[arg]
    pub owner: &'a str,
}

/// Acquires or re-enters a read lock: `None` when held, else how long to wait.
#[redis_script("scripts/rwlock_read_acquire.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct ReadAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub timeouts: &'a str,
    #[key]
    pub writer_mark: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub prefer_writers: &'a str,
}

/// Acquires or re-enters a write lock: `None` when held, else how long to
/// wait; the error `LOCKUPGRADE` for an owner holding only read locks.
#[redis_script("scripts/rwlock_write_acquire.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct WriteAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub writer_mark: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub prefer_writers: &'a str,
    #[arg]
    pub mark_ttl_ms: u64,
}

/// Removes a gone writer's mark, if it is still that writer's: 1 if so.
#[redis_script("scripts/rwlock_clear_writer_mark.lua", returns = i64, crate = crate)]
pub(crate) struct ClearWriterMark<'a> {
    #[key]
    pub mark: &'a str,
    #[arg]
    pub writer_field: &'a str,
}

/// Releases one read hold: `Some(1)` freed, `Some(0)` still held, `None`
/// not held, `Some(-1)` the expected count did not match.
#[redis_script("scripts/rwlock_read_release.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct ReadRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub timeouts: &'a str,
    #[key]
    pub timeouts_prefix: &'a str,
    #[key]
    pub latch: &'a str,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub publish: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub expected: &'a str,
}

/// Releases one write hold: `Some(1)` released, `Some(0)` still held,
/// `None` not held, `Some(-1)` the expected count did not match.
#[redis_script("scripts/rwlock_write_release.lua", returns = Option<i64>, crate = crate)]
pub(crate) struct WriteRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub latch: &'a str,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub publish: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub expected: &'a str,
}

/// Breaks one side of a read/write lock: 1 when it was held in that mode.
#[redis_script("scripts/rwlock_force_release.lua", returns = i64, crate = crate)]
pub(crate) struct RwForceRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub publish: &'a str,
    #[arg]
    pub mode: &'a str,
}
