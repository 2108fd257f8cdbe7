//! The read/write lock against real redis-server processes: shared readers,
//! exclusive writers, explicit re-entry and the Redis layout, fencing
//! tokens, downgrade and the refused upgrade, wake-ups, zombie readers, the
//! watchdog, writer preference, the lost signal, force release, keys that
//! are not read/write locks, lease limits, cancellation, and
//! interoperability with Redisson's own read/write lock scripts.
//!
//! Every acquire is a new owner (`<client-uuid>:<n>`); re-entry goes through
//! a guard or its [`Owner`]. Every acquire of a new holder advances the
//! fencing token counter `redisson_lock_token:{name}`, which outlives the
//! lock by an hour: a lock that is free again leaves exactly that key.
//!
//! Timing assertions use wide margins; each proves a mechanism (a pub/sub
//! wake-up is far faster than the 30 s lease it beats, readers that overlap
//! finish in a fraction of the time they would take one after the other,
//! ...). Every wait is bounded, so a hang fails the test instead of stalling
//! the suite.

/// Asserts that `result` is the error `pattern` (with an optional guard).
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)?) => {
        assert_err!($result, $pattern $(if $guard)?, "")
    };
    ($result:expr, $pattern:pat $(if $guard:expr)?, $($context:tt)+) => {
        match $result {
            Err($pattern) $(if $guard)? => {}
            other => panic!(
                "{}: expected Err({}), got {other:?}",
                format_args!($($context)+),
                stringify!($pattern),
            ),
        }
    };
}

mod bad_input;
mod cancellation;
#[path = "../common/mod.rs"]
mod common;
mod downgrade;
mod exclusion;
mod leases;
#[path = "../redisson/mod.rs"]
mod redisson;
mod redisson_interop;
mod reentry;
mod release;
mod writer_preference;

use common::{Redis, ms, within};
use redisson::{attempt_key, token_key};
use redlua_runtime::flavor::LockFlavor;
use redlua_runtime::{Lock, LockGuard, LockInfo, Side};
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The mark a waiting writer leaves on a writer-preferring lock.
fn writer_mark(name: &str) -> String {
    format!("{{{name}}}:redlua_writer_waiting")
}

/// Whether `key` is an attempt key of the lock `name`.
fn is_attempt(name: &str, key: &str) -> bool {
    key.starts_with(&format!("{{{name}}}:redlua_attempt:"))
}

/// `keys` without the attempt keys of the lock `name`, and those.
fn split_attempts(name: &str, keys: Vec<String>) -> (Vec<String>, Vec<String>) {
    keys.into_iter().partition(|key| !is_attempt(name, key))
}

/// The one re-entry record of `owner` among `keys`
/// (`{name}:redlua_attempt:<owner>:<n>`); panics unless there is exactly one.
fn reentry_record(name: &str, owner: &str, keys: &[String]) -> String {
    let prefix = format!("{}:", attempt_key(name, owner));
    let records: Vec<&String> = keys
        .iter()
        .filter(|key| {
            key.strip_prefix(&prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    assert_eq!(records.len(), 1, "re-entry records of {owner}: {keys:?}");
    records[0].clone()
}

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    keys.sort();
    keys
}

/// What a free read/write lock leaves behind: its token counter.
fn only_token(name: &str) -> Vec<String> {
    vec![token_key(name)]
}

/// A lock's holders as (owner, side, count), sorted (read before write).
fn holders(info: &LockInfo) -> Vec<(String, Side, u64)> {
    let rank = |side: Side| match side {
        Side::Exclusive => 0,
        Side::Read => 1,
        Side::Write => 2,
    };
    let mut holders: Vec<(String, Side, u64)> = info
        .holders
        .iter()
        .map(|h| (h.owner.clone(), h.side, h.count))
        .collect();
    holders.sort_by(|a, b| (&a.0, rank(a.1)).cmp(&(&b.0, rank(b.1))));
    holders
}

/// Waits until the database holds exactly `expected` (sorted); returns what
/// it holds at the end (`expected` unless `limit` passed first).
async fn keys_become(redis: &Redis, expected: &[String], limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let keys = redis.keys().await;
        if keys == expected || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// Every key in the database once the releases' latches
/// (`redisson_unlock_latch:{name}:<request-id>`, which a release keeps for
/// its retries and the client deletes in the background once it has its
/// reply) are gone, or after 1 s with whatever is left.
async fn settled_keys(redis: &Redis) -> Vec<String> {
    let deadline = Instant::now() + ms(1000);
    loop {
        let keys = redis.keys().await;
        if !keys.iter().any(|k| k.starts_with("redisson_unlock_latch:"))
            || Instant::now() >= deadline
        {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// A task that waits for `lock` (a new owner) and reports when it got it,
/// with the guard.
fn spawn_locker<F: LockFlavor>(lock: &Lock<F>) -> JoinHandle<(Instant, LockGuard)> {
    let lock = lock.clone();
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("waiter's lock()");
        (Instant::now(), guard)
    })
}

/// Waits for a locker task (at most `limit`).
async fn join_locker(
    task: JoinHandle<(Instant, LockGuard)>,
    limit: Duration,
) -> (Instant, LockGuard) {
    within(limit, "the waiter", task)
        .await
        .expect("waiter task")
}
