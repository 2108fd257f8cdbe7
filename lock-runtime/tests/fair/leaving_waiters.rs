//! Waiters that leave (timed out, cancelled, woken then cancelled, dead), and those that stay.

use super::{
    command_calls, deadlines, deadlines_key, queue, queue_key, queue_reaches, server_now_ms,
    waiter, warm_up,
};
use crate::common::{Redis, ms, within};
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use std::time::Duration;
use tokio::time::Instant;

async fn client_with_wait(redis: &Redis, wait: Duration) -> LockClient {
    LockClient::builder(redis.url())
        .fair_lock_wait_timeout(wait)
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn a_waiter_that_times_out_leaves_no_queue_entry() {
    let redis = Redis::start().await;
    let name = "fair:timeout";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let started = Instant::now();
    let got = b
        .fair_lock(name)
        .try_lock_for(ms(300), None)
        .await
        .expect("try_lock_for");
    assert!(got.is_none());
    assert!(started.elapsed() >= ms(300));
    // Left when the call returned, not later.
    assert!(!redis.exists(&queue_key(name)).await);
    assert!(!redis.exists(&deadlines_key(name)).await);
    held.unlock().await.expect("unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_waiter_leaves_and_the_next_one_gets_the_lock_at_once() {
    let redis = Redis::start().await;
    let name = "fair:cancelled";
    let a = redis.client().await;
    let (b, c) = (redis.client().await, redis.client().await);
    let held = a.fair_lock(name).lock().await.expect("lock"); // 30 s lease
    let (b_task, b_rx) = waiter(&b, name);
    drop(b_rx);
    queue_reaches(&redis, name, 1).await;
    let (_c_task, c_rx) = waiter(&c, name);
    let queued = queue_reaches(&redis, name, 2).await;
    // Read before B is cancelled: its leave may be done before the next
    // read.
    let before = deadlines(&redis, name).await;
    b_task.abort();
    // B leaves in the background; C moves up, and its deadline by one wait.
    let left = queue_reaches(&redis, name, 1).await;
    assert_eq!(left, vec![queued[1].clone()]);
    let after = deadlines(&redis, name).await;
    let c_before = before.iter().find(|(o, _)| *o == queued[1]).unwrap().1;
    assert_eq!(after, vec![(queued[1].clone(), c_before - 10_000.0)]);
    let released = Instant::now();
    held.unlock().await.expect("unlock");
    let (guard, at) = within(ms(1000), "C acquiring after B left", c_rx)
        .await
        .expect("C's guard");
    assert!(at - released < ms(1000));
    assert_eq!(guard.owner().to_string(), queued[1]);
    guard.unlock().await.expect("unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_woken_waiter_that_is_cancelled_passes_the_wake_up_on() {
    let redis = Redis::start().await;
    let a = redis.client().await;
    let (b, c) = (redis.client().await, redis.client().await);
    // B is woken by the release and cancelled around then: before it tried,
    // while its try was under way, or after it got the lock. In every case
    // C gets the lock at once (the lease is 30 s).
    for round in 0..20u64 {
        let name = format!("fair:woken:{round}");
        let held = a.fair_lock(&name).lock().await.expect("lock");
        let (b_task, b_rx) = waiter(&b, &name);
        drop(b_rx); // a guard B gets is dropped (released) at once
        queue_reaches(&redis, &name, 1).await;
        let (_c_task, c_rx) = waiter(&c, &name);
        queue_reaches(&redis, &name, 2).await;
        held.unlock().await.expect("unlock");
        if round % 4 != 0 {
            tokio::time::sleep(Duration::from_micros(250 * (round % 4))).await;
        }
        b_task.abort();
        let Ok(got) = tokio::time::timeout(ms(1000), c_rx).await else {
            let hash = redis.hgetall(&name).await;
            panic!(
                "round {round}: C did not acquire; hash {hash:?}, queue {:?}, deadlines {:?}",
                queue(&redis, &name).await,
                deadlines(&redis, &name).await
            );
        };
        let (guard, _) = got.expect("C's guard");
        guard.unlock().await.expect("unlock");
    }
}

#[tokio::test]
async fn a_dead_waiter_is_skipped_after_its_wait_time() {
    let redis = Redis::start().await;
    let name = "fair:dead";
    let client = client_with_wait(&redis, ms(1000)).await;
    // A waiter first in line that died: its entry, as Redisson writes it
    // with the lock free (deadline = now + wait time), and nothing else.
    let now = server_now_ms(&redis).await;
    let mut con = redis.raw();
    let _: () = con.rpush(queue_key(name), "dead:1").await.unwrap();
    let _: () = con
        .zadd(deadlines_key(name), "dead:1", now + 1000)
        .await
        .unwrap();
    let started = Instant::now();
    let guard = within(
        ms(5000),
        "acquiring behind a dead waiter",
        client.fair_lock(name).lock(),
    )
    .await
    .expect("lock");
    let waited = started.elapsed();
    // It kept the dead waiter's place until the deadline, not longer.
    assert!(waited >= ms(700), "{waited:?}");
    assert!(waited < ms(3000), "{waited:?}");
    assert!(queue(&redis, name).await.is_empty());
    guard.unlock().await.expect("unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn live_waiters_keep_their_place_through_fast_handoffs_with_a_short_wait_time() {
    // Redisson's arithmetic alone moves every waiter's deadline up by one
    // wait time per handoff, and never forward with time: after the lease
    // plus a few wait times of steady contention, the heads' deadlines
    // have passed and live waiters get dropped. The floors keep them.
    let redis = Redis::start().await;
    let name = "fair:fast";
    let wait = ms(200);
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(client_with_wait(&redis, wait).await);
    }
    // Warm up the pattern subscriptions and the scripts.
    let warm = client_with_wait(&redis, wait).await;
    let held = warm.fair_lock(name).lock().await.expect("lock");
    warm_up(&redis, name, &clients, held).await;
    let until = Instant::now() + ms(2500);
    // Meanwhile, nobody in the queue is ever past its deadline (a live
    // waiter dropped from its place would be).
    let sampler = {
        let mut con = redis.raw();
        let key = deadlines_key(name);
        tokio::spawn(async move {
            let mut stale = 0u64;
            let mut samples = 0u64;
            while Instant::now() < until {
                let ((secs, micros), entries): ((i64, i64), Vec<(String, f64)>) = redis::pipe()
                    .atomic()
                    .cmd("TIME")
                    .cmd("ZRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query_async(&mut con)
                    .await
                    .expect("TIME, ZRANGE");
                let now = (secs * 1000 + micros / 1000) as f64;
                stale += entries
                    .iter()
                    .filter(|(_, deadline)| *deadline <= now)
                    .count() as u64;
                samples += 1;
            }
            (stale, samples)
        })
    };
    let before = command_calls(&redis).await;
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                let mut served = 0u64;
                while Instant::now() < until {
                    let guard = lock.lock_with_lease(ms(300)).await.expect("lock");
                    served += 1;
                    tokio::time::sleep(ms(1)).await;
                    guard.unlock().await.expect("unlock");
                }
                served
            }));
        }
    }
    let mut served = Vec::new();
    for task in tasks {
        served.push(
            within(ms(20_000), "a contender", task)
                .await
                .expect("contender"),
        );
    }
    let after = command_calls(&redis).await;
    let delta = |command: &str| {
        after.get(command).copied().unwrap_or(0) - before.get(command).copied().unwrap_or(0)
    };
    let (stale, samples) = sampler.await.expect("sampler");
    eprintln!("{stale} stale queue entries seen in {samples} samples");
    assert_eq!(stale, 0, "live waiters past their deadline");
    let total: u64 = served.iter().sum();
    let scripts = (delta("evalsha") + delta("eval")) as f64;
    eprintln!(
        "served {served:?}: {:.2} scripts per acquisition",
        scripts / total as f64
    );
    // Nobody re-queued: each acquisition cost the three scripts of a
    // queued one, and every contender got its turns.
    assert!(
        scripts / total as f64 <= 3.1,
        "{scripts} scripts for {total}"
    );
    let mean = total as f64 / served.len() as f64;
    assert!(served.iter().all(|&n| n as f64 >= 0.8 * mean), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acquires_abandoned_at_any_point_leave_no_hold_and_no_queue_entry() {
    let redis = Redis::start().await;
    let name = "fair:abandoned";
    let holder = redis.client().await;
    let others = [redis.client().await, redis.client().await];
    for round in 0..30u64 {
        // Sometimes held (the waiters queue), sometimes free (they may take
        // it); each is dropped a little later, wherever it is then.
        let held = if round % 2 == 0 {
            Some(holder.fair_lock(name).lock().await.expect("lock"))
        } else {
            None
        };
        let mut tasks = Vec::new();
        for (i, client) in others.iter().enumerate() {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                let guard = lock.lock().await.expect("lock");
                // Held until the task is aborted: then dropped, released.
                std::future::pending::<()>().await;
                drop(guard);
            }));
            tokio::time::sleep(Duration::from_micros(300 * (round % 5) + 100 * i as u64)).await;
        }
        for task in &tasks {
            task.abort();
        }
        if let Some(held) = held {
            held.unlock().await.expect("unlock");
        }
        // Nothing stays: no hold, no waiter, and a new acquire gets the
        // lock at once.
        within(
            ms(2000),
            &format!("round {round}: everything gone"),
            async {
                loop {
                    let held = redis.exists(name).await;
                    let queued = redis.exists(&queue_key(name)).await;
                    let deadlines = redis.exists(&deadlines_key(name)).await;
                    if !held && !queued && !deadlines {
                        break;
                    }
                    tokio::time::sleep(ms(5)).await;
                }
            },
        )
        .await;
        let guard = holder.fair_lock(name).try_lock().await.expect("try_lock");
        guard
            .expect("free, nobody waiting")
            .unlock()
            .await
            .expect("unlock");
    }
}

