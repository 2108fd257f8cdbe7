//! Redisson's own leased-semaphore scripts and redlua sharing one pool.

use super::pool;
use crate::common::{Redis, ms, within};
use crate::redisson::{java_leased_try_acquire, java_leased_try_release};
use redlua_runtime::Error;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_share_one_leased_pool_and_expired_permits_come_back_once() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("mixed");
    sem.set_permits(2).await.unwrap();
    // Java takes a permit with a 300 ms lease; Rust takes the other.
    let java = java_leased_try_acquire(&redis, "mixed", 300)
        .await
        .expect("Java's permit");
    let rust = sem.acquire(1).await.unwrap();
    assert!(
        java_leased_try_acquire(&redis, "mixed", 300)
            .await
            .is_none()
    );
    let mut holders: Vec<String> = sem
        .holders()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    holders.sort();
    let mut expected = vec![java.clone(), rust.ids()[0].clone()];
    expected.sort();
    assert_eq!(holders, expected);
    // A Rust waiter gets Java's permit when its lease ends.
    let started = Instant::now();
    let next = within(ms(3000), "a waiter", sem.acquire(1)).await.unwrap();
    assert!(started.elapsed() < ms(1500), "{:?}", started.elapsed());
    // Java's late release of its expired permit gives nothing back.
    assert!(!java_leased_try_release(&redis, "mixed", &java).await);
    assert_eq!(pool(&redis, "mixed").await, (0, 2));
    // Java releases a Rust permit by its id (as an operator would): once.
    assert!(java_leased_try_release(&redis, "mixed", &next.ids()[0]).await);
    assert!(matches!(next.release().await, Err(Error::LockLost { .. })));
    rust.release().await.unwrap();
    assert_eq!(pool(&redis, "mixed").await, (2, 0));
}
