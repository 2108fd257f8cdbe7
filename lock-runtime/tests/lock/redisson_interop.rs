//! Redisson's own lock scripts and redlua exclude each other and wake each other's waiters.

use super::{holders, join_waiter, map, spawn_waiter};
use crate::common::{Redis, ms};
use crate::redisson::{java_acquire, java_release};
use redlua_runtime::{LockKind, Side};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_holder_excludes_redlua_and_its_release_wakes_redlua() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let java = format!("{}:1", uuid::Uuid::new_v4());
    let lock = client.lock("interop-a");

    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
    assert_eq!(redis.hgetall("interop-a").await, map(&[(&java, "1")]));
    assert!(
        lock.try_lock().await.unwrap().is_none(),
        "redlua took a Java hold"
    );
    assert!(lock.is_locked().await.unwrap());
    let info = lock.inspect().await.unwrap();
    assert_eq!(info.kind, LockKind::Reentrant);
    assert_eq!(holders(&info), [(java.clone(), Side::Exclusive, 1)]);
    assert_eq!(info.token, None, "Redisson's RLock takes no token");
    let ttl = lock.remaining_ttl().await.unwrap().expect("a lease");
    assert!(ttl > ms(29_000), "{ttl:?}");
    // Java re-enters.
    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
    assert_eq!(redis.hget("interop-a", &java).await.as_deref(), Some("2"));

    let waiter = spawn_waiter(&lock);
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    // Java's partial release keeps it held.
    assert_eq!(java_release(&redis, "interop-a", &java).await, Some(0));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished(), "redlua got a lock Java still holds");
    assert_eq!(redis.hget("interop-a", &java).await.as_deref(), Some("1"));
    // Java's final release wakes the redlua waiter.
    let released = Instant::now();
    assert_eq!(java_release(&redis, "interop-a", &java).await, Some(1));
    let (acquired, guard, owner) = join_waiter(waiter, ms(5000)).await;
    let after = acquired.duration_since(released);
    assert!(after < ms(200), "woke {after:?} after Java's release");
    assert_eq!(redis.hgetall("interop-a").await, map(&[(&owner, "1")]));
    assert_eq!(
        client.inspect("interop-a").await.unwrap().token,
        Some(guard.token())
    );
    // Now Java is excluded.
    let pttl = java_acquire(&redis, "interop-a", 30_000, &java).await;
    assert!(matches!(pttl, Some(t) if t > 29_000), "{pttl:?}");
    guard.unlock().await.unwrap();
    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redlua_holder_excludes_redisson_and_its_release_wakes_redisson() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let java = format!("{}:1", uuid::Uuid::new_v4());
    let lock = client.lock("interop-b");
    // The Java side's subscription, as Redisson makes it.
    let mut java_channel = redis.listen("redisson_lock__channel:{interop-b}").await;

    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().to_string();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));
    let ttl = redis.pttl("interop-b").await;
    assert!(ttl > 29_000 && ttl <= 30_000, "the lease is 30 s: {ttl}");

    // Java's acquire is refused with the remaining lease.
    let pttl = java_acquire(&redis, "interop-b", 30_000, &java).await;
    assert!(
        matches!(pttl, Some(t) if t > 29_000 && t <= 30_000),
        "{pttl:?}"
    );
    // Java's release of a hold it does not have: nil, and nothing changes.
    assert_eq!(java_release(&redis, "interop-b", &java).await, None);
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));

    // redlua re-enters (explicitly); a partial release announces nothing.
    let inner = guard.reenter().await.unwrap();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "2")]));
    inner.unlock().await.unwrap();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));
    assert!(java_channel.next_within(ms(150)).await.is_none());

    // The final release reaches the Java side's subscription.
    let token = guard.token();
    guard.unlock().await.unwrap();
    let (message, _) = java_channel
        .next_within(ms(1000))
        .await
        .expect("Redisson's subscription got the release");
    assert_eq!(message, "0");
    assert_eq!(java_acquire(&redis, "interop-b", 30_000, &java).await, None);
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&java, "1")]));
    // And a Java hold that redlua breaks is broken the Redisson way (and
    // the fencing token moves past every redlua holder's).
    assert!(lock.force_unlock().await.unwrap());
    let (message, _) = java_channel.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "0");
    assert!(java_channel.drain().is_empty());
    assert!(!redis.exists("interop-b").await);
    let info = lock.inspect().await.unwrap();
    assert_eq!(info.kind, LockKind::Free);
    assert!(info.token.is_some_and(|t| t > token), "{info:?}");
}
