//! Redisson's own semaphore scripts and redlua sharing one semaphore and waking each other.

use crate::common::{Redis, ms, within};
use crate::redisson::{
    java_semaphore_release, java_semaphore_try_acquire, java_semaphore_try_set_permits,
    semaphore_channel,
};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_share_one_semaphore_and_wake_each_other() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("shared-pool");
    // Java sizes the pool; Rust sees it and takes from it.
    assert!(java_semaphore_try_set_permits(&redis, "shared-pool", 2).await);
    assert!(!sem.try_set_permits(5).await.unwrap());
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(!java_semaphore_try_acquire(&redis, "shared-pool", 1).await);
    // A Java release wakes a Rust waiter.
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(ms(300)).await;
    let released = Instant::now();
    java_semaphore_release(&redis, "shared-pool", 1).await;
    let got = within(ms(4000), "a waiter woken by Java", waiter)
        .await
        .unwrap();
    assert!(
        got - released < ms(1000),
        "woken after {:?}",
        got - released
    );
    // A Rust release announces the permits available as Redisson does, on
    // Redisson's channel, and Java takes them.
    let mut listener = redis.listen(&semaphore_channel("shared-pool")).await;
    assert_eq!(sem.release(2).await.unwrap(), 2);
    let (message, _) = listener.next_within(ms(2000)).await.expect("a message");
    assert_eq!(message, "2");
    assert!(java_semaphore_try_acquire(&redis, "shared-pool", 2).await);
    assert_eq!(sem.available().await.unwrap(), 0);
}
