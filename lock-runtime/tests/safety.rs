//! The safety promises of lock-model.md, each shown against a real
//! redis-server with the faults injected here: exact cancellation,
//! ownership, the lease clock, healing connections, fencing tokens, and bad
//! input refused before anything is written.

mod common;

use common::{Redis, within};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, LockGuard, MAX_LEASE};
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

/// Futures of one task are different acquirers: `join!` of three jobs runs
/// them one after the other.
#[tokio::test]
async fn futures_of_one_task_exclude_each_other() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let inside = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let job = || async {
        let guard = client.lock("jobs").lock().await.unwrap();
        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        inside.fetch_sub(1, Ordering::SeqCst);
        guard.unlock().await.unwrap();
    };
    let started = Instant::now();
    within(Duration::from_secs(10), "three jobs", async {
        tokio::join!(job(), job(), job())
    })
    .await;
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "jobs of one task overlapped"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    // And a second plain acquire in the same task is refused while held.
    let guard = client.lock("jobs").lock().await.unwrap();
    assert!(client.lock("jobs").try_lock().await.unwrap().is_none());
    guard.unlock().await.unwrap();
}

/// Re-entry is explicit and works from another task: the owner travels.
#[tokio::test]
async fn explicit_reentry_works_across_tasks() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let lock = client.lock("account:9");
    let outer = lock.lock().await.unwrap();
    let owner = outer.owner().clone();
    let inner = tokio::spawn({
        let lock = lock.clone();
        async move { lock.reenter(&owner).await }
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(inner.owner(), outer.owner());
    assert_eq!(
        inner.token(),
        outer.token(),
        "a re-entry keeps the holder's token"
    );
    assert_eq!(lock.hold_count(outer.owner()).await.unwrap(), 2);
    assert!(other.lock("account:9").try_lock().await.unwrap().is_none());
    outer.unlock().await.unwrap();
    assert!(other.lock("account:9").try_lock().await.unwrap().is_none());
    inner.unlock().await.unwrap();
    assert!(!redis.exists("account:9").await);
    // Re-entering a hold that is gone is refused, and changes nothing.
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().clone();
    guard.unlock().await.unwrap();
    assert!(matches!(
        lock.reenter(&owner).await,
        Err(Error::NotHeld { .. })
    ));
    assert!(!redis.exists("account:9").await);
}

/// A holder cut off from Redis longer than its lease knows it has lost the
/// lock before anyone else's acquire returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_holder_knows_before_another_acquires() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let holder = LockClient::builder(proxy.url())
        .watchdog_timeout(Duration::from_secs(3))
        .response_timeout(Duration::from_millis(500))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let other = redis.client().await;
    let guard = holder.lock("partitioned").lock().await.unwrap();
    let acquired_at = Instant::now();
    proxy.stall();
    let guard = Arc::new(guard);
    let watcher = tokio::spawn({
        let guard = guard.clone();
        async move {
            while !guard.is_lost() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Instant::now()
        }
    });
    let taker = tokio::spawn(async move {
        let stolen = other
            .lock("partitioned")
            .try_lock_for(Duration::from_secs(10), None)
            .await
            .unwrap()
            .expect("the lease ends");
        let at = Instant::now();
        stolen.unlock().await.unwrap();
        at
    });
    let lost_at = within(Duration::from_secs(15), "lost", watcher)
        .await
        .unwrap();
    let taken_at = within(Duration::from_secs(15), "taken", taker)
        .await
        .unwrap();
    assert!(
        lost_at < taken_at,
        "the holder learnt at {:?}, another acquired at {:?}",
        lost_at - acquired_at,
        taken_at - acquired_at
    );
    assert!(lost_at - acquired_at <= Duration::from_secs(3));
    assert!(taken_at - acquired_at >= Duration::from_millis(2900));
    assert!(guard.valid_until() <= lost_at);
    proxy.resume_dropping();
}

