//! Lease renewal: one task per client renews the leases of all of the
//! client's holds that were taken without an explicit lease.
//!
//! Every third of the watchdog timeout it renews them in batches of at most
//! [`BATCH`] locks per script call (`scripts/lock_renew.lua`). A confirmed
//! renewal moves the holds' lease clocks forward, from when it was sent. A
//! lock the script reports gone (expired, deleted, taken over) is marked
//! lost: its guards see it through
//! [`LockGuard::is_lost`](crate::LockGuard::is_lost), and a warning is
//! logged. A Redis error moves no clock; the round is retried soon (after
//! 50 ms, doubling while it keeps failing, up to the normal period), so one
//! failed round does not cost the leases. The task ends when the client
//! holds nothing that needs renewing, and starts again with the next such
//! hold.

use crate::config::millis;
use crate::scripts::Renew;
use crate::shared::Shared;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The most locks renewed by one script call.
pub(crate) const BATCH: usize = 100;

/// The first pause before retrying a round that failed; it doubles with
/// each failed round, up to the normal period.
const RETRY: Duration = Duration::from_millis(50);

/// What a round found.
enum Round {
    /// Every batch got an answer.
    Done,
    /// Some batch failed: retry soon, before the leases run out.
    Failed,
    /// Nothing left to renew (or the client is gone): the task ends.
    Stop,
}

/// Starts the renewal task of `shared` (the caller made sure none runs).
pub(crate) fn start(shared: &Arc<Shared>) {
    let weak = Arc::downgrade(shared);
    let period = shared.config.watchdog_timeout / 3;
    tokio::spawn(async move {
        let mut pause = period;
        loop {
            tokio::time::sleep(pause).await;
            pause = match round(&weak).await {
                Round::Done => period,
                Round::Failed if pause >= period => RETRY.min(period),
                Round::Failed => (pause * 2).min(period),
                Round::Stop => break,
            };
        }
    });
}

/// Renews every watched hold once.
async fn round(weak: &Weak<Shared>) -> Round {
    let Some(shared) = weak.upgrade() else {
        return Round::Stop;
    };
    let Some(watched) = shared.holds().next_round() else {
        return Round::Stop;
    };
    let mut outcome = Round::Done;
    let lease = shared.config.watchdog_timeout;
    let mut con = shared.con.clone();
    for batch in watched.chunks(BATCH) {
        let renew = Renew {
            locks: batch.iter().map(|w| w.key.lock.as_str()).collect(),
            lease_ms: millis(lease),
            fields: batch
                .iter()
                .flat_map(|w| [w.key.field.as_str(), w.timeouts.as_str()])
                .collect(),
        };
        let sent = Instant::now();
        match renew.invoke(&mut con).await {
            Ok(renewed) => {
                for (watched, result) in batch.iter().zip(renewed) {
                    if result == 1 {
                        watched.clock.confirm(sent, lease);
                        continue;
                    }
                    if shared
                        .holds()
                        .renewal_failed(&watched.key, watched.generation)
                    {
                        tracing::warn!(
                            target: "redlua::lock",
                            lock = %watched.key.lock,
                            field = %watched.key.field,
                            "lock lost: the watchdog found it gone (expired, deleted or taken over)"
                        );
                    }
                }
            }
            Err(error) => {
                tracing::warn!(target: "redlua::lock", %error, locks = batch.len(), "lease renewal failed; retrying soon");
                outcome = Round::Failed;
            }
        }
    }
    outcome
}
