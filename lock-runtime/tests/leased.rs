//! The leased semaphore (Redisson's `RPermitExpirableSemaphore` layout)
//! against real redis-server processes: permits with ids, leases and
//! fencing tokens; the watchdog; expiry bringing a permit back exactly
//! once and the guard saying lost first; a permit taken away; pool changes
//! while permits are held; exact cancellation, and a woken waiter's
//! wake-up passed on; a release's latch answering its retry after a lost
//! reply; renewal in the watchdog's batches; faults watched by an observer
//! outside Redis; interoperability with Redisson's own scripts.

mod common;
mod redisson;

use common::chaos::{self, Chaos, Holders};
use common::{Redis, ms, two_waiters, within};
use redis::AsyncCommands;
use redisson::{
    java_leased_try_acquire, java_leased_try_release, leased_timeouts, semaphore_channel,
};
use redlua_runtime::{BATCH_PERMITS, Error, LockClient, SyncReplicas};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

async fn fresh(redis: &Redis) -> redis::aio::MultiplexedConnection {
    redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

/// The permits available, read directly.
async fn available(redis: &Redis, name: &str) -> i64 {
    let value: Option<String> = fresh(redis).await.get(name).await.unwrap();
    value.map_or(0, |v| v.parse().unwrap())
}

/// The permits taken, read directly.
async fn taken(redis: &Redis, name: &str) -> usize {
    let n: usize = fresh(redis)
        .await
        .zcard(leased_timeouts(name))
        .await
        .unwrap();
    n
}

/// The permits available and taken, read directly.
async fn pool(redis: &Redis, name: &str) -> (i64, usize) {
    (available(redis, name).await, taken(redis, name).await)
}

/// Waits until `available` and `taken` are as expected: what they are then.
async fn pool_becomes(
    redis: &Redis,
    name: &str,
    expected: (i64, usize),
    limit: Duration,
) -> (i64, usize) {
    let deadline = Instant::now() + limit;
    loop {
        let now = pool(redis, name).await;
        if now == expected || Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

#[tokio::test]
async fn permits_have_ids_leases_and_increasing_tokens_in_redissons_layout() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("encoders");
    assert!(sem.try_set_permits(2).await.unwrap());
    let first = sem.acquire(1).await.unwrap();
    let second = sem.try_acquire(1).await.unwrap().expect("a second permit");
    assert!(sem.try_acquire(1).await.unwrap().is_none());
    assert!(second.token() > first.token(), "tokens increase");
    assert_eq!(first.permits(), 1);
    assert_eq!(first.ids()[0].len(), 32);
    // Redisson's layout: the count, and the ids (16 raw bytes) scored by
    // their expiry in ms since the epoch.
    assert_eq!(available(&redis, "encoders").await, 0);
    let members: Vec<(Vec<u8>, f64)> = fresh(&redis)
        .await
        .zrange_withscores(leased_timeouts("encoders"), 0, -1)
        .await
        .unwrap();
    assert_eq!(members.len(), 2);
    let now_ms = redisson::java_now_ms() as f64;
    for (id, expiry) in &members {
        assert_eq!(id.len(), 16);
        let left = expiry - now_ms;
        assert!((25_000.0..=31_000.0).contains(&left), "{left} ms left");
    }
    let mut holders: Vec<String> = sem
        .holders()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    holders.sort();
    let mut ids = vec![first.ids()[0].clone(), second.ids()[0].clone()];
    ids.sort();
    assert_eq!(holders, ids);
    // The lease clock is a little short of Redis's expiry.
    let left = first.valid_until() - std::time::Instant::now();
    assert!(
        left > Duration::from_secs(25) && left < Duration::from_secs(30),
        "{left:?}"
    );
    first.release().await.unwrap();
    assert_eq!(available(&redis, "encoders").await, 1);
    drop(second); // given back in the background
    assert_eq!(
        pool_becomes(&redis, "encoders", (2, 0), ms(2000)).await,
        (2, 0)
    );
}

#[tokio::test]
async fn bad_input_fails_before_anything_is_written() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("small");
    sem.set_permits(2).await.unwrap();
    let held = sem.acquire(1).await.unwrap();
    let before = redis.keys().await;
    for permits in [0, 3, BATCH_PERMITS + 1] {
        let result = sem.try_acquire(permits).await;
        assert!(
            matches!(result, Err(Error::InvalidPermits { .. })),
            "{permits}: {result:?}"
        );
    }
    // More than the pool (available plus taken) is refused even while it
    // would otherwise wait.
    let result = within(ms(2000), "acquire(3)", sem.acquire(3)).await;
    assert!(
        matches!(result, Err(Error::InvalidPermits { .. })),
        "{result:?}"
    );
    assert!(matches!(
        sem.acquire_with_lease(1, Duration::ZERO).await,
        Err(Error::Config(_))
    ));
    assert!(matches!(
        sem.force_release("not-hex").await,
        Err(Error::InvalidPermits { .. })
    ));
    assert_eq!(redis.keys().await, before);
    assert_eq!(pool(&redis, "small").await, (1, 1));
    held.release().await.unwrap();

    let _: () = redis.raw().hset("a-hash", "f", "1").await.unwrap();
    let _: () = redis.raw().set("{b}:timeout", "x").await.unwrap();
    for name in ["a-hash", "b"] {
        let sem = client.leased_semaphore(name);
        let result = sem.try_acquire(1).await;
        assert!(
            matches!(result, Err(Error::WrongType { .. })),
            "{name}: {result:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_permit_comes_back_exactly_once_and_its_guard_said_lost_first() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("short");
    sem.set_permits(1).await.unwrap();
    let sent = std::time::Instant::now();
    let guard = sem.acquire_with_lease(1, ms(400)).await.unwrap();
    assert!(guard.valid_until() <= sent + ms(400));
    // A waiter sleeps until the permit's expiry, not until a poll.
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            let guard = sem.acquire(1).await.unwrap();
            (guard, std::time::Instant::now())
        }
    });
    within(ms(2000), "lost()", guard.lost()).await;
    assert!(guard.is_lost());
    let (next, got_at) = within(ms(3000), "the waiter", waiter).await.unwrap();
    // The waiter got it only once the guard's clock had passed, and soon
    // after the permit expired (it slept until then, not until a poll).
    assert!(got_at >= guard.valid_until());
    assert!(got_at - sent < ms(1500), "{:?}", got_at - sent);
    assert!(next.token() > guard.token());
    // The late release of the expired permit gives nothing back twice.
    assert!(matches!(guard.release().await, Err(Error::LockLost { .. })));
    assert_eq!(pool(&redis, "short").await, (0, 1));
    next.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "short", (1, 0), ms(1000)).await,
        (1, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_keeps_permits_past_their_lease_and_notices_one_taken_away() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(1500)).await;
    let sem = client.leased_semaphore("renewed");
    sem.set_permits(3).await.unwrap();
    let kept = sem.acquire(1).await.unwrap();
    let taken_away = sem.acquire(2).await.unwrap();
    tokio::time::sleep(ms(2000)).await;
    assert!(!kept.is_lost() && !taken_away.is_lost(), "renewed");
    assert_eq!(taken(&redis, "renewed").await, 3);
    // An operator gives one of the two-permit guard's permits back.
    let id = taken_away.ids()[1].clone();
    let forced = std::time::Instant::now();
    let clock_said = taken_away.valid_until();
    assert!(clock_said > forced + ms(900), "{:?}", clock_said - forced);
    assert!(sem.force_release(&id).await.unwrap());
    assert!(!sem.force_release(&id).await.unwrap(), "once");
    // Found at the next renewal (every 500 ms), long before its clock
    // would have passed.
    within(ms(2000), "the taken-away guard's lost()", taken_away.lost()).await;
    assert!(
        forced.elapsed() < ms(800),
        "noticed after {:?}",
        forced.elapsed()
    );
    assert!(!kept.is_lost());
    assert!(matches!(
        taken_away.release().await,
        Err(Error::LockLost { .. })
    ));
    kept.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "renewed", (3, 0), ms(1000)).await,
        (3, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_the_pool_while_permits_are_held_follows_redisson() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("resized");
    sem.set_permits(3).await.unwrap();
    let a = sem.acquire(1).await.unwrap();
    let b = sem.acquire(1).await.unwrap();
    // The pool is the total: 2 taken, a pool of 1 leaves -1 available.
    sem.set_permits(1).await.unwrap();
    assert_eq!(available(&redis, "resized").await, -1);
    assert!(sem.try_acquire(1).await.unwrap().is_none());
    a.release().await.unwrap();
    b.release().await.unwrap();
    assert_eq!(available(&redis, "resized").await, 1);
    let c = sem.acquire(1).await.unwrap();
    sem.set_permits(4).await.unwrap();
    assert_eq!(available(&redis, "resized").await, 3);
    assert_eq!(sem.add_permits(-1).await.unwrap(), 2);
    c.release().await.unwrap();
    assert_eq!(sem.available().await.unwrap(), 3);
}

