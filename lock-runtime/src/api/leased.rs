//! [`LeasedSemaphore`]: permits with an id and a lease each, stored as
//! Redisson's `RPermitExpirableSemaphore`, handed out as [`PermitGuard`]s.

use crate::api::client::LockClient;
use crate::api::handle::{Named, at_most, forever, named_handle};
use crate::api::semaphore::{add_to_pool, set_pool};
use crate::base::config::{check_lease, token_ttl};
use crate::base::counted_names::CountedNames;
use crate::base::error::{Error, Result};
use crate::base::hold_key::HoldKey;
use crate::holds::acquire::{Wait, enter};
use crate::holds::job::{PermitsTarget, ReleaseRequest, Target};
use crate::holds::lease_clock::LeaseClock;
use crate::holds::leased::{LeasedRequest, from_hex, hex, new_hold, new_id};
use crate::holds::permits::{change_once, take};
use crate::holds::release::{dropped, replicated, retrying, settle, span};
use crate::holds::shared::Shared;
use crate::protocol::counted_scripts::{POOL_TOO_SMALL, ReleaseLeased, SemaphoreChange};
use crate::protocol::replies::{ReleaseMode, Released, millis};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// A handle to the leased semaphore of one name, made by
/// [`LockClient::leased_semaphore`]. Cheap to clone; holds nothing by
/// itself.
///
/// # What it is
///
/// A pool stored as Redisson's `RPermitExpirableSemaphore` (Java services
/// share it): a string at the name, the permits available; a sorted set
/// `{name}:timeout` of the permits taken, each a 16-byte id scored by when
/// its lease ends; the channel `redisson_sc:{name}`.
///
/// Each acquire hands out a [`PermitGuard`]: the permits' ids, a lease kept
/// by the watchdog (or a fixed one), a lease clock, a fencing token, and a
/// release when it is dropped.
///
/// It promises:
/// - **a permit comes back exactly once**: released, dropped, undone, or
///   expired (brought back by the next script that touches the semaphore,
///   this client's or Java's), so the count does not drift;
/// - **a crashed holder's permits come back** when their lease ends;
/// - **the holder knows first**: [`PermitGuard::is_lost`] turns true no
///   later than Redis may hand the permit to someone else;
/// - **a permit taken away is noticed at once**
///   ([`force_release`](Self::force_release), `lockctl unlock --force
///   --permit`, or removed): its guard says lost within a round trip or so,
///   as a lock's does;
/// - **exact acquires**: a dropped or failed acquire holds nothing;
/// - **bad input fails first**: zero permits, more than the pool (available
///   plus taken), an out-of-range lease, or keys of another type.
///
/// A paused process (GC, `SIGSTOP`) may act after its lease ended: the
/// fencing token lets the resource refuse it. Expiry is Redis's clock for
/// redlua's scripts and the caller's for Redisson's: a Java client whose
/// clock runs ahead may bring permits back early.
///
/// As in Redisson, [`set_permits`](Self::set_permits) sets the total
/// (available plus taken; fewer than zero may be left available), and
/// [`add_permits`](Self::add_permits) adds to what is available.
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// let encoders = client.leased_semaphore("gpu-encoders");
/// encoders.try_set_permits(4).await?;
/// let permit = encoders.acquire(1).await?; // renewed until released
/// // ... work, while !permit.is_lost(); pass permit.token() along ...
/// permit.release().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LeasedSemaphore {
    shared: Arc<Shared>,
    names: Named<CountedNames>,
}

named_handle!(LeasedSemaphore);

impl LockClient {
    /// A handle to the leased semaphore `name` (Redisson's
    /// `RPermitExpirableSemaphore`): permits with an id and a lease each.
    /// See [`LeasedSemaphore`].
    pub fn leased_semaphore(&self, name: &str) -> LeasedSemaphore {
        LeasedSemaphore {
            shared: self.shared.clone(),
            names: Named::new(CountedNames::semaphore(name), name),
        }
    }
}