/// With a fixed lease over a slow link, the guard's clock runs from the
/// send: it says lost before Redis lets another holder in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_lease_over_a_slow_link_is_lost_first() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let holder = LockClient::connect(proxy.url()).await.unwrap();
    let other = redis.client().await;
    proxy.set_delay(Duration::from_millis(50));
    let sent = Instant::now();
    let guard = holder
        .lock("slow")
        .lock_with_lease(Duration::from_millis(500))
        .await
        .unwrap();
    assert!(guard.valid_until() <= sent + Duration::from_millis(500));
    let guard = Arc::new(guard);
    let watcher = tokio::spawn({
        let guard = guard.clone();
        async move {
            while !guard.is_lost() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Instant::now()
        }
    });
    let stolen = other
        .lock("slow")
        .try_lock_for(Duration::from_secs(5), None)
        .await
        .unwrap()
        .expect("the lease ends");
    let taken_at = Instant::now();
    let lost_at = watcher.await.unwrap();
    assert!(lost_at < taken_at, "lost {lost_at:?} vs taken {taken_at:?}");
    stolen.unlock().await.unwrap();
}

/// Starts `waiter` waiting for `name`, held by `holder`; silences every
/// connection through `proxy` at 200 ms, releases at 1 s, and returns the
/// waiter's guard once it got it — within 3 s of the start, or it fails.
async fn waits_through_a_dead_connection(
    waiter: &LockClient,
    holder: &LockClient,
    proxy: &FaultProxy,
    name: &str,
) -> LockGuard {
    let guard = holder.lock(name).lock().await.unwrap();
    let started = Instant::now();
    let wait = spawn_waiter(waiter, name);
    tokio::time::sleep(Duration::from_millis(200)).await;
    proxy.stall_current();
    tokio::time::sleep(Duration::from_millis(800)).await;
    guard.unlock().await.unwrap();
    let (got, at) = within(Duration::from_secs(10), "waiter", wait)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - started <= Duration::from_secs(3),
        "got it after {:?}",
        at - started
    );
    got
}

/// A task waiting for `name` on `client`: its guard and when it got it.
fn spawn_waiter(
    client: &LockClient,
    name: &str,
) -> tokio::task::JoinHandle<Result<(LockGuard, Instant), Error>> {
    let lock = client.lock(name);
    tokio::spawn(async move { lock.lock().await.map(|g| (g, Instant::now())) })
}

/// A waiter whose pub/sub connection dies silently gets a lock freed at 1 s
/// within 3 s, in every one of five rounds, with the default response
/// timeout (3 s): the silent link is found by a ping that waits at most
/// 1 s, not the response timeout. The client keeps working: the
/// subscription is restored on a new connection and wakes the next waiter
/// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_dead_pubsub_connection_is_replaced() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let commands = redis.server.client();
    let waiter = LockClient::from_client(proxy.client())
        .connection(commands.get_multiplexed_async_connection().await.unwrap())
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let mut took = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let guard = waits_through_a_dead_connection(&waiter, &holder, &proxy, "pubsub").await;
        took.push(started.elapsed());
        guard.unlock().await.unwrap();
    }
    eprintln!("a waiter behind a silent pub/sub link got the lock after {took:?}");
    assert!(took.iter().all(|t| *t < Duration::from_secs(3)), "{took:?}");
    // Recovered: the next release reaches it through pub/sub, promptly,
    // although the holder's lease (30 s) is far away.
    let first = holder.lock("pubsub").lock().await.unwrap();
    let again = spawn_waiter(&waiter, "pubsub");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    first.unlock().await.unwrap();
    let (next, at) = within(Duration::from_secs(5), "woken", again)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - released < Duration::from_millis(500),
        "woken after {:?}",
        at - released
    );
    next.unlock().await.unwrap();
}

/// A silently dead command connection is replaced: the waiter gets a lock
/// freed at 1 s within 3 s, and the client goes on working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_dead_command_connection_is_replaced() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let waiter = LockClient::builder(proxy.url())
        .response_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let got = waits_through_a_dead_connection(&waiter, &holder, &proxy, "commands").await;
    got.unlock().await.unwrap();
    // The same client goes on: no timeouts left.
    for _ in 0..5 {
        let guard = within(
            Duration::from_secs(1),
            "lock",
            waiter.lock("commands").lock(),
        )
        .await
        .unwrap();
        guard.unlock().await.unwrap();
    }
    assert!(!redis.exists("commands").await);
}

