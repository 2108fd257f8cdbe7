//! Waiters: pub/sub wake-ups, turns, bounded waits, a lease ending, a force release.

use super::{join_waiter, map, spawn_waiter};
use crate::common::{Redis, ms, within};
use redlua_runtime::{Error, LockClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_wakes_within_200ms_of_a_release() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other_client = redis.client().await;
    // A waiter on another client, then one on the holder's own client.
    for (label, waiter_client) in [("other client", &other_client), ("same client", &holder)] {
        let name = format!("wake-{}", label.replace(' ', "-"));
        let guard = holder.lock(&name).lock().await.unwrap();
        assert!(redis.pttl(&name).await > 29_000);
        let waiter = spawn_waiter(&waiter_client.lock(&name));
        tokio::time::sleep(ms(300)).await;
        assert!(!waiter.is_finished(), "{label}: the waiter got a held lock");
        let released = Instant::now();
        guard.unlock().await.unwrap();
        let (acquired, guard, owner) = join_waiter(waiter, ms(5000)).await;
        let after = acquired.duration_since(released);
        assert!(after < ms(200), "{label}: woke {after:?} after the release");
        assert_eq!(redis.hgetall(&name).await, map(&[(&owner, "1")]));
        guard.unlock().await.unwrap();
    }

    // And a waiter that is another future of the holder's own task: it
    // waits too, and wakes on the release.
    let lock = holder.lock("wake-same-task");
    let guard = lock.lock().await.unwrap();
    let holder_owner = guard.owner().to_string();
    let waiting = async {
        let guard = lock.lock().await.expect("the same task's second lock()");
        (Instant::now(), guard)
    };
    let releasing = async {
        tokio::time::sleep(ms(300)).await;
        assert_eq!(
            redis.hgetall("wake-same-task").await,
            map(&[(&holder_owner, "1")]),
            "same task: the waiter got a held lock"
        );
        let released = Instant::now();
        guard.unlock().await.unwrap();
        released
    };
    let ((acquired, waiter_guard), released) = within(ms(5000), "same task", async {
        tokio::join!(waiting, releasing)
    })
    .await;
    let after = acquired.duration_since(released);
    assert!(
        after < ms(200),
        "same task: woke {after:?} after the release"
    );
    let waiter_owner = waiter_guard.owner().to_string();
    assert_ne!(waiter_owner, holder_owner);
    assert_eq!(
        redis.hgetall("wake-same-task").await,
        map(&[(&waiter_owner, "1")])
    );
    waiter_guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_of_one_client_take_turns() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiters = redis.client().await;
    let guard = holder.lock("turns").lock().await.unwrap();
    let (got_tx, mut got) = tokio::sync::mpsc::unbounded_channel();
    let mut releases = Vec::new();
    for i in 0..3 {
        let lock = waiters.lock("turns");
        let got_tx = got_tx.clone();
        let (release_tx, release) = tokio::sync::oneshot::channel::<()>();
        releases.push(Some(release_tx));
        tokio::spawn(async move {
            let guard = lock.lock().await.unwrap();
            let at = Instant::now();
            // Re-entering and releasing that hold lets nobody in.
            let inner = guard.reenter().await.unwrap();
            let count = lock.hold_count(guard.owner()).await.unwrap();
            inner.unlock().await.unwrap();
            got_tx.send((i, at, count)).unwrap();
            let _ = release.await;
            guard.unlock().await.unwrap();
        });
    }
    tokio::time::sleep(ms(300)).await;
    assert!(got.try_recv().is_err(), "a waiter got a held lock");
    let mut released = Instant::now();
    guard.unlock().await.unwrap();
    let mut order = Vec::new();
    for turn in 0..3 {
        let (i, at, count) = within(ms(5000), "the next waiter", got.recv())
            .await
            .unwrap();
        assert_eq!(count, 2, "turn {turn}: the re-entry was not counted");
        let after = at.duration_since(released);
        assert!(
            after < ms(200),
            "turn {turn}: woke {after:?} after the release"
        );
        order.push(i);
        tokio::time::sleep(ms(100)).await;
        assert!(got.try_recv().is_err(), "two waiters hold the lock at once");
        let holders = redis.hgetall("turns").await;
        assert_eq!(holders.len(), 1, "turn {turn}: {holders:?}");
        assert_eq!(
            holders.values().next().map(String::as_str),
            Some("1"),
            "turn {turn}: the re-entry was not released"
        );
        released = Instant::now();
        releases[i].take().unwrap().send(()).unwrap();
    }
    order.sort();
    assert_eq!(order, [0, 1, 2]);
    assert!(redis.gone_within("turns", ms(1000)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_lock_for_gives_up_after_its_wait() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other = redis.client().await;
    let guard = holder.lock("tlf").lock().await.unwrap();
    for (label, client) in [("other client", &other), ("same client", &holder)] {
        let lock = client.lock("tlf");
        let (waited, got) = tokio::spawn(async move {
            let start = Instant::now();
            let got = lock.try_lock_for(ms(700), None).await.unwrap();
            (start.elapsed(), got.is_some())
        })
        .await
        .unwrap();
        assert!(!got, "{label}: acquired a held lock");
        assert!(
            waited >= ms(700) && waited < ms(1200),
            "{label}: try_lock_for(700 ms) returned after {waited:?}"
        );
    }
    // The holder's own task is another acquirer too: it waits, and gives up.
    let start = Instant::now();
    let got = holder
        .lock("tlf")
        .try_lock_for(ms(700), None)
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(got.is_none(), "same task: acquired a held lock");
    assert!(
        waited >= ms(700) && waited < ms(1200),
        "same task: try_lock_for(700 ms) returned after {waited:?}"
    );
    assert_eq!(
        redis.hgetall("tlf").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    // Free: at once.
    guard.unlock().await.unwrap();
    let start = Instant::now();
    let got = other.lock("tlf").try_lock_for(ms(700), None).await.unwrap();
    assert!(start.elapsed() < ms(300), "{:?}", start.elapsed());
    got.expect("a free lock").unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_retries_when_the_holders_lease_ends() {
    // A lease that expires publishes nothing: the waiter must come back by
    // itself after the TTL the acquire script returned.
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other = redis.client().await;
    let guard = holder
        .lock("expiring")
        .lock_with_lease(ms(400))
        .await
        .unwrap();
    let taken = Instant::now();
    let lock = other.lock("expiring");
    let (at, got) = tokio::spawn(async move {
        let got = lock.try_lock_for(ms(3000), Some(ms(1000))).await.unwrap();
        (Instant::now(), got)
    })
    .await
    .unwrap();
    let got = got.expect("the lease ended within the wait");
    let after = at.duration_since(taken);
    assert!(after >= ms(350), "acquired a held lock after {after:?}");
    assert!(
        after < ms(1000),
        "acquired {after:?} after a 400 ms lease was taken"
    );
    assert_eq!(got.lease(), Some(ms(1000)));
    assert!(got.token() > guard.token());
    assert!(guard.is_lost(), "the expired holder's lease clock ran out");
    got.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_unlock_wakes_waiters() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiting = redis.client().await;
    let breaker = redis.client().await;
    let guard = holder.lock("forced").lock().await.unwrap();
    let waiter = spawn_waiter(&waiting.lock("forced"));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let broken = Instant::now();
    assert!(breaker.lock("forced").force_unlock().await.unwrap());
    let (acquired, waiter_guard, waiter_owner) = join_waiter(waiter, ms(5000)).await;
    let after = acquired.duration_since(broken);
    assert!(after < ms(200), "woke {after:?} after force_unlock");
    assert!(waiter_guard.token() > guard.token());
    let result = guard.unlock().await;
    assert!(
        matches!(result, Err(Error::NotOwner { .. })),
        "expected NotOwner, got {result:?}"
    );
    assert_eq!(redis.hgetall("forced").await, map(&[(&waiter_owner, "1")]));
    waiter_guard.unlock().await.unwrap();
}

/// Contenders of one client on a current-thread runtime: each loops lock,
/// 1 ms inside, unlock, for `run`; how many holds each got.
async fn contend_on_one_client(client: &LockClient, tasks: usize, run: Duration) -> Vec<usize> {
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let stop = Instant::now() + run;
    let mut handles = Vec::new();
    for i in 0..tasks {
        let lock = client.lock("one-client-contention");
        let counts = counts.clone();
        handles.push(tokio::spawn(async move {
            while Instant::now() < stop {
                let guard = lock.lock().await.unwrap();
                counts[i].fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(ms(1)).await;
                guard.unlock().await.unwrap();
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn on_a_current_thread_runtime_one_clients_contenders_all_get_the_lock() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let counts = contend_on_one_client(&client, 4, ms(2000)).await;
    let total: usize = counts.iter().sum();
    let least = *counts.iter().min().unwrap();
    assert!(total >= 40, "{counts:?}");
    // Each at least half the mean (without the handoff: [782, 1, 1, 1]).
    assert!(least * 4 * 2 >= total, "a contender starved: {counts:?}");
}
