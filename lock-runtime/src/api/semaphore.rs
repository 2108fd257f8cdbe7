//! [`Semaphore`]: a handle to one semaphore of permits owned by no one,
//! stored as Redisson's `RSemaphore` (`permits.rs` takes and changes them).

use crate::api::client::LockClient;
use crate::api::handle::{Named, at_most, forever, named_handle};
use crate::base::counted_names::CountedNames;
use crate::base::error::{Error, Result};
use crate::holds::acquire::Wait;
use crate::holds::permits::{PermitRequest, change_once, take};
use crate::holds::shared::Shared;
use crate::observability::telemetry;
use crate::protocol::counted_scripts::{ChangeSemaphore, Changed, SemaphoreChange};
use crate::protocol::replies::millis;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// The most permits one call takes, gives or sets: 2^53 - 1, the largest
/// integer Redis's Lua numbers hold exactly.
pub const MAX_PERMITS: u64 = (1 << 53) - 1;

/// A handle to the semaphore of one name, made by
/// [`LockClient::semaphore`]. Cheap to clone; holds nothing by itself.
///
/// # What it is
///
/// A counter of permits stored as Redisson's `RSemaphore`: a string at the
/// name, the permits available, and the channel `redisson_sc:{name}`, on
/// which every change that leaves permits publishes how many. Java services
/// using `RSemaphore` of the same name share the permits, and each wakes
/// the other's waiters.
///
/// The permits are owned by no one: an acquire takes them, a
/// [`release`](Semaphore::release) puts permits back, whoever calls it, and
/// nothing gives back those of a process that died holding them (use a
/// [`LeasedSemaphore`](crate::LeasedSemaphore) for that). The counter has
/// no expiry; the count is exactly what callers made it.
///
/// What redlua adds to Redisson's semantics, in its layout:
/// - **Exact acquires.** A dropped or failed acquire never takes permits:
///   what a try may have taken is given back exactly, in the background.
/// - **Exact changes.** A release or change of the permits whose reply was
///   lost is retried, and takes effect once.
/// - **Bad input fails first.** Zero permits, or more than
///   [`MAX_PERMITS`], is [`Error::InvalidPermits`] before anything is sent;
///   a key that is not a semaphore is [`Error::WrongType`], left alone.
///
/// The pool's size is not stored (Redisson's layout keeps only the count),
/// so an acquire of more permits than it ever had waits until someone adds
/// permits.
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// let api_calls = client.semaphore("partner-api");
/// api_calls.try_set_permits(4).await?; // once, by whoever comes first
/// api_calls.acquire(1).await?;
/// // ... at most 4 of these at once, across every process ...
/// api_calls.release(1).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Semaphore {
    shared: Arc<Shared>,
    names: Named<CountedNames>,
}

named_handle!(Semaphore);

impl LockClient {
    /// A handle to the semaphore `name` (Redisson's `RSemaphore`): permits
    /// owned by no one. See [`Semaphore`].
    pub fn semaphore(&self, name: &str) -> Semaphore {
        Semaphore {
            shared: self.shared.clone(),
            names: Named::new(CountedNames::semaphore(name), name),
        }
    }
}

impl Semaphore {
    /// Checks a number of permits to take or give: 1 to [`MAX_PERMITS`].
    fn checked(&self, permits: u64) -> Result<u64> {
        if permits == 0 || permits > MAX_PERMITS {
            return Err(Error::InvalidPermits {
                name: self.name().to_string(),
                reason: format!("{permits} permits: take or give 1 to {MAX_PERMITS}"),
            });
        }
        Ok(permits)
    }

    async fn take(&self, permits: u64, wait: Wait) -> Result<bool> {
        let permits = self.checked(permits)?;
        let names = self.names.get()?;
        let shared = &self.shared;
        let attempt = PermitRequest {
            names,
            attempt: names.attempt(&shared.id, shared.ids.next()),
            permits,
            attempt_ttl_ms: millis(shared.config.latch_ttl),
        };
        Ok(take(shared, names, &attempt, &attempt.attempt, wait)
            .await?
            .is_some())
    }

    /// Takes `permits` if that many are available, without waiting: whether
    /// it took them. In replica-synced mode an acquire too few replicas
    /// acknowledged is given back: [`Error::NotReplicated`].
    ///
    /// # Cancellation
    ///
    /// Dropping the future takes nothing: what a try under way took is
    /// given back exactly, in the background, once Redis answers (within
    /// 30 s: the attempt's record lives that long).
    pub async fn try_acquire(&self, permits: u64) -> Result<bool> {
        self.take(permits, Wait::No).await
    }

    /// Takes `permits`, waiting as long as it takes: woken through the
    /// channel when permits come back, trying again at least every 5 s.
    /// Failures that leave the outcome unknown are retried while waiting.
    ///
    /// # Cancellation
    ///
    /// Dropping the future takes nothing, as for
    /// [`try_acquire`](Semaphore::try_acquire); a waiter woken and dropped
    /// before it tried passes the wake-up on.
    pub async fn acquire(&self, permits: u64) -> Result<()> {
        let taken = self.take(permits, Wait::Forever);
        forever(self.name(), async { Ok(taken.await?.then_some(())) }).await
    }