/// Connecting to a dead address fails within the connect timeout.
#[tokio::test]
async fn connecting_to_a_dead_address_fails_quickly() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    proxy.stall();
    let started = Instant::now();
    let result = LockClient::builder(proxy.url())
        .connect_timeout(Duration::from_millis(300))
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Connect { .. })), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Nothing listening at all: refused at once, same error.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let result = LockClient::connect(format!("redis://127.0.0.1:{closed}/")).await;
    assert!(matches!(result, Err(Error::Connect { .. })), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(4));
    proxy.resume_dropping();
}

/// Tokens grow strictly with each new holder, across clients and both lock
/// kinds, survive the counter's expiry, and advance on a forced unlock.
#[tokio::test]
async fn fencing_tokens_strictly_increase() {
    let redis = Redis::start().await;
    let a = redis.client().await;
    let b = redis.client().await;
    let mut last = 0;
    for round in 0..10 {
        let client = if round % 2 == 0 { &a } else { &b };
        let guard = client.lock("fenced").lock().await.unwrap();
        assert!(
            guard.token() > last,
            "round {round}: {} after {last}",
            guard.token()
        );
        last = guard.token();
        let inner = guard.reenter().await.unwrap();
        assert_eq!(inner.token(), last);
        inner.unlock().await.unwrap();
        guard.unlock().await.unwrap();
    }
    // Redisson's layout, with an expiry.
    let counter: u64 = redis
        .raw()
        .get("redisson_lock_token:{fenced}")
        .await
        .unwrap();
    assert_eq!(counter, last);
    assert!(redis.pttl("redisson_lock_token:{fenced}").await > 0);
    // A forced unlock advances it: the broken holder's token is stale.
    let guard = a.lock("fenced").lock().await.unwrap();
    assert!(b.lock("fenced").force_unlock().await.unwrap());
    let after: u64 = redis
        .raw()
        .get("redisson_lock_token:{fenced}")
        .await
        .unwrap();
    assert!(after > guard.token());
    drop(guard);
    // The counter expired (deleted here): tokens still do not go back.
    redis.del("redisson_lock_token:{fenced}").await;
    let guard = b.lock("fenced").lock().await.unwrap();
    assert!(guard.token() > after);
    guard.unlock().await.unwrap();
    // Readers and writers of a read/write lock get growing tokens too.
    let rw = a.read_write_lock("fenced-rw");
    let r1 = rw.read().lock().await.unwrap();
    let r2 = rw.read().lock().await.unwrap();
    assert!(r2.token() > r1.token());
    let reader_token = r2.token();
    r1.unlock().await.unwrap();
    r2.unlock().await.unwrap();
    let w = rw.write().lock().await.unwrap();
    assert!(w.token() > reader_token);
    w.unlock().await.unwrap();
}

/// Out-of-range leases are refused before anything is written.
#[tokio::test]
async fn out_of_range_leases_write_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("lease");
    for lease in [
        Duration::ZERO,
        Duration::from_micros(10),
        Duration::MAX,
        MAX_LEASE * 2,
    ] {
        assert!(
            matches!(lock.lock_with_lease(lease).await, Err(Error::Config(_))),
            "{lease:?}"
        );
        assert!(matches!(
            lock.try_lock_for(Duration::ZERO, Some(lease)).await,
            Err(Error::Config(_))
        ));
        let rw = client.read_write_lock("lease-rw");
        assert!(matches!(
            rw.write().lock_with_lease(lease).await,
            Err(Error::Config(_))
        ));
        assert!(matches!(
            rw.read().lock_with_lease(lease).await,
            Err(Error::Config(_))
        ));
    }
    for timeout in [Duration::ZERO, Duration::from_millis(5), Duration::MAX] {
        let result = LockClient::builder(redis.url())
            .watchdog_timeout(timeout)
            .connect()
            .await;
        assert!(matches!(result, Err(Error::Config(_))), "{timeout:?}");
    }
    assert!(redis.keys().await.is_empty(), "{:?}", redis.keys().await);
    // The longest lease accepted works, and expires.
    let guard = lock.lock_with_lease(MAX_LEASE).await.unwrap();
    assert!(redis.pttl("lease").await > 0);
    assert!(!guard.is_lost());
    let inner = guard.reenter().await.unwrap();
    inner.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    assert!(!redis.exists("lease").await);
}

