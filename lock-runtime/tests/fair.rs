//! The fair (FIFO) lock, Redisson's `RFairLock` layout, against real
//! redis-server processes: exclusion, first-come-first-served order, waiters
//! that stop waiting (cancelled, timed out, woken and then cancelled, dead),
//! re-entry, the watchdog, and the keys and channels a Java `RFairLock`
//! shares with it.
//!
//! Timing assertions use wide margins; each proves a mechanism (a waiter
//! woken by a message is far faster than the 30 s lease it beats, ...).
//! Every wait is bounded, so a hang fails the test instead of stalling.

mod common;

use common::{Redis, monitor, ms, within};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The queue of a fair lock (Redisson's name).
fn queue_key(name: &str) -> String {
    format!("redisson_lock_queue:{{{name}}}")
}

/// The waiters' deadlines of a fair lock (Redisson's name).
fn deadlines_key(name: &str) -> String {
    format!("redisson_lock_timeout:{{{name}}}")
}

/// The waiters' handoff offers of a fair lock (redlua's key).
fn handoffs_key(name: &str) -> String {
    format!("{{{name}}}:redlua_handoff")
}

/// The fencing token counter's value (Redisson's key).
async fn token_counter(redis: &Redis, name: &str) -> u64 {
    redis
        .raw()
        .get(format!("redisson_lock_token:{{{name}}}"))
        .await
        .expect("GET")
}

/// The channel a fair lock's waiter is woken on (Redisson's name).
fn waiter_channel(name: &str, owner: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}:{owner}")
}

async fn queue(redis: &Redis, name: &str) -> Vec<String> {
    redis
        .raw()
        .lrange(queue_key(name), 0, -1)
        .await
        .expect("LRANGE")
}

async fn deadlines(redis: &Redis, name: &str) -> Vec<(String, f64)> {
    redis
        .raw()
        .zrange_withscores(deadlines_key(name), 0, -1)
        .await
        .expect("ZRANGE")
}

/// Four clients of `redis`, warmed up on fair lock `name`.
async fn four_warm_clients(redis: &Redis, name: &str) -> Vec<LockClient> {
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(redis.client().await);
    }
    let warm = redis
        .client()
        .await
        .fair_lock(name)
        .lock()
        .await
        .expect("lock");
    warm_up(redis, name, &clients, warm).await;
    clients
}

/// Warms `clients` up on fair lock `name` (pattern subscribed, scripts
/// loaded): each queues once behind `held`, then all take it in turn.
async fn warm_up(redis: &Redis, name: &str, clients: &[LockClient], held: LockGuard) {
    let mut warmers = Vec::new();
    for client in clients {
        let lock = client.fair_lock(name);
        warmers.push(tokio::spawn(async move {
            lock.lock()
                .await
                .expect("lock")
                .unlock()
                .await
                .expect("unlock");
        }));
    }
    queue_reaches(redis, name, clients.len()).await;
    held.unlock().await.expect("unlock");
    for task in warmers {
        within(ms(2000), "warm-up", task).await.expect("warm-up");
    }
}

