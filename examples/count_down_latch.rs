//! A count-down latch (Redisson's `RCountDownLatch`): a coordinator waits
//! until three workers on other clients are done; the last count-down
//! wakes it (and every other waiter) through pub/sub.
//!
//! ```sh
//! cargo run --example count_down_latch                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example count_down_latch
//! ```

use redlua::LockClient;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), redlua::Error> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let start = Instant::now();
    let coordinator = LockClient::connect(url.as_str()).await?;
    let shards = coordinator.count_down_latch("example:reindex");
    shards.try_set_count(3).await?;

    for shard in 0..3u64 {
        let client = LockClient::connect(url.as_str()).await?;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200 * (shard + 1))).await;
            let left = client
                .count_down_latch("example:reindex")
                .count_down()
                .await?;
            println!(
                "{:>5} ms  shard {shard} done, {left} to go",
                start.elapsed().as_millis()
            );
            Ok::<_, redlua::Error>(())
        });
    }
    shards.wait().await?;
    println!(
        "{:>5} ms  every shard is done: the coordinator goes on",
        start.elapsed().as_millis()
    );
    Ok(())
}
