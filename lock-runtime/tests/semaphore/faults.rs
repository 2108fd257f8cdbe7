//! Faults: random cancellation, CLIENT KILL and SIGSTOP, a restart, a release whose reply is lost.

use super::{available, available_becomes};
use crate::common::chaos::{self, Chaos, Holders};
use crate::common::{Redis, ms, within};
use crate::redisson::semaphore_channel;
use redlua_runtime::{LockClient, SyncReplicas};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// The fault test: 12 tasks on a 3-permit pool, cancelled at random, while
/// Redis kills every client connection every 300 ms and is stopped
/// (SIGSTOP) now and then. An observer outside Redis counts holders: never
/// more than 3; in the end every permit is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_random_cancellation_client_kill_and_sigstop_the_count_stays_exact() {
    const PERMITS: i64 = 3;
    let redis = Redis::start().await;
    let client = LockClient::builder(redis.url())
        .response_timeout(ms(400))
        .sync_replicas(SyncReplicas::Off)
        .connect()
        .await
        .unwrap();
    let sem = client.semaphore("faults");
    sem.set_permits(PERMITS as u64).await.unwrap();
    let holders = Holders::default();
    let seed = chaos::seed();
    let stop_at = Instant::now() + ms(6000);
    let faults = Chaos::start(&redis, stop_at);
    let tasks: Vec<_> = (0..12u64)
        .map(|i| {
            let sem = sem.clone();
            let holders = holders.clone();
            let mut next = chaos::rng(seed, i);
            tokio::spawn(async move {
                while Instant::now() < stop_at {
                    let limit = ms(next() % 400);
                    if let Ok(Ok(())) = tokio::time::timeout(limit, sem.acquire(1)).await {
                        holders.enter();
                        tokio::time::sleep(ms(next() % 30)).await;
                        holders.leave();
                        // A release that fails is retried until it
                        // counts (exactly once).
                        while sem.release(1).await.is_err() {
                            tokio::time::sleep(ms(50)).await;
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
    // Every abandoned acquire is undone in the background.
    assert_eq!(
        available_becomes(&redis, "faults", PERMITS, ms(10_000)).await,
        PERMITS,
        "permits lost or made up (seed {seed})"
    );
}

/// Redis restarts (reloading its append-only file) while permits are taken
/// and acquirers wait: the waiters subscribe again and get the permits
/// given back after the restart, each release gives back once, and the
/// count is exact, as an observer outside Redis counts the permits held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_while_permits_are_held_and_acquirers_wait_keeps_the_count_exact() {
    const PERMITS: i64 = 3;
    let redis = Redis::start_persistent().await;
    let client = redis.client().await;
    let sem = client.semaphore("restarted");
    sem.set_permits(PERMITS as u64).await.unwrap();
    // The observer: permits held by this test's holders.
    let held = Arc::new(AtomicUsize::new(0));
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(sem.try_acquire(1).await.unwrap());
    held.fetch_add(3, Ordering::SeqCst);
    // Only waiters subscribe to the channel.
    let channel = semaphore_channel("restarted");
    assert_eq!(redis.subscribers(&channel).await, 0);
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let sem = sem.clone();
            let held = held.clone();
            tokio::spawn(async move {
                sem.acquire(1).await.unwrap();
                held.fetch_add(1, Ordering::SeqCst);
                Instant::now()
            })
        })
        .collect();
    assert!(redis.subscribers_become(&channel, 1, ms(3000)).await >= 1);
    tokio::time::sleep(ms(200)).await;
    assert!(waiters.iter().all(|w| !w.is_finished()));

    let redis = redis.restart().await;
    assert_eq!(available(&redis, "restarted").await, Some(0), "kept");
    // The waiters' subscription heals.
    assert!(
        redis.subscribers_become(&channel, 1, ms(5000)).await >= 1,
        "no waiter subscribed again"
    );
    assert!(waiters.iter().all(|w| !w.is_finished()));

    // A release after the restart gives back once and wakes one waiter.
    held.fetch_sub(1, Ordering::SeqCst);
    let released = Instant::now();
    sem.release(1).await.unwrap();
    let mut waiters = waiters.into_iter();
    let mut first = waiters.next().unwrap();
    let mut second = waiters.next().unwrap();
    let (got, other) = tokio::select! {
        got = &mut first => (got.unwrap(), second),
        got = &mut second => (got.unwrap(), first),
        _ = tokio::time::sleep(ms(4000)) => panic!("no waiter got the permit given back"),
    };
    // A waiter polls every 5 s: it was woken by the release.
    assert!(
        got - released < ms(2000),
        "woken after {:?}",
        got - released
    );
    assert!(!other.is_finished(), "one permit, one waiter");
    assert_eq!(available(&redis, "restarted").await, Some(0));
    held.fetch_sub(2, Ordering::SeqCst);
    sem.release(2).await.unwrap();
    within(ms(3000), "the second waiter", other).await.unwrap();
    // Every permit is held or available, each once.
    let held_now = held.load(Ordering::SeqCst) as i64;
    assert_eq!(held_now, 2);
    assert_eq!(
        available(&redis, "restarted").await,
        Some(PERMITS - held_now)
    );
    sem.release(2).await.unwrap();
    assert_eq!(available(&redis, "restarted").await, Some(PERMITS));
}

/// A release that took effect, then Redis restarted (append-only file
/// kept) before its reply came back: the retry on the restarted server
/// gives nothing back twice and returns the first result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_reply_was_lost_in_a_restart_gives_back_once() {
    let redis = Redis::start_persistent().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(1000))).await;
    let sem = client.semaphore("replied");
    sem.set_permits(3).await.unwrap();
    assert!(sem.try_acquire(2).await.unwrap());
    proxy.set_delay(ms(300));
    let release = tokio::spawn({
        let sem = sem.clone();
        async move { sem.release(1).await }
    });
    // Given back in Redis; the reply is still on its way: it never comes.
    assert_eq!(available_becomes(&redis, "replied", 2, ms(3000)).await, 2);
    proxy.stall();
    let redis = redis.restart().await;
    proxy.resume_dropping();
    proxy.set_delay(Duration::ZERO);
    let result = within(ms(10_000), "the release", release).await.unwrap();
    assert_eq!(result.unwrap(), 2, "the first result");
    tokio::time::sleep(ms(300)).await;
    assert_eq!(
        available(&redis, "replied").await,
        Some(2),
        "given back once"
    );
    assert_eq!(sem.release(1).await.unwrap(), 3);
    assert_eq!(available(&redis, "replied").await, Some(3));
}
