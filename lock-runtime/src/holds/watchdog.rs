//! Lease renewal: one task per client renews the leases of all of its
//! holds taken without an explicit lease (locks' and leased permits', each
//! shape by its own script: [`renewal`](crate::holds::kind_scripts::renewal)).
//!
//! Rounds start every third of the watchdog timeout, counted from when each
//! round *started*; one that overran its period is followed by the next at
//! once, never by a burst ([`MissedTickBehavior::Delay`]). A round walks
//! the holds [`BATCH`] at a time
//! ([`Holds::watched_after`](crate::holds::registry::Holds::watched_after)),
//! yielding between chunks, so the registry's mutex is never held for work
//! that grows with the number of holds. Each chunk becomes script calls of
//! at most [`BATCH`] locks, or permit ids of one semaphore (on a cluster,
//! of one slot: a script's keys must share it), up to [`IN_FLIGHT`] under
//! way at once on the watchdog's own connection ([`Shared::renewal_con`]),
//! so that renewals never queue behind the client's other commands.
//!
//! A confirmed renewal moves the holds' lease clocks forward, from when it
//! was sent (in replica-synced mode, only once enough replicas acknowledged
//! it); a hold the script reports gone is marked lost
//! ([`LockGuard::is_lost`](crate::LockGuard::is_lost)), with a warning. A
//! Redis error moves no clock: the round is retried after 50 ms, doubling
//! up to the period, so one failed round does not cost the leases. The
//! task ends when nothing needs renewing, and starts again with the next
//! such hold.

use crate::base::hold_key::{HoldKey, HoldShape};
use crate::base::names::slot;
use crate::holds::kind_scripts::renewal;
use crate::holds::registry::Watched;
use crate::holds::shared::Shared;
use crate::observability::targets;
use crate::observability::telemetry;
use crate::transport::replication::{Acked, Synced};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::time::MissedTickBehavior;
use tracing::Instrument;

/// The most locks (or permit ids) renewed by one script call.
pub(crate) const BATCH: usize = 100;

/// The most renewal calls of a round under way at once.
pub(crate) const IN_FLIGHT: usize = 16;

/// The first pause before retrying a failed round (see the module's doc).
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
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut retry = None;
        loop {
            ticks.tick().await;
            match round(&weak).instrument(telemetry::round_span()).await {
                Round::Done => retry = None,
                Round::Failed => {
                    // Retry soon, then at the period again from there.
                    let pause = retry.map_or(RETRY, |p: Duration| p * 2).min(period);
                    retry = Some(pause);
                    ticks.reset_after(pause);
                }
                Round::Stop => break,
            }
        }
    });
}

/// Renews every watched hold once.
async fn round(weak: &Weak<Shared>) -> Round {
    let Some(shared) = weak.upgrade() else {
        return Round::Stop;
    };
    if !shared.holds().round_due() {
        return Round::Stop;
    }
    let shared = &shared;
    let lease = shared.config.watchdog_timeout;
    let by_slot = shared.con.is_cluster();
    let started = Instant::now();
    let mut report = telemetry::Round::default();
    let mut in_flight = FuturesUnordered::new();
    let mut after = None;
    let mut walked = false;
    loop {
        // Keep up to IN_FLIGHT calls under way, adding one chunk per turn:
        // encoding a call costs time, and a round that started all of them
        // in one poll would keep the runtime's other tasks waiting.
        let topping_up = !walked && in_flight.len() < IN_FLIGHT;
        if topping_up {
            let (chunk, next) = shared.holds().watched_after(after, BATCH);
            if chunk.is_empty() {
                walked = true;
            } else {
                after = next;
                report.locks += chunk.len();
                for batch in batches(chunk, by_slot) {
                    in_flight.push(async move { renew(shared, &batch, lease).await });
                }
            }
        }
        let finished = if topping_up {
            // Polled once: the new call is sent, and an answer taken if
            // one is there; the next turn adds another chunk.
            match std::future::poll_fn(|cx| Poll::Ready(in_flight.poll_next_unpin(cx))).await {
                Poll::Ready(finished) => finished,
                Poll::Pending => {
                    tokio::task::yield_now().await;
                    continue;
                }
            }
        } else {
            in_flight.next().await
        };
        match finished {
            Some(Some((renewed, lost))) => {
                report.renewed += renewed;
                report.lost += lost;
            }
            Some(None) => report.failed_batches += 1,
            None if walked => break,
            None => {}
        }
        // Whatever was ready, let the runtime's other tasks run.
        tokio::task::yield_now().await;
    }
    telemetry::renewal_round(&report, started.elapsed());
    if report.failed_batches > 0 {
        Round::Failed
    } else {
        Round::Done
    }
}