/// Waits until the queue holds `len` waiters; returns it.
async fn queue_reaches(redis: &Redis, name: &str, len: usize) -> Vec<String> {
    within(ms(5000), "the queue reaching its length", async {
        loop {
            let queue = queue(redis, name).await;
            if queue.len() == len {
                return queue;
            }
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await
}

/// The server's clock, in ms since the epoch.
async fn server_now_ms(redis: &Redis) -> i64 {
    let (secs, micros): (i64, i64) = redis::cmd("TIME")
        .query_async(&mut redis.raw())
        .await
        .expect("TIME");
    secs * 1000 + micros / 1000
}

async fn client_with_wait(redis: &Redis, wait: Duration) -> LockClient {
    LockClient::builder(redis.url())
        .fair_lock_wait_timeout(wait)
        .connect()
        .await
        .expect("connect")
}

/// A waiter in its own task: sends its guard (and when it got it) once it
/// holds the lock.
fn waiter(
    client: &LockClient,
    name: &str,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::oneshot::Receiver<(LockGuard, Instant)>,
) {
    let lock = client.fair_lock(name);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let guard = lock.lock().await.expect("fair lock");
        let _ = tx.send((guard, Instant::now()));
    });
    (task, rx)
}

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

#[tokio::test]
async fn keys_and_channels_are_redissons_and_a_java_waiter_takes_its_turn() {
    let redis = Redis::start().await;
    let name = "fair:interop";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    // A Java waiter, queued as Redisson's RFairLock queues one: behind
    // nobody, deadline = the lease left + the wait time + now.
    let java = "7f3c9a1e-0000-4000-8000-000000000001:58";
    let now = server_now_ms(&redis).await;
    let pttl = redis.pttl(name).await;
    let mut con = redis.raw();
    let _: () = con
        .zadd(deadlines_key(name), java, now + pttl + 300_000)
        .await
        .unwrap();
    let _: () = con.rpush(queue_key(name), java).await.unwrap();
    // A redlua waiter queues behind it.
    let (_b_task, b_rx) = waiter(&b, name);
    let queued = queue_reaches(&redis, name, 2).await;
    assert_eq!(queued[0], java);
    let ours = queued[1].clone();
    assert!(ours.starts_with(b.id()), "{ours}");
    let scores = deadlines(&redis, name).await;
    let java_deadline = scores.iter().find(|(o, _)| o == java).unwrap().1;
    let our_deadline = scores.iter().find(|(o, _)| *o == ours).unwrap().1;
    // Redisson's arithmetic: the one before it plus the wait time (10 s).
    assert_eq!(our_deadline - java_deadline, 10_000.0);
    // Every key written has an expiry.
    assert!(redis.pttl(&queue_key(name)).await > 0);
    assert!(redis.pttl(&deadlines_key(name)).await > 0);
    // The release wakes the head only: Java's channel, message 0.
    let mut to_java = redis.listen(&waiter_channel(name, java)).await;
    let mut to_ours = redis.listen(&waiter_channel(name, &ours)).await;
    let mut to_all = redis
        .listen(&format!("redisson_lock__channel:{{{name}}}"))
        .await;
    held.unlock().await.expect("unlock");
    let (message, _) = to_java.next_within(ms(2000)).await.expect("Java woken");
    assert_eq!(message, "0");
    assert!(to_all.next_within(ms(100)).await.is_none(), "no broadcast");
    assert!(
        to_ours.next_within(ms(100)).await.is_none(),
        "only the head is woken"
    );
    // Java takes the lock as RFairLock does: leaves the queue, moves the
    // others up by the wait time, holds.
    let _: () = con.lpop(queue_key(name), None).await.unwrap();
    let _: () = con.zrem(deadlines_key(name), java).await.unwrap();
    let _: () = con
        .zincr(deadlines_key(name), &ours, -300_000)
        .await
        .unwrap();
    let _: () = con.hset(name, java, 1).await.unwrap();
    let _: () = con.pexpire(name, 30_000).await.unwrap();
    // ... and releases it, waking the new head as RFairLock does.
    let _: () = con.del(name).await.unwrap();
    let _: () = con.publish(waiter_channel(name, &ours), "0").await.unwrap();
    let (message, _) = to_ours.next_within(ms(2000)).await.expect("ours woken");
    assert_eq!(message, "0");
    let (guard, _) = within(ms(1000), "ours acquiring after Java", b_rx)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    guard.unlock().await.expect("unlock");
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

/// Calls per command since the server started (`INFO commandstats`).
async fn command_calls(redis: &Redis) -> std::collections::HashMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .expect("INFO");
    info.lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn steady_contention_costs_three_scripts_per_acquisition_and_no_subscribes() {
    let redis = Redis::start().await;
    let name = "fair:cost";
    // Warm up: every client's pattern subscribed, the scripts loaded.
    let clients = four_warm_clients(&redis, name).await;
    let before = command_calls(&redis).await;
    let rounds = 25;
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                for _ in 0..rounds {
                    let guard = lock.lock().await.expect("lock");
                    tokio::time::sleep(ms(1)).await;
                    guard.unlock().await.expect("unlock");
                }
            }));
        }
    }
    within(ms(30_000), "200 contended acquisitions", async {
        for task in tasks {
            task.await.expect("contender");
        }
    })
    .await;
    let after = command_calls(&redis).await;
    let delta = |command: &str| {
        after.get(command).copied().unwrap_or(0) - before.get(command).copied().unwrap_or(0)
    };
    let acquisitions = (4 * 2 * rounds) as f64;
    let scripts = (delta("evalsha") + delta("eval")) as f64;
    eprintln!(
        "per acquisition: {:.2} scripts; subscribe {}, unsubscribe {}, psubscribe {}, punsubscribe {}",
        scripts / acquisitions,
        delta("subscribe"),
        delta("unsubscribe"),
        delta("psubscribe"),
        delta("punsubscribe"),
    );
    // A failed try that joins the queue, the release that hands the lock
    // over, the new holder's lease extension: three (a little more for the
    // odd retry on a timer).
    assert!(scripts / acquisitions <= 3.1, "{scripts} scripts");
    // Every client's waiters share one pattern, kept between waiters.
    assert_eq!(delta("subscribe"), 0);
    assert_eq!(delta("unsubscribe"), 0);
    assert_eq!(delta("psubscribe"), 0);
    assert_eq!(delta("punsubscribe"), 0);
}

