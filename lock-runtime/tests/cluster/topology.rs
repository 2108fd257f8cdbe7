//! Changes of topology: a slot migration, failovers, a hung primary, and without synced mode.

use super::{
    NODES, PRIMARIES, TOPOLOGY, client, client_with_watchdog, cluster, eventually, exists_anywhere,
    hgetall, keyslot, ms, node, owner_of, primaries, role, settled, spawn_waiter, subscribers,
    unsynced_client, within,
};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

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

/// How many keys of `slot` node `i` holds.
async fn keys_in_slot(i: usize, slot: u16) -> i64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query_async(&mut node(i).await)
        .await
        .unwrap()
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
    settled().await;
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
    settled().await;
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
    settled().await;
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
    settled().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_synced_mode_a_failover_can_grant_the_lock_twice() {
    let _topology = TOPOLOGY.write().await;
    settled().await;
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