/// Splits the watched holds into script calls: at most [`BATCH`] locks
/// each, and on a cluster the locks of one slot only; the leased permits
/// of one semaphore, at most [`BATCH`] ids each (a guard's permits in one
/// call).
fn batches(watched: Vec<Watched>, by_slot: bool) -> Vec<Vec<Watched>> {
    let (locks, mut permits): (Vec<Watched>, Vec<Watched>) = watched
        .into_iter()
        .partition(|w| matches!(w.shape, HoldShape::Lock { .. }));
    let mut batches = if locks.is_empty() {
        Vec::new()
    } else {
        lock_batches(locks, by_slot)
    };
    permits.sort_by(|a, b| a.key.lock.cmp(&b.key.lock));
    for semaphore in permits.chunk_by(|a, b| a.key.lock == b.key.lock) {
        let mut batch: Vec<Watched> = Vec::new();
        let mut ids = 0;
        for guard in semaphore {
            if !batch.is_empty() && ids + guard.shape.parts() > BATCH {
                batches.push(std::mem::take(&mut batch));
                ids = 0;
            }
            ids += guard.shape.parts();
            batch.push(guard.clone());
        }
        batches.push(batch);
    }
    batches
}

/// [`batches`] of locks' holds.
fn lock_batches(mut watched: Vec<Watched>, by_slot: bool) -> Vec<Vec<Watched>> {
    if !by_slot {
        // Moved, not cloned (a round's chunk is one batch).
        let mut batches = Vec::new();
        while watched.len() > BATCH {
            let rest = watched.split_off(BATCH);
            batches.push(std::mem::replace(&mut watched, rest));
        }
        batches.push(watched);
        return batches;
    }
    watched.sort_by_cached_key(|w| slot(&w.key.lock));
    watched
        .chunk_by(|a, b| slot(&a.key.lock) == slot(&b.key.lock))
        .flat_map(|group| group.chunks(BATCH))
        .map(<[Watched]>::to_vec)
        .collect()
}

/// Extends one hold's lease to `lease` at once, in the background: a fair
/// lock's hold handed over with a shorter expiry (see `handoff.rs`).
/// Retried as a failed round is, until Redis answers, the hold is released,
/// or its clock has passed.
pub(crate) fn extend(shared: &Arc<Shared>, key: HoldKey, lease: Duration) {
    let shared = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut pause = RETRY;
        loop {
            let Some(strong) = shared.upgrade() else {
                return;
            };
            let Some(hold) = strong.holds().entry(&key) else {
                return;
            };
            if hold.clock.is_lost() || renew(&strong, &[hold], lease).await.is_some() {
                return;
            }
            drop(strong);
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(lease / 3);
        }
    });
}

/// Renews one batch: how many holds were renewed and how many found lost,
/// or `None` when Redis did not answer or too few replicas acknowledged
/// (the round is then retried soon).
async fn renew(shared: &Arc<Shared>, batch: &[Watched], lease: Duration) -> Option<(usize, usize)> {
    let mut con = shared.renewal_con.clone();
    let sent = Instant::now();
    let first = batch.first().map_or("", |w| &*w.key.lock);
    let call = renewal(batch, lease, shared.config.publish);
    match shared.sync.run::<Vec<i64>>(&mut con, &call, first).await {
        Ok(Synced { reply, acked }) => {
            // Too few replicas have the new leases: a failover could go
            // back to the old ones, so the clocks stay; retried soon.
            let synced = !matches!(acked, Acked::Short { .. });
            if let Acked::Short { acked, wanted } = acked {
                tracing::warn!(target: targets::WATCHDOG, acked, wanted, locks = batch.len(), "too few replicas acknowledged a renewal; the lease clocks stay, retrying soon");
            }
            let (mut renewed, mut lost) = (0, 0);
            let mut flags = reply.into_iter();
            for watched in batch {
                // A hold's flags (one per permit): renewed if all are 1.
                let parts = watched.shape.parts();
                let own: Vec<i64> = flags.by_ref().take(parts).collect();
                if own.len() < parts {
                    break;
                }
                if own.iter().all(|&flag| flag == 1) {
                    if synced {
                        watched.clock.confirm(sent, lease);
                        renewed += 1;
                    }
                    continue;
                }
                if shared
                    .holds()
                    .renewal_failed(&watched.key, watched.generation)
                {
                    telemetry::lock_lost(&watched.key);
                    lost += 1;
                }
            }
            synced.then_some((renewed, lost))
        }
        Err(error) => {
            telemetry::renewal_failed(batch.len(), &error);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::holds::lease_clock::LeaseClock;

    fn watched(lock: &str) -> Watched {
        Watched {
            key: HoldKey::new(lock.into(), "c:1".into()),
            generation: 0,
            shape: HoldShape::Lock {
                timeouts: String::new(),
            },
            clock: Arc::new(LeaseClock::new(Instant::now(), Duration::from_secs(30))),
        }
    }

    #[test]
    fn cluster_batches_hold_one_slot_and_at_most_a_hundred_locks() {
        // 250 locks of slot {a}, 3 of {b}, one each of c, d.
        let mut all: Vec<Watched> = (0..250).map(|i| watched(&format!("x{i}{{a}}"))).collect();
        all.extend((0..3).map(|i| watched(&format!("{{b}}y{i}"))));
        all.push(watched("c"));
        all.push(watched("d"));
        let batches = batches(all.clone(), true);
        let mut sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [1, 1, 3, 50, 100, 100]);
        for batch in &batches {
            let first = slot(&batch[0].key.lock);
            assert!(batch.iter().all(|w| slot(&w.key.lock) == first));
        }
        // A single server: plain chunks of 100.
        let sizes: Vec<usize> = super::batches(all, false).iter().map(Vec::len).collect();
        assert_eq!(sizes, [100, 100, 55]);
    }
}