#[tokio::test]
async fn a_client_s_pattern_is_dropped_a_little_after_its_last_waiter() {
    let redis = Redis::start().await;
    let name = "fair:linger";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let (_task, rx) = waiter(&b, name);
    queue_reaches(&redis, name, 1).await;
    let pattern = format!("redisson_lock__channel:{{{name}}}:{}:*", b.id());
    let numpat = || async {
        let n: i64 = redis::cmd("PUBSUB")
            .arg("NUMPAT")
            .query_async(&mut redis.raw())
            .await
            .expect("PUBSUB NUMPAT");
        n
    };
    within(ms(2000), "the pattern subscribed", async {
        while numpat().await != 1 {
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await;
    held.unlock().await.expect("unlock");
    let (guard, _) = within(ms(1000), "the waiter acquiring", rx)
        .await
        .expect("guard");
    guard.unlock().await.expect("unlock");
    // Still there just after, gone within the linger plus a ping interval.
    assert_eq!(numpat().await, 1, "{pattern} kept for the next waiter");
    let gone = Instant::now();
    within(ms(3000), "the pattern unsubscribed", async {
        while numpat().await != 0 {
            tokio::time::sleep(ms(20)).await;
        }
    })
    .await;
    assert!(gone.elapsed() >= ms(300), "{:?}", gone.elapsed());
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

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// Over 2.5 s of steady contention (10 latch-sweep periods, 2 pub/sub ping
/// intervals), the clients send their three scripts per acquisition and
/// nothing else but the replica recount (one `INFO` a second, shared by
/// the clients of the process) and the loss watch's reads of holds that
/// lived past 50 ms: no latch `DEL` (each goes with the next release script), no
/// keep-alive `PING` (messages keep the pub/sub connection proven alive),
/// no subscribe or unsubscribe.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn steady_contention_sends_no_housekeeping_commands() {
    let redis = Redis::start().await;
    let name = "fair:housekeeping";
    let clients = four_warm_clients(&redis, name).await;
    let acquisitions = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            let (acquisitions, stop) = (acquisitions.clone(), stop.clone());
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let guard = lock.lock().await.expect("lock");
                    acquisitions.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(ms(1)).await;
                    guard.unlock().await.expect("unlock");
                }
            }));
        }
    }
    // The warm-up's last latch (its client holds no more) is swept first.
    tokio::time::sleep(ms(500)).await;
    let monitor = monitor(&redis);
    let from = unix_now();
    let first = acquisitions.load(Ordering::Relaxed);
    tokio::time::sleep(ms(2500)).await;
    let to = unix_now();
    let made = acquisitions.load(Ordering::Relaxed) - first;
    stop.store(true, Ordering::Relaxed);
    within(ms(10_000), "the contenders stopping", async {
        for task in tasks {
            task.await.expect("contender");
        }
    })
    .await;
    let seen = monitor.stop(&redis).await;
    let mut commands: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, command, _) in seen.iter().filter(|(t, _, _)| (from..to).contains(t)) {
        *commands.entry(command.clone()).or_default() += 1;
    }
    eprintln!("{made} acquisitions; client commands: {commands:?}");
    assert!(made >= 200, "only {made} acquisitions in 2.5 s");
    let scripts = commands.remove("EVALSHA").unwrap_or(0) as f64;
    // The replica recount (synced mode, no replica): at most one a second,
    // whatever the number of clients (2.5 s: up to 3).
    let recounts = commands.remove("INFO").unwrap_or(0);
    assert!(recounts <= 3, "{recounts} INFO");
    // A sweep every 250 ms and a ping every second per client would be at
    // least 36 DEL and 8 PING here. None is expected; a few are allowed
    // for a machine so busy that a client released nothing for 250 ms or
    // heard nothing for a second.
    let sweeps = commands.remove("DEL").unwrap_or(0);
    let pings = commands.remove("PING").unwrap_or(0);
    assert!(
        sweeps <= 4,
        "{sweeps} latch-sweep DEL under steady contention"
    );
    assert!(
        pings <= 2,
        "{pings} keep-alive PING under steady contention"
    );
    // The loss watch: a tracking connection per client (opened once, with
    // `HELLO` and `CLIENT TRACKING`), and a read of each hold that is still
    // held 50 ms after its acquire (a waiter's wait and the runtime's
    // scheduling can keep one that long here), or whose key changed while
    // it was watched: a small fraction of the acquisitions.
    for opened in ["HELLO", "CLIENT"] {
        let n = commands.remove(opened).unwrap_or(0);
        assert!(
            n <= clients.len(),
            "{n} {opened} for {} clients",
            clients.len()
        );
    }
    let reads = commands.remove("HMGET").unwrap_or(0);
    assert!(
        reads * 3 <= made,
        "{reads} loss-watch reads, {made} acquisitions"
    );
    assert!(
        commands.is_empty(),
        "other commands under steady contention: {commands:?}"
    );
    // Join the queue, take the lock, release it: three (a little more for
    // the odd retry on a timer, and the acquisitions under way at the
    // window's ends).
    assert!(
        scripts / made as f64 <= 3.1,
        "{scripts} scripts, {made} acquisitions"
    );
    // And the latches were deleted all the same (by the next releases, the
    // last ones by the sweep 250 ms later), not left to expire.
    tokio::time::sleep(ms(600)).await;
    let latches: Vec<String> = redis
        .raw()
        .keys("redisson_unlock_latch:*")
        .await
        .expect("KEYS");
    assert!(latches.is_empty(), "latches left: {latches:?}");
}

