//! A primary killed (`SIGKILL`) while a lock on it is held by the watchdog,
//! in replica-synced mode (the default). This binary has a cluster of its
//! own (three primaries with a replica each): the killed node does not come
//! back, so the cluster is not one that other tests could share.

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redlua_runtime::LockClient;
use redlua_test_support::RedisCluster;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn node(cluster: &RedisCluster, i: usize) -> MultiplexedConnection {
    cluster.nodes()[i]
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a node connection")
}

/// Node `i`'s `ROLE`: "master" or "slave", and a replica's primary port.
async fn role(cluster: &RedisCluster, i: usize) -> (String, Option<u16>) {
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query_async(&mut node(cluster, i).await)
        .await
        .unwrap();
    let kind: String = redis::from_redis_value(role[0].clone()).unwrap();
    let port = (kind == "slave").then(|| redis::from_redis_value(role[2].clone()).unwrap());
    (kind, port)
}

/// Waits until `check` holds, failing after `limit`.
async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(ms(50)).await;
    }
}

/// A client that gives up on a silent node quickly.
async fn client(cluster: &RedisCluster, watchdog: Duration) -> LockClient {
    LockClient::cluster_builder(cluster.urls())
        .watchdog_timeout(watchdog)
        .connect_timeout(ms(500))
        .response_timeout(ms(500))
        .connect()
        .await
        .expect("connect to the cluster")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_by_the_watchdog_survives_its_primary_being_killed() {
    let cluster = tokio::task::spawn_blocking(|| RedisCluster::start_with_replicas(3, 1))
        .await
        .expect("starting the cluster");
    let name = "{killed}:lock";
    // A lease longer than the failover (node timeout 5 s).
    let holder = client(&cluster, Duration::from_secs(15)).await;
    let guard = holder.lock(name).lock().await.unwrap();
    let expected = HashMap::from([(guard.owner().to_string(), "1".to_string())]);
    let mut old = None;
    for i in 0..cluster.nodes().len() {
        let mut con = node(&cluster, i).await;
        // The other primaries answer MOVED.
        if role(&cluster, i).await.0 == "master" && con.exists(name).await.unwrap_or(false) {
            old = Some(i);
        }
    }
    let old = old.expect("a primary holds the lock");
    let old_port = cluster.nodes()[old].port();
    let mut new = None;
    for i in 0..cluster.nodes().len() {
        if role(&cluster, i).await.1 == Some(old_port) {
            new = Some(i);
        }
    }
    let new = new.expect("the primary has a replica");
    // Synced: the replica had the hold before the guard existed.
    let mut replica = node(&cluster, new).await;
    let _: () = redis::cmd("READONLY")
        .query_async(&mut replica)
        .await
        .unwrap();
    let on_replica: HashMap<String, String> = replica.hgetall(name).await.unwrap();
    assert_eq!(on_replica, expected);

    // Another client tries to take the lock every 20 ms throughout.
    let observer = client(&cluster, Duration::from_secs(30)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let observing = tokio::spawn(async move {
        let lock = observer.lock(name);
        let mut granted = Vec::new();
        while !stopped.load(Ordering::SeqCst) {
            if let Ok(Ok(Some(guard))) = tokio::time::timeout(ms(3000), lock.try_lock()).await {
                granted.push(guard.token());
            }
            tokio::time::sleep(ms(20)).await;
        }
        granted
    });

    let killed = std::process::Command::new("kill")
        .arg("-KILL")
        .arg(cluster.nodes()[old].pid().to_string())
        .status()
        .expect("kill");
    assert!(killed.success());
    eventually(ms(20_000), "the replica takes over", || async {
        role(&cluster, new).await.0 == "master"
    })
    .await;
    // The watchdog renews on the new primary (every 5 s): a lease above
    // 14 s was set less than a second ago, after the kill.
    eventually(ms(10_000), "a renewal on the new primary", || async {
        let pttl: i64 = node(&cluster, new).await.pttl(name).await.unwrap();
        pttl > 14_000
    })
    .await;
    assert!(!guard.is_lost(), "the lock was lost");
    let on_new: HashMap<String, String> = node(&cluster, new).await.hgetall(name).await.unwrap();
    assert_eq!(on_new, expected);
    stop.store(true, Ordering::SeqCst);
    let granted = tokio::time::timeout(ms(5000), observing)
        .await
        .expect("the observer stops")
        .unwrap();
    assert_eq!(granted, Vec::<u64>::new(), "a second holder");

    guard.unlock().await.unwrap();
    let left: bool = node(&cluster, new).await.exists(name).await.unwrap();
    assert!(!left, "released");
}
