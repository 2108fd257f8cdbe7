//! Holder identity (opt-in): written next to the lock with its expiry,
//! kept across watchdog renewals, read back, deleted on stop, and expired
//! within one lease once nobody refreshes it.

mod common;

use common::Redis;
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use redlua_runtime::identity::{self, Announcer, HolderIdentity};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_lives_exactly_as_long_as_the_hold() {
    let mut redis = Redis::start().await;
    let client = LockClient::builder(redis.url())
        .watchdog_timeout(Duration::from_millis(300))
        .connect()
        .await
        .expect("client");
    let guard = client.lock("nightly").lock().await.expect("lock");
    let owner = guard.owner().to_string();
    let key = identity::key("nightly", &owner);
    assert_eq!(key, format!("{{nightly}}:redlua_holder:{owner}"));
    let me = HolderIdentity::of_this_process("nightly-job --full");
    let announcer = Announcer::start(redis.con.clone(), &client, &guard, me.clone()).await;

    // Across several renewals: present, never expiring after the lock.
    for _ in 0..10 {
        let lock_ttl: i64 = redis.con.pttl("nightly").await.expect("PTTL");
        let identity_ttl: i64 = redis.con.pttl(&key).await.expect("PTTL");
        assert!(lock_ttl > 0 && lock_ttl <= 300, "{lock_ttl}");
        assert!(identity_ttl > 0 && identity_ttl <= 300, "{identity_ttl}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let read = identity::read(&mut redis.con, "nightly", &[owner.as_str(), "java:1"])
        .await
        .expect("read");
    assert_eq!(read, vec![Some(me), None]);

    guard.unlock().await.expect("unlock");
    announcer.stop().await;
    let exists: bool = redis.con.exists(&key).await.expect("EXISTS");
    assert!(!exists, "deleted on stop");

    // The writer of a read/write lock; an announcer dropped without stop
    // no longer refreshes: the identity ends within one lease.
    let rw = client.read_write_lock("catalog");
    let writer = rw.write().lock().await.expect("write lock");
    let key = identity::key("catalog", &writer.owner().to_string());
    let announcer = Announcer::start(
        redis.con.clone(),
        &client,
        &writer,
        HolderIdentity::of_this_process("reindex"),
    )
    .await;
    let exists: bool = redis.con.exists(&key).await.expect("EXISTS");
    assert!(exists, "written for the writer's `<owner>:write` field");
    drop(announcer);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let exists: bool = redis.con.exists(&key).await.expect("EXISTS");
    assert!(!exists, "expired, not refreshed");
    assert!(!writer.is_lost(), "the lock itself is still renewed");
    writer.unlock().await.expect("unlock");
}