/// A fair `lock()` of `client`, polled until its owner is in the queue,
/// then left unpolled: it can only learn what Redis did meanwhile when it
/// is polled again. The client's pattern must be warm (see [`warm_up`]).
async fn queued_and_paused(
    redis: &Redis,
    client: &LockClient,
    name: &str,
    queued: usize,
) -> std::pin::Pin<Box<impl std::future::Future<Output = redlua_runtime::Result<LockGuard>>>> {
    let lock = client.fair_lock(name);
    let mut acquire = Box::pin(async move { lock.lock().await });
    tokio::select! {
        _ = &mut acquire => panic!("acquired a held lock"),
        _ = queue_reaches(redis, name, queued) => {}
    }
    acquire
}

/// Client `a` holds fair lock `name`, and client `b`'s acquire of it is
/// queued and paused (see [`queued_and_paused`]), after `b` and `others`
/// were warmed up: the guard, the paused acquire, and `b`'s owner.
async fn held_with_a_paused_waiter(
    redis: &Redis,
    name: &str,
    a: &LockClient,
    b: &LockClient,
    others: &[LockClient],
) -> (
    LockGuard,
    std::pin::Pin<Box<impl std::future::Future<Output = redlua_runtime::Result<LockGuard>>>>,
    String,
) {
    let mut warm = vec![b.clone()];
    warm.extend_from_slice(others);
    warm_up(
        redis,
        name,
        &warm,
        a.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let paused = queued_and_paused(redis, b, name, 1).await;
    let ours = queue(redis, name).await[0].clone();
    assert!(ours.starts_with(b.id()), "{ours}");
    (held, paused, ours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_hands_the_lock_to_a_waiting_redlua_client_which_then_needs_no_try() {
    let redis = Redis::start().await;
    let name = "fair:handoff";
    let (a, b) = (redis.client().await, redis.client().await);
    let (held, paused, ours) = held_with_a_paused_waiter(&redis, name, &a, &b, &[]).await;
    // The waiter offered to take a handoff (expiry: its wait time, 10 s,
    // shorter than its 30 s lease).
    let offers = redis.hgetall(&handoffs_key(name)).await;
    assert_eq!(offers.len(), 1, "{offers:?}");
    assert!(offers[&ours].starts_with("10000:"), "{offers:?}");
    // Like every key redlua writes, the offers expire (with the queue).
    let ttl = redis.pttl(&handoffs_key(name)).await;
    assert!(ttl > 0, "{ttl}");
    held.unlock().await.expect("unlock");
    // The release handed B the lock, though B has done nothing since: B
    // holds it for the handoff's expiry, with the next fencing token, and
    // has left the queue.
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    let pttl = redis.pttl(name).await;
    assert!((9_000..=10_000).contains(&pttl), "{pttl}");
    assert!(queue(&redis, name).await.is_empty());
    assert!(redis.hgetall(&handoffs_key(name)).await.is_empty());
    let token = token_counter(&redis, name).await;
    // Polled again, B returns the guard without another acquire script:
    // the only script it sends extends the lease to its own.
    let monitor = monitor(&redis);
    let guard = within(ms(1000), "the handed-over guard", paused)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    assert_eq!(guard.token(), token);
    within(ms(2000), "the lease extended to 30 s", async {
        while redis.pttl(name).await < 20_000 {
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
    let seen = monitor.stop(&redis).await;
    // Scripts that name B's owner: the lease extension (one lock: `1` key),
    // maybe sent twice (a NOSCRIPT first), and no acquire (seven keys).
    let scripts: Vec<&String> = seen
        .iter()
        .filter(|(_, command, arguments)| {
            command.starts_with("EVAL") && arguments.contains(&format!("\"{ours}\""))
        })
        .map(|(_, _, arguments)| arguments)
        .collect();
    assert!(!scripts.is_empty(), "no extension");
    for script in &scripts {
        let keys = script.split(' ').nth(2);
        assert_eq!(keys, Some("\"1\""), "not the lease extension: {script}");
    }
    let left = guard.valid_until() - std::time::Instant::now();
    assert!(left > ms(25_000), "{left:?}");
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_cancelled_after_it_was_handed_the_lock_passes_it_on_at_once() {
    let redis = Redis::start().await;
    let name = "fair:handoff-cancelled";
    let a = redis.client().await;
    let (b, c) = (redis.client().await, redis.client().await);
    let (held, paused, ours) =
        held_with_a_paused_waiter(&redis, name, &a, &b, std::slice::from_ref(&c)).await;
    let (_c_task, c_rx) = waiter(&c, name);
    queue_reaches(&redis, name, 2).await;
    held.unlock().await.expect("unlock");
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    // B is dropped before it learned it holds the lock: it gives the lock
    // up, and C (next in line) gets it at once, not after the handoff's
    // 10 s expiry.
    let dropped = Instant::now();
    drop(paused);
    let (guard, at) = within(ms(2000), "C after B was dropped", c_rx)
        .await
        .expect("C's guard");
    assert!(at - dropped < ms(1000), "{:?}", at - dropped);
    assert!(guard.owner().to_string().starts_with(c.id()));
    assert_eq!(redis.hget(name, &ours).await, None);
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
    assert!(queue(&redis, name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_whose_handoff_message_was_lost_finds_the_lock_at_its_next_try() {
    let redis = Redis::start().await;
    let name = "fair:handoff-lost";
    let (a, b) = (redis.client().await, redis.client().await);
    let (held, paused, ours) = held_with_a_paused_waiter(&redis, name, &a, &b, &[]).await;
    // B's pub/sub connection is cut before the release: the handoff
    // message reaches nobody.
    let killed: i64 = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "pubsub"])
        .query_async(&mut redis.raw())
        .await
        .expect("CLIENT KILL");
    assert!(killed >= 1, "{killed}");
    held.unlock().await.expect("unlock");
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    // Polled again, B finds its connection lost, tries, and its try finds
    // the lock handed to it: one hold (not a re-entry), the full lease.
    let guard = within(ms(2000), "B after the lost message", paused)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    assert!(redis.pttl(name).await > 25_000);
    let token = token_counter(&redis, name).await;
    assert_eq!(guard.token(), token);
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handoff_message_for_another_try_is_not_taken_as_the_lock() {
    let redis = Redis::start().await;
    let name = "fair:handoff-stale";
    let a = redis.client().await;
    let b = redis.client().await;
    warm_up(
        &redis,
        name,
        std::slice::from_ref(&b),
        a.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let (_task, rx) = waiter(&b, name);
    let ours = queue_reaches(&redis, name, 1).await[0].clone();
    let offer = redis
        .hget(&handoffs_key(name), &ours)
        .await
        .expect("an offer");
    let (_, try_number) = offer.split_once(':').expect("<expiry>:<try>");
    let try_number: u64 = try_number.parse().expect("a try number");
    // A message as a release writes it, but for an earlier try of B (as a
    // late one would be): B wakes, tries, finds the lock held, waits on.
    let _: () = redis
        .raw()
        .publish(
            waiter_channel(name, &ours),
            format!("redlua:handoff:1:{}", try_number - 1),
        )
        .await
        .expect("PUBLISH");
    let mut rx = rx;
    assert!(
        tokio::time::timeout(ms(500), &mut rx).await.is_err(),
        "B took a handoff that answered another try"
    );
    assert_eq!(queue(&redis, name).await, vec![ours.clone()]);
    assert_eq!(redis.hgetall(name).await.len(), 1);
    assert_eq!(redis.hget(name, &ours).await, None);
    held.unlock().await.expect("unlock");
    let (guard, _) = within(ms(2000), "B after the release", rx)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    guard.unlock().await.expect("unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_dropped_around_a_handoff_leave_no_hold_and_no_offer() {
    let redis = Redis::start().await;
    let name = "fair:handoff-abandoned";
    let holder = redis.client().await;
    let others = [redis.client().await, redis.client().await];
    warm_up(
        &redis,
        name,
        &others,
        holder.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    for round in 0..30u64 {
        let held = holder.fair_lock(name).lock().await.expect("lock");
        let mut tasks = Vec::new();
        for (i, client) in others.iter().enumerate() {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                let _guard = lock.lock().await.expect("lock");
                std::future::pending::<()>().await;
            }));
            queue_reaches(&redis, name, i + 1).await;
        }
        // The release hands the lock to the first waiter; both are dropped
        // a little later, wherever they are then (before the message came,
        // while taking it, holding).
        held.unlock().await.expect("unlock");
        tokio::time::sleep(Duration::from_micros(200 * (round % 6))).await;
        for task in &tasks {
            task.abort();
        }
        within(
            ms(2000),
            &format!("round {round}: everything gone"),
            async {
                loop {
                    let mut left = Vec::new();
                    for key in [
                        name.to_string(),
                        queue_key(name),
                        deadlines_key(name),
                        handoffs_key(name),
                    ] {
                        if redis.exists(&key).await {
                            left.push(key);
                        }
                    }
                    if left.is_empty() {
                        break;
                    }
                    tokio::time::sleep(ms(5)).await;
                }
            },
        )
        .await;
    }
}
