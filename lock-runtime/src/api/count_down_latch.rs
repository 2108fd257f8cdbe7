//! [`CountDownLatch`]: a handle to one count-down latch, stored as
//! Redisson's `RCountDownLatch`.

use crate::api::client::LockClient;
use crate::api::handle::{Named, at_most, named_handle};
use crate::api::semaphore::{MAX_PERMITS, read_number};
use crate::base::config::{MAX_WAIT_BETWEEN_TRIES, POLL_WITHOUT_SUBSCRIPTION};
use crate::base::counted_names::CountedNames;
use crate::base::error::{Error, Result};
use crate::holds::acquire::Wait;
use crate::holds::permits::{cap, change_once, past, subscribe};
use crate::holds::shared::Shared;
use crate::observability::telemetry;
use crate::protocol::counted_scripts::{ChangeLatch, Changed, LatchChange};
use crate::protocol::replies::millis;
use crate::transport::pubsub::Subscription;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// A handle to the count-down latch of one name, made by
/// [`LockClient::count_down_latch`]. Cheap to clone.
///
/// # What it is
///
/// A count stored as Redisson's `RCountDownLatch` (Java services share
/// it): a string at the name, deleted at zero; the channel
/// `redisson_countdownlatch__channel__{name}` carries `0` when the latch
/// opens and `1` when a count is set.
///
/// It promises:
/// - [`wait`](CountDownLatch::wait) returns once the count is zero, within
///   a round trip or so of the last
///   [`count_down`](CountDownLatch::count_down), at the latest within 5 s;
/// - a count-down whose reply was lost is retried and counts once;
/// - as in Redisson, a latch that does not exist is open (a
///   [deleted](CountDownLatch::delete) one releases its waiters), and a
///   count set again after it opened starts a new round for the waiters
///   that had not seen it open.
///
/// A latch never set and one that opened are alike (zero). The count has no
/// expiry.
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// let shards = client.count_down_latch("reindex:2026-11");
/// shards.try_set_count(3).await?;
/// // ... each of 3 workers, when done: shards.count_down().await? ...
/// shards.wait().await?; // all 3 are done
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CountDownLatch {
    shared: Arc<Shared>,
    names: Named<CountedNames>,
}

named_handle!(CountDownLatch);

impl LockClient {
    /// A handle to the count-down latch `name` (Redisson's
    /// `RCountDownLatch`). See [`CountDownLatch`]. A name with braces of its
    /// own (Redisson's channel would be in another cluster slot) is invalid.
    pub fn count_down_latch(&self, name: &str) -> CountDownLatch {
        CountDownLatch {
            shared: self.shared.clone(),
            names: Named::new(CountedNames::latch(name), name),
        }
    }
}

impl CountDownLatch {
    async fn change(&self, change: LatchChange, count: u64) -> Result<(bool, u64)> {
        let names = self.names.get()?;
        let config = &self.shared.config;
        let changed: Changed = change_once(&self.shared, names, |request| {
            ChangeLatch {
                latch: &names.key,
                channel: &names.channel,
                request,
                change,
                count,
                latch_ttl_ms: millis(config.latch_ttl),
                publish: config.publish,
            }
            .call()
        })
        .await?;
        Ok((changed.changed, u64::try_from(changed.value).unwrap_or(0)))
    }

    /// Sets the count to `count` if the latch has none (it does not exist,
    /// or opened): whether it set it. A count of 0 or above 2^53 - 1 is
    /// [`Error::InvalidPermits`], before anything is sent.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the count may or may not have been set.
    pub async fn try_set_count(&self, count: u64) -> Result<bool> {
        if count == 0 || count > MAX_PERMITS {
            return Err(Error::InvalidPermits {
                name: self.name().to_string(),
                reason: format!("a count of {count}: set 1 to {MAX_PERMITS}"),
            });
        }
        Ok(self.change(LatchChange::TrySet, count).await?.0)
    }

    /// Counts down by one, and opens the latch (waking every waiter) when
    /// that makes it zero. Returns the count after; a latch that is open
    /// stays so (0). A reply lost is retried; it counts once.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the latch may or may not have been counted
    /// down (at most once).
    pub async fn count_down(&self) -> Result<u64> {
        Ok(self.change(LatchChange::CountDown, 0).await?.1)
    }

    /// Deletes the latch, which opens it (its waiters return): whether
    /// there was a count.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the latch may or may not have been
    /// deleted.
    pub async fn delete(&self) -> Result<bool> {
        Ok(self.change(LatchChange::Delete, 0).await?.0)
    }

    /// The count now: 0 when the latch is open (or was never set). A key
    /// that is not a latch is [`Error::WrongType`].
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn count(&self) -> Result<u64> {
        let names = self.names.get()?;
        Ok(u64::try_from(read_number(&self.shared, &names.key).await?).unwrap_or(0))
    }

    /// Waits until the count is zero.
    ///
    /// # Cancellation
    ///
    /// Only reads and subscribes: dropping the future changes nothing in
    /// Redis (a wake-up it got passes to another waiter).
    pub async fn wait(&self) -> Result<()> {
        self.wait_until(Wait::Forever).await.map(|_| ())
    }

    /// Waits at most `timeout` (plus one round trip) for the count to be
    /// zero: whether it is.
    ///
    /// # Cancellation
    ///
    /// As for [`wait`](CountDownLatch::wait).
    pub async fn wait_for(&self, timeout: Duration) -> Result<bool> {
        self.wait_until(at_most(timeout)).await
    }

    async fn wait_until(&self, wait: Wait) -> Result<bool> {
        let names = self.names.get()?;
        let span = telemetry::latch_wait_span(&names.key);
        self.waiting(names, wait).instrument(span).await
    }

    /// [`wait_until`](Self::wait_until)'s loop, in its span.
    async fn waiting(&self, names: &CountedNames, wait: Wait) -> Result<bool> {
        let mut subscription: Option<Subscription> = None;
        loop {
            if self.count().await? == 0 {
                // A wake-up this waiter got is passed on to the next one
                // when the subscription drops: every waiter sees it open.
                return Ok(true);
            }
            if let Some(sub) = &mut subscription {
                sub.settled();
            }
            if past(wait) {
                return Ok(false);
            }
            let Some(sub) = &mut subscription else {
                subscription = subscribe(&self.shared, &names.channel, wait, None).await;
                if subscription.is_none() {
                    tokio::time::sleep(cap(POLL_WITHOUT_SUBSCRIPTION, wait)).await;
                }
                // Look again: it may have opened before the subscription.
                continue;
            };
            let pause = if sub.is_live() {
                MAX_WAIT_BETWEEN_TRIES
            } else {
                POLL_WITHOUT_SUBSCRIPTION
            };
            tokio::select! {
                _ = sub.wake() => {}
                _ = tokio::time::sleep(cap(pause, wait)) => {}
            }
        }
    }
}