/// Dropped after its script took the permits, before the reply came back:
/// the permits come back, and a late copy takes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_acquire_holds_nothing() {
    let redis = Redis::start().await;
    let direct = redis.unsynced_client().await;
    direct
        .leased_semaphore("cancel")
        .set_permits(2)
        .await
        .unwrap();
    let (proxy, slow) = redis.behind_proxy(None).await;
    let sem = slow.leased_semaphore("cancel");
    // The script is known to Redis (a late copy of a first EVALSHA would
    // find NOSCRIPT and do nothing anyway).
    sem.acquire(1).await.unwrap().release().await.unwrap();
    proxy.set_delay(ms(200));
    let mut acquire = Box::pin(sem.try_acquire(2));
    tokio::select! {
        result = &mut acquire => panic!("finished before its permits were seen taken: {result:?}"),
        _ = async {
            while taken(&redis, "cancel").await != 2 {
                tokio::time::sleep(ms(5)).await;
            }
        } => {}
    }
    drop(acquire);
    assert_eq!(
        pool_becomes(&redis, "cancel", (2, 0), ms(3000)).await,
        (2, 0)
    );

    // A dropped guard gives its permits back too.
    proxy.set_delay(Duration::ZERO);
    let guard = sem.acquire(2).await.unwrap();
    drop(guard);
    assert_eq!(
        pool_becomes(&redis, "cancel", (2, 0), ms(3000)).await,
        (2, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_share_one_leased_pool_and_expired_permits_come_back_once() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("mixed");
    sem.set_permits(2).await.unwrap();
    // Java takes a permit with a 300 ms lease; Rust takes the other.
    let java = java_leased_try_acquire(&redis, "mixed", 300)
        .await
        .expect("Java's permit");
    let rust = sem.acquire(1).await.unwrap();
    assert!(
        java_leased_try_acquire(&redis, "mixed", 300)
            .await
            .is_none()
    );
    let mut holders: Vec<String> = sem
        .holders()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    holders.sort();
    let mut expected = vec![java.clone(), rust.ids()[0].clone()];
    expected.sort();
    assert_eq!(holders, expected);
    // A Rust waiter gets Java's permit when its lease ends.
    let started = Instant::now();
    let next = within(ms(3000), "a waiter", sem.acquire(1)).await.unwrap();
    assert!(started.elapsed() < ms(1500), "{:?}", started.elapsed());
    // Java's late release of its expired permit gives nothing back.
    assert!(!java_leased_try_release(&redis, "mixed", &java).await);
    assert_eq!(pool(&redis, "mixed").await, (0, 2));
    // Java releases a Rust permit by its id (as an operator would): once.
    assert!(java_leased_try_release(&redis, "mixed", &next.ids()[0]).await);
    assert!(matches!(next.release().await, Err(Error::LockLost { .. })));
    rust.release().await.unwrap();
    assert_eq!(pool(&redis, "mixed").await, (2, 0));
}

/// The fault test: 10 tasks on a 3-permit leased pool, cancelled at random,
/// while Redis kills every client connection every 300 ms and is stopped
/// (SIGSTOP) now and then. An observer outside Redis counts holders (from
/// the acquire's return until the release starts, a guard that says lost
/// counting as gone): never more than 3; in the end every permit is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_random_cancellation_client_kill_and_sigstop_no_permit_is_lost_or_doubled() {
    const PERMITS: i64 = 3;
    let redis = Redis::start().await;
    let client = LockClient::builder(redis.url())
        .response_timeout(ms(400))
        .watchdog_timeout(ms(3000))
        .sync_replicas(SyncReplicas::Off)
        .connect()
        .await
        .unwrap();
    let sem = client.leased_semaphore("faults");
    sem.set_permits(PERMITS as u64).await.unwrap();
    let holders = Holders::default();
    let seed = chaos::seed();
    let stop_at = Instant::now() + ms(6000);
    let faults = Chaos::start(&redis, stop_at);
    let tasks: Vec<_> = (0..10u64)
        .map(|i| {
            let sem = sem.clone();
            let holders = holders.clone();
            let mut next = chaos::rng(seed, i);
            tokio::spawn(async move {
                while Instant::now() < stop_at {
                    let limit = ms(next() % 400);
                    if let Ok(Ok(guard)) = tokio::time::timeout(limit, sem.acquire(1)).await {
                        holders.enter();
                        tokio::select! {
                            _ = tokio::time::sleep(ms(next() % 30)) => {}
                            _ = guard.lost() => {}
                        }
                        holders.leave();
                        if next().is_multiple_of(2) {
                            let _ = guard.release().await;
                        } else {
                            drop(guard);
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        within(ms(30_000), "a contender", task).await.unwrap();
    }
    faults.finish().await;
    let (most, acquired) = (holders.most(), holders.acquired());
    println!("acquired {acquired} times, at most {most} holders at once");
    assert!(
        most <= PERMITS as usize,
        "{most} holders at once (seed {seed})"
    );
    assert!(
        acquired > 20,
        "only {acquired} acquires: the test did not test"
    );
    assert_eq!(
        pool_becomes(&redis, "faults", (PERMITS, 0), ms(10_000)).await,
        (PERMITS, 0),
        "permits lost or made up (seed {seed})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_face_holds_renews_and_gives_back() {
    let redis = Redis::start().await;
    let url = redis.url();
    tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::builder(url)
            .watchdog_timeout(ms(300))
            .connect()
            .unwrap();
        let sem = client.leased_semaphore("threads");
        assert!(sem.try_set_permits(1).unwrap());
        let permit = sem.acquire(1).unwrap();
        // Blocking work past the lease: the client's thread renews it.
        std::thread::sleep(ms(700));
        assert!(!permit.is_lost());
        assert!(sem.try_acquire(1).unwrap().is_none());
        assert_eq!(sem.holders().unwrap().len(), 1);
        drop(permit); // given back before the drop returns
        assert_eq!(sem.available().unwrap(), 1);
        let permit = sem.try_acquire_for(1, ms(100), None).unwrap().unwrap();
        permit.release().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permit_had_after_waiting_has_its_whole_lease() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("waited");
    sem.set_permits(1).await.unwrap();
    let holder = sem.acquire(1).await.unwrap();
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move { sem.acquire_with_lease(1, ms(500)).await.unwrap() }
    });
    tokio::time::sleep(ms(800)).await;
    holder.release().await.unwrap();
    let permit = within(ms(3000), "the waiter", waiter).await.unwrap();
    // Its lease runs from the try that took it, not from the first try.
    assert!(!permit.is_lost());
    let left = permit.valid_until() - std::time::Instant::now();
    assert!(left > ms(300), "{left:?} left of a 500 ms lease");
    permit.release().await.unwrap();
}

/// A try whose reply was lost took the permits; the next try of the same
/// attempt finds them, and renews their leases from its own time (its
/// caller's lease clock starts then). A copy that arrives once they are
/// gone (released, expired) takes nothing.
#[tokio::test]
async fn a_retried_acquire_renews_the_lease_its_caller_counts_from() {
    let redis = Redis::start().await;
    let script = redis::Script::new(include_str!("../scripts/leased_acquire.lua"));
    let _: () = redis.raw().set("retried", 1).await.unwrap();
    let try_once = async || -> (i64, i64, i64) {
        script
            .key("retried")
            .key(leased_timeouts("retried"))
            .key("redisson_sc:{retried}")
            .key("{retried}:redlua_permits:c:1")
            .key("{retried}:redlua_token")
            .arg(1000)
            .arg(30_000)
            .arg(3_600_000)
            .arg("publish")
            .arg(&[7u8; 16][..])
            .invoke_async(&mut redis.raw())
            .await
            .unwrap()
    };
    let first = try_once().await;
    assert_eq!(first.0, 1);
    let score = async || -> f64 {
        redis
            .raw()
            .zscore(leased_timeouts("retried"), &[7u8; 16][..])
            .await
            .unwrap()
    };
    let expiry = score().await;
    tokio::time::sleep(ms(300)).await;
    let again = try_once().await;
    assert_eq!(
        (again.0, again.1),
        (1, first.1),
        "the same attempt, the same token"
    );
    assert!(score().await >= expiry + 250.0, "the lease was not renewed");
    assert_eq!(available(&redis, "retried").await, 0, "taken once");
    // Released (or expired and brought back) since: a copy that comes now
    // is late, and takes nothing.
    let _: () = redis
        .raw()
        .zrem(leased_timeouts("retried"), &[7u8; 16][..])
        .await
        .unwrap();
    let _: () = redis.raw().incr("retried", 1).await.unwrap();
    let late = try_once().await;
    assert_eq!(late.0, 3, "{late:?}");
    assert_eq!(
        available(&redis, "retried").await,
        1,
        "taken by a late copy"
    );
    assert_eq!(taken(&redis, "retried").await, 0);
}

/// Redis restarts (reloading its append-only file) while leased permits
/// are held and acquirers wait: the held permits are still theirs and
/// renewed past their lease, the waiters subscribe again and get the
/// permits given back after the restart, each release gives back once,
/// and the count is exact, as an observer outside Redis counts the
/// permits held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_held_permits_renewed_waiters_served_and_the_count_exact() {
    const PERMITS: i64 = 3;
    let redis = Redis::start_persistent().await;
    let client = redis.client_with_watchdog(ms(1500)).await;
    let sem = client.leased_semaphore("restarted");
    sem.set_permits(PERMITS as u64).await.unwrap();
    // The observer: permits held by this test's guards.
    let held = Arc::new(AtomicUsize::new(0));
    let two = sem.acquire(2).await.unwrap();
    let one = sem.acquire(1).await.unwrap();
    held.fetch_add(3, Ordering::SeqCst);
    // Only waiters subscribe to the channel.
    let channel = redisson::semaphore_channel("restarted");
    assert_eq!(redis.subscribers(&channel).await, 0);
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let sem = sem.clone();
            let held = held.clone();
            tokio::spawn(async move {
                let guard = sem.acquire(1).await.unwrap();
                held.fetch_add(1, Ordering::SeqCst);
                (guard, Instant::now())
            })
        })
        .collect();
    assert!(redis.subscribers_become(&channel, 1, ms(3000)).await >= 1);
    tokio::time::sleep(ms(200)).await;
    assert!(waiters.iter().all(|w| !w.is_finished()));

    let redis = redis.restart().await;
    assert_eq!(pool(&redis, "restarted").await, (0, 3), "kept");
    assert!(
        redis.subscribers_become(&channel, 1, ms(5000)).await >= 1,
        "no waiter subscribed again"
    );
    // Past the lease the restart interrupted: renewed, in Redis too.
    tokio::time::sleep(ms(2000)).await;
    assert!(!two.is_lost() && !one.is_lost(), "renewed");
    let now_ms = redisson::java_now_ms() as f64;
    let mut con = fresh(&redis).await;
    let scores: Vec<(Vec<u8>, f64)> = con
        .zrange_withscores(redisson::leased_timeouts("restarted"), 0, -1)
        .await
        .unwrap();
    assert_eq!(scores.len(), 3);
    for (_, expiry) in &scores {
        assert!(
            *expiry > now_ms + 500.0,
            "not renewed: {expiry} vs {now_ms}"
        );
    }
    assert!(waiters.iter().all(|w| !w.is_finished()));

    // A release after the restart gives back once and serves one waiter.
    held.fetch_sub(1, Ordering::SeqCst);
    let released = Instant::now();
    one.release().await.unwrap();
    let mut waiters = waiters.into_iter();
    let mut first = waiters.next().unwrap();
    let mut second = waiters.next().unwrap();
    let ((third, got), other) = tokio::select! {
        got = &mut first => (got.unwrap(), second),
        got = &mut second => (got.unwrap(), first),
        _ = tokio::time::sleep(ms(4000)) => panic!("no waiter got the permit given back"),
    };
    assert!(
        got - released < ms(2000),
        "woken after {:?}",
        got - released
    );
    assert!(!other.is_finished(), "one permit, one waiter");
    assert_eq!(pool(&redis, "restarted").await, (0, 3));
    held.fetch_sub(2, Ordering::SeqCst);
    two.release().await.unwrap();
    let (fourth, _) = within(ms(3000), "the second waiter", other).await.unwrap();
    let held_now = held.load(Ordering::SeqCst);
    assert_eq!(held_now, 2);
    assert_eq!(
        pool_becomes(&redis, "restarted", (PERMITS - 2, 2), ms(1000)).await,
        (PERMITS - held_now as i64, held_now)
    );
    third.release().await.unwrap();
    fourth.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "restarted", (PERMITS, 0), ms(1000)).await,
        (PERMITS, 0)
    );
}

