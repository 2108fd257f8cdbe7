//! Leased permits: the acquire of a leased semaphore (Redisson's
//! `RPermitExpirableSemaphore` layout, see `leased_acquire.lua`), and the
//! client's register of the leased permits it holds, renewed by one
//! watchdog task a batch at a time.
//!
//! Invariants:
//! - **Each permit has an id and an expiry in Redis**, and comes back to
//!   the pool exactly once: released, undone, or expired (whichever script
//!   removes it from the set of permits taken counts it back, in the same
//!   step).
//! - **The holder knows first.** A guard's lease clock runs from when its
//!   acquire, or the last renewal Redis confirmed, was *sent*, minus the
//!   drift margin (`lease_clock.rs`); Redis's expiry is at least that late.
//!   A renewal that finds a permit gone marks the guard lost.
//! - **Renewals are batched.** One task per client renews every watched
//!   permit every third of the watchdog timeout: one script call per
//!   semaphore and up to [`BATCH`](crate::holds::watchdog::BATCH) ids, on
//!   the watchdog's own connection. The task ends when nothing is watched.

use crate::base::counted_names::CountedNames;
use crate::base::error::{Failure, classify};
use crate::holds::job::PermitJob;
use crate::holds::lease_clock::LeaseClock;
use crate::holds::permits::{Attempt, Try};
use crate::holds::shared::Shared;
use crate::holds::watchdog::BATCH;
use crate::observability::targets;
use crate::protocol::counted_scripts::{LeasedTaken, RenewLeased, TakeLeased};
use crate::protocol::replies::millis;
use crate::script::ScriptCall;
use crate::transport::replication::{Acked, Synced};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// A new permit id: 16 random bytes (Redisson's ids are 16 bytes too).
pub(crate) fn new_id() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

/// An id as Redisson prints it: 32 lowercase hex digits.
pub(crate) fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// An id from its hex form, if it is one.
pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.is_empty() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// An acquire of leased permits.
pub(crate) struct LeasedRequest<'a> {
    pub names: &'a CountedNames,
    pub attempt: String,
    pub ids: Vec<[u8; 16]>,
    pub lease: Duration,
    pub attempt_ttl_ms: u64,
    pub token_ttl_ms: u64,
    pub publish: crate::protocol::replies::Publish,
}

impl Attempt for LeasedRequest<'_> {
    type Reply = LeasedTaken;
    type Value = u64;

    fn call(&self) -> ScriptCall {
        TakeLeased {
            semaphore: &self.names.key,
            timeouts: &self.names.timeouts,
            channel: &self.names.channel,
            attempt: &self.attempt,
            token: &self.names.token,
            lease_ms: millis(self.lease),
            attempt_ttl_ms: self.attempt_ttl_ms,
            token_ttl_ms: self.token_ttl_ms,
            publish: self.publish,
            ids: self.ids.iter().map(|id| &id[..]).collect(),
        }
        .call()
    }

    fn read(reply: LeasedTaken) -> Try<u64> {
        match reply {
            LeasedTaken::Yes { token, available } => Try::Took {
                value: token,
                available,
            },
            LeasedTaken::No { wait, .. } => Try::Busy { wait },
            LeasedTaken::Abandoned => Try::Abandoned,
        }
    }

    fn undo(&self) -> PermitJob {
        PermitJob::UndoLeased {
            names: Arc::new(self.names.clone()),
            attempt: self.attempt.clone(),
            ids: self.ids.clone(),
        }
    }
}

/// The permits of one guard.
#[derive(Debug)]
pub(crate) struct Held {
    pub names: Arc<CountedNames>,
    pub ids: Vec<[u8; 16]>,
    pub clock: Arc<LeaseClock>,
}

/// The leased permits a client holds that its watchdog renews.
#[derive(Debug, Default)]
pub(crate) struct LeasedHolds {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    watched: HashMap<u64, Arc<Held>>,
    running: bool,
}

impl LeasedHolds {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a guard's permits for renewal, starting the watchdog if it
    /// is not running: the key to [`forget`](Self::forget) them by.
    pub(crate) fn watch(shared: &Arc<Shared>, held: Arc<Held>) -> u64 {
        let mut state = shared.leased.state();
        let key = state.next;
        state.next += 1;
        state.watched.insert(key, held);
        if !std::mem::replace(&mut state.running, true) {
            tokio::spawn(renew_while_watched(Arc::downgrade(shared)));
        }
        key
    }

