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

/// Releases one hold: `Some(1)` freed, `Some(0)` still held, `None` not held.
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

/// Undoes an acquire whose reply was lost, if it took effect.
#[redis_script("scripts/lock_cancel_acquire.lua", returns = i64, crate = crate)]
pub(crate) struct CancelAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub expected_count: u64,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub message: &'a str,
    #[arg]
    pub publish: &'a str,
}

/// Renews a batch of leases: one 1 (renewed) or 0 (gone) per lock.
#[redis_script("scripts/lock_renew.lua", returns = Vec<i64>, crate = crate)]
pub(crate) struct Renew<'a> {
    #[key(variadic)]
    pub locks: Vec<&'a str>,
    #[arg]
    pub lease_ms: u64,
    #[arg(variadic)]
    pub owners: Vec<&'a str>,
}

/// Reads a lock's state: (exists 0/1, TTL ms, the owner's hold count).
#[redis_script("scripts/lock_state.lua", returns = (i64, i64, i64), crate = crate)]
pub(crate) struct State<'a> {
    #[key]
    pub lock: &'a str,
    #[arg]
    pub owner: &'a str,
}
