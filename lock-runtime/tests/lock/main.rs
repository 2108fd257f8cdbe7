//! The reentrant lock against real redis-server processes: exclusion (every
//! acquire is a new owner), explicit re-entry, leases, the lease clock and
//! the watchdog, fencing tokens, wake-ups, releases that go wrong,
//! cancellation, and interoperability with Redisson's own scripts.
//!
//! Timing assertions use wide margins; each proves a mechanism (a pub/sub
//! wake-up is far faster than the 30 s lease it beats, a renewal keeps a lock
//! several times past its lease, ...). Every wait is bounded, so a hang fails
//! the test instead of stalling the suite.

mod bad_input;
mod cancellation;
#[path = "../common/mod.rs"]
mod common;
mod connection;
mod exclusion;
mod lease;
#[path = "../redisson/mod.rs"]
mod redisson;
mod redisson_interop;
mod release;
mod waiting;

use common::{Redis, ms, within};
use redlua_runtime::{LockGuard, LockInfo, Side};
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The holders of a lock as (owner, side, count).
fn holders(info: &LockInfo) -> Vec<(String, Side, u64)> {
    info.holders
        .iter()
        .map(|h| (h.owner.clone(), h.side, h.count))
        .collect()
}

/// Waits until the database holds exactly `expected` (a release's latch is
/// deleted in the background, within about 250 ms); returns what it holds
/// in the end, sorted.
async fn keys_become(redis: &Redis, expected: &[String], limit: Duration) -> Vec<String> {
    let mut expected = expected.to_vec();
    expected.sort();
    let deadline = Instant::now() + limit;
    loop {
        let keys = redis.keys().await;
        if keys == expected || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// A task that waits for `lock` and reports when it got it, and as whom.
fn spawn_waiter(
    lock: &redlua_runtime::Lock,
) -> tokio::task::JoinHandle<(Instant, LockGuard, String)> {
    let lock = lock.clone();
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("waiter's lock()");
        let owner = guard.owner().to_string();
        (Instant::now(), guard, owner)
    })
}

/// Waits for a waiter task (at most `limit`).
async fn join_waiter(
    waiter: tokio::task::JoinHandle<(Instant, LockGuard, String)>,
    limit: Duration,
) -> (Instant, LockGuard, String) {
    within(limit, "the waiter", waiter)
        .await
        .expect("waiter task")
}
