//! Leases and the watchdog: renewals, fixed leases ending, a lock lost, a killed holder process.

use super::{join_waiter, map, spawn_waiter};
use crate::common::{Redis, ms, within};
use redlua_runtime::{Error, LockClient};
use std::io::BufRead;
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_keeps_a_lock_past_its_timeout_and_fixed_leases_expire() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    assert_eq!(client.watchdog_timeout(), ms(600));
    let lock = client.lock("wd");
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().to_string();
    let first_valid_until = guard.valid_until();
    let ttl = redis.pttl("wd").await;
    assert!(
        ttl > 0 && ttl <= 600,
        "the watchdog lease is its timeout: {ttl}"
    );

    // A fixed lease taken meanwhile on the same client is not renewed.
    let fixed = client.lock("fixed");
    let fixed_guard = fixed.lock_with_lease(ms(300)).await.unwrap();
    let fixed_at = Instant::now();
    assert!(!fixed_guard.is_lost());

    let started = Instant::now();
    let mut lowest = i64::MAX;
    while started.elapsed() < ms(2000) {
        let ttl = redis.pttl("wd").await;
        lowest = lowest.min(ttl);
        assert!(
            ttl > 0,
            "the watchdog let the lock expire after {:?}",
            started.elapsed()
        );
        assert!(ttl <= 600, "pttl {ttl}");
        assert!(!guard.is_lost());
        assert!(guard.valid_until() > std::time::Instant::now());
        assert_eq!(redis.hget("wd", &owner).await.as_deref(), Some("1"));
        if fixed_at.elapsed() > ms(600) {
            assert!(
                !fixed.is_locked().await.unwrap(),
                "a fixed lease was renewed"
            );
            assert!(fixed_guard.is_lost());
        }
        tokio::time::sleep(ms(50)).await;
    }
    assert!(lowest > 0, "{lowest}");
    // Confirmed renewals moved the lease clock: 2 s later it is well past
    // where the acquire alone put it.
    assert!(
        guard.valid_until() > first_valid_until + ms(1000),
        "renewals did not move the lease clock: {:?}",
        guard
            .valid_until()
            .saturating_duration_since(first_valid_until)
    );
    // lost() of the fixed lease completed long ago: it returns at once.
    within(ms(100), "lost() of an expired lease", fixed_guard.lost()).await;
    match fixed_guard.unlock().await {
        Err(Error::LockLost { name }) => assert_eq!(name, "fixed"),
        other => panic!("expected LockLost, got {other:?}"),
    }
    guard.unlock().await.unwrap();
    assert!(!redis.exists("wd").await);
}

#[tokio::test]
async fn fixed_lease_lost_future_completes_when_the_lease_ends() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("lease");
    let before = std::time::Instant::now();
    let guard = lock.lock_with_lease(ms(300)).await.unwrap();
    let after = std::time::Instant::now();
    // The lease clock runs from the acquire's send, minus 1% + 2 ms.
    let drift = ms(3 + 2);
    assert!(
        guard.valid_until() >= before + ms(300) - drift
            && guard.valid_until() <= after + ms(300) - drift,
        "valid_until is {:?} after the call started, which took {:?}",
        guard.valid_until() - before,
        after - before
    );
    assert!(!guard.is_lost());
    within(ms(2000), "lost() of a 300 ms lease", guard.lost()).await;
    let now = std::time::Instant::now();
    assert!(
        now >= guard.valid_until(),
        "lost() completed {:?} before the lease clock ran out",
        guard.valid_until() - now
    );
    assert!(guard.is_lost());
    tokio::time::sleep(ms(300)).await;
    assert!(!lock.is_locked().await.unwrap());
    assert!(guard.is_lost());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_notices_a_deleted_lock_and_reports_it_lost() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("deleted");
    let guard = lock.lock().await.unwrap();
    assert!(
        tokio::time::timeout(ms(900), guard.lost()).await.is_err(),
        "lost() completed while the lock was held"
    );
    assert!(!guard.is_lost());
    assert!(redis.del("deleted").await);
    let deleted = Instant::now();
    within(ms(2000), "lost() after DEL", guard.lost()).await;
    assert!(guard.is_lost());
    assert!(deleted.elapsed() < ms(2000));
    match guard.unlock().await {
        Err(Error::LockLost { name }) => assert_eq!(name, "deleted"),
        other => panic!("expected LockLost, got {other:?}"),
    }

    // A new hold of the same lock starts clean.
    let guard = lock.lock().await.unwrap();
    assert!(!guard.is_lost());
    tokio::time::sleep(ms(800)).await;
    assert!(!guard.is_lost(), "the earlier loss leaked into a new hold");
    assert!(redis.pttl("deleted").await > 0);
    guard.unlock().await.unwrap();
    assert!(!redis.exists("deleted").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_notices_a_lock_taken_over() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("taken-over");
    let guard = lock.lock().await.unwrap();
    let intruder = "0b6d7e3c-5d8f-4f49-9c55-1d1f6b0a2c33:1";
    let _: () = redis::pipe()
        .atomic()
        .del("taken-over")
        .hset("taken-over", intruder, 1)
        .pexpire("taken-over", 30_000)
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    within(ms(2000), "lost() after a takeover", guard.lost()).await;
    let result = guard.unlock().await;
    assert!(
        matches!(result, Err(Error::NotOwner { .. })),
        "expected NotOwner, got {result:?}"
    );
    assert_eq!(redis.hgetall("taken-over").await, map(&[(intruder, "1")]));
    let ttl = redis.pttl("taken-over").await;
    assert!(ttl > 29_000, "the intruder's lease was touched: {ttl}");
}

