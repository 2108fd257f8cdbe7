//! The metrics of the `metrics` feature, recorded by `metrics-util`'s
//! debugging recorder while a real redis-server serves known operations.
//!
//! The recorder is the test thread's local one, and the runtime is
//! current-thread, so every task of the clients records into it.

mod common;

use common::{Redis, ms, within};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use redlua_runtime::observability::{labels, metric_names};
use std::time::Duration;

/// What the recorder was given so far. Each snapshot of the debugging
/// recorder takes what it shows (counters and gauges are swapped to zero,
/// histogram samples cleared), so the totals are kept here: a counter's or
/// an incremented gauge's value is the sum of what the snapshots took.
struct Seen {
    snapshotter: Snapshotter,
    values: Vec<(metrics::Key, DebugValue)>,
    histograms: Vec<(metrics::Key, f64)>,
}

impl Seen {
    fn new(snapshotter: Snapshotter) -> Seen {
        Seen {
            snapshotter,
            values: Vec::new(),
            histograms: Vec::new(),
        }
    }

    fn refresh(&mut self) {
        for (key, _, _, value) in self.snapshotter.snapshot().into_vec() {
            let (_, key) = key.into_parts();
            if let DebugValue::Histogram(samples) = value {
                self.histograms
                    .extend(samples.into_iter().map(|x| (key.clone(), x.into_inner())));
                continue;
            }
            match self.values.iter_mut().find(|(k, _)| *k == key) {
                Some((_, total)) => {
                    *total = match (&*total, value) {
                        (DebugValue::Counter(a), DebugValue::Counter(b)) => {
                            DebugValue::Counter(a + b)
                        }
                        (DebugValue::Gauge(a), DebugValue::Gauge(b)) => {
                            DebugValue::Gauge((a.into_inner() + b.into_inner()).into())
                        }
                        (a, b) => panic!("{key:?} changed type: {a:?} then {b:?}"),
                    }
                }
                None => self.values.push((key, value)),
            }
        }
    }

    /// The counter `name`, summed over the series with labels `with`.
    fn counter(&mut self, name: &str, with: &[(&str, &str)]) -> u64 {
        self.refresh();
        self.values
            .iter()
            .filter(|(key, _)| key.name() == name && has_labels(key, with))
            .map(|(_, value)| match value {
                DebugValue::Counter(n) => *n,
                other => panic!("{name} is not a counter: {other:?}"),
            })
            .sum()
    }

    fn gauge(&mut self, name: &str) -> f64 {
        self.refresh();
        self.values
            .iter()
            .find(|(key, _)| key.name() == name)
            .map_or(0.0, |(_, value)| match value {
                DebugValue::Gauge(n) => n.into_inner(),
                other => panic!("{name} is not a gauge: {other:?}"),
            })
    }

    /// Every sample of the histogram `name` with labels `with`, in order.
    fn samples(&mut self, name: &str, with: &[(&str, &str)]) -> Vec<f64> {
        self.refresh();
        self.histograms
            .iter()
            .filter(|(key, _)| key.name() == name && has_labels(key, with))
            .map(|(_, x)| *x)
            .collect()
    }
}

fn has_labels(key: &metrics::Key, with: &[(&str, &str)]) -> bool {
    with.iter()
        .all(|(k, v)| key.labels().any(|l| l.key() == *k && l.value() == *v))
}

