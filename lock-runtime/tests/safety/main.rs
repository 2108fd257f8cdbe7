//! The safety promises of lock-model.md, each shown against a real
//! redis-server with the faults injected here: exact cancellation,
//! ownership, the lease clock, healing connections, fencing tokens, and bad
//! input refused before anything is written.

mod bad_input;
mod cancellation;
#[path = "../common/mod.rs"]
mod common;
mod connections;
mod fencing;
mod lease_clock;
mod ownership;

use redlua_runtime::{Error, LockClient, LockGuard};
use std::time::Instant;

/// A task waiting for `name` on `client`: its guard and when it got it.
fn spawn_waiter(
    client: &LockClient,
    name: &str,
) -> tokio::task::JoinHandle<Result<(LockGuard, Instant), Error>> {
    let lock = client.lock(name);
    tokio::spawn(async move { lock.lock().await.map(|g| (g, Instant::now())) })
}
