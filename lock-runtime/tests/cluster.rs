//! Locks on a real Redis Cluster of three primaries with a replica each,
//! started once for this binary and shared by its tests (each test uses
//! lock names of its own). Tests that change the topology (a slot
//! migration, a failover) run alone; the others share it.
//!
//! What the tests look at directly, they read from the node that owns the
//! lock's slot: the lock's hash lives there and nowhere else. Which node is
//! a primary is asked of the cluster, never assumed.

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redlua_runtime::{LockClient, LockGuard};
use redlua_test_support::RedisCluster;
use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
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

/// The replica of primary `i`.
async fn replica_of(i: usize) -> usize {
    let port = cluster().await.nodes()[i].port();
    for r in 0..NODES {
        let role: Vec<redis::Value> = redis::cmd("ROLE")
            .query_async(&mut node(r).await)
            .await
            .unwrap();
        let kind: String = redis::from_redis_value(role[0].clone()).unwrap();
        if kind == "slave" {
            let primary_port: u16 = redis::from_redis_value(role[2].clone()).unwrap();
            if primary_port == port {
                return r;
            }
        }
    }
    panic!("node {i} has no replica")
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

/// The node that owns `key`'s slot right now (asked of node 0).
async fn owner_of(key: &str) -> usize {
    let slot = i64::from(keyslot(key).await);
    let ranges: Vec<(i64, i64, (String, u16))> = {
        let raw: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut node(0).await)
            .await
            .unwrap();
        raw.into_iter()
            .map(|range| {
                let redis::Value::Array(items) = range else {
                    panic!("CLUSTER SLOTS: {range:?}")
                };
                let first: i64 = redis::from_redis_value(items[0].clone()).unwrap();
                let last: i64 = redis::from_redis_value(items[1].clone()).unwrap();
                let redis::Value::Array(primary) = &items[2] else {
                    panic!("CLUSTER SLOTS primary: {:?}", items[2])
                };
                let host: String = redis::from_redis_value(primary[0].clone()).unwrap();
                let port: u16 = redis::from_redis_value(primary[1].clone()).unwrap();
                (first, last, (host, port))
            })
            .collect()
    };
    let (_, _, (_, port)) = ranges
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

async fn hgetall(node_index: usize, key: &str) -> HashMap<String, String> {
    node(node_index).await.hgetall(key).await.unwrap()
}

/// Whether `key` exists (on the node that owns its slot: no other node can
/// hold it).
async fn exists_anywhere(key: &str) -> bool {
    let n: i64 = node(owner_of(key).await).await.exists(key).await.unwrap();
    n == 1
}

/// How many keys of `slot` node `i` holds.
async fn keys_in_slot(i: usize, slot: u16) -> i64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query_async(&mut node(i).await)
        .await
        .unwrap()
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

/// Another client trying to take `name` every 20 ms, through whatever
/// happens to the cluster, until [`Observer::granted`]: the guards it got.
struct Observer {
    stop: Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<Vec<u64>>,
}

impl Observer {
    async fn start(name: &str) -> Observer {
        let client = impatient_client(Duration::from_secs(30)).await;
        let lock = client.lock(name);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let _client = client;
            let mut granted = Vec::new();
            while !stopped.load(Ordering::SeqCst) {
                // Errors (a node down, a failover under way) are expected.
                if let Ok(Ok(Some(guard))) = tokio::time::timeout(ms(3000), lock.try_lock()).await {
                    granted.push(guard.token());
                }
                tokio::time::sleep(ms(20)).await;
            }
            granted
        });
        Observer { stop, task }
    }

    /// Stops it: the tokens of the guards it was granted.
    async fn granted(self) -> Vec<u64> {
        self.stop.store(true, Ordering::SeqCst);
        within(ms(5000), "the observer", self.task).await.unwrap()
    }
}

/// `key`'s hash as replica `i` has it (`READONLY`: a replica answers for
/// its primary's slots).
async fn hgetall_on_replica(i: usize, key: &str) -> HashMap<String, String> {
    let mut con = node(i).await;
    let _: () = redis::cmd("READONLY").query_async(&mut con).await.unwrap();
    con.hgetall(key).await.unwrap()
}

// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_on_every_primary_with_braces_reentry_and_tokens() {
    let _topology = TOPOLOGY.read().await;
    let client = client().await;
    // Names until every primary owns one, and names with hash tags.
    let mut names: Vec<String> = Vec::new();
    let mut covered = BTreeSet::new();
    for i in 0..1000 {
        let name = format!("every-{i}");
        if covered.insert(owner_of(&name).await) {
            names.push(name);
        }
        if covered.len() == PRIMARIES {
            break;
        }
    }
    names.extend(["user{7}:cart".to_string(), "{orders}:42".to_string()]);
    let mut nodes_used = Vec::new();
    for name in &names {
        let owner_node = owner_of(name).await;
        nodes_used.push(owner_node);
        let lock = client.lock(name);
        let guard = lock.lock().await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let owner = guard.owner().to_string();
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(owner.clone(), "1".to_string())]),
            "{name}: the hash on the node that owns its slot"
        );
        let again = guard.reenter().await.unwrap();
        assert_eq!(
            again.token(),
            guard.token(),
            "{name}: a re-entry keeps the token"
        );
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(owner.clone(), "2".to_string())])
        );
        assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 2);
        again.unlock().await.unwrap();
        let first_token = guard.token();
        guard.unlock().await.unwrap();
        assert!(!exists_anywhere(name).await, "{name}: released");
        // The next holder's token is higher.
        let next = lock.try_lock().await.unwrap().expect("free again");
        assert!(next.token() > first_token, "{name}: tokens increase");
        next.unlock().await.unwrap();
    }
    nodes_used.sort_unstable();
    nodes_used.dedup();
    assert_eq!(nodes_used, primaries().await, "locks on every primary");
    // A name whose braces would split its keys is refused, typed.
    let err = client.lock("{}x").lock().await.unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::InvalidName { .. }),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_across_clients_never_overlaps_and_tokens_increase() {
    let _topology = TOPOLOGY.read().await;
    const CLIENTS: usize = 3;
    const TASKS: usize = 4;
    const ROUNDS: usize = 5;
    let name = "{contended}:lock";
    let counter = "{contended}:counter";
    let owner_node = owner_of(name).await;
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let last_token = Arc::new(AtomicU64::new(0));
    let regressions = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = client().await;
        for _ in 0..TASKS {
            let lock = client.lock(name);
            let mut con = node(owner_node).await;
            let (inside, overlaps, last_token, regressions) = (
                inside.clone(),
                overlaps.clone(),
                last_token.clone(),
                regressions.clone(),
            );
            tasks.push(tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    let guard = lock.lock().await.expect("lock()");
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    if last_token.fetch_max(guard.token(), Ordering::SeqCst) >= guard.token() {
                        regressions.fetch_add(1, Ordering::SeqCst);
                    }
                    let n: Option<u64> = con.get(counter).await.unwrap();
                    tokio::time::sleep(ms(1)).await;
                    let _: () = con.set(counter, n.unwrap_or(0) + 1).await.unwrap();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.unlock().await.expect("unlock()");
                }
            }));
        }
    }
    within(Duration::from_secs(30), "all workers", async {
        for task in tasks {
            task.await.expect("worker");
        }
    })
    .await;
    let total: u64 = node(owner_node).await.get(counter).await.unwrap();
    assert_eq!(total, (CLIENTS * TASKS * ROUNDS) as u64, "lost updates");
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two holders at once");
    assert_eq!(regressions.load(Ordering::SeqCst), 0, "a token went down");
    assert!(!exists_anywhere(name).await, "the lock is left held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wake_ups_arrive_through_sharded_pubsub_on_the_owning_node() {
    let _topology = TOPOLOGY.read().await;
    let holder = client().await;
    let waiting = client().await;
    let name = "wake-sharded";
    let channel = "redisson_lock__channel:{wake-sharded}";
    let owner_node = owner_of(name).await;
    let guard = holder.lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&waiting, name);
    eventually(ms(3000), "the waiter subscribes", || async {
        subscribers(owner_node, channel).await == (1, 0)
    })
    .await;
    for other in (0..NODES).filter(|i| *i != owner_node) {
        assert_eq!(subscribers(other, channel).await, (0, 0), "node {other}");
    }
    tokio::time::sleep(ms(200)).await;
    assert!(!waiter.is_finished(), "the waiter got a held lock");
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    let after = acquired.duration_since(released);
    assert!(
        after < ms(500),
        "woke {after:?} after the release (30 s lease)"
    );
    assert_eq!(
        hgetall(owner_node, name).await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    eventually(ms(3000), "the waiter unsubscribes", || async {
        subscribers(owner_node, channel).await == (0, 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_lock_waiters_queue_and_wake_in_order_through_sharded_pubsub() {
    let _topology = TOPOLOGY.read().await;
    let holder = client().await;
    // Waiters that never wait for replicas (the cluster's primaries have
    // one each: synced waiters take no handoff).
    let lease = Duration::from_secs(30);
    let (first, second) = (unsynced_client(lease).await, unsynced_client(lease).await);
    let name = "fair-sharded";
    let owner_node = owner_of(name).await;
    let guard = holder.fair_lock(name).lock().await.unwrap();
    let queue = || async move {
        let queue: Vec<String> = node(owner_node)
            .await
            .lrange("redisson_lock_queue:{fair-sharded}", 0, -1)
            .await
            .unwrap();
        queue
    };
    let spawn = |client: &LockClient| {
        let lock = client.fair_lock(name);
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the waiter's lock()");
            let at = Instant::now();
            guard.unlock().await.expect("unlock");
            at
        })
    };
    let a = spawn(&first);
    eventually(ms(3000), "the first waiter queues", || async {
        queue().await.len() == 1
    })
    .await;
    let b = spawn(&second);
    eventually(ms(3000), "the second waiter queues", || async {
        queue().await.len() == 2
    })
    .await;
    let queued = queue().await;
    // Each waiter has its own channel, subscribed (sharded) on the node
    // that owns the lock's slot.
    for owner in &queued {
        let channel = format!("redisson_lock__channel:{{fair-sharded}}:{owner}");
        eventually(ms(3000), "the waiter subscribes", || {
            let channel = channel.clone();
            async move { subscribers(owner_node, &channel).await == (1, 0) }
        })
        .await;
    }
    // Both offered to take a direct handoff (the release then hands the
    // lock to the first, and tells it with SPUBLISH on its channel).
    let offers = hgetall(owner_node, "{fair-sharded}:redlua_handoff").await;
    assert_eq!(
        offers.keys().collect::<std::collections::BTreeSet<_>>(),
        queued.iter().collect(),
        "{offers:?}"
    );
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let a_at = within(ms(5000), "the first waiter", a).await.unwrap();
    let b_at = within(ms(5000), "the second waiter", b).await.unwrap();
    assert!(a_at < b_at, "served in the order they queued");
    assert!(
        b_at.duration_since(released) < ms(1000),
        "woken, not polling (30 s lease)"
    );
    assert!(queue().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_locks_exclude_and_wake_on_a_cluster() {
    let _topology = TOPOLOGY.read().await;
    let a = client().await;
    let b = client().await;
    let name = "{rw}:doc";
    let owner_node = owner_of(name).await;
    let read_a = a.read_write_lock(name).read().lock().await.unwrap();
    let read_b = b.read_write_lock(name).read().lock().await.unwrap();
    let hash = hgetall(owner_node, name).await;
    assert_eq!(hash.get("mode").map(String::as_str), Some("read"));
    assert_eq!(hash.len(), 3, "mode and two readers: {hash:?}");
    let writer = {
        let lock = b.read_write_lock(name).write();
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the writer's lock()");
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished(), "the writer got in beside readers");
    read_a.unlock().await.unwrap();
    tokio::time::sleep(ms(200)).await;
    assert!(!writer.is_finished(), "the writer got in beside a reader");
    let released = Instant::now();
    read_b.unlock().await.unwrap();
    let (acquired, write) = within(ms(5000), "the writer", writer).await.unwrap();
    let after = acquired.duration_since(released);
    assert!(
        after < ms(500),
        "the writer woke {after:?} after the last reader left"
    );
    let hash = hgetall(owner_node, name).await;
    assert_eq!(hash.get("mode").map(String::as_str), Some("write"));
    assert_eq!(
        hash.get(&format!("{}:write", write.owner()))
            .map(String::as_str),
        Some("1")
    );
    // A reader waits for the writer, and wakes on its release.
    let reader = {
        let lock = a.read_write_lock(name).read();
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the reader's lock()");
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(ms(300)).await;
    assert!(!reader.is_finished(), "a reader got in beside the writer");
    let released = Instant::now();
    write.unlock().await.unwrap();
    let (acquired, read) = within(ms(5000), "the reader", reader).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    read.unlock().await.unwrap();
    assert!(!exists_anywhere(name).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_renews_locks_of_many_slots_in_slot_batches() {
    let _topology = TOPOLOGY.read().await;
    let lease = ms(600);
    let client = client_with_watchdog(lease).await;
    // 150 locks in one slot (two batches), and one on every other slot
    // group of a few names spread over the primaries.
    let mut names: Vec<String> = (0..150).map(|i| format!("{{batch}}:{i}")).collect();
    names.extend((0..9).map(|i| format!("spread-{i}")));
    let mut guards = Vec::new();
    for name in &names {
        guards.push(client.lock(name).lock().await.unwrap());
    }
    // Three leases: only renewals keep them.
    tokio::time::sleep(lease * 3).await;
    for (name, guard) in names.iter().zip(&guards) {
        assert!(!guard.is_lost(), "{name}: lost");
        let owner_node = owner_of(name).await;
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())]),
            "{name}"
        );
        let pttl: i64 = node(owner_node).await.pttl(name).await.unwrap();
        assert!(0 < pttl && pttl <= 600, "{name}: pttl {pttl}");
    }
    for guard in guards {
        guard.unlock().await.unwrap();
    }
    for name in &names {
        assert!(!exists_anywhere(name).await, "{name}");
    }
}

/// A hold taken away while held is noticed at once on a cluster too, on
/// every primary: deleted on its node without a message, and force
/// unlocked by another client (the message goes by sharded pub/sub). The
/// watchdog timeout is 30 s: only the loss watch can say lost within 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_taken_away_is_noticed_at_once_on_every_primary() {
    let _topology = TOPOLOGY.read().await;
    let (holder, breaker) = (client().await, client().await);
    let mut names: Vec<String> = Vec::new();
    let mut covered = BTreeSet::new();
    for i in 0..1000 {
        let name = format!("taken-{i}");
        if covered.insert(owner_of(&name).await) {
            names.push(name);
        }
        if covered.len() == PRIMARIES {
            break;
        }
    }
    for name in &names {
        let owner = owner_of(name).await;
        // Deleted on its node, no message.
        let guard = holder.lock(name).lock().await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!guard.is_lost());
        let deleted: i64 = node(owner).await.del(name).await.unwrap();
        assert_eq!(deleted, 1);
        let started = Instant::now();
        within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
        eprintln!(
            "{name} (node {owner}): lost {:?} after a DEL",
            started.elapsed()
        );
        // Force unlocked by another client.
        let guard = holder.read_write_lock(name).write().lock().await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!guard.is_lost());
        assert!(
            breaker
                .read_write_lock(name)
                .write()
                .force_unlock()
                .await
                .unwrap()
        );
        let started = Instant::now();
        within(
            Duration::from_secs(1),
            "lost after force_unlock",
            guard.lost(),
        )
        .await;
        eprintln!(
            "{name} (node {owner}): lost {:?} after force_unlock",
            started.elapsed()
        );
    }
}