/// Redis restarts empty (no persistence) while leased permits are held
/// and an acquirer waits: each guard says lost at the next renewal (it is
/// never kept without its entry), its release gives nothing back, and the
/// waiter gets a permit of the pool set up again, exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_loses_the_permits_marks_their_guards_lost_and_gives_nothing_back() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(6000)).await;
    let sem = client.leased_semaphore("emptied");
    sem.set_permits(2).await.unwrap();
    let a = sem.acquire(1).await.unwrap();
    let b = sem.acquire(1).await.unwrap();
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move { sem.acquire(1).await.unwrap() }
    });
    let channel = redisson::semaphore_channel("emptied");
    assert!(redis.subscribers_become(&channel, 1, ms(3000)).await >= 1);
    let redis = redis.restart().await;
    let restarted = Instant::now();
    assert_eq!(taken(&redis, "emptied").await, 0);
    // Found at the next renewal round (every 2 s), long before the lease
    // clock (at least 4 s on) would have said so.
    within(ms(6000), "a's lost()", a.lost()).await;
    within(ms(6000), "b's lost()", b.lost()).await;
    println!("lost {:?} after the restart", restarted.elapsed());
    assert!(
        restarted.elapsed() < ms(3000),
        "noticed after {:?}",
        restarted.elapsed()
    );
    assert!(matches!(a.release().await, Err(Error::LockLost { .. })));
    drop(b);
    tokio::time::sleep(ms(300)).await;
    assert_eq!(
        pool(&redis, "emptied").await,
        (0, 0),
        "a lost permit's release made one up"
    );
    assert!(!waiter.is_finished());
    // The pool, set up again, serves the waiter once.
    assert!(
        redis.subscribers_become(&channel, 1, ms(5000)).await >= 1,
        "the waiter did not subscribe again"
    );
    sem.set_permits(2).await.unwrap();
    let guard = within(ms(3000), "the waiter", waiter).await.unwrap();
    assert!(!guard.is_lost());
    assert_eq!(pool(&redis, "emptied").await, (1, 1));
    guard.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "emptied", (2, 0), ms(1000)).await,
        (2, 0)
    );
}