    /// Stops renewing a guard's permits.
    pub(crate) fn forget(&self, key: u64) {
        self.state().watched.remove(&key);
    }
}

/// The watchdog of leased permits: a round every third of the watchdog
/// timeout while any permit is watched (50 ms after a round that failed).
async fn renew_while_watched(shared: Weak<Shared>) {
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let period = strong.config.watchdog_timeout / 3;
        let held: Vec<Arc<Held>> = {
            let mut state = strong.leased.state();
            if state.watched.is_empty() {
                state.running = false;
                return;
            }
            state.watched.values().cloned().collect()
        };
        let failed = round(&strong, &held).await;
        drop(strong);
        tokio::time::sleep(if failed {
            Duration::from_millis(50).min(period)
        } else {
            period
        })
        .await;
    }
}

/// Renews `held`: one script call per semaphore and batch. Whether a call
/// failed (its permits' clocks did not move: the next round is soon).
async fn round(shared: &Arc<Shared>, held: &[Arc<Held>]) -> bool {
    let lease = shared.config.watchdog_timeout;
    let mut by_semaphore: HashMap<&str, Vec<&Arc<Held>>> = HashMap::new();
    for h in held {
        by_semaphore.entry(&h.names.key).or_default().push(h);
    }
    let mut failed = false;
    for guards in by_semaphore.values() {
        // Batches of whole guards, up to BATCH ids each (a guard with more
        // goes alone).
        let mut batch: Vec<&Arc<Held>> = Vec::new();
        let mut ids = 0;
        for guard in guards.iter().copied() {
            if !batch.is_empty() && ids + guard.ids.len() > BATCH {
                failed |= renew(shared, &batch, lease).await;
                batch.clear();
                ids = 0;
            }
            ids += guard.ids.len();
            batch.push(guard);
        }
        if !batch.is_empty() {
            failed |= renew(shared, &batch, lease).await;
        }
    }
    failed
}

/// One renewal call for guards of one semaphore: whether it failed.
async fn renew(shared: &Arc<Shared>, batch: &[&Arc<Held>], lease: Duration) -> bool {
    let names = &batch[0].names;
    let ids: Vec<&[u8]> = batch
        .iter()
        .flat_map(|h| h.ids.iter().map(|id| &id[..]))
        .collect();
    let call = RenewLeased {
        semaphore: &names.key,
        timeouts: &names.timeouts,
        channel: &names.channel,
        lease_ms: millis(lease),
        publish: shared.config.publish,
        ids,
    }
    .call();
    let mut con = shared.renewal_con.clone();
    let sent = Instant::now();
    let reply: redis::RedisResult<Synced<Vec<i64>>> =
        shared.sync.run(&mut con, &call, &names.key).await;
    match reply {
        Ok(Synced { reply, acked }) => {
            let mut flags = reply.into_iter();
            for held in batch {
                // Every id's flag is read, so that the next guard's follow.
                let mut renewed = true;
                for _ in &held.ids {
                    renewed &= flags.next() == Some(1);
                }
                if !renewed {
                    tracing::warn!(target: targets::WATCHDOG, semaphore = %names.key, "permit lost: the watchdog found it gone (expired, released or taken away)");
                    held.clock.mark_lost();
                } else if !matches!(acked, Acked::Short { .. }) {
                    held.clock.confirm(sent, lease);
                }
            }
            matches!(acked, Acked::Short { .. })
        }
        Err(error) => {
            if classify(&error) != Failure::Unknown {
                tracing::warn!(target: targets::WATCHDOG, semaphore = %names.key, %error, "permit renewal refused");
            } else {
                tracing::warn!(target: targets::WATCHDOG, semaphore = %names.key, %error, "permit renewal failed; retrying soon");
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_as_redisson_prints_them_and_read_back() {
        let id = [0xab; 16];
        assert_eq!(hex(&id), "ab".repeat(16));
        assert_eq!(from_hex(&hex(&id)).unwrap(), id.to_vec());
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex(""), None);
        assert_ne!(new_id(), new_id());
    }
}
