//! The lease clock: a holder cut off or on a slow link knows it lost the lock first.

use crate::common::{Redis, within};
use redlua_runtime::LockClient;
use redlua_test_support::FaultProxy;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A holder cut off from Redis longer than its lease knows it has lost the
/// lock before anyone else's acquire returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_holder_knows_before_another_acquires() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let holder = LockClient::builder(proxy.url())
        .watchdog_timeout(Duration::from_secs(3))
        .response_timeout(Duration::from_millis(500))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let other = redis.client().await;
    let guard = holder.lock("partitioned").lock().await.unwrap();
    let acquired_at = Instant::now();
    proxy.stall();
    let guard = Arc::new(guard);
    let watcher = tokio::spawn({
        let guard = guard.clone();
        async move {
            while !guard.is_lost() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Instant::now()
        }
    });
    let taker = tokio::spawn(async move {
        let stolen = other
            .lock("partitioned")
            .try_lock_for(Duration::from_secs(10), None)
            .await
            .unwrap()
            .expect("the lease ends");
        let at = Instant::now();
        stolen.unlock().await.unwrap();
        at
    });
    let lost_at = within(Duration::from_secs(15), "lost", watcher)
        .await
        .unwrap();
    let taken_at = within(Duration::from_secs(15), "taken", taker)
        .await
        .unwrap();
    assert!(
        lost_at < taken_at,
        "the holder learnt at {:?}, another acquired at {:?}",
        lost_at - acquired_at,
        taken_at - acquired_at
    );
    assert!(lost_at - acquired_at <= Duration::from_secs(3));
    assert!(taken_at - acquired_at >= Duration::from_millis(2900));
    assert!(guard.valid_until() <= lost_at);
    proxy.resume_dropping();
}

/// With a fixed lease over a slow link, the guard's clock runs from the
/// send: it says lost before Redis lets another holder in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_lease_over_a_slow_link_is_lost_first() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let holder = LockClient::connect(proxy.url()).await.unwrap();
    let other = redis.client().await;
    proxy.set_delay(Duration::from_millis(50));
    let sent = Instant::now();
    let guard = holder
        .lock("slow")
        .lock_with_lease(Duration::from_millis(500))
        .await
        .unwrap();
    assert!(guard.valid_until() <= sent + Duration::from_millis(500));
    let guard = Arc::new(guard);
    let watcher = tokio::spawn({
        let guard = guard.clone();
        async move {
            while !guard.is_lost() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Instant::now()
        }
    });
    let stolen = other
        .lock("slow")
        .try_lock_for(Duration::from_secs(5), None)
        .await
        .unwrap()
        .expect("the lease ends");
    let taken_at = Instant::now();
    let lost_at = watcher.await.unwrap();
    assert!(lost_at < taken_at, "lost {lost_at:?} vs taken {taken_at:?}");
    stolen.unlock().await.unwrap();
}
