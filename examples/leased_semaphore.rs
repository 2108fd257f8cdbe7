//! A leased semaphore (Redisson's `RPermitExpirableSemaphore`): at most 2
//! encoders at once across processes. One holder "crashes" (its guard is
//! leaked, never released): its permit comes back when its lease ends, and
//! a waiter gets it. Another holder stalls past its lease and learns it
//! from its guard before doing more work.
//!
//! ```sh
//! cargo run --example leased_semaphore                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example leased_semaphore
//! ```

use redlua::LockClient;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), redlua::Error> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let start = Instant::now();
    let at = move || format!("{:>5} ms", start.elapsed().as_millis());
    let client = LockClient::connect(url.as_str()).await?;
    let encoders = client.leased_semaphore("example:encoders");
    encoders.set_permits(2).await?;

    // A holder that crashes: a fixed lease of 500 ms, never released.
    let crashed = encoders
        .acquire_with_lease(1, Duration::from_millis(500))
        .await?;
    println!(
        "{} the crashing holder took permit {}",
        at(),
        crashed.ids()[0]
    );
    std::mem::forget(crashed); // as if its process died

    // A holder that stalls past its 300 ms lease.
    let stalled = encoders
        .acquire_with_lease(1, Duration::from_millis(300))
        .await?;
    println!(
        "{} the stalling holder took token {}",
        at(),
        stalled.token()
    );

    // A waiter: woken when the first permit's lease ends.
    let waiter = tokio::spawn({
        let encoders = encoders.clone();
        async move {
            let permit = encoders.acquire(1).await?; // watchdog lease
            println!(
                "{} the waiter got a permit (token {}), renewed until released",
                at(),
                permit.token()
            );
            tokio::time::sleep(Duration::from_millis(800)).await;
            println!(
                "{} the waiter still holds it: lost = {}",
                at(),
                permit.is_lost()
            );
            permit.release().await
        }
    });

    tokio::time::sleep(Duration::from_millis(400)).await;
    if stalled.is_lost() {
        println!(
            "{} the stalling holder knows its lease ended: it stops",
            at()
        );
    }
    match stalled.release().await {
        Err(redlua::Error::LockLost { .. }) => {
            println!("{} its late release gave nothing back twice", at())
        }
        other => println!("{} release: {other:?}", at()),
    }
    waiter.await.expect("the waiter")?;
    println!(
        "{} {} permits available, {} taken",
        at(),
        encoders.available().await?,
        encoders.holders().await?.len()
    );
    Ok(())
}
