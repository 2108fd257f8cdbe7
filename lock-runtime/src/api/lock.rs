//! [`Lock`]: a handle to one lock — the public face of acquiring
//! (`holds/acquire.rs`), re-entry, breaking and reading it. Written once
//! for every flavor (`flavor.rs`): a flavor only chooses the `Kind`, the
//! protocol the handle runs.

use crate::api::flavor::{self, LockFlavor, Reentrant};
use crate::api::guard::LockGuard;
use crate::api::handle::{Named, at_most, forever};
use crate::api::inspect::{LockInfo, LockKind, inspect};
use crate::base::config::check_lease;
use crate::base::error::{Error, Result};
use crate::base::kind::Kind;
use crate::base::names::LockNames;
use crate::base::owner::Owner;
use crate::holds::acquire::{Request, Wait};
use crate::holds::shared::Shared;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// A handle to the lock of one name, made by
/// [`LockClient::lock`](crate::LockClient::lock),
/// [`LockClient::fair_lock`](crate::LockClient::fair_lock) or one side of a
/// [`ReadWriteLock`](crate::ReadWriteLock). Cheap to clone; holds nothing
/// by itself.
///
/// Its flavor `F` says which lock: [`Reentrant`] (the
/// default, Redisson's `RLock`), [`Fair`](flavor::Fair) ([`FairLock`]),
/// [`Read`](flavor::Read) and [`Write`](flavor::Write) ([`ReadLock`],
/// [`WriteLock`]), or [`Any`](flavor::Any) of them chosen at run time
/// ([`Lock::into_any`]). Every flavor has these methods; what a flavor
/// changes in them is on its marker.
///
/// The reentrant lock is stored as Redisson's `RLock`: a hash at the name,
/// mapping `<client-uuid>:<owner-id>` to a hold count, with the lease as
/// its TTL; Java services locking the same name with Redisson exclude, and
/// are woken by, Rust services locking it here.
///
/// # Ownership
///
/// Every acquire ([`lock`](Lock::lock), [`try_lock`](Lock::try_lock), ...)
/// is a new holder: two tasks, and two futures of one task (`join!`,
/// `select!`), never hold the lock together. (Redisson's owner is the Java
/// thread; a lock owned by a tokio task would let all its futures in.)
/// Re-entry is explicit: [`LockGuard::reenter`], or [`Lock::reenter`] with a
/// guard's [`Owner`], from any task, without waiting, while the owner holds
/// the lock.
///
/// # Fairness
///
/// As Redisson's `RLock`, it is not fair: a release wakes one waiter per
/// client, and whoever tries first wins, a newcomer included. (A client's
/// release that woke one of its own waiters holds its next acquires of the
/// lock back until that waiter has tried, 25 ms at most, so that a task
/// releasing and re-acquiring on a current-thread runtime cannot starve
/// it.) For first-come, first-served order, use a [`FairLock`].
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// use std::time::Duration;
///
/// let lock = client.lock("invoices:2026-11");
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(2), None).await? {
///     // held; the watchdog renews the lease until `unlock`
///     let inner = guard.reenter().await?; // the same owner, one more hold
///     inner.unlock().await?;
///     guard.unlock().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Lock<F: LockFlavor = Reentrant> {
    shared: Arc<Shared>,
    kind: Kind,
    names: Named<LockNames>,
    flavor: PhantomData<fn() -> F>,
}

/// A handle to the fair lock of one name, made by
/// [`LockClient::fair_lock`](crate::LockClient::fair_lock): a [`Lock`] of
/// flavor [`Fair`](flavor::Fair), Redisson's `RFairLock`.
///
/// Its waiters queue: they get it in the order they first asked, and a
/// release wakes only the first (on a channel of its own) instead of one
/// waiter per client racing the others. Use it when many clients contend
/// and each should be served in turn, or a release should cost one wake-up
/// whatever the waiters; a seldom contended lock is cheaper as a plain
/// [`Lock`]. What the flavor changes in each method is on
/// [`Fair`](flavor::Fair); everything else is as for [`Lock`].
///
/// It is stored as Redisson's `RFairLock` (Java services queue with Rust
/// ones): a reentrant lock's hash at the name, the waiting owners in
/// `redisson_lock_queue:{name}`, their deadlines in
/// `redisson_lock_timeout:{name}`, each waiter's channel
/// `redisson_lock__channel:{name}:<owner>`. A waiter first in line that
/// stopped asking (its process died) leaves the queue once its deadline
/// passes
/// ([`fair_lock_wait_timeout`](crate::LockClientBuilder::fair_lock_wait_timeout)).
///
/// A release hands the lock directly to a redlua waiter first in line, in
/// one message (the key `{name}:redlua_handoff`, for at most the wait
/// time), and the new holder extends the lease to its own at once; Java
/// waiters are woken as Redisson wakes them. The guide (`redlua::guide`,
/// "Direct handoffs") says why the holder still knows first.
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
pub type FairLock = Lock<flavor::Fair>;

