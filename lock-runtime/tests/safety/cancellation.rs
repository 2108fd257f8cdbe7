//! Exact cancellation: cancelled acquires never release a later hold nor leave anything behind.

use super::spawn_waiter;
use crate::common::{Redis, within};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard};
use redlua_test_support::FaultProxy;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A small deterministic random generator (xorshift64*), seeded and
/// printed so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn seeded(what: &str) -> Rng {
        let seed = std::env::var("REDLUA_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("{what}: seed {seed} (replay with REDLUA_SEED={seed})");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Records who is inside a critical section: an observer independent of
/// Redis. Entering while someone is inside is an overlap.
#[derive(Default)]
struct Observer {
    inside: AtomicU64,
    overlaps: AtomicUsize,
    entries: AtomicUsize,
    last_token: AtomicU64,
    token_regressions: AtomicUsize,
}

impl Observer {
    fn enter(&self, who: u64, token: u64) {
        self.entries.fetch_add(1, Ordering::SeqCst);
        if self
            .inside
            .compare_exchange(0, who, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        if self.last_token.fetch_max(token, Ordering::SeqCst) >= token {
            self.token_regressions.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn leave(&self, who: u64) {
        let _ = self
            .inside
            .compare_exchange(who, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// A task drops a `lock()` future whose acquire
/// was under way and locks again; the undo of the abandoned acquire must
/// never release the new hold, so no other client gets in while it is held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_acquire_never_releases_a_later_hold() {
    let redis = Redis::start().await;
    let mine = redis.client().await;
    let other = redis.client().await;
    for round in 0..20 {
        let name = format!("regression:{round}");
        let lock = mine.lock(&name);
        let busy = round % 2 == 0;
        // Half the rounds the lock is busy when the abandoned acquire runs,
        // half it is free (so the abandoned acquire takes it).
        let holder = if busy {
            Some(other.lock(&name).lock().await.unwrap())
        } else {
            None
        };
        for delay_us in [0u64, 100, 300] {
            let attempt = lock.lock();
            let _ = tokio::time::timeout(Duration::from_micros(delay_us), attempt).await;
        }
        if let Some(holder) = holder {
            holder.unlock().await.unwrap();
        }
        let guard = within(Duration::from_secs(5), "re-lock", lock.lock())
            .await
            .unwrap();
        // While the task holds it, the background undo runs; nobody else
        // may get in, and the hash holds exactly this one hold.
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            let stolen = other.lock(&name).try_lock().await.unwrap();
            assert!(
                stolen.is_none(),
                "round {round}: another client got the held lock"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let fields = redis.hgetall(&name).await;
        assert_eq!(fields.len(), 1, "round {round}: {fields:?}");
        assert_eq!(
            fields.get(&guard.owner().to_string()).map(String::as_str),
            Some("1")
        );
        guard.unlock().await.unwrap();
        assert!(
            !redis.exists(&name).await,
            "round {round}: lock left behind"
        );
    }
}

/// At least 1,000 acquire futures cancelled at random points, mixed with
/// successful acquires, re-entries (some cancelled too) and releases by
/// eight workers on two clients. An observer outside Redis checks that no
/// two holders overlap and that fencing tokens grow; at the end nothing is
/// held and no hold count is off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn randomly_cancelled_acquires_leave_nothing_and_never_overlap() {
    let redis = Redis::start().await;
    let clients = [redis.client().await, redis.client().await];
    let observer = Arc::new(Observer::default());
    let cancelled = Arc::new(AtomicUsize::new(0));
    let mut rng = Rng::seeded("cancellation stress");
    let mut workers = Vec::new();
    for worker in 0..8u64 {
        let client = clients[(worker % 2) as usize].clone();
        let observer = observer.clone();
        let cancelled = cancelled.clone();
        let mut rng = Rng(rng.next() | 1);
        workers.push(tokio::spawn(async move {
            let lock = client.lock("stress");
            let mut held = 0;
            while cancelled.load(Ordering::SeqCst) < 1_000 || held < 20 {
                if rng.below(3) != 0 {
                    // Give up at a random point: before sending, while the
                    // script runs, while waiting.
                    let wait = Duration::from_micros(rng.below(3_000));
                    match tokio::time::timeout(wait, lock.lock()).await {
                        Err(_) => {
                            cancelled.fetch_add(1, Ordering::SeqCst);
                            continue;
                        }
                        Ok(guard) => {
                            let guard = guard.unwrap();
                            critical(&observer, worker, &guard, &mut rng).await;
                            finish(guard, &mut rng).await;
                        }
                    }
                } else {
                    let guard = lock.lock().await.unwrap();
                    critical(&observer, worker, &guard, &mut rng).await;
                    // Re-enter, sometimes giving up half-way.
                    let wait = Duration::from_micros(rng.below(2_000));
                    match tokio::time::timeout(wait, guard.reenter()).await {
                        Ok(inner) => finish(inner.unwrap(), &mut rng).await,
                        Err(_) => {
                            cancelled.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    finish(guard, &mut rng).await;
                }
                held += 1;
            }
        }));
    }
    for worker in workers {
        within(Duration::from_secs(120), "stress worker", worker)
            .await
            .unwrap();
    }
    assert!(cancelled.load(Ordering::SeqCst) >= 1_000);
    assert_eq!(
        observer.overlaps.load(Ordering::SeqCst),
        0,
        "holders overlapped"
    );
    assert_eq!(
        observer.token_regressions.load(Ordering::SeqCst),
        0,
        "a later holder got a smaller fencing token"
    );
    assert!(observer.entries.load(Ordering::SeqCst) >= 160);
    // Dropped guards and undos finish in the background, promptly.
    assert!(
        redis.gone_within("stress", Duration::from_secs(5)).await,
        "still held after every release: {:?} (ttl {} ms)",
        redis.hgetall("stress").await,
        redis.pttl("stress").await
    );
    // And every key left (tokens, tombstones, latches) expires.
    assert_every_key_expires(&redis).await;
}

async fn critical(observer: &Observer, worker: u64, guard: &LockGuard, rng: &mut Rng) {
    observer.enter(worker + 1, guard.token());
    tokio::time::sleep(Duration::from_micros(rng.below(1_500))).await;
    assert!(!guard.is_lost());
    observer.leave(worker + 1);
}

/// Releases a guard with `unlock`, by dropping it, or by dropping an
/// `unlock` under way.
async fn finish(guard: LockGuard, rng: &mut Rng) {
    match rng.below(3) {
        0 => guard.unlock().await.unwrap(),
        1 => drop(guard),
        _ => {
            let _ =
                tokio::time::timeout(Duration::from_micros(rng.below(500)), guard.unlock()).await;
        }
    }
}

async fn assert_every_key_expires(redis: &Redis) {
    let mut con = redis.raw();
    for key in redis.keys().await {
        let ttl: i64 = con.pttl(&key).await.unwrap();
        assert!(ttl > 0 || ttl == -2, "key {key} has no expiry (pttl {ttl})");
    }
}

/// A waiter woken by a release and cancelled before its try reached Redis
/// passes the wake-up on: the other waiter of its client gets the free lock
/// at once, not after its own timer (up to 5 s here, the lease's 30 s in
/// Redisson).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_woken_waiter_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    // Tries go through a link that can be cut (they reconnect by
    // themselves); wake-ups come directly.
    let tries = proxy.client().get_connection_manager().await.unwrap();
    let waiters = LockClient::from_client(redis.server.client())
        .connection(tries)
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    for round in 0..3 {
        let name = format!("pass-on:{round}");
        let guard = holder.lock(&name).lock().await.unwrap();
        let first = spawn_waiter(&waiters, &name);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let second = spawn_waiter(&waiters, &name);
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The release wakes the first waiter (the longest waiting); its try
        // is held on the link, and it is cancelled before the try arrives:
        // the try never runs.
        proxy.stall();
        let released = Instant::now();
        guard.unlock().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        first.abort();
        tokio::time::sleep(Duration::from_millis(50)).await;
        proxy.resume_dropping();
        let (got, at) = within(Duration::from_secs(10), "second waiter", second)
            .await
            .unwrap()
            .unwrap();
        assert!(
            at - released < Duration::from_secs(1),
            "round {round}: the free lock waited {:?} for the second waiter",
            at - released
        );
        got.unlock().await.unwrap();
    }
}
