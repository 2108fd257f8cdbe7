//! The lock scripts (`scripts/*.lua`), as typed calls.
//!
//! Every Redis operation of the locks is one of these scripts; their layout
//! is Redisson's (see the crate documentation), their replies are decoded in
//! `replies.rs`. A reply of codes (`returns = Acquired, codes`) is checked
//! at compile time: every `return` of the script gives a code the reply
//! type declares.

// The generated items the locks do not use (pipelines, `load`, ...).
#![allow(dead_code)]

use crate::protocol::handoff::Offer;
use crate::protocol::replies::{Acquired, Flag, Publish, ReleaseMode, Released, Side, WakeMessage};
use redlua_macros::redis_script;

/// Acquires or re-enters a reentrant lock.
#[redis_script("scripts/lock_acquire.lua", returns = Acquired, codes, crate = crate)]
pub(crate) struct Acquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub attempt: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub reenter: Flag,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub token_ttl_ms: u64,
}

/// Releases one hold of a reentrant lock, or undoes an abandoned acquire.
#[redis_script("scripts/lock_release.lua", returns = Released, codes, crate = crate)]
pub(crate) struct Release<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub latch: &'a str,
    #[key]
    pub first_attempt: &'a str,
    #[key]
    pub attempt: &'a str,
    /// Latches of earlier answered releases, deleted first (see
    /// `latches.rs`): they go with this script instead of a `DEL`.
    #[key(variadic)]
    pub stale_latches: Vec<&'a str>,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub mode: ReleaseMode,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub reentry: Flag,
    #[arg]
    pub close_attempts: Flag,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Deletes a reentrant lock whoever holds it: whether there was one (1 or 0).
#[redis_script("scripts/lock_force_release.lua", returns = bool, crate = crate)]
pub(crate) struct ForceRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub token: &'a str,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub token_ttl_ms: u64,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
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

/// Reads a lock: (key type, TTL ms, token counter or "", flat fields,
/// fair lock queue).
#[redis_script("scripts/lock_inspect.lua", returns = (String, i64, String, Vec<String>, Vec<String>), crate = crate)]
pub(crate) struct Inspect<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub queue: &'a str,
}

/// Acquires or re-enters a read lock.
#[redis_script("scripts/rwlock_read_acquire.lua", returns = Acquired, codes, crate = crate)]
pub(crate) struct ReadAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub timeouts: &'a str,
    #[key]
    pub writer_mark: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub attempt: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub prefer_writers: Flag,
    #[arg]
    pub reenter: Flag,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub token_ttl_ms: u64,
}

/// Acquires or re-enters a write lock; the error `LOCKUPGRADE` for an owner
/// re-entering with only read holds.
#[redis_script("scripts/rwlock_write_acquire.lua", returns = Acquired, codes, crate = crate)]
pub(crate) struct WriteAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub writer_mark: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub attempt: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub prefer_writers: Flag,
    #[arg]
    pub mark_ttl_ms: u64,
    #[arg]
    pub reenter: Flag,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub token_ttl_ms: u64,
}

/// Removes a gone writer's mark, if it is still that writer's: 1 if so.
#[redis_script("scripts/rwlock_clear_writer_mark.lua", returns = i64, crate = crate)]
pub(crate) struct ClearWriterMark<'a> {
    #[key]
    pub mark: &'a str,
    #[arg]
    pub writer_field: &'a str,
}

/// Releases one read hold, or undoes an abandoned acquire of one.
#[redis_script("scripts/rwlock_read_release.lua", returns = Released, codes, crate = crate)]
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
    #[key]
    pub first_attempt: &'a str,
    #[key]
    pub attempt: &'a str,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub mode: ReleaseMode,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub reentry: Flag,
    #[arg]
    pub close_attempts: Flag,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Releases one write hold, or undoes an abandoned acquire of one.
#[redis_script("scripts/rwlock_write_release.lua", returns = Released, codes, crate = crate)]
pub(crate) struct WriteRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub latch: &'a str,
    #[key]
    pub first_attempt: &'a str,
    #[key]
    pub attempt: &'a str,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub writer_field: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub mode: ReleaseMode,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub reentry: Flag,
    #[arg]
    pub close_attempts: Flag,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Breaks one side of a read/write lock: whether it was held in that mode (1 or 0).
