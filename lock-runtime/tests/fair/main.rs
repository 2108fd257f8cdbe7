//! The fair (FIFO) lock, Redisson's `RFairLock` layout, against real
//! redis-server processes: exclusion, first-come-first-served order, waiters
//! that stop waiting (cancelled, timed out, woken and then cancelled, dead),
//! re-entry, the watchdog, and the keys and channels a Java `RFairLock`
//! shares with it.
//!
//! Timing assertions use wide margins; each proves a mechanism (a waiter
//! woken by a message is far faster than the 30 s lease it beats, ...).
//! Every wait is bounded, so a hang fails the test instead of stalling.

mod commands;
#[path = "../common/mod.rs"]
mod common;
mod handoff;
mod leaving_waiters;
mod order;
mod redisson_interop;

use common::{Redis, ms, within};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard};
use tokio::time::Instant;

/// The queue of a fair lock (Redisson's name).
fn queue_key(name: &str) -> String {
    format!("redisson_lock_queue:{{{name}}}")
}

/// The waiters' deadlines of a fair lock (Redisson's name).
fn deadlines_key(name: &str) -> String {
    format!("redisson_lock_timeout:{{{name}}}")
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
