//! Leases: expiry giving a permit back once, the watchdog and its batches, a retried acquire.

use super::{available, fresh, pool, pool_becomes, taken};
use crate::common::{Redis, ms, within};
use crate::redisson;
use crate::redisson::leased_timeouts;
use redis::AsyncCommands;
use redlua_runtime::Error;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_permit_comes_back_exactly_once_and_its_guard_said_lost_first() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("short");
    sem.set_permits(1).await.unwrap();
    let sent = std::time::Instant::now();
    let guard = sem.acquire_with_lease(1, ms(400)).await.unwrap();
    assert!(guard.valid_until() <= sent + ms(400));
    // A waiter sleeps until the permit's expiry, not until a poll.
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            let guard = sem.acquire(1).await.unwrap();
            (guard, std::time::Instant::now())
        }
    });
    within(ms(2000), "lost()", guard.lost()).await;
    assert!(guard.is_lost());
    let (next, got_at) = within(ms(3000), "the waiter", waiter).await.unwrap();
    // The waiter got it only once the guard's clock had passed, and soon
    // after the permit expired (it slept until then, not until a poll).
    assert!(got_at >= guard.valid_until());
    assert!(got_at - sent < ms(1500), "{:?}", got_at - sent);
    assert!(next.token() > guard.token());
    // The late release of the expired permit gives nothing back twice.
    assert!(matches!(guard.release().await, Err(Error::LockLost { .. })));
    assert_eq!(pool(&redis, "short").await, (0, 1));
    next.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "short", (1, 0), ms(1000)).await,
        (1, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_keeps_permits_past_their_lease_and_notices_one_taken_away() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(1500)).await;
    let sem = client.leased_semaphore("renewed");
    sem.set_permits(3).await.unwrap();
    let kept = sem.acquire(1).await.unwrap();
    let taken_away = sem.acquire(2).await.unwrap();
    tokio::time::sleep(ms(2000)).await;
    assert!(!kept.is_lost() && !taken_away.is_lost(), "renewed");
    assert_eq!(taken(&redis, "renewed").await, 3);
    // An operator gives one of the two-permit guard's permits back.
    let id = taken_away.ids()[1].clone();
    let forced = std::time::Instant::now();
    let clock_said = taken_away.valid_until();
    assert!(clock_said > forced + ms(900), "{:?}", clock_said - forced);
    assert!(sem.force_release(&id).await.unwrap());
    assert!(!sem.force_release(&id).await.unwrap(), "once");
    // Found at the next renewal (every 500 ms), long before its clock
    // would have passed.
    within(ms(2000), "the taken-away guard's lost()", taken_away.lost()).await;
    assert!(
        forced.elapsed() < ms(800),
        "noticed after {:?}",
        forced.elapsed()
    );
    assert!(!kept.is_lost());
    assert!(matches!(
        taken_away.release().await,
        Err(Error::LockLost { .. })
    ));
    kept.release().await.unwrap();
    assert_eq!(
        pool_becomes(&redis, "renewed", (3, 0), ms(1000)).await,
        (3, 0)
    );
}

/// A try whose reply was lost took the permits; the next try of the same
/// attempt finds them, and renews their leases from its own time (its
/// caller's lease clock starts then). A copy that arrives once they are
/// gone (released, expired) takes nothing.
#[tokio::test]
async fn a_retried_acquire_renews_the_lease_its_caller_counts_from() {
    let redis = Redis::start().await;
    let script = redis::Script::new(include_str!("../../scripts/leased_acquire.lua"));
    let _: () = redis.raw().set("retried", 1).await.unwrap();
    let try_once = async || -> (i64, i64, i64) {
        script
            .key("retried")
            .key(leased_timeouts("retried"))
            .key("redisson_sc:{retried}")
            .key("{retried}:redlua_permits:c:1")
            .key("{retried}:redlua_token")
            .arg(1000)
            .arg(30_000)
            .arg(3_600_000)
            .arg("publish")
            .arg(&[7u8; 16][..])
            .invoke_async(&mut redis.raw())
            .await
            .unwrap()
    };
    let first = try_once().await;
    assert_eq!(first.0, 1);
    let score = async || -> f64 {
        redis
            .raw()
            .zscore(leased_timeouts("retried"), &[7u8; 16][..])
            .await
            .unwrap()
    };
    let expiry = score().await;
    tokio::time::sleep(ms(300)).await;
    let again = try_once().await;
    assert_eq!(
        (again.0, again.1),
        (1, first.1),
        "the same attempt, the same token"
    );
    assert!(score().await >= expiry + 250.0, "the lease was not renewed");
    assert_eq!(available(&redis, "retried").await, 0, "taken once");
    // Released (or expired and brought back) since: a copy that comes now
    // is late, and takes nothing.
    let _: () = redis
        .raw()
        .zrem(leased_timeouts("retried"), &[7u8; 16][..])
        .await
        .unwrap();
    let _: () = redis.raw().incr("retried", 1).await.unwrap();
    let late = try_once().await;
    assert_eq!(late.0, 3, "{late:?}");
    assert_eq!(
        available(&redis, "retried").await,
        1,
        "taken by a late copy"
    );
    assert_eq!(taken(&redis, "retried").await, 0);
}

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

/// Permit guards are renewed in the watchdog's rounds with the locks, one
/// call per semaphore a round: 30 guards of one semaphore, 10 of another
/// and 20 locks make 3 calls a round, not 60.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_are_renewed_in_the_locks_rounds_one_call_per_semaphore() {
    let redis = Redis::start().await;
    // Rounds every 200 ms.
    let client = redis.client_with_watchdog(ms(600)).await;
    let (big, small) = (
        client.leased_semaphore("big"),
        client.leased_semaphore("small"),
    );
    big.set_permits(30).await.unwrap();
    small.set_permits(10).await.unwrap();
    let mut permits = Vec::new();
    for _ in 0..30 {
        permits.push(big.acquire(1).await.unwrap());
    }
    for _ in 0..10 {
        permits.push(small.acquire(1).await.unwrap());
    }
    let mut locks = Vec::new();
    for i in 0..20 {
        locks.push(client.lock(&format!("lock:{i}")).lock().await.unwrap());
    }
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    tokio::time::sleep(ms(1000)).await;
    let renewals = calls(&redis, "evalsha").await;
    // About 5 rounds of 3 calls; a call per guard would be 60 a round.
    assert!(
        (6..=24).contains(&renewals),
        "{renewals} renewal calls in 1 s for 40 permit guards and 20 locks"
    );
    assert!(permits.iter().all(|p| !p.is_lost()));
    assert!(locks.iter().all(|l| !l.is_lost()));
    // Each permit's lease in Redis was renewed past its 600 ms.
    let now_ms = redisson::java_now_ms() as f64;
    for name in ["big", "small"] {
        let expiries: Vec<(Vec<u8>, f64)> = fresh(&redis)
            .await
            .zrange_withscores(leased_timeouts(name), 0, -1)
            .await
            .unwrap();
        assert!(expiries.iter().all(|(_, at)| *at > now_ms), "{name}");
    }
    for permit in permits {
        permit.release().await.unwrap();
    }
    for lock in locks {
        lock.unlock().await.unwrap();
    }
}
