//! [`Lock`] and [`ReadWriteLock`] for blocking code: the async handles,
//! each call run on the client's thread. Written once for every flavor, as
//! the async handle is.

use super::guard::LockGuard;
use super::thread::{ClientThread, blocking, blocking_handles, debug_as_blocking};
use crate::api::flavor::{self, LockFlavor, Reentrant};
use crate::api::inspect::LockInfo;
use crate::base::error::Result;
use crate::base::owner::Owner;
use std::time::Duration;

debug_as_blocking!(Lock<F: LockFlavor>);

/// A handle to the lock of one name, for blocking code, made by
/// [`LockClient::lock`](super::LockClient::lock),
/// [`LockClient::fair_lock`](super::LockClient::fair_lock) or one side of a
/// [`ReadWriteLock`]. Cheap to clone; holds nothing by itself.
///
/// The async [`Lock`](crate::Lock) documents the lock (storage, every
/// acquire a new holder, explicit re-entry, [flavors](crate::flavor)); each
/// method here is the async method of the same name, run on the client's
/// thread, bounded as the [module](super#timeouts-instead-of-cancellation)
/// says.
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
        /// [`Lock::lock`](crate::Lock::lock), blocking as long as it takes
        /// (the client's thread renews the lease).
        fn lock() -> LockGuard;

        /// [`Lock::lock_with_lease`](crate::Lock::lock_with_lease), blocking
        /// as long as it takes.
        fn lock_with_lease(lease: Duration) -> LockGuard;

        /// [`Lock::try_lock`](crate::Lock::try_lock): one round trip.
        fn try_lock() -> Option<LockGuard>;

        /// [`Lock::try_lock_for`](crate::Lock::try_lock_for), blocking at
        /// most `wait` (plus one round trip); `None` leaves nothing held and
        /// no waiter behind.
        fn try_lock_for(wait: Duration, lease: Option<Duration>) -> Option<LockGuard>;
    }

    /// [`Lock::reenter`](crate::Lock::reenter) for `owner` (from
    /// [`LockGuard::owner`]), from any thread: one round trip.
    pub fn reenter(&self, owner: &Owner) -> Result<LockGuard> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread.call(async move { lock.reenter(&owner).await })
    }

    /// [`Lock::reenter`] with a fixed lease for the new hold.
    pub fn reenter_with_lease(&self, owner: &Owner, lease: Duration) -> Result<LockGuard> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread
            .call(async move { lock.reenter_with_lease(&owner, lease).await })
    }

    blocking! {
        /// [`Lock::force_unlock`](crate::Lock::force_unlock): whether there
        /// was a lock (past the response timeout, it may or may not have
        /// been broken).
        fn force_unlock() -> bool;

        /// [`Lock::inspect`](crate::Lock::inspect): reads the lock.
        fn inspect() -> LockInfo;

        /// [`Lock::is_locked`](crate::Lock::is_locked): whether anyone holds
        /// the lock.
        fn is_locked() -> bool;

        /// [`Lock::remaining_ttl`](crate::Lock::remaining_ttl): the lock's
        /// remaining lease.
        fn remaining_ttl() -> Option<Duration>;
    }

    /// [`Lock::hold_count`](crate::Lock::hold_count): how many holds
    /// `owner` has of this lock.
    pub fn hold_count(&self, owner: &Owner) -> Result<u64> {
        let (lock, owner) = (self.inner.clone(), owner.clone());
        self.thread
            .call(async move { lock.hold_count(&owner).await })
    }
}

blocking_handles! {
    /// A read/write lock for blocking code, made by
    /// [`LockClient::read_write_lock`](super::LockClient::read_write_lock), its
    /// sides blocking [`Lock`]s; the async
    /// [`ReadWriteLock`](crate::ReadWriteLock) documents it.
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
    pub struct ReadWriteLock(crate::ReadWriteLock) {}
}

impl ReadWriteLock {
    /// [`ReadWriteLock::writer_preferring`](crate::ReadWriteLock::writer_preferring):
    /// a waiting writer makes new readers wait behind it.
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
