//! A typed script on a blocking connection: what a scripts-only build
//! (`redlua = { version = "0.1", default-features = false }`, no async
//! runtime) runs.
//!
//! ```sh
//! cargo run --example scripts_blocking --no-default-features   # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example scripts_blocking --no-default-features
//! ```
//!
//! With `REDIS_URL` set, the example writes the key `example:visits` there.
//! Otherwise it starts a private `redis-server` on a free loopback port and
//! stops it at the end.

use redlua::redis;
use redlua::redis_script;

/// Adds to a counter that expires.
#[redis_script("scripts/counter.lua", returns = i64)]
struct Count<'a> {
    /// The counter.
    #[key]
    counter: &'a str,
    /// How much to add.
    #[arg]
    by: i64,
    /// Seconds until the counter expires.
    #[arg]
    ttl_secs: u64,
}

fn main() -> redis::RedisResult<()> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let mut con = redis::Client::open(url)?.get_connection()?;
    for _ in 0..3 {
        let count = Count {
            counter: "example:visits",
            by: 1,
            ttl_secs: 60,
        };
        let visits = count.invoke_blocking(&mut con)?;
        println!("{visits} visits in the last minute");
    }
    Ok(())
}
