//! Locks on a real Redis Cluster of three primaries with a replica each,
//! started once for this binary and shared by its tests (each test uses
//! lock names of its own). Tests that change the topology (a slot
//! migration, a failover) run alone; the others share it.
//!
//! What the tests look at directly, they read from the node that owns the
//! lock's slot: the lock's hash lives there and nowhere else. Which node is
//! a primary is asked of the cluster, never assumed.

mod locks;
mod setup;
mod topology;
mod wake_ups;

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redlua_runtime::{LockClient, LockGuard};
use redlua_test_support::RedisCluster;
use std::collections::HashMap;
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

const PRIMARIES: usize = 3;
const NODES: usize = 2 * PRIMARIES;

static CLUSTER: OnceLock<&'static RedisCluster> = OnceLock::new();

/// Held shared by tests that keep the topology, alone by those that change
/// it.
static TOPOLOGY: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// The shared cluster, started by the first test that needs it.
async fn cluster() -> &'static RedisCluster {
    tokio::task::spawn_blocking(|| {
        *CLUSTER.get_or_init(|| RedisCluster::start_with_replicas(PRIMARIES, 1).until_exit())
    })
    .await
    .expect("starting the cluster")
}

/// The nodes that are primaries now.
async fn primaries() -> Vec<usize> {
    let mut primaries = Vec::new();
    for i in 0..NODES {
        let role: Vec<redis::Value> = redis::cmd("ROLE")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        let kind: String = redis::from_redis_value(role[0].clone()).unwrap();
        if kind == "master" {
            primaries.push(i);
        }
    }
    primaries
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Fails the test if `future` takes longer than `limit`.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// A lock client of the cluster with default settings.
async fn client() -> LockClient {
    LockClient::cluster(cluster().await.urls())
        .await
        .expect("connect to the cluster")
}

/// A lock client of the cluster with a short watchdog timeout.
async fn client_with_watchdog(timeout: Duration) -> LockClient {
    LockClient::cluster_builder(cluster().await.urls())
        .watchdog_timeout(timeout)
        .connect()
        .await
        .expect("connect to the cluster")
}

/// A plain connection to node `i`.
async fn node(i: usize) -> MultiplexedConnection {
    cluster().await.nodes()[i]
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a node connection")
}

/// The hash slot of `key`, as the cluster computes it.
async fn keyslot(key: &str) -> u16 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut node(0).await)
        .await
        .unwrap()
}

/// The slot ranges node `i` names, each with its primary's port; `None`
/// when the node does not answer.
async fn slot_map(i: usize) -> Option<Vec<(i64, i64, u16)>> {
    let raw: Vec<redis::Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut node(i).await)
        .await
        .ok()?;
    let mut ranges: Vec<(i64, i64, u16)> = raw
        .into_iter()
        .map(|range| {
            let redis::Value::Array(items) = range else {
                panic!("CLUSTER SLOTS: {range:?}")
            };
            let first: i64 = redis::from_redis_value(items[0].clone()).unwrap();
            let last: i64 = redis::from_redis_value(items[1].clone()).unwrap();
            let redis::Value::Array(primary) = &items[2] else {
                panic!("CLUSTER SLOTS primary: {:?}", items[2])
            };
            let port: u16 = redis::from_redis_value(primary[1].clone()).unwrap();
            (first, last, port)
        })
        .collect();
    ranges.sort_unstable();
    Some(ranges)
}

/// The node that owns `key`'s slot right now (asked of node 0).
async fn owner_of(key: &str) -> usize {
    let slot = i64::from(keyslot(key).await);
    let ranges = slot_map(0).await.expect("node 0 answers CLUSTER SLOTS");
    let (_, _, port) = ranges
        .iter()
        .find(|(first, last, _)| *first <= slot && slot <= *last)
        .expect("every slot is served");
    cluster()
        .await
        .nodes()
        .iter()
        .position(|n| n.port() == *port)
        .expect("a known node")
}

/// Waits until the cluster has settled from what an earlier test did to
/// it (a failover, a migration, a paused node): every node says
/// `cluster_state:ok` and names the same primary for every slot, and every
/// replica's link to its primary is up. A test that changes the topology
/// starts from there.
async fn settled() {
    eventually(ms(30_000), "the cluster settles", || async {
        let mut maps = Vec::with_capacity(NODES);
        for i in 0..NODES {
            let mut con = node(i).await;
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async(&mut con)
                .await
                .unwrap_or_default();
            let replication: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut con)
                .await
                .unwrap_or_default();
            let linked = replication.contains("role:master")
                || replication.contains("master_link_status:up");
            match slot_map(i).await {
                Some(map) if info.contains("cluster_state:ok") && linked => maps.push(map),
                _ => return false,
            }
        }
        maps.windows(2).all(|pair| pair[0] == pair[1])
    })
    .await;
}

async fn hgetall(node_index: usize, key: &str) -> HashMap<String, String> {
    node(node_index).await.hgetall(key).await.unwrap()
}

/// Whether `key` exists (on the node that owns its slot: no other node can
/// hold it).
async fn exists_anywhere(key: &str) -> bool {
    let n: i64 = node(owner_of(key).await).await.exists(key).await.unwrap();
    n == 1
}

/// Subscribers of `channel` on node `i`: (sharded, plain).
async fn subscribers(i: usize, channel: &str) -> (i64, i64) {
    let mut con = node(i).await;
    let (_, sharded): (String, i64) = redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .arg(channel)
        .query_async(&mut con)
        .await
        .unwrap();
    let (_, plain): (String, i64) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query_async(&mut con)
        .await
        .unwrap();
    (sharded, plain)
}

/// Waits until `check` holds, failing after `limit`.
async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(ms(20)).await;
    }
}

/// Spawns a `lock()` of `name` on `client`: when it got the lock, and the
/// guard.
fn spawn_waiter(client: &LockClient, name: &str) -> tokio::task::JoinHandle<(Instant, LockGuard)> {
    let lock = client.lock(name);
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("the waiter's lock()");
        (Instant::now(), guard)
    })
}

/// A client like [`impatient_client`], without replica-synced mode.
async fn unsynced_client(watchdog: Duration) -> LockClient {
    LockClient::cluster_builder(cluster().await.urls())
        .sync_replicas(redlua_runtime::SyncReplicas::Off)
        .watchdog_timeout(watchdog)
        .connect_timeout(ms(500))
        .response_timeout(ms(500))
        .connect()
        .await
        .expect("connect to the cluster")
}

/// What node `i` is: "master" or "slave".
async fn role(i: usize) -> String {
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query_async(&mut node(i).await)
        .await
        .unwrap();
    redis::from_redis_value(role[0].clone()).unwrap()
}
