//! [`Lock`]: a handle to one reentrant lock, and how it is acquired.
//!
//! Acquiring follows Redisson: try; on failure subscribe to the lock's
//! channel and try again (a release between the two is not missed); then wait
//! for a release message or for the TTL the acquire returned, whichever comes
//! first, and retry. A missed message costs at most that TTL.

use crate::background::Job;
use crate::client::ClientInner;
use crate::error::{Error, Result};
use crate::guard::LockGuard;
use crate::holds::HoldKey;
use crate::kind::{Kind, WRITER_RETRY};
use crate::names::LockNames;
use crate::owner::{current_owner_id, owner_name};
use crate::pubsub::Subscription;
use crate::scripts::State;
use crate::watchdog;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A handle to the reentrant lock of one name, made by
/// [`LockClient::lock`](crate::LockClient::lock). Cheap to clone; holds
/// nothing by itself.
///
/// The lock is stored as Redisson's `RLock` is: a hash at the name, mapping
/// `<client-uuid>:<owner-id>` to a hold count, with the lease as its TTL.
/// Java services locking the same name with Redisson exclude, and are woken
/// by, Rust services locking it with redlua.
///
/// Holds belong to an owner: by default the current tokio task (the current
/// thread outside a task), like a Java thread for Redisson. The same owner
/// acquiring again re-enters (hold count + 1). [`Lock::with_owner`] picks an
/// explicit owner id, for code that must act as one owner across tasks.
///
/// ```no_run
/// # async fn demo(client: redlua_runtime::LockClient) -> Result<(), redlua_runtime::Error> {
/// use std::time::Duration;
///
/// let lock = client.lock("invoices:2026-11");
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(2), None).await? {
///     // held; the watchdog renews the lease until `unlock`
///     guard.unlock().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Lock {
    client: Arc<ClientInner>,
    kind: Kind,
    names: std::result::Result<Arc<LockNames>, (String, String)>,
    owner_id: Option<u64>,
}

impl std::fmt::Debug for Lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("name", &self.name())
            .field("kind", &self.kind)
            .field("owner_id", &self.owner_id)
            .finish_non_exhaustive()
    }
}

/// How long an acquire may wait.
#[derive(Debug, Clone, Copy)]
enum Wait {
    No,
    Until(Instant),
    Forever,
}

impl Lock {
    pub(crate) fn new(client: Arc<ClientInner>, name: &str, kind: Kind) -> Lock {
        let names = match kind {
            Kind::Reentrant => LockNames::new(name),
            Kind::Read { .. } | Kind::Write { .. } => LockNames::read_write(name),
        };
        let names = names.map(Arc::new).map_err(|e| match e {
            Error::InvalidName { name, reason } => (name, reason),
            other => (name.to_string(), other.to_string()),
        });
        Lock {
            client,
            kind,
            names,
            owner_id: None,
        }
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        match &self.names {
            Ok(names) => &names.lock,
            Err((name, _)) => name,
        }
    }

    /// This handle, acting for the explicit owner id `owner_id` instead of
    /// the current task. Holds taken through it are reentrant with each
    /// other whichever task takes them. (Redisson writes thread ids here;
    /// avoid ids that Java threads of the same client uuid could use — none
    /// can, as the uuid is this client's.)
    pub fn with_owner(mut self, owner_id: u64) -> Lock {
        self.owner_id = Some(owner_id);
        self
    }

    /// The owner string holds taken now through this handle get:
    /// `<client-uuid>:<owner-id>`.
    pub fn owner(&self) -> String {
        owner_name(
            &self.client.id,
            self.owner_id.unwrap_or_else(current_owner_id),
        )
    }

    fn names(&self) -> Result<&Arc<LockNames>> {
        self.names
            .as_ref()
            .map_err(|(name, reason)| Error::InvalidName {
                name: name.clone(),
                reason: reason.clone(),
            })
    }

    /// Acquires the lock, waiting as long as it takes. The lease is the
    /// watchdog timeout, renewed by the watchdog until the guard is released.
    ///
    /// # Cancellation
    ///
    /// Dropping the future gives up waiting and leaves nothing held: if an
    /// acquire was under way, the client undoes it in the background if it
    /// took effect.
    pub async fn lock(&self) -> Result<LockGuard> {
        self.acquire_waiting(None).await
    }