/// One permit taken from a leased semaphore, as [`LeasedSemaphore::holders`]
/// reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermitInfo {
    /// The permit's id, 32 hex digits (as Redisson prints it).
    pub id: String,
    /// How long its lease has left (`None`: already expired, not yet
    /// brought back).
    pub expires_in: Option<Duration>,
}

impl LeasedSemaphore {
    fn invalid(&self, reason: String) -> Error {
        Error::InvalidPermits {
            name: self.name().to_string(),
            reason,
        }
    }

    async fn take(
        &self,
        permits: u64,
        lease: Option<Duration>,
        wait: Wait,
    ) -> Result<Option<PermitGuard>> {
        if permits == 0 || permits > BATCH_PERMITS {
            return Err(self.invalid(format!(
                "{permits} permits: take 1 to {BATCH_PERMITS} at once"
            )));
        }
        if let Some(lease) = lease {
            check_lease("a lease", lease)?;
        }
        let names = self.names.get()?;
        let shared = &self.shared;
        let watched = lease.is_none();
        let lease = lease.unwrap_or(shared.config.watchdog_timeout);
        let request = LeasedRequest {
            target: PermitsTarget {
                names: names.clone(),
                ids: (0..permits).map(|_| new_id()).collect(),
                attempt: names.attempt(&shared.id, shared.ids.next()).into(),
            },
            lease,
            attempt_ttl_ms: millis(shared.config.attempt_ttl(lease)),
            token_ttl_ms: millis(token_ttl(lease)),
            publish: shared.config.publish,
        };
        let attempt = &request.target.attempt;
        let (token, sent) = match take(shared, names, &request, attempt, wait).await {
            Ok(Some(took)) => took,
            Ok(None) => return Ok(None),
            Err(Error::Redis(error)) if error.to_string().contains(POOL_TOO_SMALL) => {
                return Err(self.invalid(format!(
                    "{permits} permits: more than the pool has (available plus taken)"
                )));
            }
            Err(error) => return Err(error),
        };
        // The clock runs from when the try that reported the permits held
        // was sent: Redis's expiry is at least that plus the lease.
        let hold = new_hold(&request.target, watched, sent, lease);
        let key = hold.key.clone();
        let clock = enter(shared, hold);
        Ok(Some(PermitGuard {
            shared: shared.clone(),
            permits: request.target,
            key,
            clock,
            token,
            lease,
            watched,
            latch: None,
            done: false,
        }))
    }

    /// Takes `permits` if that many are available, without waiting (`None`
    /// when not), with the watchdog's lease. More permits than the pool is
    /// [`Error::InvalidPermits`]; in replica-synced mode an acquire too few
    /// replicas acknowledged is given back: [`Error::NotReplicated`].
    ///
    /// # Cancellation
    ///
    /// Dropping the future holds nothing: what a try under way took is
    /// given back exactly, in the background.
    pub async fn try_acquire(&self, permits: u64) -> Result<Option<PermitGuard>> {
        self.take(permits, None, Wait::No).await
    }

    /// Takes `permits` with the watchdog's lease, waiting as long as it
    /// takes: woken when permits come back, at the latest when the first
    /// permit taken expires (or every 5 s).
    ///
    /// # Cancellation
    ///
    /// Dropping the future holds nothing, as for
    /// [`try_acquire`](Self::try_acquire); a waiter woken and dropped
    /// before it tried passes the wake-up on.
    pub async fn acquire(&self, permits: u64) -> Result<PermitGuard> {
        forever(self.name(), self.take(permits, None, Wait::Forever)).await
    }

    /// Takes `permits` with a fixed lease (no watchdog: they come back when
    /// it ends, and the guard says lost), waiting as long as it takes.
    ///
    /// # Cancellation
    ///
    /// As for [`acquire`](Self::acquire).
    pub async fn acquire_with_lease(&self, permits: u64, lease: Duration) -> Result<PermitGuard> {
        forever(self.name(), self.take(permits, Some(lease), Wait::Forever)).await
    }