/// A release that took effect, then Redis restarted (append-only file
/// kept) before its reply came back: the retry on the restarted server
/// gives nothing back twice, and the release succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_reply_was_lost_in_a_restart_gives_back_once() {
    let redis = Redis::start_persistent().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(1000))).await;
    let sem = client.leased_semaphore("replied");
    sem.set_permits(3).await.unwrap();
    let kept = sem.acquire(1).await.unwrap();
    let given = sem.acquire(1).await.unwrap();
    proxy.set_delay(ms(300));
    let release = tokio::spawn(given.release());
    // Given back in Redis; the reply is still on its way: it never comes.
    assert_eq!(
        pool_becomes(&redis, "replied", (2, 1), ms(3000)).await,
        (2, 1)
    );
    proxy.stall();
    let redis = redis.restart().await;
    proxy.resume_dropping();
    proxy.set_delay(Duration::ZERO);
    let result = within(ms(10_000), "the release", release).await.unwrap();
    assert!(result.is_ok(), "{result:?}");
    tokio::time::sleep(ms(300)).await;
    assert_eq!(pool(&redis, "replied").await, (2, 1), "given back once");
    assert!(!kept.is_lost());
    kept.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "replied", (3, 0), ms(1000)).await,
        (3, 0)
    );
}

/// A release that took effect, then its connection was killed before the
/// reply came back: the retry, on a new connection, is answered by the
/// release's latch with the first result, so the release succeeds and
/// gives back once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_connection_is_killed_before_its_reply_succeeds_and_gives_back_once() {
    let redis = Redis::start().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(2000))).await;
    let sem = client.leased_semaphore("killed");
    sem.set_permits(3).await.unwrap();
    let kept = sem.acquire(1).await.unwrap();
    let given = sem.acquire(1).await.unwrap();
    proxy.set_delay(ms(400));
    let release = tokio::spawn(given.release());
    // Given back in Redis; the reply is still on its way.
    assert_eq!(
        pool_becomes(&redis, "killed", (2, 1), ms(3000)).await,
        (2, 1)
    );
    proxy.cut();
    proxy.set_delay(Duration::ZERO);
    let result = within(ms(5000), "the release", release).await.unwrap();
    assert!(result.is_ok(), "the latch answers the retry: {result:?}");
    assert_eq!(pool(&redis, "killed").await, (2, 1), "given back once");
    assert!(!kept.is_lost());
    kept.release().await.unwrap();
    assert_eq!(pool(&redis, "killed").await, (3, 0));
}

