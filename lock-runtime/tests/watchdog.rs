//! The watchdog's mechanism: one batched renewal per round for all of a
//! client's holds, no renewal once nothing is held, and renewal that goes on
//! after Redis errors.

mod common;

use common::Redis;
use redis::AsyncCommands;
use std::time::Duration;

/// The `calls=` of `cmdstat_<command>` in INFO commandstats (0 if absent).
async fn calls(redis: &Redis, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

async fn reset_stats(redis: &Redis) {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_renewal_call_per_hundred_locks_and_none_when_idle() {
    let redis = Redis::start().await;
    // Rounds every 200 ms.
    let client = redis.client_with_watchdog(Duration::from_millis(600)).await;
    let mut guards = Vec::new();
    for i in 0..150 {
        guards.push(client.lock(&format!("batch:{i}")).lock().await.unwrap());
    }
    let first_valid_until: Vec<_> = guards.iter().map(|g| g.valid_until()).collect();
    reset_stats(&redis).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let renewals = calls(&redis, "evalsha").await;
    // About 5 rounds of 2 calls (100 + 50 locks). A timer per lock would
    // make 150 calls a round.
    assert!(
        (4..=16).contains(&renewals),
        "{renewals} renewal calls in 1 s for 150 locks"
    );
    for i in 0..150 {
        let ttl = redis.pttl(&format!("batch:{i}")).await;
        assert!(ttl > 0 && ttl <= 600, "batch:{i} ttl {ttl}");
    }
    assert!(guards.iter().all(|g| !g.is_lost()));
    // Every confirmed renewal moved its hold's lease clock forward.
    for (i, (guard, first)) in guards.iter().zip(&first_valid_until).enumerate() {
        assert!(
            guard.valid_until() >= *first + Duration::from_millis(500),
            "batch:{i}: the lease clock moved {:?} in 1 s of renewals",
            guard.valid_until().saturating_duration_since(*first)
        );
    }

    for guard in guards {
        guard.unlock().await.unwrap();
    }
    reset_stats(&redis).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        calls(&redis, "evalsha").await,
        0,
        "the watchdog stopped with the last hold"
    );

    // A new hold starts it again.
    let guard = client.lock("batch:again").lock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert!(
        redis.pttl("batch:again").await > 0,
        "renewed past its 600 ms lease"
    );
    assert!(!guard.is_lost());
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_goes_on_after_redis_errors() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(Duration::from_millis(900)).await;
    let guard = client.lock("flaky").lock().await.unwrap();
    // Cut the client's command connection now and then (rounds every
    // 300 ms): a renewal fails, the connection manager reconnects, the next
    // round renews.
    let mut killed = 0;
    for _ in 0..4 {
        let n: i64 = redis::cmd("CLIENT")
            .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
            .query_async(&mut redis.raw())
            .await
            .unwrap();
        killed += n;
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    assert!(
        killed >= 2,
        "the client's connection was cut {killed} times"
    );
    // 2.4 s later, more than twice the lease: still held, never reported lost.
    assert!(redis.exists("flaky").await);
    assert!(!guard.is_lost());
    let owner: Option<String> = redis
        .raw()
        .hget("flaky", guard.owner().to_string())
        .await
        .unwrap();
    assert_eq!(owner.as_deref(), Some("1"));
    // Renewals went on being confirmed: the lease clock is ahead of now.
    assert!(guard.valid_until() > std::time::Instant::now());
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(redis.pttl("flaky").await > 0);
    guard.unlock().await.unwrap();
    assert!(!redis.exists("flaky").await);
}
