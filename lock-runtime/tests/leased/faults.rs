//! Faults: random cancellation, CLIENT KILL and SIGSTOP, restarts, releases whose reply is lost.

use super::{fresh, pool, pool_becomes, taken};
use crate::common::chaos::{self, Chaos, Holders};
use crate::common::{Redis, ms, within};
use crate::redisson;
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, SyncReplicas};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

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
