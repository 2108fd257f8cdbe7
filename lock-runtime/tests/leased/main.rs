//! The leased semaphore (Redisson's `RPermitExpirableSemaphore` layout)
//! against real redis-server processes: permits with ids, leases and
//! fencing tokens; the watchdog; expiry bringing a permit back exactly
//! once and the guard saying lost first; a permit taken away; pool changes
//! while permits are held; exact cancellation, and a woken waiter's
//! wake-up passed on; a release's latch answering its retry after a lost
//! reply; renewal in the watchdog's batches; faults watched by an observer
//! outside Redis; interoperability with Redisson's own scripts.

mod cancellation;
#[path = "../common/mod.rs"]
mod common;
mod faults;
mod leases;
mod permits;
#[path = "../redisson/mod.rs"]
mod redisson;
mod redisson_interop;

use common::{Redis, ms};
use redis::AsyncCommands;
use redisson::leased_timeouts;
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
