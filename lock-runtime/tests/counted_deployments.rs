//! Semaphores and count-down latches beyond one plain server: a Redis
//! Cluster (every key and channel of one primitive in its name's slot,
//! waiters woken through sharded pub/sub on the node that owns it),
//! replica-synced mode (an acquire the replicas did not acknowledge is
//! given back and fails closed) and Sentinel.

use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient};
use redlua_test_support::{RedisCluster, RedisSentinel, RedisServer};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

async fn con(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    server
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a connection")
}

/// A waiter of `sem` woken by a release from `other`: how long after the
/// release it got its permit.
async fn woken_after(
    sem: &redlua_runtime::Semaphore,
    other: &redlua_runtime::Semaphore,
) -> Duration {
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(ms(400)).await;
    assert!(!waiter.is_finished());
    let released = Instant::now();
    other.release(1).await.unwrap();
    within(ms(4000), "a waiter", waiter).await.unwrap() - released
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_each_primitive_lives_in_its_slot_and_waiters_are_woken_there() {
    let cluster = tokio::task::spawn_blocking(|| RedisCluster::start(3))
        .await
        .unwrap();
    let client = LockClient::cluster(cluster.urls()).await.unwrap();
    let other = LockClient::cluster(cluster.urls()).await.unwrap();
    // Names whose slots are spread over the primaries, one with a hash tag.
    for name in ["pool-a", "pool-b", "pool-c", "tenant{7}:pool"] {
        let sem = client.semaphore(name);
        assert!(sem.try_set_permits(1).await.unwrap());
        assert!(sem.try_acquire(1).await.unwrap());
        let waited = woken_after(&sem, &other.semaphore(name)).await;
        // Woken through pub/sub (a waiter polls every 5 s).
        assert!(waited < ms(1000), "{name}: woken after {waited:?}");
        assert_eq!(sem.available().await.unwrap(), 0);
        sem.release(1).await.unwrap();
    }
    for name in ["latch-a", "latch-b", "latch-c"] {
        let latch = client.count_down_latch(name);
        assert!(latch.try_set_count(1).await.unwrap());
        let waiter = tokio::spawn({
            let latch = latch.clone();
            async move {
                latch.wait().await.unwrap();
                Instant::now()
            }
        });
        tokio::time::sleep(ms(400)).await;
        let opened = Instant::now();
        other.count_down_latch(name).count_down().await.unwrap();
        let woke = within(ms(4000), "a latch waiter", waiter).await.unwrap();
        assert!(
            woke - opened < ms(1000),
            "{name}: woken after {:?}",
            woke - opened
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_synced_mode_an_acquire_the_replica_did_not_acknowledge_is_given_back() {
    let (primary, replica) = tokio::task::spawn_blocking(|| {
        let primary = RedisServer::start();
        let replica = RedisServer::start_replica_of(&primary, std::iter::empty::<&str>());
        (primary, replica)
    })
    .await
    .unwrap();
    let client = LockClient::builder(primary.url())
        .sync_timeout(ms(300))
        .connect()
        .await
        .unwrap();
    let sem = client.semaphore("replicated");
    sem.set_permits(2).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    // On the replica by the time the call returned.
    let on_replica: String = con(&replica).await.get("replicated").await.unwrap();
    assert_eq!(on_replica, "1");

    replica.pause();
    let result = within(ms(5000), "try_acquire", sem.try_acquire(1)).await;
    replica.resume();
    assert!(
        matches!(&result, Err(Error::NotReplicated { name, acked: 0, wanted: 1 }) if name == "replicated"),
        "{result:?}"
    );
    // Given back before the error was returned.
    let left: String = con(&primary).await.get("replicated").await.unwrap();
    assert_eq!(left, "1");
    assert!(sem.try_acquire(1).await.unwrap());
    assert_eq!(sem.available().await.unwrap(), 0);

    // A leased permit: the same, its id gone from the set too.
    let leased = client.leased_semaphore("leased-replicated");
    leased.set_permits(1).await.unwrap();
    replica.pause();
    let result = within(ms(5000), "leased try_acquire", leased.try_acquire(1)).await;
    replica.resume();
    assert!(
        matches!(&result, Err(Error::NotReplicated { .. })),
        "{result:?}"
    );
    let taken: i64 = con(&primary)
        .await
        .zcard("{leased-replicated}:timeout")
        .await
        .unwrap();
    assert_eq!(taken, 0);
    let permit = leased.try_acquire(1).await.unwrap().expect("the permit");
    let on_replica: i64 = con(&replica)
        .await
        .zcard("{leased-replicated}:timeout")
        .await
        .unwrap();
    assert_eq!(
        on_replica, 1,
        "on the replica by the time the call returned"
    );
    permit.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_sentinel_permits_and_latches_work_on_the_master() {
    let deployment = tokio::task::spawn_blocking(|| RedisSentinel::start(1, 1))
        .await
        .unwrap();
    let client = LockClient::sentinel(deployment.sentinel_urls(), RedisSentinel::SERVICE)
        .await
        .unwrap();
    let other = LockClient::sentinel(deployment.sentinel_urls(), RedisSentinel::SERVICE)
        .await
        .unwrap();
    let sem = client.semaphore("sentinel-pool");
    assert!(sem.try_set_permits(1).await.unwrap());
    assert!(sem.try_acquire(1).await.unwrap());
    let waited = woken_after(&sem, &other.semaphore("sentinel-pool")).await;
    assert!(waited < ms(1000), "woken after {waited:?}");
    let master = &deployment.servers()[deployment.master()];
    let left: String = con(master).await.get("sentinel-pool").await.unwrap();
    assert_eq!(left, "0");
    let latch = client.count_down_latch("sentinel-latch");
    assert!(latch.try_set_count(1).await.unwrap());
    other
        .count_down_latch("sentinel-latch")
        .count_down()
        .await
        .unwrap();
    assert!(latch.wait_for(ms(2000)).await.unwrap());
}