    /// Takes `permits`, waiting at most `wait` (plus one round trip):
    /// `None` when they could not be had in time. `lease: None` is the
    /// watchdog's lease, renewed; `Some` a fixed one.
    ///
    /// # Cancellation
    ///
    /// As for [`acquire`](Self::acquire).
    pub async fn try_acquire_for(
        &self,
        permits: u64,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<PermitGuard>> {
        self.take(permits, lease, at_most(wait)).await
    }

    /// Sets the pool to `permits` in all, taken ones included (Redisson's
    /// `setPermits`): available becomes `permits` minus those taken, maybe
    /// below zero. Once; wakes waiters if some are available.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the pool may or may not have been set.
    pub async fn set_permits(&self, permits: u64) -> Result<()> {
        let set = set_pool(
            &self.shared,
            &self.names,
            SemaphoreChange::SetTotal,
            permits,
        );
        set.await.map(drop)
    }

    /// Sets the permits available to `permits` if the semaphore does not
    /// exist yet: whether it set them.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been set.
    pub async fn try_set_permits(&self, permits: u64) -> Result<bool> {
        set_pool(&self.shared, &self.names, SemaphoreChange::TrySet, permits).await
    }

    /// Adds `permits` to those available (negative: removes them), once,
    /// and returns the permits available after.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been
    /// added (at most once).
    pub async fn add_permits(&self, permits: i64) -> Result<i64> {
        add_to_pool(&self.shared, &self.names, permits).await
    }

    /// Brings expired permits back, then reads the permits available (as
    /// Redisson's `availablePermits` does).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, expired permits may or may not have been
    /// brought back (each once).
    pub async fn available(&self) -> Result<i64> {
        let names = self.names.get()?;
        release_ids(&self.shared, names, &[]).await?;
        crate::api::semaphore::read_number(&self.shared, &names.key).await
    }

    /// The permits taken, with how long each has left, in one round trip
    /// (changing nothing).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn holders(&self) -> Result<Vec<PermitInfo>> {
        let names = self.names.get()?;
        let mut con = self.shared.con.clone();
        let (time, taken): (ServerTime, Vec<(Vec<u8>, f64)>) = redis::pipe()
            .cmd("TIME")
            .cmd("ZRANGE")
            .arg(&names.timeouts)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query_async(&mut con)
            .await
            .map_err(|e| Error::from_redis(&names.key, e))?;
        let now_ms = time.0 * 1000 + time.1 / 1000;
        Ok(taken
            .into_iter()
            .map(|(id, expiry)| {
                let expiry = expiry as u64;
                PermitInfo {
                    id: hex(&id),
                    expires_in: (expiry > now_ms).then(|| Duration::from_millis(expiry - now_ms)),
                }
            })
            .collect())
    }

    /// Gives back the permit `id` (32 hex digits, from
    /// [`holders`](Self::holders)) whoever holds it, and wakes waiters:
    /// whether it was taken (its guard says lost). An id that is not hex is
    /// [`Error::InvalidPermits`].
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permit may or may not have come back
    /// (at most once).
    pub async fn force_release(&self, id: &str) -> Result<bool> {
        let raw = from_hex(id)
            .ok_or_else(|| self.invalid(format!("`{id}` is not a permit id (hex digits)")))?;
        let names = self.names.get()?;
        Ok(release_ids(&self.shared, names, &[&raw]).await?.0 == 1)
    }
}

/// `TIME`'s reply: seconds and microseconds.
type ServerTime = (u64, u64);

/// The most permits one guard takes (one renewal call carries them all).
pub const BATCH_PERMITS: u64 = crate::holds::watchdog::BATCH as u64;

/// Runs the release script for `ids` once (a lost reply is retried with the
/// same request latch): (released, of which expired); in replica-synced
/// mode, [`Error::ReleaseNotReplicated`] if too few replicas acknowledged.
async fn release_ids(
    shared: &Arc<Shared>,
    names: &CountedNames,
    ids: &[&[u8]],
) -> Result<(i64, i64)> {
    change_once(shared, names, |latch| {
        ReleaseLeased {
            semaphore: &names.key,
            timeouts: &names.timeouts,
            channel: &names.channel,
            latch,
            latch_ttl_ms: millis(shared.config.latch_ttl),
            publish: shared.config.publish,
            ids: ids.to_vec(),
        }
        .call()
    })
    .await
}

