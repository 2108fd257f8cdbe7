//! [`Lock`] and [`ReadWriteLock`] for blocking code: the async handles,
//! each call run on the client's thread. Written once for every flavor, as
//! the async handle is.

use super::guard::LockGuard;
use super::thread::{ClientThread, blocking, debug_as_blocking};
use crate::api::flavor::{self, LockFlavor, Reentrant};
use crate::api::inspect::LockInfo;
use crate::base::error::Result;
use crate::base::owner::Owner;
use std::time::Duration;

debug_as_blocking!(Lock<F: LockFlavor>, ReadWriteLock);

/// A handle to the lock of one name, for blocking code, made by
/// [`LockClient::lock`](super::LockClient::lock),
/// [`LockClient::fair_lock`](super::LockClient::fair_lock) or one side of a
/// [`ReadWriteLock`]. Cheap to clone; holds nothing by itself.
///
/// The async [`Lock`](crate::Lock) documents the lock: its storage (that of
/// Redisson's `RLock`), ownership (every acquire is a new holder, so two
/// threads never hold it together), explicit re-entry, and its flavors
/// ([`crate::flavor`]: what a fair lock or a side of a read/write lock
/// changes). Each method here is the async method of the same name, run on
/// the client's thread.
///
/// ```no_run
/// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
/// use std::time::Duration;
///
/// let lock = client.lock("invoices:2026-11");
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(2), None)? {
///     let inner = guard.reenter()?; // the same owner, one more hold
///     inner.unlock()?;
///     guard.unlock()?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Lock<F: LockFlavor = Reentrant> {
    inner: crate::Lock<F>,
    thread: ClientThread,
}

/// A handle to the fair lock of one name, for blocking code: a blocking
/// [`Lock`] of flavor [`Fair`](flavor::Fair) (see
/// [`FairLock`](crate::FairLock)).
pub type FairLock = Lock<flavor::Fair>;

/// The read side of a blocking [`ReadWriteLock`], shared with other
/// readers.
pub type ReadLock = Lock<flavor::Read>;

/// The write side of a blocking [`ReadWriteLock`], exclusive.
pub type WriteLock = Lock<flavor::Write>;

impl<F: LockFlavor> Lock<F> {
    pub(crate) fn new(inner: crate::Lock<F>, thread: ClientThread) -> Lock<F> {
        Lock { inner, thread }
    }

    /// The same handle, its flavor chosen at run time (see
    /// [`Lock::into_any`](crate::Lock::into_any)).
    pub fn into_any(self) -> Lock<flavor::Any> {
        Lock::new(self.inner.into_any(), self.thread)
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    blocking! {
        /// Acquires the lock as a new holder, blocking as long as it takes. The
        /// lease is the watchdog timeout, renewed on the client's thread until
        /// the guard is released. As [`Lock::lock`](crate::Lock::lock).
        ///
        /// # Timeouts
        ///
        /// It never gives up waiting for the lock (use [`Lock::try_lock_for`]
        /// for a bound). Failures that leave the outcome unknown are retried;
        /// others are returned, with nothing held.
        fn lock() -> LockGuard;

        /// Acquires the lock with a fixed lease, blocking as long as it takes.
        /// No watchdog: Redis frees the lock when the lease ends, released or
        /// not. As [`Lock::lock_with_lease`](crate::Lock::lock_with_lease).
        ///
        /// # Timeouts
        ///
        /// As for [`Lock::lock`].
        fn lock_with_lease(lease: Duration) -> LockGuard;

        /// Acquires the lock if it is free, without waiting: `None` when it is
        /// held. Watchdog lease.
        ///
        /// # Timeouts
        ///
        /// One round trip, bounded by the response timeout: past it,
        /// [`Error::Redis`](crate::Error::Redis), with nothing held (an acquire
        /// that may have taken effect is undone in the background).
        fn try_lock() -> Option<LockGuard>;

        /// Acquires the lock, blocking at most `wait` (plus one round trip):
        /// `None` when it could not be had in time. With `lease: None` the
        /// watchdog keeps it; with `Some(lease)` Redis frees it after `lease`.
        ///
        /// # Timeouts
        ///
        /// When `wait` has passed it returns `Ok(None)`, with nothing held and
        /// no waiter left behind.
        fn try_lock_for(wait: Duration, lease: Option<Duration>) -> Option<LockGuard>;
    }

    /// Re-enters the lock for `owner` (from [`LockGuard::owner`]), from any
    /// thread: one more hold, with the watchdog's lease, without waiting. As
    /// [`Lock::reenter`](crate::Lock::reenter).
    ///
    /// # Timeouts
    ///
    /// One round trip, bounded by the response timeout: past it,
    /// [`Error::Redis`](crate::Error::Redis), and a re-entry that may have
    /// taken effect is undone in the background.
    pub fn reenter(&self, owner: &Owner) -> Result<LockGuard> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread.call(async move { lock.reenter(&owner).await })
    }