/// Keys that are not locks are left alone by `lock()`, `try_lock()` and
/// `force_unlock()`, with `Error::WrongType` at once.
#[tokio::test]
async fn keys_that_are_not_locks_are_left_alone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let mut con = redis.raw();
    let _: () = con.set("plain", "value").await.unwrap();
    let _: () = con.hset("profile", "name", "bob").await.unwrap();
    let _: () = con.hset("counts", "a:1", "1").await.unwrap();
    let _: () = con.hset("counts", "b:2", "1").await.unwrap();
    for name in ["plain", "profile", "counts"] {
        let lock = client.lock(name);
        let result = within(Duration::from_secs(2), "lock()", lock.lock()).await;
        assert!(
            matches!(result, Err(Error::WrongType { .. })),
            "{name}: {result:?}"
        );
        assert!(matches!(
            lock.try_lock().await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            lock.force_unlock().await,
            Err(Error::WrongType { .. })
        ));
        let rw = client.read_write_lock(name);
        assert!(matches!(
            rw.write().force_unlock().await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            rw.read().try_lock().await,
            Err(Error::WrongType { .. })
        ));
    }
    assert_eq!(redis.hgetall("profile").await.len(), 1);
    assert_eq!(redis.hgetall("counts").await.len(), 2);
    let value: String = con.get("plain").await.unwrap();
    assert_eq!(value, "value");
    for key in ["plain", "profile", "counts"] {
        assert_eq!(redis.pttl(key).await, -1, "{key} got an expiry");
    }
    // A reentrant lock is not a read/write lock, and the other way round.
    let guard = client.lock("mixed").lock().await.unwrap();
    let rw = client.read_write_lock("mixed");
    assert!(matches!(
        rw.write().try_lock().await,
        Err(Error::WrongType { .. })
    ));
    guard.unlock().await.unwrap();
}

/// A retried release never touches a newer hold, even after Redis lost
/// every key (a restart without persistence).
#[tokio::test]
async fn a_release_retried_after_redis_lost_its_data_touches_nothing() {
    let mut redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let client = LockClient::builder(proxy.url())
        .response_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let guard = client.lock("restart").lock().await.unwrap();
    // The release's reply never comes back; Redis then restarts empty.
    proxy.stall();
    let unlock = tokio::time::timeout(Duration::from_millis(100), guard.unlock()).await;
    assert!(unlock.is_err());
    redis = tokio::task::spawn_blocking(move || {
        redis.server.restart();
        redis
    })
    .await
    .unwrap();
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    redis.con = con.clone();
    // Someone else holds the lock now.
    let other = redis.client().await;
    let theirs = other.lock("restart").lock().await.unwrap();
    proxy.resume_dropping();
    // The background retries of the old release run now: they must leave
    // the new hold alone.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let fields: std::collections::HashMap<String, String> = con.hgetall("restart").await.unwrap();
    assert_eq!(
        fields.get(&theirs.owner().to_string()).map(String::as_str),
        Some("1")
    );
    assert!(!theirs.is_lost());
    theirs.unlock().await.unwrap();
}

/// A waiter that cannot subscribe at all (pub/sub refused) polls: it gets
/// a released lock promptly, without hammering Redis meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_without_pubsub_polls_gently() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    proxy.refuse(true);
    let waiter = LockClient::from_client(proxy.client())
        .connection(
            redis
                .server
                .client()
                .get_multiplexed_async_connection()
                .await
                .unwrap(),
        )
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let guard = holder.lock("no-pubsub").lock().await.unwrap();
    let calls_before = evalsha_calls(&redis).await;
    let wait = tokio::spawn({
        let waiter = waiter.clone();
        async move {
            waiter
                .lock("no-pubsub")
                .lock()
                .await
                .map(|g| (g, Instant::now()))
        }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, at) = within(Duration::from_secs(5), "waiter", wait)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - released < Duration::from_millis(500),
        "got it after {:?}",
        at - released
    );
    // About ten tries a second, not a busy loop.
    let calls = evalsha_calls(&redis).await - calls_before;
    assert!((5..=40).contains(&calls), "{calls} script calls in 1.5 s");
    got.unlock().await.unwrap();
}

async fn evalsha_calls(redis: &Redis) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
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
