//! Typed, compile-time checked Redis Lua scripts in a few lines.
//!
//! ```sh
//! cargo run --example scripts                                   # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example scripts
//! ```
//!
//! With `REDIS_URL` set, the example writes the keys `example:*` there.
//! Otherwise it starts a private `redis-server` on a free loopback port and
//! stops it at the end.

use redlua::redis;
use redlua::redis_script;

/// Fixed-window rate limiter: at most `limit` calls per `window_secs`.
#[redis_script("scripts/rate_limit.lua", returns = (i64, i64, i64))]
struct RateLimit<'a> {
    /// Counter of the caller's current window.
    #[key]
    bucket: &'a str,
    /// Calls allowed per window.
    #[arg]
    limit: u32,
    /// Window length, in seconds.
    #[arg]
    window_secs: u32,
}

/// Sums counters (read-only: its shebang says `flags=no-writes`).
#[redis_script("scripts/sum.lua", returns = i64)]
struct Sum<'a> {
    /// The counters, any number of them.
    #[key(variadic)]
    counters: Vec<&'a str>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> redis::RedisResult<()> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let mut con = redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?;

    println!(
        "\nRateLimit runs scripts/rate_limit.lua (SHA1 {}):",
        RateLimit::SHA1
    );
    for call in 1..=6 {
        let limiter = RateLimit {
            bucket: "example:alice",
            limit: 4,
            window_secs: 10,
        };
        let (allowed, left, reset) = limiter.invoke(&mut con).await?;
        let verdict = if allowed == 1 { "allowed" } else { "refused" };
        println!("  call {call}: {verdict:7}  ({left} left, window resets in {reset}s)");
    }

    let () = redis::cmd("SET")
        .arg("example:a")
        .arg(40)
        .query_async(&mut con)
        .await?;
    let () = redis::cmd("SET")
        .arg("example:b")
        .arg(2)
        .query_async(&mut con)
        .await?;
    let sum = Sum {
        counters: vec!["example:a", "example:b", "example:none"],
    };
    let total = sum.invoke(&mut con).await?;
    let command = if Sum::SCRIPT.read_only {
        "EVALSHA_RO"
    } else {
        "EVALSHA"
    };
    println!("\nSum of {:?} with {command}: {total}", sum.counters);
    Ok(())
}