/// Set in the environment of the child process that
/// [`holder_process_killed_frees_the_lock_after_its_lease`] starts (this very
/// test binary): its value is the Redis URL to hold the lock on.
const CHILD_ENV: &str = "REDLUA_TEST_KILLED_HOLDER_URL";

const KILLED_LOCK: &str = "killed";

/// Kills the child process when dropped (the test failing included).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holder_process_killed_frees_the_lock_after_its_lease() {
    if let Ok(url) = std::env::var(CHILD_ENV) {
        // The child: hold the lock with a 600 ms watchdog, say so, and wait
        // to be killed.
        let client = LockClient::builder(url)
            .watchdog_timeout(ms(600))
            .connect()
            .await
            .expect("child connect");
        let guard = client.lock(KILLED_LOCK).lock().await.expect("child lock");
        println!("REDLUA_CHILD_HELD {} {}", guard.owner(), guard.token());
        // Killed long before; the limit only spares an orphan if the
        // parent itself was killed.
        tokio::time::sleep(Duration::from_secs(60)).await;
        std::process::exit(1);
    }

    let redis = Redis::start().await;
    let exe = std::env::current_exe().unwrap();
    let mut child = KillOnDrop(
        std::process::Command::new(exe)
            .args([
                "lease::holder_process_killed_frees_the_lock_after_its_lease",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, redis.url())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("spawning the holder process"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (child_owner, child_token) = within(
        Duration::from_secs(30),
        "the child process taking the lock",
        tokio::task::spawn_blocking(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let line = line.expect("child stdout");
                // libtest prints "test <name> ... " on the same line first.
                if let Some((_, held)) = line.split_once("REDLUA_CHILD_HELD ") {
                    let (owner, token) = held.trim().split_once(' ').expect("owner and token");
                    return (owner.to_string(), token.parse::<u64>().expect("a token"));
                }
            }
            panic!("the child exited without taking the lock");
        }),
    )
    .await
    .unwrap();
    assert_eq!(
        redis.hgetall(KILLED_LOCK).await,
        map(&[(&child_owner, "1")])
    );

    // A waiter in this process, on a client with the default 30 s watchdog.
    let client = redis.client().await;
    let waiter = spawn_waiter(&client.lock(KILLED_LOCK));

    // The child's watchdog keeps its 600 ms lease alive.
    tokio::time::sleep(ms(1500)).await;
    let ttl = redis.pttl(KILLED_LOCK).await;
    assert!(
        ttl > 0 && ttl <= 600,
        "the child's lease was not renewed: {ttl}"
    );
    assert!(
        !waiter.is_finished(),
        "the waiter got a lock the child holds"
    );

    // SIGKILL: no release, no renewal.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let killed = Instant::now();
    assert_eq!(
        redis.hget(KILLED_LOCK, &child_owner).await.as_deref(),
        Some("1"),
        "the lock must outlive its holder until the lease ends"
    );
    let (acquired, guard, waiter_owner) = join_waiter(waiter, Duration::from_secs(5)).await;
    let after = acquired.duration_since(killed);
    assert!(
        after < ms(1500),
        "the lock was free {after:?} after the kill (lease 600 ms)"
    );
    assert_eq!(
        redis.hgetall(KILLED_LOCK).await,
        map(&[(&waiter_owner, "1")])
    );
    assert!(
        guard.token() > child_token,
        "the next holder's fencing token is not above the killed one's"
    );
    guard.unlock().await.unwrap();
}