/// Permits taken from a [`LeasedSemaphore`]: their ids, their lease clock,
/// a fencing token; released by [`release`](Self::release), or in the
/// background when dropped.
#[must_use = "dropping the guard gives its permits back at once"]
pub struct PermitGuard {
    shared: Arc<Shared>,
    permits: PermitsTarget,
    /// Its hold's key in the client's registry.
    key: HoldKey,
    clock: Arc<LeaseClock>,
    token: u64,
    lease: Duration,
    /// Renewed by the watchdog (not a fixed lease).
    watched: bool,
    /// The release's latch, named when the release starts.
    latch: Option<String>,
    /// Released (or handed to the background worker).
    done: bool,
}

impl std::fmt::Debug for PermitGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermitGuard")
            .field("semaphore", &self.permits.names.key)
            .field("ids", &self.ids())
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl PermitGuard {
    /// The permits' ids, 32 hex digits each (as Redisson prints them).
    pub fn ids(&self) -> Vec<String> {
        self.permits.ids.iter().map(|id| hex(id)).collect()
    }

    /// How many permits the guard holds.
    pub fn permits(&self) -> usize {
        self.permits.ids.len()
    }

    /// The fencing token of this acquire, greater than every earlier one of
    /// this semaphore: the resource refuses a holder whose lease ended.
    pub fn token(&self) -> u64 {
        self.token
    }

    /// The latest instant at which the permits are surely still held (as a
    /// lock's [`LockGuard::valid_until`](crate::LockGuard::valid_until)).
    pub fn valid_until(&self) -> Instant {
        self.clock.valid_until()
    }

    /// Whether the permits may be gone: the lease clock passed, or they
    /// were found taken away or expired.
    pub fn is_lost(&self) -> bool {
        self.clock.is_lost()
    }

    /// Completes once [`is_lost`](Self::is_lost) is true.
    ///
    /// # Cancellation
    ///
    /// Only waits: dropping the future changes nothing.
    pub async fn lost(&self) {
        self.clock.lost().await
    }

    /// The release of the permits, its latch named once.
    fn release_request(&mut self) -> ReleaseRequest {
        let (shared, names) = (&self.shared, &self.permits.names);
        let latch = self
            .latch
            .get_or_insert_with(|| names.request_latch(&shared.id, shared.ids.next()));
        ReleaseRequest {
            target: Target::Permits(self.permits.clone()),
            key: self.key.clone(),
            lease: self.lease,
            watched: self.watched,
            latch: latch.clone(),
            mode: ReleaseMode::Release,
            resent: false,
        }
    }

    /// Gives the permits back, each once, and wakes waiters.
    /// [`Error::LockLost`] when a permit had expired or been taken away
    /// before (someone else may have held it meanwhile); in replica-synced
    /// mode, [`Error::ReleaseNotReplicated`] if too few replicas
    /// acknowledged.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits come back in the background,
    /// with the same request id: each once.
    pub async fn release(mut self) -> Result<()> {
        let request = self.release_request();
        let span = span(&request.target);
        async move {
            self.shared.holds().releasing(&request.key);
            let reply = retrying(&self.shared, &request).await;
            self.done = true;
            let name = &self.permits.names.key;
            match settle(&self.shared, request, reply) {
                Ok((Released::Freed | Released::StillHeld, acked)) => replicated(name, acked),
                Ok(_) => Err(Error::LockLost { name: name.clone() }),
                Err(error) => Err(Error::from_redis(name, error)),
            }
        }
        .instrument(span)
        .await
    }
}

impl Drop for PermitGuard {
    fn drop(&mut self) {
        if !self.done {
            let started = self.latch.is_some();
            let request = self.release_request();
            dropped(&self.shared, request, started);
        }
    }
}