    /// Acquires the lock with a fixed lease, waiting as long as it takes. No
    /// watchdog: the lock is freed by Redis when the lease ends, released or
    /// not, and the guard then reports it lost.
    ///
    /// # Cancellation
    ///
    /// Dropping the future leaves nothing held, as for [`Lock::lock`].
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        check_lease(lease)?;
        self.acquire_waiting(Some(lease)).await
    }

    /// Acquires the lock if it is free (or held by this owner), without
    /// waiting: `None` when another owner holds it. Watchdog lease.
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
        if let Some(lease) = lease {
            check_lease(lease)?;
        }
        let deadline = Instant::now()
            .checked_add(wait)
            .map_or(Wait::Forever, Wait::Until);
        self.acquire(lease, deadline).await
    }

    /// Breaks the lock whoever holds it (Redisson's `forceUnlock`) and wakes
    /// a waiter. Returns whether there was a lock. Holders find out when
    /// they renew or release ([`LockGuard::is_lost`]). A key that holds
    /// something other than a lock is left alone: [`Error::WrongType`].
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the lock may or may not have been broken.
    pub async fn force_unlock(&self) -> Result<bool> {
        let names = self.names()?;
        let mut con = self.client.con.clone();
        self.kind
            .force_release(&mut con, names, self.client.config.publish)
            .await
            .map_err(|e| Error::from_redis(&names.lock, e))
    }

    /// Whether anyone holds the lock.
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn is_locked(&self) -> Result<bool> {
        Ok(self.state().await?.0)
    }

    /// How many holds this handle's owner has (0 when it does not hold it).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn hold_count(&self) -> Result<u64> {
        Ok(self.state().await?.2)
    }

    /// Whether this handle's owner holds the lock.
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn is_held_by_owner(&self) -> Result<bool> {
        Ok(self.state().await?.2 > 0)
    }

    /// The lock's remaining lease: `None` when it is not locked (or, set by
    /// someone else, has no expiry).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn remaining_ttl(&self) -> Result<Option<Duration>> {
        Ok(self.state().await?.1)
    }

    /// (locked, ttl, this owner's hold count), in one round trip.
    async fn state(&self) -> Result<(bool, Option<Duration>, u64)> {
        let names = self.names()?;
        let field = self.kind.field(&self.owner());
        let mut con = self.client.con.clone();
        let (exists, ttl, count) = State {
            lock: &names.lock,
            owner: &field,
        }
        .invoke(&mut con)
        .await
        .map_err(|e| Error::from_redis(&names.lock, e))?;
        let ttl = u64::try_from(ttl).ok().map(Duration::from_millis);
        Ok((exists == 1, ttl, u64::try_from(count).unwrap_or(0)))
    }

    /// Acquires, waiting without a deadline.
    async fn acquire_waiting(&self, lease: Option<Duration>) -> Result<LockGuard> {
        let started = Instant::now();
        // Without a deadline `acquire` only returns with the lock or an error.
        self.acquire(lease, Wait::Forever)
            .await?
            .ok_or_else(|| Error::Timeout {
                name: self.name().to_string(),
                waited: started.elapsed(),
            })
    }

    async fn acquire(&self, lease: Option<Duration>, wait: Wait) -> Result<Option<LockGuard>> {
        let names = self.names()?.clone();
        let owner: Arc<str> = self.owner().into();
        // An attempt that will not wait leaves no writer's mark behind.
        let kind = match wait {
            Wait::No => self.kind.not_waiting(),
            Wait::Until(_) | Wait::Forever => self.kind,
        };
        let attempt = Attempt {
            client: &self.client,
            kind,
            names: &names,
            owner: &owner,
            lease: lease.unwrap_or(self.client.config.watchdog_timeout),
            watched: lease.is_none(),
        };
        // A waiting writer that prefers writers leaves a mark; whenever it
        // stops waiting without the lock (gives up, fails, or is dropped),
        // this takes the mark away. Acquiring removes it in the script.
        let mut mark = kind.marks_while_waiting().then(|| WriterMark {
            client: &self.client,
            names: &names,
            field: kind.field(&owner),
            armed: true,
        });
        if let Ok(guard) = attempt.try_once().await? {
            WriterMark::disarm(&mut mark);
            return Ok(Some(guard));
        }
        if let Wait::No = wait {
            return Ok(None);
        }
        let mut subscription = self.subscribe(&names.channel, wait).await;
        loop {
            // Right after subscribing, and after every wake-up: try again.
            let ttl = match attempt.try_once().await? {
                Ok(guard) => {
                    WriterMark::disarm(&mut mark);
                    return Ok(Some(guard));
                }
                Err(ttl) => ttl,
            };
            // Wait for a release message, or for the holder's lease to end.
            let mut pause = match ttl {
                Some(ttl) => ttl,
                // No expiry (set by hand): rely on the message, but look
                // again every watchdog timeout.
                None => self.client.config.watchdog_timeout,
            };
            if mark.is_some() {
                // Come back (renewing the mark) before it expires.
                pause = pause.min((attempt.lease / 3).min(WRITER_RETRY));
            }
            if let Wait::Until(deadline) = wait {
                let now = Instant::now();
                if now >= deadline {
                    return Ok(None);
                }
                pause = pause.min(deadline - now);
            }
            match subscription.as_mut() {
                Some(subscription) => {
                    tokio::select! {
                        _ = subscription.wake() => {}
                        _ = tokio::time::sleep(pause) => {}
                    }
                }
                None => tokio::time::sleep(pause.min(Duration::from_millis(100))).await,
            }
            if subscription.is_none() {
                subscription = self.subscribe(&names.channel, wait).await;
            }
        }
    }

    /// Subscribes to `channel`, giving up at the deadline; `None` (poll
    /// instead) when pub/sub fails.
    async fn subscribe(&self, channel: &str, wait: Wait) -> Option<Subscription> {
        let subscribe = self.client.hub.subscribe(channel);
        let result = match wait {
            Wait::Until(deadline) => match tokio::time::timeout_at(deadline, subscribe).await {
                Ok(result) => result,
                Err(_) => return None,
            },
            _ => subscribe.await,
        };
        match result {
            Ok(subscription) => Some(subscription),
            Err(error) => {
                tracing::warn!(%error, channel, "redlua: cannot subscribe; polling for the lock instead");
                None
            }
        }
    }
}

