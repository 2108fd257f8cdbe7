//! [`FairLock`]: a handle to one fair (FIFO) lock, Redisson's `RFairLock`.
//! Everything but its scripts and its waiters' channels is the reentrant
//! lock's ([`Lock`]), which it wraps.

use crate::api::guard::LockGuard;
use crate::api::inspect::LockInfo;
use crate::api::lock::Lock;
use crate::base::error::Result;
use crate::base::kind::Kind;
use crate::base::owner::Owner;
use crate::holds::shared::Shared;
use std::sync::Arc;
use std::time::Duration;

/// A handle to the fair lock of one name, made by
/// [`LockClient::fair_lock`](crate::LockClient::fair_lock). Cheap to clone;
/// holds nothing by itself.
///
/// A fair lock is a reentrant lock whose waiters queue: they get it in the
/// order they first asked, and a release wakes only the first of them (on
/// a channel of its own), instead of one waiter per client racing every
/// other. Use it when many clients contend for one lock and each should be
/// served in turn, or when a release should cost one wake-up whatever the
/// number of waiters; a lock that is seldom contended is cheaper as a plain
/// [`Lock`].
///
/// It is stored as Redisson's `RFairLock`: the lock hash of a reentrant
/// lock at the name, a list of waiting owners `redisson_lock_queue:{name}`,
/// their deadlines `redisson_lock_timeout:{name}`, and each waiter's
/// channel `redisson_lock__channel:{name}:<owner>`. Java services using
/// `RFairLock` on the same name queue with Rust services using it here.
/// A waiter first in line that stopped asking (its process died) is
/// dropped from the queue once its deadline passes; see
/// [`LockClientBuilder::fair_lock_wait_timeout`](crate::LockClientBuilder::fair_lock_wait_timeout).
///
/// A release hands the lock directly to a redlua waiter first in line (it
/// need not try again: the lock changes hands in one message), for at most
/// the wait time, and the new holder extends the lease to its own at once.
/// This adds one redlua key, `{name}:redlua_handoff`; Java waiters are
/// woken as Redisson wakes them. The guide (`redlua::guide`, "Direct
/// handoffs") says why the holder still knows first.
///
/// Everything else is as for [`Lock`]: a new holder per acquire, explicit
/// re-entry, the watchdog, fencing tokens, replica-synced mode, exact
/// cancellation, and the same [`LockGuard`]. A waiter that stops waiting
/// without the lock (cancelled, timed out, failed) leaves the queue, and
/// passes the wake-up on if it was first and the lock is free (giving up a
/// lock handed to it that it never took).
///
/// [`try_lock`](FairLock::try_lock) takes the lock only if it is free and
/// nobody waits for it (it never jumps the queue, and never joins it).
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// use std::time::Duration;
///
/// let lock = client.fair_lock("payments:settle");
/// // Waiters are served in the order they asked.
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(5), None).await? {
///     // held; the watchdog renews the lease until `unlock`
///     guard.unlock().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct FairLock {
    lock: Lock,
}

impl std::fmt::Debug for FairLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FairLock")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

impl FairLock {
    pub(crate) fn new(shared: Arc<Shared>, name: &str) -> FairLock {
        FairLock {
            lock: Lock::new(shared, name, Kind::Fair { enqueue: true }),
        }
    }

    /// The handle's methods are those of a [`Lock`] of kind fair.
    pub(crate) fn into_lock(self) -> Lock {
        self.lock
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        self.lock.name()
    }

    /// Acquires the lock as a new holder, waiting in the queue as long as
    /// it takes. The lease is the watchdog timeout, renewed until the guard
    /// is released. As [`Lock::lock`] otherwise.
    ///
    /// # Cancellation
    ///
    /// Dropping the future gives up waiting and leaves nothing held: the
    /// waiter leaves the queue in the background (waking the next one if it
    /// was first and the lock is free), and if an acquire was under way the
    /// client undoes exactly that acquire, as soon as Redis can be reached,
    /// if it took effect.
    pub async fn lock(&self) -> Result<LockGuard> {
        self.lock.lock().await
    }

    /// Acquires the lock with a fixed lease, waiting in the queue as long as
    /// it takes. No watchdog, as [`Lock::lock_with_lease`].
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held and leaves the queue, as for
    /// [`FairLock::lock`].
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        self.lock.lock_with_lease(lease).await
    }

    /// Acquires the lock if it is free and nobody waits for it, without
    /// waiting or joining the queue: `None` otherwise. Watchdog lease.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held, as for [`FairLock::lock`].
    pub async fn try_lock(&self) -> Result<Option<LockGuard>> {
        self.lock.try_lock().await
    }

    /// Acquires the lock, waiting in the queue at most `wait` (plus one
    /// round trip): `None` when it could not be had in time, and then the
    /// waiter has left the queue (in the background if Redis did not
    /// answer). With `lease: None` the watchdog keeps it; with
    /// `Some(lease)` Redis frees it after `lease`.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held and leaves the queue, as for
    /// [`FairLock::lock`].
    pub async fn try_lock_for(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<LockGuard>> {
        self.lock.try_lock_for(wait, lease).await
    }

    /// Re-enters the lock for `owner` (from [`LockGuard::owner`]): one more
    /// hold, with the watchdog's lease, without waiting or queueing.
    ///
    /// Errors: [`Error::NotHeld`](crate::Error::NotHeld) when `owner` holds
    /// nothing of this lock.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the re-entry is undone in the background if
    /// it took effect: exactly that hold, no other.
    pub async fn reenter(&self, owner: &Owner) -> Result<LockGuard> {
        self.lock.reenter(owner).await
    }

    /// [`FairLock::reenter`] with a fixed lease for the new hold.
    ///
    /// # Cancellation
    ///
    /// As for [`FairLock::reenter`].
    pub async fn reenter_with_lease(&self, owner: &Owner, lease: Duration) -> Result<LockGuard> {
        self.lock.reenter_with_lease(owner, lease).await
    }

    /// Breaks the lock whoever holds it (Redisson's `forceUnlock`), wakes
    /// the first waiter of its queue and advances its fencing token.
    /// Returns whether there was a lock. The holder's guards say lost within
    /// a round trip (see [`LockGuard`](crate::LockGuard)). A key that holds
    /// something other than a reentrant lock is left alone:
    /// [`Error::WrongType`](crate::Error::WrongType).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the lock may or may not have been broken.
    pub async fn force_unlock(&self) -> Result<bool> {
        self.lock.force_unlock().await
    }

    /// Reads the lock: holders with their counts, TTL, fencing token and
    /// the owners waiting in its queue ([`LockInfo::waiting`], first in
    /// line first), in one round trip, changing nothing. (A fair lock's hash is a reentrant
    /// lock's: its kind reads [`LockKind::Reentrant`](crate::LockKind::Reentrant).)
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn inspect(&self) -> Result<LockInfo> {
        self.lock.inspect().await
    }

    /// Whether anyone holds the lock. A key that holds something other
    /// than a reentrant lock is [`Error::WrongType`](crate::Error::WrongType).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn is_locked(&self) -> Result<bool> {
        self.lock.is_locked().await
    }

    /// The lock's remaining lease: `None` when it is not locked.
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn remaining_ttl(&self) -> Result<Option<Duration>> {
        self.lock.remaining_ttl().await
    }

    /// How many holds `owner` has of this lock (0 when none).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn hold_count(&self, owner: &Owner) -> Result<u64> {
        self.lock.hold_count(owner).await
    }
}
