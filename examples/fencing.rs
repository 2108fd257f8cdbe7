//! Fencing tokens: a holder paused past its lease writes late, and the
//! resource refuses it.
//!
//! ```sh
//! cargo run --example fencing                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example fencing
//! ```
//!
//! Worker A takes the lock with a 300 ms lease and then stalls for 600 ms
//! (think of a GC pause, swap, or `SIGSTOP`). Meanwhile the lease ends and
//! worker B takes the lock and writes. When A wakes up it writes too — with
//! its older fencing token, which the resource (`FencedSet`, a typed script
//! that keeps the highest token it has seen) refuses.

use redlua::LockClient;
use redlua::fencing::FencedSet;
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let a = LockClient::connect(url.as_str()).await?;
    let b = LockClient::connect(url.as_str()).await?;
    let mut con = redlua::redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection()
        .await?;
    let write = |token: u64, value: &'static str| FencedSet {
        resource: "example:report:body",
        fence: "example:report:fence",
        token,
        value,
    };

    let held_by_a = a
        .lock("example:report")
        .lock_with_lease(Duration::from_millis(300))
        .await?;
    println!("A holds the lock with token {}", held_by_a.token());
    println!("A stalls for 600 ms...");
    tokio::time::sleep(Duration::from_millis(600)).await;

    let held_by_b = b.lock("example:report").lock().await?;
    println!("B holds the lock with token {}", held_by_b.token());
    let written = write(held_by_b.token(), "B's report")
        .invoke(&mut con)
        .await?;
    println!(
        "B writes: {}",
        if written == 1 { "accepted" } else { "refused" }
    );

    println!("A wakes up; its guard says lost: {}", held_by_a.is_lost());
    let written = write(held_by_a.token(), "A's stale report")
        .invoke(&mut con)
        .await?;
    println!(
        "A writes anyway: {}",
        if written == 1 {
            "accepted"
        } else {
            "refused (stale token)"
        }
    );
    let body: String = redlua::redis::AsyncCommands::get(&mut con, "example:report:body").await?;
    println!("the resource holds: {body:?}");
    held_by_b.unlock().await?;
    drop(held_by_a);
    Ok(())
}