fn check_lease(lease: Duration) -> Result<()> {
    if lease.is_zero() {
        return Err(Error::Config(
            "a lease must be longer than zero".to_string(),
        ));
    }
    Ok(())
}

/// One acquire attempt's fixed parts.
struct Attempt<'a> {
    client: &'a Arc<ClientInner>,
    kind: Kind,
    names: &'a Arc<LockNames>,
    owner: &'a Arc<str>,
    lease: Duration,
    watched: bool,
}

impl Attempt<'_> {
    fn key(&self) -> HoldKey {
        (self.names.lock.clone(), self.kind.field(self.owner))
    }

    /// Runs the acquire script once: the guard, or the holder's TTL (`None`
    /// when the lock has no expiry).
    async fn try_once(&self) -> Result<std::result::Result<LockGuard, Option<Duration>>> {
        let expected = self.client.holds().count(&self.key()) + 1;
        // Armed while the script is under way: dropped then (the caller gave
        // up, or the reply was lost), it undoes the acquire if it happened.
        let mut pending = Pending {
            attempt: self,
            expected,
            armed: true,
        };
        let mut con = self.client.con.clone();
        let reply = self
            .kind
            .acquire(&mut con, self.names, self.owner, self.lease)
            .await;
        match reply {
            Ok(None) => {
                pending.armed = false;
                Ok(Ok(self.guard()))
            }
            Ok(Some(ttl)) => {
                pending.armed = false;
                Ok(Err(u64::try_from(ttl).ok().map(Duration::from_millis)))
            }
            Err(error) => {
                let error = Error::from_redis(&self.names.lock, error);
                // A refusal by Redis (WRONGTYPE, ...) changed nothing; a lost
                // reply may hide an acquire: `pending` undoes it on drop.
                if matches!(&error, Error::Redis(e) if !e.is_io_error() && !e.is_timeout() && !e.is_connection_dropped())
                    || matches!(error, Error::WrongType { .. } | Error::Upgrade { .. })
                {
                    pending.armed = false;
                }
                Err(error)
            }
        }
    }

    /// Records the new hold and makes its guard.
    fn guard(&self) -> LockGuard {
        let timeouts = self.kind.renewed_timeouts(self.names, self.owner);
        let (lost, start_watchdog) =
            self.client
                .holds()
                .acquired(self.key(), self.watched, timeouts);
        if start_watchdog {
            watchdog::start(self.client);
        }
        LockGuard::new(
            self.client.clone(),
            self.kind,
            self.names.clone(),
            self.owner.clone(),
            self.watched
                .then_some(())
                .map_or(Some(self.lease), |_| None),
            lost,
        )
    }
}

/// A waiting writer's mark, taken away by the background worker when the
/// writer stops waiting without the lock (gives up, fails, is dropped) —
/// unless disarmed because the writer got the lock.
struct WriterMark<'a> {
    client: &'a Arc<ClientInner>,
    names: &'a Arc<LockNames>,
    field: String,
    armed: bool,
}

impl WriterMark<'_> {
    /// The writer got the lock: the acquire script removed the mark.
    fn disarm(mark: &mut Option<WriterMark<'_>>) {
        if let Some(mark) = mark {
            mark.armed = false;
        }
    }
}

impl Drop for WriterMark<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.client.submit(Job::ClearWriterMark {
                names: self.names.clone(),
                field: std::mem::take(&mut self.field),
            });
        }
    }
}

/// An acquire under way; see [`Attempt::try_once`].
struct Pending<'a, 'b> {
    attempt: &'a Attempt<'b>,
    expected: u64,
    armed: bool,
}

impl Drop for Pending<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            let a = self.attempt;
            a.client.submit(Job::CancelAcquire {
                kind: a.kind,
                names: a.names.clone(),
                owner: a.owner.clone(),
                expected: self.expected,
                lease: a.lease,
            });
        }
    }
}
