//! Nothing written for bad input, keys that are not locks, or a release after Redis lost its data.

use crate::common::{Redis, within};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, MAX_LEASE};
use redlua_test_support::FaultProxy;
use std::time::Duration;

/// Out-of-range leases are refused before anything is written.
#[tokio::test]
async fn out_of_range_leases_write_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("lease");
    for lease in [
        Duration::ZERO,
        Duration::from_micros(10),
        Duration::MAX,
        MAX_LEASE * 2,
    ] {
        assert!(
            matches!(lock.lock_with_lease(lease).await, Err(Error::Config(_))),
            "{lease:?}"
        );
        assert!(matches!(
            lock.try_lock_for(Duration::ZERO, Some(lease)).await,
            Err(Error::Config(_))
        ));
        let rw = client.read_write_lock("lease-rw");
        assert!(matches!(
            rw.write().lock_with_lease(lease).await,
            Err(Error::Config(_))
        ));
        assert!(matches!(
            rw.read().lock_with_lease(lease).await,
            Err(Error::Config(_))
        ));
    }
    for timeout in [Duration::ZERO, Duration::from_millis(5), Duration::MAX] {
        let result = LockClient::builder(redis.url())
            .watchdog_timeout(timeout)
            .connect()
            .await;
        assert!(matches!(result, Err(Error::Config(_))), "{timeout:?}");
    }
    assert!(redis.keys().await.is_empty(), "{:?}", redis.keys().await);
    // The longest lease accepted works, and expires.
    let guard = lock.lock_with_lease(MAX_LEASE).await.unwrap();
    assert!(redis.pttl("lease").await > 0);
    assert!(!guard.is_lost());
    let inner = guard.reenter().await.unwrap();
    inner.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    assert!(!redis.exists("lease").await);
}

/// Keys that are not locks are left alone by `lock()`, `try_lock()` and
/// `force_unlock()`, with `Error::WrongType` at once.
#[tokio::test]
async fn keys_that_are_not_locks_are_left_alone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let mut con = redis.raw();
    let _: () = con.set("plain", "value").await.unwrap();
    let _: () = con.hset("profile", "name", "bob").await.unwrap();
    let _: () = con.hset("counts", "a:1", "1").await.unwrap();
    let _: () = con.hset("counts", "b:2", "1").await.unwrap();
    for name in ["plain", "profile", "counts"] {
        let lock = client.lock(name);
        let result = within(Duration::from_secs(2), "lock()", lock.lock()).await;
        assert!(
            matches!(result, Err(Error::WrongType { .. })),
            "{name}: {result:?}"
        );
        assert!(matches!(
            lock.try_lock().await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            lock.force_unlock().await,
            Err(Error::WrongType { .. })
        ));
        let rw = client.read_write_lock(name);
        assert!(matches!(
            rw.write().force_unlock().await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            rw.read().try_lock().await,
            Err(Error::WrongType { .. })
        ));
    }
    assert_eq!(redis.hgetall("profile").await.len(), 1);
    assert_eq!(redis.hgetall("counts").await.len(), 2);
    let value: String = con.get("plain").await.unwrap();
    assert_eq!(value, "value");
    for key in ["plain", "profile", "counts"] {
        assert_eq!(redis.pttl(key).await, -1, "{key} got an expiry");
    }
    // A reentrant lock is not a read/write lock, and the other way round.
    let guard = client.lock("mixed").lock().await.unwrap();
    let rw = client.read_write_lock("mixed");
    assert!(matches!(
        rw.write().try_lock().await,
        Err(Error::WrongType { .. })
    ));
    guard.unlock().await.unwrap();
}

/// A retried release never touches a newer hold, even after Redis lost
/// every key (a restart without persistence).
#[tokio::test]
async fn a_release_retried_after_redis_lost_its_data_touches_nothing() {
    let mut redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let client = LockClient::builder(proxy.url())
        .response_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let guard = client.lock("restart").lock().await.unwrap();
    // The release's reply never comes back; Redis then restarts empty.
    proxy.stall();
    let unlock = tokio::time::timeout(Duration::from_millis(100), guard.unlock()).await;
    assert!(unlock.is_err());
    redis = tokio::task::spawn_blocking(move || {
        redis.server.restart();
        redis
    })
    .await
    .unwrap();
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    redis.con = con.clone();
    // Someone else holds the lock now.
    let other = redis.client().await;
    let theirs = other.lock("restart").lock().await.unwrap();
    proxy.resume_dropping();
    // The background retries of the old release run now: they must leave
    // the new hold alone.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let fields: std::collections::HashMap<String, String> = con.hgetall("restart").await.unwrap();
    assert_eq!(
        fields.get(&theirs.owner().to_string()).map(String::as_str),
        Some("1")
    );
    assert!(!theirs.is_lost());
    theirs.unlock().await.unwrap();
}