/// Two waiters of one client for two leased permits each, behind a link
/// with 20 ms each way. Two permits appear without a message, then one
/// message announces one permit: it wakes one waiter of the client, the
/// first (it waits longest). That waiter is cancelled 0 to 108 ms after
/// Redis published: before its wake-up reaches it, once it is woken, while
/// its try is under way, after. What it was given is passed on: a wake-up
/// it did not use, or, through the undo of its try, the permits and a
/// message. The other waiter gets the permits within a round trip or so,
/// not at its next poll (5 s), and the pool stays whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_waiter_cancelled_around_its_try_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let (proxy, waiters) = redis.behind_proxy(None).await;
    proxy.set_delay(ms(20));
    let mut listener = redis.listen(&semaphore_channel("handover")).await;
    let sem = waiters.leased_semaphore("handover");
    let mut cancelled_first = 0;
    for trial in 0..10u64 {
        // Two permits taken (by a holder that is not a client here).
        let far = redisson::java_now_ms() + 600_000;
        let _: () = redis::pipe()
            .atomic()
            .set("handover", 0)
            .zadd(leased_timeouts("handover"), [1u8; 16].to_vec(), far)
            .zadd(leased_timeouts("handover"), [2u8; 16].to_vec(), far)
            .query_async(&mut redis.raw())
            .await
            .unwrap();
        let (first, second) = two_waiters(|| {
            let sem = sem.clone();
            async move { sem.acquire(2).await.unwrap() }
        })
        .await;
        // Given back without a message.
        let _: () = redis::pipe()
            .atomic()
            .del(leased_timeouts("handover"))
            .set("handover", 2)
            .query_async(&mut redis.raw())
            .await
            .unwrap();
        let published = Instant::now();
        let _: i64 = redis
            .raw()
            .publish(semaphore_channel("handover"), "1")
            .await
            .unwrap();
        tokio::time::sleep(ms(trial * 12)).await;
        first.abort();
        if let Ok(guard) = first.await {
            // Its try came first: it holds the permits; give them back.
            guard.release().await.unwrap();
        } else {
            cancelled_first += 1;
        }
        let (guard, got) = within(ms(4000), "the second waiter", second).await.unwrap();
        assert!(
            got - published < ms(1500),
            "trial {trial}: the second waiter got the permits after {:?}",
            got - published
        );
        guard.release().await.unwrap();
        // Whatever the cancelled try took came back, once.
        assert_eq!(
            pool_becomes(&redis, "handover", (2, 0), ms(2000)).await,
            (2, 0),
            "trial {trial}"
        );
        listener.drain();
    }
    println!("{cancelled_first} of 10 trials cancelled the first waiter before it won");
    assert!(cancelled_first > 0, "no trial cancelled the woken waiter");
}