#[tokio::test]
async fn a_dead_head_woken_by_a_release_holds_the_free_lock_up_for_one_wait_time() {
    let redis = Redis::start().await;
    let name = "fair:dead-head";
    let holder = client_with_wait(&redis, ms(1000)).await;
    let live = client_with_wait(&redis, ms(1000)).await;
    let held = holder.fair_lock(name).lock().await.expect("lock");
    // A dead waiter first in line, with a far deadline (as a Java waiter
    // with Redisson's 5-minute wait time gets), and a live one behind it.
    let now = server_now_ms(&redis).await;
    let mut con = redis.raw();
    let _: () = con.rpush(queue_key(name), "dead:1").await.unwrap();
    let _: () = con
        .zadd(deadlines_key(name), "dead:1", now + 300_000)
        .await
        .unwrap();
    let (_task, rx) = waiter(&live, name);
    queue_reaches(&redis, name, 2).await;
    let released = Instant::now();
    held.unlock().await.expect("unlock");
    // Woken, the dead head has one wait time to take the lock; then the
    // live waiter does.
    let (guard, at) = within(ms(5000), "the live waiter", rx)
        .await
        .expect("guard");
    let after = at - released;
    assert!(after >= ms(700), "{after:?}");
    assert!(after < ms(3000), "{after:?}");
    assert!(queue(&redis, name).await.is_empty());
    guard.unlock().await.expect("unlock");
}
