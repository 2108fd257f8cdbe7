//! The watchdog: one task per client renews the leases of all of the
//! client's holds that were taken without an explicit lease.
//!
//! Every third of the watchdog timeout it renews them in batches of at most
//! [`BATCH`] locks per script call (`scripts/lock_renew.lua`), then schedules
//! the next round once this one is done. A lock the script reports gone
//! (expired, deleted, taken over) is marked lost: its guards see it through
//! [`LockGuard::is_lost`](crate::LockGuard::is_lost) and
//! [`LockGuard::lost`](crate::LockGuard::lost), and a warning is logged. A
//! Redis error is logged and the round retried soon (after 50 ms, doubling
//! while it keeps failing, up to the normal period): renewal never ends
//! because of one, and one failed round does not cost the leases. The task ends when the client holds nothing
//! that needs renewing, and starts again with the next such hold.

use crate::client::ClientInner;
use crate::scripts::Renew;
use std::sync::{Arc, Weak};
use std::time::Duration;

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

/// Starts the renewal task of `client` (the caller made sure none runs).
pub(crate) fn start(client: &Arc<ClientInner>) {
    let weak = Arc::downgrade(client);
    let period = client.config.watchdog_timeout / 3;
    tokio::spawn(async move {
        let mut pause = period;
        loop {
            tokio::time::sleep(pause).await;
            pause = match round(&weak).await {
                Round::Done => period,
                // A failed round is retried early: with the normal period,
                // two failures in a row would let the leases run out.
                Round::Failed if pause >= period => RETRY.min(period),
                Round::Failed => (pause * 2).min(period),
                Round::Stop => break,
            };
        }
    });
}

/// Renews every watched hold once.
async fn round(weak: &Weak<ClientInner>) -> Round {
    let Some(client) = weak.upgrade() else {
        return Round::Stop;
    };
    let Some(watched) = client.holds().next_round() else {
        return Round::Stop;
    };
    let mut outcome = Round::Done;
    let lease_ms = duration_ms(client.config.watchdog_timeout);
    let mut con = client.con.clone();
    for batch in watched.chunks(BATCH) {
        let renew = Renew {
            locks: batch.iter().map(|w| w.key.0.as_str()).collect(),
            lease_ms,
            fields: batch
                .iter()
                .flat_map(|w| [w.key.1.as_str(), w.timeouts.as_str()])
                .collect(),
        };
        match renew.invoke(&mut con).await {
            Ok(renewed) => {
                for (watched, result) in batch.iter().zip(renewed) {
                    if result == 1 {
                        continue;
                    }
                    if client
                        .holds()
                        .renewal_failed(&watched.key, watched.generation)
                    {
                        tracing::warn!(
                            lock = %watched.key.0,
                            field = %watched.key.1,
                            "redlua: lock lost: the watchdog found it gone (expired, deleted or taken over)"
                        );
                    }
                }
            }
            Err(error) => {
                tracing::warn!(%error, locks = batch.len(), "redlua: lease renewal failed; retrying soon");
                outcome = Round::Failed;
            }
        }
    }
    outcome
}

/// Whole milliseconds, at least 1.
pub(crate) fn duration_ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