    /// [`Lock::reenter`] with a fixed lease for the new hold.
    ///
    /// # Timeouts
    ///
    /// As for [`Lock::reenter`].
    pub fn reenter_with_lease(&self, owner: &Owner, lease: Duration) -> Result<LockGuard> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread
            .call(async move { lock.reenter_with_lease(&owner, lease).await })
    }

    blocking! {
        /// Breaks the lock whoever holds it (Redisson's `forceUnlock`); returns
        /// whether there was a lock. As
        /// [`Lock::force_unlock`](crate::Lock::force_unlock).
        ///
        /// # Timeouts
        ///
        /// One round trip, bounded by the response timeout: past it,
        /// [`Error::Redis`](crate::Error::Redis), and the lock may or may not
        /// have been broken.
        fn force_unlock() -> bool;

        /// Reads the lock: its kind, holders with their counts, TTL and fencing
        /// token, changing nothing.
        ///
        /// # Timeouts
        ///
        /// Only reads; bounded by the response timeout.
        fn inspect() -> LockInfo;

        /// Whether anyone holds the lock. As
        /// [`Lock::is_locked`](crate::Lock::is_locked).
        ///
        /// # Timeouts
        ///
        /// Only reads; bounded by the response timeout.
        fn is_locked() -> bool;

        /// The lock's remaining lease: `None` when it is not locked. As
        /// [`Lock::remaining_ttl`](crate::Lock::remaining_ttl).
        ///
        /// # Timeouts
        ///
        /// Only reads; bounded by the response timeout.
        fn remaining_ttl() -> Option<Duration>;
    }

    /// How many holds `owner` has of this lock (0 when none).
    ///
    /// # Timeouts
    ///
    /// Only reads; bounded by the response timeout.
    pub fn hold_count(&self, owner: &Owner) -> Result<u64> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread
            .call(async move { lock.hold_count(&owner).await })
    }
}

/// A read/write lock for blocking code, made by
/// [`LockClient::read_write_lock`](super::LockClient::read_write_lock): many
/// readers or one writer. Its sides are blocking [`Lock`]s. The async
/// [`ReadWriteLock`](crate::ReadWriteLock) documents the lock (downgrade,
/// upgrade, writer preference, Redisson's layout).
///
/// ```no_run
/// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
/// let rw = client.read_write_lock("catalog");
/// let reading = rw.read().lock()?; // shared with other readers
/// reading.unlock()?;
/// let writing = rw.write().lock()?; // exclusive
/// writing.unlock()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ReadWriteLock {
    inner: crate::ReadWriteLock,
    thread: ClientThread,
}

impl ReadWriteLock {
    pub(crate) fn new(inner: crate::ReadWriteLock, thread: ClientThread) -> ReadWriteLock {
        ReadWriteLock { inner, thread }
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// This lock, preferring writers: a waiting writer makes new readers
    /// wait behind it. See
    /// [`ReadWriteLock::writer_preferring`](crate::ReadWriteLock::writer_preferring).
    pub fn writer_preferring(self) -> ReadWriteLock {
        ReadWriteLock {
            inner: self.inner.writer_preferring(),
            thread: self.thread,
        }
    }

    /// The read side: shared with other readers.
    pub fn read(&self) -> ReadLock {
        Lock::new(self.inner.read(), self.thread.clone())
    }

    /// The write side: exclusive.
    pub fn write(&self) -> WriteLock {
        Lock::new(self.inner.write(), self.thread.clone())
    }
}
