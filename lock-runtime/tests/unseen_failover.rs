//! Replica-synced acquires after a failover that the client has not seen.
//!
//! A client's view of a cluster is refreshed only when something tells it
//! the topology changed. A request without a key (`INFO`) routed by an old
//! slot map reaches the demoted primary, which answers as a replica and
//! never redirects. These tests fail a slot's primary over behind the
//! clients' backs (a clean manual failover, a `TAKEOVER`, and a primary
//! that hangs until its replica takes over), then make the demoted node
//! unable to acknowledge writes (`CLIENT PAUSE WRITE`), and check that a
//! default-mode acquire never returns a guard whose hold no replica has.
//!
//! This binary has a cluster of its own (three primaries with a replica
//! each): its tests change the topology, one at a time.

use redis::aio::MultiplexedConnection;
use redlua_runtime::{Error, LockClient, LockGuard};
use redlua_test_support::RedisCluster;
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

const PRIMARIES: usize = 3;
const NODES: usize = 2 * PRIMARIES;

static CLUSTER: OnceLock<&'static RedisCluster> = OnceLock::new();

/// The tests change the topology: one at a time.
static TOPOLOGY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn cluster() -> &'static RedisCluster {
    tokio::task::spawn_blocking(|| {
        *CLUSTER.get_or_init(|| RedisCluster::start_with_replicas(PRIMARIES, 1).until_exit())
    })
    .await
    .expect("starting the cluster")
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(ms(50)).await;
    }
}

async fn node(i: usize) -> MultiplexedConnection {
    cluster().await.nodes()[i]
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a node connection")
}

/// Node `i`'s `ROLE`: "master" or "slave", and a replica's primary port.
async fn role(i: usize) -> (String, Option<u16>) {
    let role: Vec<redis::Value> = match redis::cmd("ROLE").query_async(&mut node(i).await).await {
        Ok(role) => role,
        Err(_) => return (String::new(), None),
    };
    let kind: String = redis::from_redis_value(role[0].clone()).unwrap();
    let port = (kind == "slave").then(|| redis::from_redis_value(role[2].clone()).unwrap());
    (kind, port)
}

/// The node that serves `key`'s slot as a primary now: the master that
/// does not redirect a read of it.
async fn owner_of(key: &str) -> usize {
    let deadline = Instant::now() + ms(20_000);
    loop {
        for i in 0..NODES {
            if role(i).await.0 != "master" {
                continue;
            }
            let reply: redis::RedisResult<redis::Value> = redis::cmd("EXISTS")
                .arg(key)
                .query_async(&mut node(i).await)
                .await;
            if reply.is_ok() {
                return i;
            }
        }
        assert!(Instant::now() < deadline, "no primary serves {key}");
        tokio::time::sleep(ms(50)).await;
    }
}

/// The replica of primary `i`.
async fn replica_of(i: usize) -> usize {
    let port = cluster().await.nodes()[i].port();
    for r in 0..NODES {
        if role(r).await == ("slave".to_string(), Some(port)) {
            return r;
        }
    }
    panic!("node {i} has no replica")
}

/// Waits until node `replica` replicates node `primary`, in sync.
async fn in_sync(replica: usize, primary: usize) {
    let port = cluster().await.nodes()[primary].port();
    eventually(ms(30_000), "the replica syncs", || async {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut node(replica).await)
            .await
            .unwrap_or_default();
        info.contains("role:slave")
            && info.contains(&format!("master_port:{port}"))
            && info.contains("master_link_status:up")
            && info.contains("master_sync_in_progress:0")
    })
    .await;
    let replica_port = cluster().await.nodes()[replica].port();
    eventually(ms(30_000), "the primary counts it online", || async {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut node(primary).await)
            .await
            .unwrap_or_default();
        info.contains(&format!("port={replica_port},state=online"))
    })
    .await;
}

/// How a slot's primary is failed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failover {
    /// `CLUSTER FAILOVER` on the replica: it catches up, then takes over.
    Clean,
    /// `CLUSTER FAILOVER TAKEOVER` on the replica: at once, without the
    /// primary's agreement.
    Takeover,
    /// The primary hangs (`SIGSTOP`) until its replica takes over, then
    /// runs again and finds itself a replica.
    HungPrimary,
}

