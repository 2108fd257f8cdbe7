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

/// Declares scripts as typed calls: for each, a struct `Name<'a>` with
/// `#[redis_script(path, options)]`, whose `keys` (each a `&str`; a last
/// `..name` a variadic `Vec<&str>`) are the script's `KEYS` and whose
/// `args` (a last `..name: type` variadic) its `ARGV`, in the order
/// written. `all: NAME;` first also lists them in `NAME`.
///
/// Conventions of the scripts: `publish` (`PUBLISH` or `SPUBLISH`) is
/// their last fixed argument; a release's `..stale_latches` are earlier
/// answered releases' latches, deleted first (see `latches.rs`) instead of
/// by a `DEL` of their own.
macro_rules! scripts {
    (all: $all:ident; $($(#[$doc:meta])* $name:ident $attr:tt keys $k:tt args $a:tt)*) => {
        /// Every lock script, for naming the command of one that Redis refused.
        pub(crate) const $all: &[Listed] = &[$((&$name::SCRIPT, $name::CALLS)),*];
        scripts! { $($(#[$doc])* $name $attr keys $k args $a)* }
    };
    ($(
        $(#[$doc:meta])*
        $name:ident($($attr:tt)*)
        keys { $($(#[$kdoc:meta])* $key:ident),* $(,)? $(..$keys:ident $(,)?)? }
        args { $($(#[$adoc:meta])* $arg:ident: $ty:ty),* $(, ..$args:ident: $tail:ty)? $(,)? }
    )*) => {$(
        $(#[$doc])*
        #[redis_script($($attr)*, crate = crate)]
        pub(crate) struct $name<'a> {
            $($(#[$kdoc])* #[key] pub $key: &'a str,)*
            $(#[key(variadic)] pub $keys: Vec<&'a str>,)?
            $($(#[$adoc])* #[arg] pub $arg: $ty,)*
            $(#[arg(variadic)] pub $args: $tail,)?
        }
    )*};
}
pub(crate) use scripts;

scripts! {
    all: ALL;

    /// Acquires or re-enters a reentrant lock.
    Acquire("scripts/lock_acquire.lua", returns = Acquired, codes)
    keys { lock, token, attempt }
    args {
        lease_ms: u64,
        owner: &'a str,
        reenter: Flag,
        attempt_ttl_ms: u64,
        token_ttl_ms: u64,
    }

    /// Releases one hold of a reentrant lock, or undoes an abandoned acquire.
    Release("scripts/lock_release.lua", returns = Released, codes)
    keys { lock, channel, latch, first_attempt, attempt, ..stale_latches }
    args {
        message: WakeMessage,
        lease_ms: u64,
        owner: &'a str,
        latch_ttl_ms: u64,
        mode: ReleaseMode,
        attempt_ttl_ms: u64,
        reentry: Flag,
        close_attempts: Flag,
        publish: Publish,
    }

    /// Deletes a reentrant lock whoever holds it: whether there was one (1 or 0).
    ForceRelease("scripts/lock_force_release.lua", returns = bool)
    keys { lock, channel, token }
    args {
        message: WakeMessage,
        token_ttl_ms: u64,
        publish: Publish,
    }

    /// Renews a batch of leases: one 1 (renewed) or 0 (gone) per lock.
    /// `fields` holds two entries per lock: the field, and the read hold
    /// timeouts' prefix ("" when not a read hold).
    Renew("scripts/lock_renew.lua", returns = Vec<i64>)
    keys { ..locks }
    args {
        lease_ms: u64,
        ..fields: Vec<&'a str>,
    }

    /// Reads a lock: (key type, TTL ms, token counter or "", flat fields,
    /// fair lock queue).
    Inspect("scripts/lock_inspect.lua", returns = (String, i64, String, Vec<String>, Vec<String>))
    keys { lock, token, queue }
    args {}

    /// Acquires or re-enters a read lock.
    ReadAcquire("scripts/rwlock_read_acquire.lua", returns = Acquired, codes)
    keys { lock, timeouts, writer_mark, token, attempt }
    args {
        lease_ms: u64,
        owner: &'a str,
        writer_field: &'a str,
        prefer_writers: Flag,
        reenter: Flag,
        attempt_ttl_ms: u64,
        token_ttl_ms: u64,
    }

    /// Acquires or re-enters a write lock; the error `LOCKUPGRADE` for an owner
    /// re-entering with only read holds.
    WriteAcquire("scripts/rwlock_write_acquire.lua", returns = Acquired, codes)
    keys { lock, writer_mark, token, attempt }
    args {
        lease_ms: u64,
        writer_field: &'a str,
        owner: &'a str,
        prefer_writers: Flag,
        mark_ttl_ms: u64,
        reenter: Flag,
        attempt_ttl_ms: u64,
        token_ttl_ms: u64,
    }

    /// Removes a gone writer's mark, if it is still that writer's: 1 if so.
    ClearWriterMark("scripts/rwlock_clear_writer_mark.lua", returns = i64)
    keys { mark }
    args {
        writer_field: &'a str,
    }

    /// Releases one read hold, or undoes an abandoned acquire of one.
    ReadRelease("scripts/rwlock_read_release.lua", returns = Released, codes)
    keys { lock, channel, timeouts, timeouts_prefix, latch, first_attempt, attempt }
    args {
        message: WakeMessage,
        owner: &'a str,
        latch_ttl_ms: u64,
        mode: ReleaseMode,
        attempt_ttl_ms: u64,
        reentry: Flag,
        close_attempts: Flag,
        publish: Publish,
    }

    /// Releases one write hold, or undoes an abandoned acquire of one.
    WriteRelease("scripts/rwlock_write_release.lua", returns = Released, codes)
    keys { lock, channel, latch, first_attempt, attempt }
    args {
        message: WakeMessage,
        lease_ms: u64,
        writer_field: &'a str,
        latch_ttl_ms: u64,
        mode: ReleaseMode,
        attempt_ttl_ms: u64,
        reentry: Flag,
        close_attempts: Flag,
        publish: Publish,
    }

    /// Breaks one side of a read/write lock: whether it was held in that mode (1 or 0).
    RwForceRelease("scripts/rwlock_force_release.lua", returns = bool)
    keys { lock, channel, token }
    args {
        message: WakeMessage,
        side: Side,
        token_ttl_ms: u64,
        publish: Publish,
    }

    /// Acquires or re-enters a fair (FIFO) lock, joining its queue when asked
    /// and the lock cannot be had.
    FairAcquire("scripts/fair_acquire.lua", returns = Acquired, codes)
    keys {
        lock,
        token,
        attempt,
        queue,
        deadlines,
        channel,
        /// The waiters that take a direct handoff (see `handoff.rs`).
        handoffs,
    }
    args {
        lease_ms: u64,
        owner: &'a str,
        reenter: Flag,
        attempt_ttl_ms: u64,
        token_ttl_ms: u64,
        wait_ms: u64,
        enqueue: Flag,
        message: WakeMessage,
        /// Whether, and how, a release may hand this waiter the lock.
        handoff: Offer,
        publish: Publish,
    }

    /// Releases one hold of a fair lock (waking the head of its queue), or
    /// undoes an abandoned acquire of one (leaving the queue too).
    FairRelease("scripts/fair_release.lua", returns = Released, codes)
    keys {
        lock,
        channel,
        latch,
        first_attempt,
        attempt,
        queue,
        deadlines,
        /// The fencing token counter (a handoff mints the new holder's token).
        token,
        /// The waiters that take a direct handoff (see `handoff.rs`).
        handoffs,
        ..stale_latches,
    }
    args {
        message: WakeMessage,
        lease_ms: u64,
        owner: &'a str,
        latch_ttl_ms: u64,
        mode: ReleaseMode,
        attempt_ttl_ms: u64,
        reentry: Flag,
        close_attempts: Flag,
        wait_ms: u64,
        token_ttl_ms: u64,
        publish: Publish,
    }

    /// Takes a waiter that stopped waiting out of a fair lock's queue: 1 when
    /// it was in it.
    FairLeave("scripts/fair_leave.lua", returns = i64)
    keys { lock, channel, queue, deadlines, handoffs }
    args {
        owner: &'a str,
        wait_ms: u64,
        message: WakeMessage,
        publish: Publish,
    }

    /// Deletes a fair lock whoever holds it and tells the head of its queue:
    /// whether there was one (1 or 0).
    FairForceRelease("scripts/fair_force_release.lua", returns = bool)
    keys { lock, channel, token, queue, deadlines }
    args {
        message: WakeMessage,
        token_ttl_ms: u64,
        wait_ms: u64,
        publish: Publish,
    }
}

/// A lock script and the command of each of its lines that calls one with
/// a literal name (the macro's `CALLS`), for naming the command of one that
/// Redis refused.
pub(crate) type Listed = (
    &'static crate::script::ScriptDef,
    &'static [(u32, &'static str)],
);