    /// Takes `permits`, waiting at most `wait` (plus one round trip):
    /// whether it took them.
    ///
    /// # Cancellation
    ///
    /// Dropping the future takes nothing, as for
    /// [`acquire`](Semaphore::acquire).
    pub async fn try_acquire_for(&self, permits: u64, wait: Duration) -> Result<bool> {
        self.take(permits, at_most(wait)).await
    }

    /// Gives `permits` back (whoever took them), wakes waiters, and returns
    /// the permits available after; once, though a lost reply is retried.
    /// In replica-synced mode a release too few replicas acknowledged is
    /// [`Error::ReleaseNotReplicated`] (done on the primary).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been given
    /// back (at most once).
    pub async fn release(&self, permits: u64) -> Result<i64> {
        let permits = self.checked(permits)?;
        let span = telemetry::release_permits_span(self.name(), telemetry::SEMAPHORE, permits);
        let permits = i64::try_from(permits).unwrap_or(i64::MAX);
        let change = change_pool(&self.shared, &self.names, SemaphoreChange::Release, permits);
        Ok(change.instrument(span).await?.1)
    }

    /// Adds `permits` to the pool (negative: takes them away, possibly
    /// below zero, and acquires wait until enough come back), once, and
    /// returns the permits available after; wakes waiters if any are.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been added
    /// (at most once).
    pub async fn add_permits(&self, permits: i64) -> Result<i64> {
        add_to_pool(&self.shared, &self.names, permits).await
    }

    /// Sets the permits available to `permits`, whatever they were, once,
    /// and wakes waiters. Permits taken before and released after count on
    /// top of it (Redisson's semantics: no owner list to adjust).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been set.
    pub async fn set_permits(&self, permits: u64) -> Result<()> {
        let set = set_pool(&self.shared, &self.names, SemaphoreChange::Set, permits);
        set.await.map(drop)
    }

    /// Sets the permits available to `permits` if the semaphore does not
    /// exist yet (Redisson's `trySetPermits`): whether it set them. The way
    /// to size a pool once, from whichever process starts first.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the permits may or may not have been set.
    pub async fn try_set_permits(&self, permits: u64) -> Result<bool> {
        set_pool(&self.shared, &self.names, SemaphoreChange::TrySet, permits).await
    }

    /// The permits available now (0 when the semaphore does not exist;
    /// negative after permits were removed while taken). A key that is not
    /// a semaphore is [`Error::WrongType`].
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn available(&self) -> Result<i64> {
        let names = self.names.get()?;
        read_number(&self.shared, &names.key).await
    }
}

/// Changes a semaphore's pool (a release, an addition, setting it) once,
/// through a request latch: `(whether it changed, the number after)`.
async fn change_pool(
    shared: &Arc<Shared>,
    names: &Named<CountedNames>,
    change: SemaphoreChange,
    permits: i64,
) -> Result<(bool, i64)> {
    let names = names.get()?;
    let config = &shared.config;
    let changed: Changed = change_once(shared, names, |latch| {
        ChangeSemaphore {
            semaphore: &names.key,
            channel: &names.channel,
            latch,
            timeouts: &names.timeouts,
            change,
            permits,
            latch_ttl_ms: millis(config.latch_ttl),
            publish: config.publish,
        }
        .call()
    })
    .await?;
    Ok((changed.changed, changed.value))
}

/// Sets a pool (`change`: `Set`, `TrySet` or `SetTotal`) to 0 to
/// [`MAX_PERMITS`] permits: whether it set them.
pub(crate) async fn set_pool(
    shared: &Arc<Shared>,
    names: &Named<CountedNames>,
    change: SemaphoreChange,
    permits: u64,
) -> Result<bool> {
    if permits > MAX_PERMITS {
        return Err(Error::InvalidPermits {
            name: names.name().to_string(),
            reason: format!("{permits} permits: set 0 to {MAX_PERMITS}"),
        });
    }
    let permits = i64::try_from(permits).unwrap_or(i64::MAX);
    Ok(change_pool(shared, names, change, permits).await?.0)
}

/// Adds 1 to [`MAX_PERMITS`] permits to a pool, or (negative) removes
/// them: the permits available after.
pub(crate) async fn add_to_pool(
    shared: &Arc<Shared>,
    names: &Named<CountedNames>,
    permits: i64,
) -> Result<i64> {
    if permits == 0 || permits.unsigned_abs() > MAX_PERMITS {
        return Err(Error::InvalidPermits {
            name: names.name().to_string(),
            reason: format!("{permits} permits: add or remove 1 to {MAX_PERMITS}"),
        });
    }
    Ok(change_pool(shared, names, SemaphoreChange::Add, permits)
        .await?
        .1)
}

/// Reads the integer at `key` (0 when absent): [`Error::WrongType`] for a
/// key of another type, or a string that is not an integer.
pub(crate) async fn read_number(shared: &Shared, key: &str) -> Result<i64> {
    let mut con = shared.con.clone();
    let value: Option<String> = redis::cmd("GET")
        .arg(key)
        .query_async(&mut con)
        .await
        .map_err(|e| Error::from_redis(key, e))?;
    match value {
        None => Ok(0),
        Some(value) => value.parse().map_err(|_| Error::WrongType {
            name: key.to_string(),
        }),
    }
}