/// Fails `primary` over to `replica`; returns once `primary` replicates
/// `replica`, in sync.
async fn fail_over(how: Failover, primary: usize, replica: usize) {
    match how {
        Failover::Clean | Failover::Takeover => {
            // A manual failover whose replica does not catch up in time is
            // given up by the cluster (silently): asked again.
            let mut attempts = 0;
            loop {
                let mut cmd = redis::cmd("CLUSTER");
                cmd.arg("FAILOVER");
                if matches!(how, Failover::Takeover) {
                    cmd.arg("TAKEOVER");
                }
                let _: () = cmd.query_async(&mut node(replica).await).await.unwrap();
                if promoted_within(replica, ms(8000)).await {
                    break;
                }
                attempts += 1;
                assert!(attempts < 3, "{how:?}: node {replica} never took over");
            }
        }
        Failover::HungPrimary => {
            let server = &cluster().await.nodes()[primary];
            server.pause();
            // Resumed even if the replica never takes over.
            let promoted = promoted_within(replica, ms(30_000)).await;
            server.resume();
            assert!(promoted, "the replica of a hung primary takes over");
        }
    }
    eventually(ms(20_000), "the old primary becomes a replica", || async {
        role(replica).await.0 == "master" && role(primary).await.0 == "slave"
    })
    .await;
    in_sync(primary, replica).await;
}

/// Whether node `i` is a primary within `limit`.
async fn promoted_within(i: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while role(i).await.0 != "master" {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(ms(50)).await;
    }
    true
}

/// Writes paused on node `.0` (`CLIENT PAUSE WRITE`): it still answers
/// `INFO`, but acknowledges no replicated write. Unpaused when dropped.
struct WritesPaused(usize);

impl WritesPaused {
    async fn on(i: usize) -> WritesPaused {
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(60_000)
            .arg("WRITE")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        WritesPaused(i)
    }
}

impl Drop for WritesPaused {
    fn drop(&mut self) {
        let server = &CLUSTER.get().expect("the cluster").nodes()[self.0];
        let _ = redis::cmd("CLIENT")
            .arg("UNPAUSE")
            .query::<()>(&mut server.connection());
    }
}

/// A default-mode (replica-synced) client that gives up on a silent node
/// quickly.
async fn client() -> LockClient {
    LockClient::cluster_builder(cluster().await.urls())
        .connect_timeout(ms(1000))
        .response_timeout(ms(1000))
        .sync_timeout(ms(300))
        .connect()
        .await
        .expect("connect to the cluster")
}

/// A client on a cluster connection of the test's own (redis-rs's; the
/// client cannot replace it, only make it read the slots again).
async fn client_on_own_connection() -> LockClient {
    let urls = cluster().await.urls();
    let con = cluster()
        .await
        .client()
        .get_async_connection()
        .await
        .unwrap();
    LockClient::cluster_builder(urls)
        .connection(con)
        .sync_timeout(ms(300))
        .connect()
        .await
        .expect("a client on the test's connection")
}

/// Whether `key` exists on node `i` (`READONLY`: a replica answers for its
/// primary's slots).
async fn exists_on(i: usize, key: &str) -> bool {
    let mut con = node(i).await;
    let _: () = redis::cmd("READONLY").query_async(&mut con).await.unwrap();
    let n: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query_async(&mut con)
        .await
        .unwrap();
    n == 1
}