/// The `calls=` of `cmdstat_<command>` in INFO commandstats (0 if absent).
async fn calls(redis: &Redis, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// Permit guards are renewed in the watchdog's rounds with the locks, one
/// call per semaphore a round: 30 guards of one semaphore, 10 of another
/// and 20 locks make 3 calls a round, not 60.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_are_renewed_in_the_locks_rounds_one_call_per_semaphore() {
    let redis = Redis::start().await;
    // Rounds every 200 ms.
    let client = redis.client_with_watchdog(ms(600)).await;
    let (big, small) = (
        client.leased_semaphore("big"),
        client.leased_semaphore("small"),
    );
    big.set_permits(30).await.unwrap();
    small.set_permits(10).await.unwrap();
    let mut permits = Vec::new();
    for _ in 0..30 {
        permits.push(big.acquire(1).await.unwrap());
    }
    for _ in 0..10 {
        permits.push(small.acquire(1).await.unwrap());
    }
    let mut locks = Vec::new();
    for i in 0..20 {
        locks.push(client.lock(&format!("lock:{i}")).lock().await.unwrap());
    }
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    tokio::time::sleep(ms(1000)).await;
    let renewals = calls(&redis, "evalsha").await;
    // About 5 rounds of 3 calls; a call per guard would be 60 a round.
    assert!(
        (6..=24).contains(&renewals),
        "{renewals} renewal calls in 1 s for 40 permit guards and 20 locks"
    );
    assert!(permits.iter().all(|p| !p.is_lost()));
    assert!(locks.iter().all(|l| !l.is_lost()));
    // Each permit's lease in Redis was renewed past its 600 ms.
    let now_ms = redisson::java_now_ms() as f64;
    for name in ["big", "small"] {
        let expiries: Vec<(Vec<u8>, f64)> = fresh(&redis)
            .await
            .zrange_withscores(leased_timeouts(name), 0, -1)
            .await
            .unwrap();
        assert!(expiries.iter().all(|(_, at)| *at > now_ms), "{name}");
    }
    for permit in permits {
        permit.release().await.unwrap();
    }
    for lock in locks {
        lock.unlock().await.unwrap();
    }
}

