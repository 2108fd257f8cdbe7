//! Distributed locks with redlua: several workers contend for one lock (each
//! acquire a new holder, with a fencing token that grows with every holder),
//! and one long hold outlives its lease because the watchdog renews it.
//!
//! ```sh
//! cargo run --example quickstart                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example quickstart
//! ```
//!
//! The locks are stored as Redisson stores them: a Java service locking
//! `example:report` with Redisson would wait its turn too.

use redlua::LockClient;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), redlua::Error> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let start = Instant::now();
    let at = move || format!("{:>5} ms", start.elapsed().as_millis());

    // 1. Three processes' worth of clients, four workers each, one lock.
    println!("\n12 workers on 3 clients take turns on lock `example:report`:");
    let mut workers = Vec::new();
    for c in 0..3 {
        let client = LockClient::connect(url.as_str()).await?;
        for w in 0..4 {
            let client = client.clone();
            workers.push(tokio::spawn(async move {
                let lock = client.lock("example:report");
                let guard = lock.lock().await?;
                println!(
                    "  {} client {c} worker {w} holds it (owner {}, fencing token {})",
                    at(),
                    guard.owner(),
                    guard.token()
                );
                tokio::time::sleep(Duration::from_millis(40)).await;
                guard.unlock().await
            }));
        }
    }
    for worker in workers {
        worker.await.expect("worker panicked")?;
    }

    // 2. A hold longer than its lease: the watchdog keeps renewing it.
    let client = LockClient::builder(url.as_str())
        .watchdog_timeout(Duration::from_millis(900))
        .connect()
        .await?;
    let lock = client.lock("example:nightly-job");
    println!(
        "\nA 3 s job under `example:nightly-job`, with a lease of {:?} renewed every {:?}:",
        client.watchdog_timeout(),
        client.watchdog_timeout() / 3
    );
    let guard = lock.lock().await?;
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let ttl = lock.remaining_ttl().await?.unwrap_or_default();
        println!(
            "  {} still held, lease left {:>3} ms, lost: {}",
            at(),
            ttl.as_millis(),
            guard.is_lost()
        );
    }
    guard.unlock().await?;
    println!(
        "  {} released; locked now: {}",
        at(),
        lock.is_locked().await?
    );
    Ok(())
}