/// The read side of a [`ReadWriteLock`](crate::ReadWriteLock), shared with
/// other readers: a [`Lock`] of flavor [`Read`](flavor::Read).
pub type ReadLock = Lock<flavor::Read>;

/// The write side of a [`ReadWriteLock`](crate::ReadWriteLock), exclusive:
/// a [`Lock`] of flavor [`Write`](flavor::Write).
pub type WriteLock = Lock<flavor::Write>;

impl<F: LockFlavor> std::fmt::Debug for Lock<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(F::NAME)
            .field("name", &self.name())
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// `Lock::into_any`, as `From` for each typed flavor.
macro_rules! into_any {
    ($($flavor:ident),*) => {$(
        impl From<Lock<flavor::$flavor>> for Lock<flavor::Any> {
            fn from(lock: Lock<flavor::$flavor>) -> Lock<flavor::Any> {
                lock.into_any()
            }
        }
    )*};
}
into_any!(Reentrant, Fair, Read, Write);

impl<F: LockFlavor> Lock<F> {
    /// The handle of `kind` for the lock `name` (where a kind is chosen).
    pub(crate) fn new(shared: Arc<Shared>, name: &str, kind: Kind) -> Lock<F> {
        debug_assert!(F::admits(kind), "a {} handle made with {kind:?}", F::NAME);
        let names = match kind {
            Kind::Reentrant | Kind::Fair { .. } => LockNames::new(name),
            Kind::Read { .. } | Kind::Write { .. } => LockNames::read_write(name),
        };
        Lock {
            shared,
            kind,
            names: Named::new(names, name),
            flavor: PhantomData,
        }
    }

    /// The same handle, its flavor chosen at run time, so that handles of
    /// several flavors fit one variable; it behaves as its flavor did.
    pub fn into_any(self) -> Lock<flavor::Any> {
        Lock {
            shared: self.shared,
            kind: self.kind,
            names: self.names,
            flavor: PhantomData,
        }
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        self.names.name()
    }

