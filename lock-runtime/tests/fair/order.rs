//! Exclusion and first-come-first-served order: tokens, no queue jumping, re-entry, force release.

use super::{deadlines, deadlines_key, queue, queue_key, queue_reaches, server_now_ms, waiter};
use crate::common::{Redis, ms, within};
use redis::AsyncCommands;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holders_never_overlap_and_tokens_grow() {
    let redis = Redis::start().await;
    let name = "fair:exclusion";
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(redis.client().await);
    }
    let inside = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            let inside = inside.clone();
            let tokens = tokens.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..10 {
                    let guard = lock.lock().await.expect("lock");
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    tokens.lock().unwrap().push(guard.token());
                    tokio::time::sleep(ms(1)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.unlock().await.expect("unlock");
                }
            }));
        }
    }
    // An observer: the lock hash never has two owners.
    let observer = {
        let mut con = redis.raw();
        let inside = inside.clone();
        tokio::spawn(async move {
            let mut seen = 0;
            loop {
                let fields: Vec<String> = con.hkeys(name).await.expect("HKEYS");
                assert!(fields.len() <= 1, "two owners in the hash: {fields:?}");
                assert!(inside.load(Ordering::SeqCst) <= 1);
                seen += 1;
                if seen > 100_000 {
                    return;
                }
                tokio::task::yield_now().await;
            }
        })
    };
    within(ms(30_000), "80 fair acquisitions", async {
        for task in tasks {
            task.await.expect("contender");
        }
    })
    .await;
    observer.abort();
    let tokens = tokens.lock().unwrap().clone();
    assert_eq!(tokens.len(), 80);
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "tokens grow: {tokens:?}"
    );
    assert!(queue(&redis, name).await.is_empty());
    assert!(deadlines(&redis, name).await.is_empty());
    // Nothing left but the token counter (latches go in the background).
    within(ms(2000), "only the token counter left", async {
        while redis.keys().await != vec![format!("redisson_lock_token:{{{name}}}")] {
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_get_the_lock_in_the_order_they_asked() {
    let redis = Redis::start().await;
    let name = "fair:order";
    let holder = redis.client().await;
    let first = holder.fair_lock(name).lock().await.expect("lock");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    let mut clients = Vec::new();
    for i in 0..5 {
        // Each waiter on a client of its own, queued after the previous one.
        let client = redis.client().await;
        let lock = client.fair_lock(name);
        clients.push(client);
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            let guard = lock.lock().await.expect("lock");
            order.lock().unwrap().push(i);
            tokio::time::sleep(ms(5)).await;
            guard.unlock().await.expect("unlock");
        }));
        queue_reaches(&redis, name, i + 1).await;
    }
    // The deadlines follow Redisson's arithmetic: one wait time apart.
    let deadlines = deadlines(&redis, name).await;
    let queued = queue(&redis, name).await;
    assert_eq!(
        deadlines.iter().map(|(o, _)| o.clone()).collect::<Vec<_>>(),
        queued
    );
    for pair in deadlines.windows(2) {
        assert_eq!(pair[1].1 - pair[0].1, 10_000.0, "{deadlines:?}");
    }
    first.unlock().await.expect("unlock");
    within(ms(10_000), "five waiters served", async {
        for task in tasks {
            task.await.expect("waiter");
        }
    })
    .await;
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    assert!(queue(&redis, name).await.is_empty());
}

#[tokio::test]
async fn try_lock_never_jumps_the_queue_nor_joins_it() {
    let redis = Redis::start().await;
    let name = "fair:try";
    let client = redis.client().await;
    // A live waiter first in line (far deadline), the lock free.
    let now = server_now_ms(&redis).await;
    let mut con = redis.raw();
    let _: () = con.rpush(queue_key(name), "other:1").await.unwrap();
    let _: () = con
        .zadd(deadlines_key(name), "other:1", now + 60_000)
        .await
        .unwrap();
    assert!(
        client
            .fair_lock(name)
            .try_lock()
            .await
            .expect("try_lock")
            .is_none()
    );
    assert_eq!(queue(&redis, name).await, vec!["other:1".to_string()]);
    // With nobody waiting, it takes a free lock.
    let _: () = con
        .del(&[queue_key(name), deadlines_key(name)])
        .await
        .unwrap();
    let guard = client.fair_lock(name).try_lock().await.expect("try_lock");
    assert!(guard.is_some());
}

#[tokio::test]
async fn reentry_and_the_watchdog_work_on_a_fair_lock() {
    let redis = Redis::start().await;
    let name = "fair:reentry";
    let client = redis.client_with_watchdog(ms(300)).await;
    let other = redis.client().await;
    let lock = client.fair_lock(name);
    let outer = lock.lock().await.expect("lock");
    let inner = outer.reenter().await.expect("reenter");
    assert_eq!(lock.hold_count(outer.owner()).await.expect("count"), 2);
    let again = lock.reenter(outer.owner()).await.expect("reenter by owner");
    assert_eq!(lock.hold_count(outer.owner()).await.expect("count"), 3);
    // Renewed well past its 300 ms lease.
    tokio::time::sleep(ms(1200)).await;
    assert!(!outer.is_lost());
    assert!(lock.is_locked().await.expect("is_locked"));
    assert!(redis.pttl(name).await > 0);
    // Others queue until every hold is released.
    let (_task, mut rx) = waiter(&other, name);
    queue_reaches(&redis, name, 1).await;
    again.unlock().await.expect("unlock");
    inner.unlock().await.expect("unlock");
    tokio::time::sleep(ms(100)).await;
    assert!(rx.try_recv().is_err(), "one hold left: still held");
    outer.unlock().await.expect("unlock");
    let (guard, _) = within(ms(1000), "the waiter acquiring", rx)
        .await
        .expect("guard");
    guard.unlock().await.expect("unlock");
}

#[tokio::test]
async fn force_unlock_wakes_the_head_of_the_queue() {
    let redis = Redis::start().await;
    let name = "fair:force";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let (_task, rx) = waiter(&b, name);
    queue_reaches(&redis, name, 1).await;
    let token = held.token();
    assert!(
        b.fair_lock(name)
            .force_unlock()
            .await
            .expect("force_unlock")
    );
    let (guard, _) = within(ms(1000), "the head acquiring", rx)
        .await
        .expect("guard");
    assert!(guard.token() > token);
    assert!(held.unlock().await.is_err(), "the broken holder knows");
    guard.unlock().await.expect("unlock");
}