/// The node ids, in start order.
async fn node_ids() -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..NODES {
        let id: String = redis::cmd("CLUSTER")
            .arg("MYID")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        ids.push(id);
    }
    ids
}

/// Moves `slot` from node `from` to node `to` as `redis-cli --cluster
/// reshard` does: IMPORTING/MIGRATING, MIGRATE of its keys, SETSLOT NODE.
async fn migrate_slot(slot: u16, from: usize, to: usize) {
    let ids = node_ids().await;
    let cluster = cluster().await;
    let setslot = |state: &str, id: &str| {
        let mut cmd = redis::cmd("CLUSTER");
        cmd.arg("SETSLOT").arg(slot).arg(state).arg(id);
        cmd
    };
    let _: () = setslot("IMPORTING", &ids[from])
        .query_async(&mut node(to).await)
        .await
        .unwrap();
    let _: () = setslot("MIGRATING", &ids[to])
        .query_async(&mut node(from).await)
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(1000)
        .query_async(&mut node(from).await)
        .await
        .unwrap();
    assert!(!keys.is_empty(), "the slot holds the lock");
    let mut migrate = redis::cmd("MIGRATE");
    migrate
        .arg("127.0.0.1")
        .arg(cluster.nodes()[to].port())
        .arg("")
        .arg(0)
        .arg(5000)
        .arg("KEYS")
        .arg(&keys);
    let _: () = migrate.query_async(&mut node(from).await).await.unwrap();
    let others: Vec<usize> = primaries()
        .await
        .into_iter()
        .filter(|i| *i != to && *i != from)
        .collect();
    for i in [to, from].into_iter().chain(others) {
        let _: () = setslot("NODE", &ids[to])
            .query_async(&mut node(i).await)
            .await
            .unwrap();
    }
}