#[redis_script("scripts/rwlock_force_release.lua", returns = bool, crate = crate)]
pub(crate) struct RwForceRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub token: &'a str,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub side: Side,
    #[arg]
    pub token_ttl_ms: u64,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Acquires or re-enters a fair (FIFO) lock, joining its queue when asked
/// and the lock cannot be had.
#[redis_script("scripts/fair_acquire.lua", returns = Acquired, codes, crate = crate)]
pub(crate) struct FairAcquire<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub attempt: &'a str,
    #[key]
    pub queue: &'a str,
    #[key]
    pub deadlines: &'a str,
    #[key]
    pub channel: &'a str,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub reenter: Flag,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub token_ttl_ms: u64,
    #[arg]
    pub wait_ms: u64,
    #[arg]
    pub enqueue: Flag,
    #[arg]
    pub message: WakeMessage,
    /// The waiters that take a direct handoff (see `handoff.rs`).
    #[key]
    pub handoffs: &'a str,
    /// Whether, and how, a release may hand this waiter the lock.
    #[arg]
    pub handoff: Offer,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Releases one hold of a fair lock (waking the head of its queue), or
/// undoes an abandoned acquire of one (leaving the queue too).
#[redis_script("scripts/fair_release.lua", returns = Released, codes, crate = crate)]
pub(crate) struct FairRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub latch: &'a str,
    #[key]
    pub first_attempt: &'a str,
    #[key]
    pub attempt: &'a str,
    #[key]
    pub queue: &'a str,
    #[key]
    pub deadlines: &'a str,
    /// The fencing token counter (a handoff mints the new holder's token).
    #[key]
    pub token: &'a str,
    /// The waiters that take a direct handoff (see `handoff.rs`).
    #[key]
    pub handoffs: &'a str,
    /// Latches of earlier answered releases, deleted first (see
    /// `latches.rs`): they go with this script instead of a `DEL`.
    #[key(variadic)]
    pub stale_latches: Vec<&'a str>,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub lease_ms: u64,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub latch_ttl_ms: u64,
    #[arg]
    pub mode: ReleaseMode,
    #[arg]
    pub attempt_ttl_ms: u64,
    #[arg]
    pub reentry: Flag,
    #[arg]
    pub close_attempts: Flag,
    #[arg]
    pub wait_ms: u64,
    #[arg]
    pub token_ttl_ms: u64,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Takes a waiter that stopped waiting out of a fair lock's queue: 1 when
/// it was in it.
#[redis_script("scripts/fair_leave.lua", returns = i64, crate = crate)]
pub(crate) struct FairLeave<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub queue: &'a str,
    #[key]
    pub deadlines: &'a str,
    #[key]
    pub handoffs: &'a str,
    #[arg]
    pub owner: &'a str,
    #[arg]
    pub wait_ms: u64,
    #[arg]
    pub message: WakeMessage,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// Deletes a fair lock whoever holds it and tells the head of its queue:
/// whether there was one (1 or 0).
#[redis_script("scripts/fair_force_release.lua", returns = bool, crate = crate)]
pub(crate) struct FairForceRelease<'a> {
    #[key]
    pub lock: &'a str,
    #[key]
    pub channel: &'a str,
    #[key]
    pub token: &'a str,
    #[key]
    pub queue: &'a str,
    #[key]
    pub deadlines: &'a str,
    #[arg]
    pub message: WakeMessage,
    #[arg]
    pub token_ttl_ms: u64,
    #[arg]
    pub wait_ms: u64,
    /// `PUBLISH` or `SPUBLISH` (last: the scripts' last argument).
    #[arg]
    pub publish: Publish,
}

/// A lock script and the command of each of its lines that calls one with
/// a literal name (the macro's `CALLS`), for naming the command of one that
/// Redis refused.
pub(crate) type Listed = (
    &'static crate::script::ScriptDef,
    &'static [(u32, &'static str)],
);

/// The [`Listed`] entries of the named script types.
macro_rules! listed {
    ($($script:ident),* $(,)?) => {
        [$((&$script::SCRIPT, $script::CALLS)),*]
    };
}

/// Every lock script, for naming the command of one that Redis refused.
pub(crate) const ALL: [Listed; 15] = listed![
    Acquire,
    Release,
    ForceRelease,
    Renew,
    Inspect,
    ReadAcquire,
    WriteAcquire,
    ClearWriterMark,
    ReadRelease,
    WriteRelease,
    RwForceRelease,
    FairAcquire,
    FairRelease,
    FairLeave,
    FairForceRelease,
];
