//! The semaphore (Redisson's `RSemaphore` layout) against real redis-server
//! processes: taking and giving permits, bad input refused before anything
//! is written, pub/sub wake-ups, exact cancellation (dropped calls, lost
//! replies, a late copy of an abandoned acquire), faults (random
//! cancellation, `CLIENT KILL`, `SIGSTOP`) watched by an observer outside
//! Redis, and interoperability with Redisson's own scripts.

mod cancellation;
#[path = "../common/mod.rs"]
mod common;
mod faults;
mod permits;
#[path = "../redisson/mod.rs"]
mod redisson;
mod redisson_interop;
mod wake_ups;

use common::{Redis, ms};
use redis::AsyncCommands;
use std::time::Duration;
use tokio::time::Instant;

/// The permits available, read with a fresh connection (tests that kill
/// clients kill the raw one too).
async fn available(redis: &Redis, name: &str) -> Option<i64> {
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let value: Option<String> = con.get(name).await.unwrap();
    value.map(|v| v.parse().unwrap())
}

/// Waits until the semaphore holds `expected` permits: what it holds then.
async fn available_becomes(redis: &Redis, name: &str, expected: i64, limit: Duration) -> i64 {
    let deadline = Instant::now() + limit;
    loop {
        let now = available(redis, name).await.unwrap_or(0);
        if now == expected || Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(ms(10)).await;
    }
}