/// Two locks of one slot (the slot of `{tag}`): `renewed` held by a client
/// whose watchdog renews it every 300 ms, `waited` held by another client
/// with a waiter of a third one subscribed on `node`, the slot's owner.
struct Scene {
    renewed_name: String,
    waited_name: String,
    channel: String,
    renewed: LockGuard,
    waited: LockGuard,
    waiter: tokio::task::JoinHandle<(Instant, LockGuard)>,
    _clients: [LockClient; 3],
}

/// The watchdog lease of a [`Scene`]'s renewed lock.
const SCENE_LEASE: Duration = Duration::from_millis(900);

impl Scene {
    async fn start(tag: &str, node: usize) -> Scene {
        let renewed_name = format!("{{{tag}}}:renewed");
        let waited_name = format!("{{{tag}}}:waited");
        let channel = format!("redisson_lock__channel:{{{tag}}}:waited");
        let renewing = client_with_watchdog(SCENE_LEASE).await;
        let holder = client().await;
        let waiting = client().await;
        let renewed = renewing.lock(&renewed_name).lock().await.unwrap();
        let waited = holder.lock(&waited_name).lock().await.unwrap();
        let waiter = spawn_waiter(&waiting, &waited_name);
        eventually(ms(3000), "the waiter subscribes", || async {
            subscribers(node, &channel).await == (1, 0)
        })
        .await;
        Scene {
            renewed_name,
            waited_name,
            channel,
            renewed,
            waited,
            waiter,
            _clients: [renewing, holder, waiting],
        }
    }

    /// Three leases later the renewed lock is still held, on `node`, with a
    /// lease the watchdog keeps renewing; the waiter still waits.
    async fn renewals_went_on(&self, at: usize) {
        tokio::time::sleep(SCENE_LEASE * 3).await;
        assert!(!self.renewed.is_lost(), "the renewed lock was lost");
        assert_eq!(
            hgetall(at, &self.renewed_name).await,
            HashMap::from([(self.renewed.owner().to_string(), "1".to_string())])
        );
        let pttl: i64 = node(at).await.pttl(&self.renewed_name).await.unwrap();
        assert!(0 < pttl && pttl <= 900, "pttl {pttl}");
        assert!(!self.waiter.is_finished(), "the waiter got a held lock");
    }