#[tokio::test]
async fn metrics_count_known_operations() {
    let recorder = DebuggingRecorder::new();
    let mut seen = Seen::new(recorder.snapshotter());
    let _local = metrics::set_default_local_recorder(&recorder);
    let redis = Redis::start().await;
    // Rounds every 800 ms; a reply may take 200 ms.
    let client = redlua_runtime::LockClient::builder(redis.url())
        .watchdog_timeout(ms(2_400))
        .response_timeout(ms(200))
        // No replicas here; without a WAIT in the renewal's pipeline its
        // deadline is the response timeout alone, which the hang below
        // relies on (synced pipelines get the sync timeout on top).
        .sync_replicas(redlua_runtime::SyncReplicas::Off)
        .connect()
        .await
        .unwrap();
    let other = redis.client().await;

    // Acquired, busy, timed out; a waiter woken by the release.
    let guard = client.lock("m:a").lock().await.unwrap();
    assert_eq!(seen.gauge(metric_names::HOLDS), 1.0);
    assert!(other.lock("m:a").try_lock().await.unwrap().is_none());
    assert!(
        other
            .lock("m:a")
            .try_lock_for(ms(200), None)
            .await
            .unwrap()
            .is_none()
    );
    let lock = other.lock("m:a");
    let waiting = tokio::spawn(async move { lock.lock().await });
    tokio::time::sleep(ms(200)).await;
    guard.unlock().await.unwrap();
    let second = within(ms(5_000), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap();
    let acquired = seen.samples(
        metric_names::ACQUIRE_WAIT_SECONDS,
        &[(labels::KIND, "reentrant"), (labels::OUTCOME, "acquired")],
    );
    assert_eq!(acquired.len(), 2, "{acquired:?}");
    assert!(acquired[0] < 0.2, "{acquired:?}");
    assert!(acquired[1] >= 0.15 && acquired[1] < 5.0, "{acquired:?}");
    for (outcome, least) in [("busy", 0.0), ("timed_out", 0.2)] {
        let waits = seen.samples(
            metric_names::ACQUIRE_WAIT_SECONDS,
            &[(labels::OUTCOME, outcome)],
        );
        assert_eq!(waits.len(), 1, "{outcome}: {waits:?}");
        assert!(waits[0] >= least, "{outcome}: {waits:?}");
    }
    assert!(seen.counter(metric_names::WAKEUPS, &[]) >= 1);
    assert_eq!(seen.gauge(metric_names::HOLDS), 1.0);
    second.unlock().await.unwrap();
    assert_eq!(seen.gauge(metric_names::HOLDS), 0.0);
    let freed = [(labels::KIND, "reentrant"), (labels::OUTCOME, "freed")];
    assert_eq!(seen.counter(metric_names::RELEASES, &freed), 2);

    // Renewals: two holds, a few rounds.
    let kept = client.lock("m:kept").lock().await.unwrap();
    let broken = client.lock("m:broken").lock().await.unwrap();
    assert_eq!(seen.gauge(metric_names::HOLDS), 2.0);
    tokio::time::sleep(ms(1_700)).await;
    // Two rounds of two holds (a timer per hold, or none, would differ).
    let renewals = seen.counter(metric_names::RENEWALS, &[]);
    assert!((2..=6).contains(&renewals), "{renewals} renewals");
    assert_eq!(seen.counter(metric_names::RENEWAL_FAILURES, &[]), 0);

    // A broken lock is lost; its hold no longer counts.
    assert!(other.lock("m:broken").force_unlock().await.unwrap());
    let deadline = tokio::time::Instant::now() + ms(3_000);
    while seen.counter(metric_names::LOCKS_LOST, &[]) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no lock lost");
        tokio::time::sleep(ms(10)).await;
    }
    assert_eq!(seen.counter(metric_names::LOCKS_LOST, &[]), 1);
    assert!(broken.is_lost());
    assert_eq!(seen.gauge(metric_names::HOLDS), 1.0);
    // Its release (in the background) finds it gone.
    drop(broken);
    let not_held = [(labels::KIND, "reentrant"), (labels::OUTCOME, "not_held")];
    let deadline = tokio::time::Instant::now() + ms(3_000);
    while seen.counter(metric_names::RELEASES, &not_held) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no release");
        tokio::time::sleep(ms(10)).await;
    }

    // The releases' latches no later release carries are swept in the
    // background (250 ms after they were queued): let the last sweep pass, so that the renewal is what meets the hang.
    tokio::time::sleep(ms(400)).await;
    // A server that hangs for 1 s: a round starts within its first 800 ms
    // and times out 200 ms later (nothing else is sent meanwhile), so the
    // renewal fails and the command connection is replaced; the lease (at
    // least 1.5 s left when it hung) survives it.
    redis.server.pause();
    tokio::time::sleep(ms(1_000)).await;
    redis.server.resume();
    let deadline = tokio::time::Instant::now() + ms(3_000);
    while seen.counter(metric_names::RECONNECTS, &[(labels::CONNECTION, "command")]) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no reconnect");
        tokio::time::sleep(ms(10)).await;
    }
    assert!(seen.counter(metric_names::RENEWAL_FAILURES, &[]) >= 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!kept.is_lost());
    kept.unlock().await.unwrap();
    assert_eq!(seen.gauge(metric_names::HOLDS), 0.0);
}

#[tokio::test]
async fn a_leased_permit_guard_s_release_counts_as_a_release() {
    let recorder = DebuggingRecorder::new();
    let mut seen = Seen::new(recorder.snapshotter());
    let _local = metrics::set_default_local_recorder(&recorder);
    let redis = Redis::start().await;
    let client = redis.client().await;
    let semaphore = client.leased_semaphore("m:permits");
    assert!(semaphore.try_set_permits(2).await.unwrap());
    let kind = (labels::KIND, "leased_semaphore");
    let freed = [kind, (labels::OUTCOME, "freed")];
    let not_held = [kind, (labels::OUTCOME, "not_held")];
    assert_eq!(seen.counter(metric_names::RELEASES, &freed), 0);

    // Released by the holder: freed.
    let guard = semaphore.acquire(2).await.unwrap();
    assert_eq!(seen.gauge(metric_names::HOLDS), 1.0);
    guard.release().await.unwrap();
    assert_eq!(seen.counter(metric_names::RELEASES, &freed), 1);
    assert_eq!(seen.gauge(metric_names::HOLDS), 0.0);

    // Dropped: released in the background, counted the same.
    let guard = semaphore.acquire(1).await.unwrap();
    drop(guard);
    let deadline = tokio::time::Instant::now() + ms(3_000);
    while seen.counter(metric_names::RELEASES, &freed) < 2 {
        assert!(tokio::time::Instant::now() < deadline, "no release counted");
        tokio::time::sleep(ms(10)).await;
    }
    assert_eq!(seen.counter(metric_names::RELEASES, &freed), 2);
    assert_eq!(seen.counter(metric_names::RELEASES, &not_held), 0);
    // Locks' releases are counted apart.
    let reentrant = [(labels::KIND, "reentrant"), (labels::OUTCOME, "freed")];
    assert_eq!(seen.counter(metric_names::RELEASES, &reentrant), 0);
}