/// A waiter woken by a release and cancelled before its try reached Redis
/// passes the wake-up on: the other waiter of its client gets the permit at
/// once, not at its next poll (5 s). The waiters' tries go through a link
/// that is stalled while the first one is cancelled (that try never runs,
/// and the undo of its attempt gives nothing back, so sends no message);
/// their wake-ups come directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_waiter_cancelled_before_its_try_arrives_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let proxy = redlua_test_support::FaultProxy::start(redis.server.port());
    let tries = proxy.client().get_connection_manager().await.unwrap();
    let waiters = LockClient::from_client(redis.server.client())
        .connection(tries)
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    for round in 0..3 {
        let name = format!("pass-on:{round}");
        let other = holder.leased_semaphore(&name);
        other.set_permits(1).await.unwrap();
        let held = other.acquire(1).await.unwrap();
        let spawn_waiter = || {
            let sem = waiters.leased_semaphore(&name);
            tokio::spawn(async move { (sem.acquire(1).await.unwrap(), Instant::now()) })
        };
        let first = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        let second = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        // The release's message wakes the first waiter (the longest
        // waiting); its try is held on the link, and it is cancelled before
        // the try arrives.
        proxy.stall();
        let released = Instant::now();
        held.release().await.unwrap();
        tokio::time::sleep(ms(50)).await;
        first.abort();
        tokio::time::sleep(ms(50)).await;
        proxy.resume_dropping();
        let (got, at) = within(ms(10_000), "the second waiter", second)
            .await
            .unwrap();
        assert!(
            at - released < ms(1000),
            "round {round}: the free permit waited {:?} for the second waiter",
            at - released
        );
        got.release().await.unwrap();
        assert_eq!(pool_becomes(&redis, &name, (1, 0), ms(2000)).await, (1, 0));
    }
}