    /// The release, run by `node`, wakes the waiter at once (the holder's
    /// lease is 30 s), whose token is higher; then nothing is left.
    async fn release_wakes_the_waiter(self, node: usize) {
        let released = Instant::now();
        let waited_token = self.waited.token();
        self.waited.unlock().await.unwrap();
        let (acquired, guard) = within(ms(5000), "the waiter", self.waiter).await.unwrap();
        let after = acquired.duration_since(released);
        assert!(after < ms(500), "woke {after:?} after the release");
        assert!(guard.token() > waited_token, "tokens increase");
        assert_eq!(
            hgetall(node, &self.waited_name).await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())])
        );
        guard.unlock().await.unwrap();
        self.renewed.unlock().await.unwrap();
        assert!(!exists_anywhere(&self.renewed_name).await);
        assert!(!exists_anywhere(&self.waited_name).await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_survives_a_slot_migration_and_waiters_follow_it() {
    let _topology = TOPOLOGY.write().await;
    let from = owner_of("{migrating}:renewed").await;
    let to = *primaries()
        .await
        .iter()
        .find(|i| **i != from)
        .expect("another primary");
    let scene = Scene::start("migrating", from).await;
    let (renewed_name, channel) = (scene.renewed_name.as_str(), scene.channel.as_str());
    // A hold of the slot that the loss watch follows (30 s watchdog).
    let watched_client = client().await;
    let watched = watched_client
        .lock("{migrating}:watched")
        .lock()
        .await
        .unwrap();
    tokio::time::sleep(ms(200)).await;

    migrate_slot(keyslot(renewed_name).await, from, to).await;
    // `owner_of` asks node 0, which may be a replica by now (earlier
    // failovers): it learns the new owner by gossip.
    eventually(
        ms(5000),
        "the cluster sees the slot on its new node",
        || async { owner_of(renewed_name).await == to },
    )
    .await;

    // The subscription follows the slot to its new node.
    eventually(
        ms(5000),
        "the waiter subscribes on the new node",
        || async {
            subscribers(to, channel).await == (1, 0) && subscribers(from, channel).await == (0, 0)
        },
    )
    .await;
    // Renewals follow it too, on the new node only.
    scene.renewals_went_on(to).await;
    assert_eq!(keys_in_slot(from, keyslot(renewed_name).await).await, 0);
    // So does the loss watch: the migration was no loss, and a hold taken
    // away on the new node is noticed at once.
    assert!(!watched.is_lost(), "the migration was taken for a loss");
    let deleted: i64 = node(to).await.del("{migrating}:watched").await.unwrap();
    assert_eq!(deleted, 1);
    within(ms(1000), "lost after a DEL on the new node", watched.lost()).await;
    // A release on the new node wakes the waiter at once.
    scene.release_wakes_the_waiter(to).await;
}

/// Subscribers of `channel` on every node: (sharded, plain), summed.
async fn subscribers_anywhere(channel: &str) -> (i64, i64) {
    let mut total = (0, 0);
    for i in 0..NODES {
        let (sharded, plain) = subscribers(i, channel).await;
        total = (total.0 + sharded, total.1 + plain);
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_survives_a_primary_failover_and_waiters_still_wake() {
    let _topology = TOPOLOGY.write().await;
    let old = owner_of("{failover}:renewed").await;
    let new = replica_of(old).await;
    let scene = Scene::start("failover", old).await;
    let (renewed_name, channel) = (scene.renewed_name.as_str(), scene.channel.as_str());
    let observer = Observer::start(renewed_name).await;

    // A manual failover: the replica catches up, then takes over.
    let _: () = redis::cmd("CLUSTER")
        .arg("FAILOVER")
        .query_async(&mut node(new).await)
        .await
        .unwrap();
    eventually(ms(10_000), "the replica takes over the slot", || async {
        owner_of(renewed_name).await == new && primaries().await.contains(&new)
    })
    .await;

    // Renewals go on on the new primary, and nobody else got the lock.
    scene.renewals_went_on(new).await;
    assert_eq!(
        observer.granted().await,
        Vec::<u64>::new(),
        "a second holder"
    );
    // Still exactly one subscription of the waiters' client, sharded.
    eventually(ms(5000), "one sharded subscription", || async {
        subscribers_anywhere(channel).await == (1, 0)
    })
    .await;
    // The subscription may still be on the old primary, now a replica: the
    // new primary forwards its shard's messages there once it counts it as
    // its replica. (A release in the moment before can miss the waiter,
    // which then tries again within 5 s, as after any lost message.)
    eventually(
        ms(10_000),
        "the old primary replicates the new one",
        || async {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut node(new).await)
                .await
                .unwrap();
            let port = cluster().await.nodes()[old].port();
            info.lines()
                .any(|line| line.contains(&format!("port={port},state=online")))
        },
    )
    .await;

    // The release, run by the new primary, wakes the waiter at once.
    scene.release_wakes_the_waiter(new).await;
}

/// Node `.0` paused (`SIGSTOP`, a hung process) until this is dropped, even
/// by a failing test (the cluster is shared).
struct Paused(&'static redlua_test_support::RedisServer);

impl Paused {
    async fn node(i: usize) -> Paused {
        let server = &cluster().await.nodes()[i];
        server.pause();
        Paused(server)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        self.0.resume();
    }
}

/// A client of the cluster that gives up on a silent node quickly.
async fn impatient_client(watchdog: Duration) -> LockClient {
    LockClient::cluster_builder(cluster().await.urls())
        .watchdog_timeout(watchdog)
        .connect_timeout(ms(500))
        .response_timeout(ms(500))
        .connect()
        .await
        .expect("connect to the cluster")
}

/// Waits until node `i` is a replica in sync with its primary.
async fn wait_replica_in_sync(i: usize) {
    eventually(ms(20_000), "the old primary syncs as a replica", || async {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut node(i).await)
            .await
            .unwrap_or_default();
        info.contains("role:slave")
            && info.contains("master_link_status:up")
            && info.contains("master_sync_in_progress:0")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_primary_fails_its_acquires_cleanly_and_leaves_nothing_held() {
    let _topology = TOPOLOGY.write().await;
    let name = "{hung}:lock";
    let hung = owner_of(name).await;
    // A lock on another primary, for comparison.
    let mut elsewhere = String::new();
    for i in 0..1000 {
        let candidate = format!("elsewhere-{i}");
        if owner_of(&candidate).await != hung {
            elsewhere = candidate;
            break;
        }
    }
    let impatient = impatient_client(Duration::from_secs(30)).await;
    let paused = Paused::node(hung).await;
    // The other primaries go on serving their slots.
    let other = within(
        ms(5_000),
        "a lock on another primary",
        impatient.lock(&elsewhere).try_lock(),
    )
    .await;
    let started = Instant::now();
    let outcome = within(
        ms(10_000),
        "try_lock on a hung node",
        impatient.lock(name).try_lock(),
    )
    .await;
    let failed_after = started.elapsed();
    drop(paused);
    let err = outcome.expect_err("an acquire on a hung node fails");
    assert!(
        matches!(err, redlua_runtime::Error::Redis(_)),
        "a typed Redis error: {err:?}"
    );
    // Well before the node timeout (5 s): no failover meanwhile.
    assert!(failed_after < ms(3_000), "failed after {failed_after:?}");
    let other = other
        .expect("the other primary answers")
        .expect("the other lock is free");
    other.unlock().await.unwrap();
    // The acquire the hung node ran late was undone: nothing stays held,
    // and another client gets the lock.
    eventually(ms(10_000), "the late acquire is undone", || async {
        !exists_anywhere(name).await
    })
    .await;
    let second = client().await;
    let guard = second
        .lock(name)
        .try_lock()
        .await
        .unwrap()
        .expect("the lock is free");
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_survives_a_hung_primary_being_failed_over() {
    let _topology = TOPOLOGY.write().await;
    let renewed_name = "{dead}:renewed";
    let waited_name = "{dead}:waited";
    let old = owner_of(renewed_name).await;
    let new = replica_of(old).await;
    // A lease longer than the failover (node timeout 5 s).
    let watchdog = Duration::from_secs(15);
    let renewing = impatient_client(watchdog).await;
    let holder = impatient_client(Duration::from_secs(30)).await;
    let waiting = impatient_client(Duration::from_secs(30)).await;
    let renewed = renewing.lock(renewed_name).lock().await.unwrap();
    let waited = holder.lock(waited_name).lock().await.unwrap();
    let waiter = spawn_waiter(&waiting, waited_name);
    let channel = "redisson_lock__channel:{dead}:waited";
    eventually(ms(3000), "the waiter subscribes", || async {
        subscribers(old, channel).await == (1, 0)
    })
    .await;
    // Synced mode (the default): both holds were on the replica before
    // their guards existed.
    assert_eq!(
        hgetall_on_replica(new, renewed_name).await,
        HashMap::from([(renewed.owner().to_string(), "1".to_string())])
    );
    assert_eq!(
        hgetall_on_replica(new, waited_name).await,
        HashMap::from([(waited.owner().to_string(), "1".to_string())])
    );
    let observer = Observer::start(renewed_name).await;

    let paused = Paused::node(old).await;
    eventually(ms(20_000), "the replica takes over", || async {
        let role: Vec<redis::Value> = redis::cmd("ROLE")
            .query_async(&mut node(new).await)
            .await
            .unwrap();
        redis::from_redis_value::<String>(role[0].clone()).unwrap() == "master"
    })
    .await;

    // The watchdog renews on the new primary (every 5 s): a lease above
    // 14 s now was set less than a second ago, so after the primary hung
    // (which took at least the 5 s node timeout to fail over).
    eventually(ms(10_000), "a renewal on the new primary", || async {
        let pttl: i64 = node(new).await.pttl(renewed_name).await.unwrap();
        pttl > 14_000
    })
    .await;
    assert!(!renewed.is_lost(), "the renewed lock was lost");
    assert_eq!(
        hgetall(new, renewed_name).await,
        HashMap::from([(renewed.owner().to_string(), "1".to_string())])
    );
    assert!(!waiter.is_finished(), "the waiter got a held lock");
    assert_eq!(
        observer.granted().await,
        Vec::<u64>::new(),
        "a second holder"
    );

    // The waiter subscribed again on the new primary, and wakes on the
    // release at once.
    eventually(
        ms(10_000),
        "the waiter subscribes on the new primary",
        || async { subscribers(new, channel).await == (1, 0) },
    )
    .await;
    // The holder's client may not have sent anything since the primary
    // hung: its connection still points there, and the first command
    // times out (500 ms), replacing it. `unlock` then reports the error and
    // the release goes on in the background, on the new primary.
    let released = Instant::now();
    let waited_token = waited.token();
    match waited.unlock().await {
        Ok(()) | Err(redlua_runtime::Error::Redis(_)) => {}
        Err(other) => panic!("unlock: {other:?}"),
    }
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    let after = acquired.duration_since(released);
    assert!(after < ms(2500), "woke {after:?} after the release");
    assert!(guard.token() > waited_token, "tokens increase");
    guard.unlock().await.unwrap();
    renewed.unlock().await.unwrap();
    assert!(!exists_anywhere(renewed_name).await);
    assert!(!exists_anywhere(waited_name).await);

    // The old primary comes back as a replica of the new one.
    drop(paused);
    wait_replica_in_sync(old).await;
    eventually(ms(10_000), "every node agrees", || async {
        primaries().await.len() == PRIMARIES
    })
    .await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_synced_mode_a_failover_can_grant_the_lock_twice() {
    let _topology = TOPOLOGY.write().await;
    let name = "{unsynced}:lock";
    let old = owner_of(name).await;
    let new = replica_of(old).await;
    let synced = impatient_client(Duration::from_secs(30)).await;
    let unsynced = unsynced_client(Duration::from_secs(3)).await;

    // A replica that does not answer: synced mode undoes the acquire.
    let paused_replica = Paused::node(new).await;
    let err = within(ms(5000), "a synced try_lock", synced.lock(name).try_lock())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            redlua_runtime::Error::NotReplicated {
                acked: 0,
                wanted: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!exists_anywhere(name).await, "nothing held");
    // The link to the replica breaks; unsynced, the acquire is granted on
    // the primary alone.
    let _: redis::Value = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut node(old).await)
        .await
        .unwrap();
    let first = unsynced.lock(name).lock().await.unwrap();

    // The primary hangs; the replica runs again and takes over, without
    // the hold.
    let paused_primary = Paused::node(old).await;
    drop(paused_replica);
    eventually(ms(20_000), "the replica takes over", || async {
        role(new).await == "master"
    })
    .await;

    // A second holder is granted while the first still has its guard.
    let second_client = unsynced_client(Duration::from_secs(30)).await;
    let deadline = Instant::now() + ms(10_000);
    let second = loop {
        if let Ok(Some(guard)) = second_client.lock(name).try_lock().await {
            break guard;
        }
        assert!(Instant::now() < deadline, "no second holder");
        tokio::time::sleep(ms(50)).await;
    };
    // The token counter was lost with the hold, but tokens start from the
    // server's clock: the second holder's is still higher, and a fenced
    // resource refuses the first holder's writes once it saw it.
    assert!(
        second.token() > first.token(),
        "first {}, second {}",
        first.token(),
        second.token()
    );
    // The first holder learns it at its next renewal (every second).
    within(ms(5000), "the first holder sees the loss", first.lost()).await;
    second.unlock().await.unwrap();
    let _ = first.unlock().await;

    drop(paused_primary);
    wait_replica_in_sync(old).await;
    eventually(ms(10_000), "every node agrees", || async {
        primaries().await.len() == PRIMARIES
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_connection_of_your_own_and_bad_settings() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    // A ClusterConnection given to the cluster builder, and to the
    // single-node builder (which then works as a cluster client too).
    let mine = cluster.client().get_async_connection().await.unwrap();
    let clients = [
        LockClient::cluster_builder(cluster.urls())
            .connection(mine.clone())
            .connect()
            .await
            .unwrap(),
        LockClient::builder(cluster.urls()[0].as_str())
            .connection(mine)
            .connect()
            .await
            .unwrap(),
    ];
    let name = "{own}:lock";
    let owner_node = owner_of(name).await;
    let channel = "redisson_lock__channel:{own}:lock";
    let guard = clients[0].lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&clients[1], name);
    eventually(ms(3000), "the waiter subscribes, sharded", || async {
        subscribers(owner_node, channel).await == (1, 0)
    })
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    assert_eq!(
        hgetall(owner_node, name).await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    assert!(!exists_anywhere(name).await);

    // A cluster builder refuses a single-node connection, and no URLs.
    let single = cluster.nodes()[0]
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let err = LockClient::cluster_builder(cluster.urls())
        .connection(single)
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, redlua_runtime::Error::Config(_)), "{err:?}");
    let err = LockClient::cluster(Vec::<String>::new()).await.unwrap_err();
    assert!(matches!(err, redlua_runtime::Error::Config(_)), "{err:?}");
    let err = LockClient::cluster(["not a url"]).await.unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::InvalidUrl { .. }),
        "{err:?}"
    );
    // Nothing listening: a typed connect error, in time.
    let started = Instant::now();
    let err = LockClient::cluster_builder(["redis://127.0.0.1:1/"])
        .connect_timeout(ms(300))
        .response_timeout(ms(300))
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::Connect { .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < ms(2000), "{:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_node_client_on_a_cluster_fails_at_once_with_moved() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    let mut name = String::new();
    for i in 0..1000 {
        let candidate = format!("misplaced-{i}");
        if owner_of(&candidate).await != 0 {
            name = candidate;
            break;
        }
    }
    let single = LockClient::connect(cluster.urls()[0].as_str())
        .await
        .unwrap();
    let err = within(
        ms(3000),
        "lock() on the wrong node",
        single.lock(&name).lock(),
    )
    .await
    .unwrap_err();
    // A primary redirects the script; a replica (node 0 may be one after a
    // failover test) is refused before anything is sent.
    let node_0_is_a_replica = role(0).await == "slave";
    match err {
        redlua_runtime::Error::Redis(e) if node_0_is_a_replica => {
            assert!(e.to_string().contains("is a replica, not a primary"), "{e}")
        }
        redlua_runtime::Error::Redis(e) => assert_eq!(e.code(), Some("MOVED"), "{e}"),
        other => panic!("expected a MOVED error: {other:?}"),
    }
    assert!(!exists_anywhere(&name).await);
}

/// The documented ACL rule (docs/operations.md, `ACL SETUSER locks ...`),
/// its arguments.
fn documented_acl_rule() -> Vec<String> {
    include_str!("../../docs/operations.md")
        .lines()
        .find(|line| line.starts_with("ACL SETUSER locks "))
        .expect("docs/operations.md gives an ACL SETUSER rule")
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_work_as_the_documented_acl_user_plus_the_cluster_commands() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    let mut rule = documented_acl_rule();
    rule.extend([
        "+cluster|slots".to_string(),
        "+cluster|myid".to_string(),
        "+pubsub|shardnumsub".to_string(),
    ]);
    for i in 0..NODES {
        let mut admin = node(i).await;
        let _: () = redis::cmd("ACL")
            .arg(&rule)
            .query_async(&mut admin)
            .await
            .unwrap();
        let _: () = redis::cmd("ACL")
            .arg("LOG")
            .arg("RESET")
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let urls: Vec<String> = cluster
        .nodes()
        .iter()
        .map(|n| format!("redis://locks:secret@127.0.0.1:{}/", n.port()))
        .collect();
    let a = LockClient::cluster(urls.clone()).await.unwrap();
    let b = LockClient::cluster(urls).await.unwrap();
    let name = "app:acl";
    let owner_node = owner_of(name).await;
    let guard = a.lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&b, name);
    eventually(ms(3000), "the waiter subscribes", || async {
        subscribers(owner_node, "redisson_lock__channel:{app:acl}").await == (1, 0)
    })
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    let read = b.read_write_lock("app:acl-rw").read().lock().await.unwrap();
    read.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    tokio::time::sleep(ms(200)).await;
    for i in 0..NODES {
        let log: Vec<redis::Value> = redis::cmd("ACL")
            .arg("LOG")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        assert!(log.is_empty(), "node {i} refused: {log:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_client_locks_and_wakes_on_a_cluster() {
    let _topology = TOPOLOGY.read().await;
    let urls = cluster().await.urls();
    let names = ["blocking-a", "{blocking}:b", "blocking-c"];
    let mut owners = Vec::new();
    for name in names {
        owners.push(owner_of(name).await);
    }
    tokio::task::spawn_blocking(move || {
        use redlua_runtime::blocking;
        let holder = blocking::LockClient::cluster_builder(urls.clone())
            .watchdog_timeout(ms(900))
            .connect()
            .expect("a blocking cluster client");
        let other = blocking::LockClient::cluster(urls).expect("a blocking cluster client");
        for name in names {
            let guard = holder.lock(name).lock().unwrap();
            assert!(other.lock(name).try_lock().unwrap().is_none());
            // A waiter on another thread is woken by the release.
            let lock = other.lock(name);
            let waiter = std::thread::spawn(move || {
                let started = Instant::now();
                let guard = lock.try_lock_for(Duration::from_secs(20), None).unwrap();
                (guard.map(|g| g.unlock()), started.elapsed())
            });
            // Past a lease period: renewed on the cluster by the client's thread.
            std::thread::sleep(ms(1_200));
            assert!(!guard.is_lost());
            guard.unlock().unwrap();
            let (unlocked, waited) = waiter.join().unwrap();
            assert!(matches!(unlocked, Some(Ok(()))), "{name}");
            assert!(waited < Duration::from_secs(5), "{name}: {waited:?}");
        }
    })
    .await
    .unwrap();
    // The names were spread over more than one primary.
    let mut distinct = owners.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 1, "{owners:?}");
}

/// Semaphores and count-down latches on the cluster: every key and channel
/// of one primitive in its name's slot, waiters woken through sharded
/// pub/sub on the node that owns it (a waiter polls every 5 s: each wake-up
/// here comes within a second), and a leased permit taken away noticed by
/// its holder at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphores_and_latches_live_in_their_slot_and_wake_their_waiters_there() {
    let _topology = TOPOLOGY.read().await;
    let a = client().await;
    let b = client().await;
    for name in ["sem-a", "sem-b", "sem-c", "tenant{7}:sem"] {
        let sem = a.semaphore(name);
        assert!(sem.try_set_permits(1).await.unwrap());
        assert!(sem.try_acquire(1).await.unwrap());
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
        b.semaphore(name).release(1).await.unwrap();
        let got = within(ms(4000), "a semaphore waiter", waiter)
            .await
            .unwrap();
        assert!(
            got - released < ms(1000),
            "{name}: woken after {:?}",
            got - released
        );
        let leased = a.leased_semaphore(&format!("leased-{name}"));
        leased.set_permits(1).await.unwrap();
        let permit = leased.acquire(1).await.unwrap();
        assert!(leased.try_acquire(1).await.unwrap().is_none());
        permit.release().await.unwrap();
        // A permit given back by another client is noticed by its holder
        // at once, on the node that owns the slot (a renewal round is 10 s
        // away with the default watchdog).
        let permit = leased.acquire(1).await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!permit.is_lost(), "{name}");
        let id = permit.ids().remove(0);
        assert!(
            b.leased_semaphore(&format!("leased-{name}"))
                .force_release(&id)
                .await
                .unwrap()
        );
        within(ms(1000), "a permit taken away said lost", permit.lost()).await;
        assert!(permit.release().await.is_err(), "{name}");
    }
    for name in ["latch-a", "latch-b", "latch-c"] {
        let latch = a.count_down_latch(name);
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
        b.count_down_latch(name).count_down().await.unwrap();
        let woke = within(ms(4000), "a latch waiter", waiter).await.unwrap();
        assert!(
            woke - opened < ms(1000),
            "{name}: woken after {:?}",
            woke - opened
        );
    }
}
