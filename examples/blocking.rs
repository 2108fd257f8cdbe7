//! Locks in a sync program, with no tokio runtime of its own: worker threads
//! take turns on one lock, and a holder stays in blocking code for several
//! lease periods while the client's own thread renews its lease.
//!
//! ```sh
//! cargo run --example blocking                               # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ cargo run --example blocking
//! ```

use redlua::blocking::LockClient;
use std::thread;
use std::time::{Duration, Instant};

fn main() -> Result<(), redlua::Error> {
    // Keep the throwaway server alive until the end of `main`.
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let start = Instant::now();
    let at = move || format!("{:>5} ms", start.elapsed().as_millis());

    // 1. Four threads share one client and take turns on one lock.
    let client = LockClient::builder(url.as_str())
        .watchdog_timeout(Duration::from_secs(1))
        .connect()?;
    println!("\n4 threads take turns on lock `example:blocking`:");
    let workers: Vec<_> = (0..4)
        .map(|n| {
            let lock = client.lock("example:blocking");
            thread::spawn(move || -> Result<(), redlua::Error> {
                let guard = lock.lock()?;
                println!("  {} thread {n} holds it (token {})", at(), guard.token());
                thread::sleep(Duration::from_millis(50));
                guard.unlock()
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker panicked")?;
    }

    // 2. A holder blocked for 3.5 lease periods keeps the lock: the client's
    //    thread renews it. Another client cannot take it meanwhile.
    let lock = client.lock("example:blocking");
    let guard = lock.lock()?;
    println!(
        "\n{} holding it with a 1 s lease, then sleeping 3.5 s in blocking code",
        at()
    );
    thread::sleep(Duration::from_millis(3_500));
    let other = LockClient::connect(url.as_str())?;
    let stolen = other.lock("example:blocking").try_lock()?;
    println!(
        "  {} another client's try_lock: {}; still ours: {}; valid for another {:?}",
        at(),
        if stolen.is_some() {
            "got it (!)"
        } else {
            "busy"
        },
        !guard.is_lost(),
        guard
            .valid_until()
            .saturating_duration_since(Instant::now()),
    );

    // 3. Guards release when dropped (the drop waits for Redis's answer).
    drop(guard);
    println!("  {} dropped; locked now: {}", at(), lock.is_locked()?);
    Ok(())
}