    fn request(&self, lease: Option<Duration>) -> Result<Request<'_>> {
        if let Some(lease) = lease {
            check_lease("a lease", lease)?;
        }
        Ok(Request {
            shared: &self.shared,
            kind: self.kind,
            names: self.names.get()?,
            lease,
        })
    }

    async fn acquire(&self, lease: Option<Duration>, wait: Wait) -> Result<Option<LockGuard>> {
        let hold = self.request(lease)?.acquire(wait).await?;
        Ok(hold.map(|hold| LockGuard::new(self.shared.clone(), hold)))
    }

    /// A re-entry for `owner`, with `lease` or the watchdog's.
    async fn reenter_for(&self, owner: &Owner, lease: Option<Duration>) -> Result<LockGuard> {
        let hold = self.request(lease)?.reenter(owner).await?;
        Ok(LockGuard::new(self.shared.clone(), hold))
    }

    /// Acquires the lock as a new holder, waiting as long as it takes, with
    /// the watchdog's lease, renewed until the guard is released. Failures
    /// that leave the outcome unknown (a lost reply, a dropped connection)
    /// are retried while waiting; others are returned. In replica-synced
    /// mode (the default, [`SyncReplicas`](crate::SyncReplicas)) an acquire
    /// or re-entry too few replicas acknowledged is undone:
    /// [`Error::NotReplicated`].
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held: an acquire under way is
    /// undone in the background (exactly that one, once Redis answers) if
    /// it took effect; a fair lock's waiter leaves the queue, waking the
    /// next if it was first and the lock is free.
    pub async fn lock(&self) -> Result<LockGuard> {
        forever(self.name(), self.acquire(None, Wait::Forever)).await
    }

    /// Acquires the lock with a fixed lease (no watchdog: Redis frees it
    /// when the lease ends, and the guard says lost), waiting as long as it
    /// takes. A lease under 1 ms or beyond Redis's range is
    /// [`Error::Config`], before anything is sent.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held, as for [`Lock::lock`].
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        forever(self.name(), self.acquire(Some(lease), Wait::Forever)).await
    }

    /// Acquires the lock if it is free, without waiting (watchdog lease):
    /// `None` when it is held. [`Error::Redis`] when Redis could not be
    /// reached; a connection found closed (an idle timeout) is replaced and
    /// the attempt sent once more at once.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held, as for [`Lock::lock`].
    pub async fn try_lock(&self) -> Result<Option<LockGuard>> {
        self.acquire(None, Wait::No).await
    }

    /// Acquires the lock, waiting at most `wait` (plus one round trip):
    /// `None` when it could not be had in time. With `lease: None` the
    /// watchdog keeps it; with `Some(lease)` Redis frees it after `lease`.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held, as for [`Lock::lock`].
    pub async fn try_lock_for(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<LockGuard>> {
        self.acquire(lease, at_most(wait)).await
    }

    /// Re-enters the lock for `owner` (from [`LockGuard::owner`]): one more
    /// hold, with the watchdog's lease, without waiting. A write hold's
    /// owner may re-enter the read side (a downgrade); a read hold's owner
    /// gets [`Error::Upgrade`] on the write side.
    ///
    /// Errors: [`Error::NotHeld`] when `owner` holds nothing of this lock,
    /// [`Error::WrongType`] when the key holds something else (left
    /// untouched).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the re-entry is undone in the background if
    /// it took effect: exactly that hold, no other.
    pub async fn reenter(&self, owner: &Owner) -> Result<LockGuard> {
        self.reenter_for(owner, None).await
    }

    /// [`Lock::reenter`] with a fixed lease for the new hold.
    ///
    /// # Cancellation
    ///
    /// As for [`Lock::reenter`].
    pub async fn reenter_with_lease(&self, owner: &Owner, lease: Duration) -> Result<LockGuard> {
        self.reenter_for(owner, Some(lease)).await
    }

    /// Breaks the lock whoever holds it (Redisson's `forceUnlock`), wakes its
    /// waiters and advances its fencing token: whether there was a lock.
    /// The holders' guards say lost within a round trip
    /// ([`LockGuard::is_lost`]). A key that holds something other than a
    /// lock of this kind is left alone: [`Error::WrongType`].
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the lock may or may not have been broken.
    pub async fn force_unlock(&self) -> Result<bool> {
        let names = self.names.get()?;
        self.kind
            .force_release(&self.shared, names)
            .await
            .map_err(|e| Error::from_redis(&names.lock, e))
    }

    /// Reads the lock: its kind, holders with their counts, TTL, fencing
    /// token and (a fair lock's) queue, in one round trip, changing nothing.
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn inspect(&self) -> Result<LockInfo> {
        let names = self.names.get()?;
        inspect(&self.shared, &names.lock).await
    }

    /// [`Lock::inspect`], refusing a key that is not a lock of this
    /// handle's kind with [`Error::WrongType`].
    async fn inspect_own(&self) -> Result<LockInfo> {
        let info = self.inspect().await?;
        let fits = matches!(
            (&info.kind, self.kind),
            (LockKind::Free, _)
                | (LockKind::Reentrant, Kind::Reentrant | Kind::Fair { .. })
                | (
                    LockKind::ReadWrite { .. },
                    Kind::Read { .. } | Kind::Write { .. }
                )
        );
        if !fits {
            return Err(Error::WrongType { name: info.name });
        }
        Ok(info)
    }

    /// Whether anyone holds the lock ([`Error::WrongType`] for a key that
    /// is not a lock of this kind, as for the reads below).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn is_locked(&self) -> Result<bool> {
        Ok(!self.inspect_own().await?.holders.is_empty())
    }

    /// The lock's remaining lease: `None` when it is not locked (or, set by
    /// someone else, has no expiry).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn remaining_ttl(&self) -> Result<Option<Duration>> {
        let info = self.inspect_own().await?;
        Ok(if info.holders.is_empty() {
            None
        } else {
            info.ttl
        })
    }

    /// How many holds `owner` has of this lock (0 when none).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn hold_count(&self, owner: &Owner) -> Result<u64> {
        let owner = owner.to_string();
        let write = matches!(self.kind, Kind::Write { .. });
        Ok(self
            .inspect_own()
            .await?
            .holders
            .iter()
            .filter(|h| h.owner == owner && (h.side == crate::api::inspect::Side::Write) == write)
            .map(|h| h.count)
            .sum())
    }
}
