//! The flavors of a [`Lock`](crate::Lock) handle: zero-sized markers that
//! say, in the handle's type, which lock it locks, each mapped to its
//! protocol (`base::kind::Kind`, `holds/kind_scripts.rs`); the API is
//! written once, in `api/lock.rs`.
//!
//! Invariants:
//! - a `Lock<F>` carries only a `Kind` that `F::admits`, checked where the
//!   handle is made (the only place a `Kind` is chosen);
//! - the trait is sealed: a flavor is a protocol of this crate, never a
//!   user's type.

// `Kind` is the crate's own; the sealed trait that mentions it cannot be
// named outside the crate, so nothing of it is reachable there.
#[allow(private_interfaces)]
mod sealed {
    use crate::base::kind::Kind;

    /// What a flavor tells the one implementation of the lock API.
    pub trait Sealed {
        /// How `Debug` names a handle of this flavor.
        const NAME: &'static str;

        /// Whether a handle of this flavor may lock with `kind`.
        fn admits(kind: Kind) -> bool;
    }

    /// Each flavor's name and the kinds it admits; each is a `LockFlavor`.
    macro_rules! flavors {
        ($($flavor:ident: $name:literal, $kinds:pat),* $(,)?) => {$(
            impl Sealed for super::$flavor {
                const NAME: &'static str = $name;
                fn admits(kind: Kind) -> bool {
                    matches!(kind, $kinds)
                }
            }

            impl super::LockFlavor for super::$flavor {}
        )*};
    }

    flavors! {
        Reentrant: "Lock", Kind::Reentrant,
        Fair: "FairLock", Kind::Fair { .. },
        Read: "ReadLock", Kind::Read { .. },
        Write: "WriteLock", Kind::Write { .. },
        Any: "Lock<Any>", _,
    }
}

/// Which lock a [`Lock`](crate::Lock) handle locks: [`Reentrant`],
/// [`Fair`], [`Read`], [`Write`], or [`Any`] of them chosen at run time.
/// Every flavor has the same methods; it decides only what is stored in
/// Redis and how waiters are woken. Sealed: the flavors are this crate's.
pub trait LockFlavor: sealed::Sealed + Copy + Send + Sync + 'static {}

/// The reentrant lock, Redisson's `RLock`: [`Lock`](crate::Lock) (the
/// default flavor), made by [`LockClient::lock`](crate::LockClient::lock).
///
/// Not fair: a release wakes one waiter per client, and whoever tries
/// first gets the lock, a newcomer included (see "Fairness" on
/// [`Lock`](crate::Lock)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reentrant {}

/// The fair (FIFO) lock, Redisson's `RFairLock`:
/// [`FairLock`](crate::FairLock), made by
/// [`LockClient::fair_lock`](crate::LockClient::fair_lock).
///
/// What the flavor changes in the methods of [`Lock`](crate::Lock):
///
/// - waiters queue, and get the lock in the order they first asked; a
///   release wakes only the first of them, on a channel of its own;
/// - [`try_lock`](crate::Lock::try_lock) takes the lock only if it is free
///   and nobody waits for it: it never jumps the queue, and never joins it;
/// - a waiter that stops waiting without the lock (cancelled, timed out,
///   failed) leaves the queue, in the background if Redis did not answer,
///   and passes the wake-up on if it was first and the lock is free;
/// - [`inspect`](crate::Lock::inspect) lists the queue
///   ([`LockInfo::waiting`](crate::LockInfo::waiting), first in line
///   first); the lock's hash is a reentrant lock's, so its kind reads
///   [`LockKind::Reentrant`](crate::LockKind::Reentrant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fair {}

/// The read side of a [`ReadWriteLock`](crate::ReadWriteLock):
/// [`ReadLock`](crate::ReadLock), shared with other readers.
///
/// The owner of a write hold may re-enter the read side (a downgrade);
/// [`hold_count`](crate::Lock::hold_count) counts read holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {}

/// The write side of a [`ReadWriteLock`](crate::ReadWriteLock):
/// [`WriteLock`](crate::WriteLock), exclusive.
///
/// The owner of read holds that re-enters the write side gets
/// [`Error::Upgrade`](crate::Error::Upgrade);
/// [`hold_count`](crate::Lock::hold_count) counts write holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {}

/// A lock of any flavor, chosen at run time: what
/// [`Lock::into_any`](crate::Lock::into_any) makes of a typed handle, so
/// that handles of several flavors fit one variable. Each method behaves as
/// for the flavor the handle was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Any {}
