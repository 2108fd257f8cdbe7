//! A semaphore of permits owned by no one (Redisson's `RSemaphore`): a
//! producer refills a pool of API-call tokens every 200 ms, and workers on
//! two clients spend them, waiting (woken through pub/sub) when the pool
//! is empty.
//!
//! ```sh
//! cargo run --example semaphore                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example semaphore
//! ```

use redlua::LockClient;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), redlua::Error> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let start = Instant::now();
    let producer = LockClient::connect(url.as_str()).await?;
    let tokens = producer.semaphore("example:api-tokens");
    tokens.set_permits(3).await?;
    println!("the pool starts with {} tokens", tokens.available().await?);

    // Two clients, three workers each, six calls per worker.
    let mut workers = Vec::new();
    for c in 0..2 {
        let client = LockClient::connect(url.as_str()).await?;
        for w in 0..3 {
            let tokens = client.semaphore("example:api-tokens");
            workers.push(tokio::spawn(async move {
                for call in 0..6 {
                    tokens.acquire(1).await?; // spent: nobody gives it back
                    println!(
                        "{:>5} ms  client {c} worker {w}: call {call}",
                        start.elapsed().as_millis()
                    );
                }
                Ok::<_, redlua::Error>(())
            }));
        }
    }
    // The producer adds 3 tokens every 200 ms: 36 calls take 12 refills.
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        tokens.release(3).await?;
    }
    for worker in workers {
        worker.await.expect("a worker")?;
    }
    println!(
        "36 calls in {} ms; {} tokens left",
        start.elapsed().as_millis(),
        tokens.available().await?
    );
    Ok(())
}
