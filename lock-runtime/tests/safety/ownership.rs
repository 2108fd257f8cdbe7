//! Ownership: futures of one task exclude each other; explicit re-entry works across tasks.

use crate::common::{Redis, within};
use redlua_runtime::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Futures of one task are different acquirers: `join!` of three jobs runs
/// them one after the other.
#[tokio::test]
async fn futures_of_one_task_exclude_each_other() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let inside = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let job = || async {
        let guard = client.lock("jobs").lock().await.unwrap();
        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        inside.fetch_sub(1, Ordering::SeqCst);
        guard.unlock().await.unwrap();
    };
    let started = Instant::now();
    within(Duration::from_secs(10), "three jobs", async {
        tokio::join!(job(), job(), job())
    })
    .await;
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "jobs of one task overlapped"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    // And a second plain acquire in the same task is refused while held.
    let guard = client.lock("jobs").lock().await.unwrap();
    assert!(client.lock("jobs").try_lock().await.unwrap().is_none());
    guard.unlock().await.unwrap();
}

/// Re-entry is explicit and works from another task: the owner travels.
#[tokio::test]
async fn explicit_reentry_works_across_tasks() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let lock = client.lock("account:9");
    let outer = lock.lock().await.unwrap();
    let owner = outer.owner().clone();
    let inner = tokio::spawn({
        let lock = lock.clone();
        async move { lock.reenter(&owner).await }
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(inner.owner(), outer.owner());
    assert_eq!(
        inner.token(),
        outer.token(),
        "a re-entry keeps the holder's token"
    );
    assert_eq!(lock.hold_count(outer.owner()).await.unwrap(), 2);
    assert!(other.lock("account:9").try_lock().await.unwrap().is_none());
    outer.unlock().await.unwrap();
    assert!(other.lock("account:9").try_lock().await.unwrap().is_none());
    inner.unlock().await.unwrap();
    assert!(!redis.exists("account:9").await);
    // Re-entering a hold that is gone is refused, and changes nothing.
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().clone();
    guard.unlock().await.unwrap();
    assert!(matches!(
        lock.reenter(&owner).await,
        Err(Error::NotHeld { .. })
    ));
    assert!(!redis.exists("account:9").await);
}