/// What a default-mode `try_lock` gave, where the primary's only replica
/// acknowledges nothing: it must never be a guard.
fn assert_not_granted(who: &str, result: Result<Option<LockGuard>, Error>) {
    match result {
        Err(Error::NotReplicated {
            acked: 0,
            wanted: 1,
            ..
        }) => {}
        other => panic!(
            "{who}: a synced acquire must fail with NotReplicated {{ acked: 0, wanted: 1 }} \
             when the primary's replica acknowledges nothing, got {other:?}"
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_acquire_after_an_unseen_takeover_waits_for_the_new_primarys_replica() {
    let _topology = TOPOLOGY.lock().await;
    let name = "{unseen}:lock";
    let old = owner_of(name).await;
    let new = replica_of(old).await;
    // Connected before the failover; one of them has counted the old
    // primary's replicas already.
    let fresh = client().await;
    let counted = client().await;
    counted
        .lock(name)
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    let own_connection = client_on_own_connection().await;

    fail_over(Failover::Takeover, old, new).await;
    let paused = WritesPaused::on(old).await;
    let started = Instant::now();
    for (who, client) in [
        ("a client that counted nothing", &fresh),
        ("a client that counted the old primary", &counted),
        (
            "a client on a cluster connection of its own",
            &own_connection,
        ),
    ] {
        let result = within(ms(10_000), who, client.lock(name).try_lock()).await;
        assert_not_granted(who, result);
        assert!(
            !exists_on(new, name).await,
            "{who}: the undone acquire left a hold"
        );
    }
    // A client that connected after the failover agrees.
    let later = client().await;
    assert_not_granted(
        "a client connected after the failover",
        later.lock(name).try_lock().await,
    );
    assert!(started.elapsed() < ms(10_000), "{:?}", started.elapsed());

    // Once the replica acknowledges again, the same clients get the lock,
    // and the replica has the hold when the guard is returned.
    drop(paused);
    for client in [&fresh, &counted, &own_connection, &later] {
        let guard = within(ms(10_000), "a lock", client.lock(name).lock())
            .await
            .unwrap();
        assert!(exists_on(old, name).await, "the replica has the hold");
        guard.unlock().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failovers_the_clients_have_not_seen_never_grant_a_lock_twice() {
    let _topology = TOPOLOGY.lock().await;
    let name = "{unseen}:rounds";
    let mut double_grants = Vec::new();
    for how in [Failover::Clean, Failover::Takeover, Failover::HungPrimary] {
        let old = owner_of(name).await;
        let new = replica_of(old).await;
        eprintln!("{how:?}: node {old} fails over to node {new}");
        // Clients connected before the failover, acquiring in the default
        // mode; one has counted the primary's replicas already.
        let holder = client().await;
        let counted = client().await;
        counted
            .lock(name)
            .lock()
            .await
            .unwrap()
            .unlock()
            .await
            .unwrap();

        fail_over(how, old, new).await;
        // The new replica acknowledges nothing from here on: a guard
        // granted now would have its hold on the new primary alone.
        let paused = WritesPaused::on(old).await;
        let mut guards = Vec::new();
        for client in [&holder, &counted] {
            match within(ms(10_000), "try_lock", client.lock(name).try_lock()).await {
                Ok(Some(guard)) => guards.push(guard),
                // Held by the other client's guard.
                Ok(None) => assert!(!guards.is_empty(), "{how:?}: nobody holds the lock"),
                Err(_) => {}
            }
        }
        // The new primary now fails too, to the replica that acknowledged
        // nothing (a `TAKEOVER` needs no agreement from the paused node's
        // writes); whatever it did not acknowledge is gone.
        let _: () = redis::cmd("CLUSTER")
            .arg("FAILOVER")
            .arg("TAKEOVER")
            .query_async(&mut node(old).await)
            .await
            .unwrap();
        drop(paused);
        eventually(ms(20_000), "the paused replica takes over", || async {
            role(old).await.0 == "master" && role(new).await.0 == "slave"
        })
        .await;
        in_sync(new, old).await;

        // An observer that connects now is granted the lock only if no
        // guard of the round still stands.
        let observer = client().await;
        let deadline = Instant::now() + ms(10_000);
        let granted = loop {
            // Its own acquire may meet a replica still catching up.
            match within(ms(10_000), "the observer", observer.lock(name).try_lock()).await {
                Ok(granted) => break granted,
                Err(error) => assert!(Instant::now() < deadline, "the observer: {error}"),
            }
            tokio::time::sleep(ms(100)).await;
        };
        let standing = guards.iter().filter(|g| !g.is_lost()).count();
        if granted.is_some() && standing > 0 {
            eprintln!("{how:?}: the lock was granted twice");
            double_grants.push(how);
        }
        if let Some(guard) = granted {
            guard.unlock().await.unwrap();
        }
        for guard in guards {
            let _ = guard.unlock().await;
        }
    }
    assert_eq!(
        double_grants,
        Vec::<Failover>::new(),
        "rounds with two holders"
    );
}
