//! Locks through Redis Sentinel: a master, a replica and three sentinels,
//! started once for this binary and shared by its tests, which run one at
//! a time (three of them fail the master over).
//!
//! In replica-synced mode (the default), with no help from the test: a
//! hold survives a failover (`SENTINEL FAILOVER`, and a master that hangs),
//! no other client is granted the lock meanwhile, its renewals go on on the
//! new master, fencing tokens keep increasing, and waiters caught in the
//! failover are woken or give up at their deadline, never later; an
//! acquire the only replica does not acknowledge fails closed. Without
//! synced mode, the same holds for a hold whose writes reached the replica
//! (the test makes sure of it with `WAIT`).

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redlua_runtime::{Error, LockClient, LockGuard, SyncReplicas};
use redlua_test_support::{FaultProxy, RedisSentinel};
use std::future::Future;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

static DEPLOYMENT: OnceLock<&'static RedisSentinel> = OnceLock::new();

/// One test at a time: failovers change the deployment under the others.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The shared deployment, started by the first test that needs it.
async fn deployment() -> &'static RedisSentinel {
    tokio::task::spawn_blocking(|| {
        *DEPLOYMENT.get_or_init(|| RedisSentinel::start(1, 3).until_exit())
    })
    .await
    .expect("starting the Sentinel deployment")
}

/// A client through the sentinels, with short timeouts and `watchdog`,
/// in replica-synced mode (the default: every connected replica, within
/// 250 ms, half the response timeout).
async fn client(watchdog: Duration) -> LockClient {
    client_syncing(watchdog, SyncReplicas::Connected).await
}

/// A client through the sentinels that does not wait for replicas.
async fn unsynced_client(watchdog: Duration) -> LockClient {
    client_syncing(watchdog, SyncReplicas::Off).await
}

async fn client_syncing(watchdog: Duration, sync: SyncReplicas) -> LockClient {
    LockClient::sentinel_builder(deployment().await.sentinel_urls(), RedisSentinel::SERVICE)
        .watchdog_timeout(watchdog)
        .connect_timeout(Duration::from_millis(500))
        .response_timeout(Duration::from_millis(500))
        .sync_replicas(sync)
        .connect()
        .await
        .expect("a client through the sentinels")
}

/// A plain connection to data server `i`.
async fn server(i: usize) -> MultiplexedConnection {
    deployment().await.servers()[i]
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a connection to a data server")
}

/// The master's index, as the sentinels say.
async fn master() -> usize {
    let deployment = deployment().await;
    tokio::task::spawn_blocking(move || deployment.master())
        .await
        .unwrap()
}

/// Waits until the master's writes reached the replica.
async fn replicated() {
    let mut con = server(master().await).await;
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(acked, 1, "the replica acknowledged the writes");
}

/// The lock's hash on server `i`: its fields, and its PTTL.
async fn stored(i: usize, name: &str) -> (Vec<String>, i64) {
    let mut con = server(i).await;
    let fields: Vec<String> = redis::cmd("HKEYS")
        .arg(name)
        .query_async(&mut con)
        .await
        .unwrap();
    let pttl: i64 = redis::cmd("PTTL")
        .arg(name)
        .query_async(&mut con)
        .await
        .unwrap();
    (fields, pttl)
}

/// The guard of a synced acquire, or a failure that shows the data
/// servers' replication state.
async fn acquired(result: redlua_runtime::Result<LockGuard>) -> LockGuard {
    match result {
        Ok(guard) => guard,
        Err(error) => {
            let mut state = String::new();
            for i in 0..deployment().await.servers().len() {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query_async(&mut server(i).await)
                    .await
                    .unwrap_or_else(|e| e.to_string());
                state.push_str(&format!("server {i}:\n{info}\n"));
            }
            panic!("the acquire failed: {error:?}\n{state}")
        }
    }
}

/// Fails the test if `future` takes longer than `limit`.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// Waits (at most `limit`) until `name`'s PTTL on server `i` climbs (by
/// more than 300 ms) above the lowest it was seen at from now on: the
/// watchdog renewed it there. Returns the PTTL then.
async fn renewed_on(i: usize, name: &str, limit: Duration) -> i64 {
    let deadline = Instant::now() + limit;
    let (_, mut lowest) = stored(i, name).await;
    assert!(lowest > 0, "`{name}` is on server {i} (PTTL {lowest} ms)");
    loop {
        let (_, pttl) = stored(i, name).await;
        assert!(pttl > 0, "`{name}` expired on server {i}");
        if pttl > lowest + 300 {
            return pttl;
        }
        lowest = lowest.min(pttl);
        assert!(
            Instant::now() < deadline,
            "`{name}` not renewed on server {i} within {limit:?} (PTTL {pttl} ms)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts a waiter on `name` that gives up after `wait`; returns what it
/// got and how long it took.
fn waiter(
    client: &LockClient,
    name: &str,
    wait: Duration,
) -> tokio::task::JoinHandle<(redlua_runtime::Result<Option<LockGuard>>, Duration)> {
    let lock = client.lock(name);
    tokio::spawn(async move {
        let started = Instant::now();
        let got = lock.try_lock_for(wait, None).await;
        (got, started.elapsed())
    })
}

/// After a failover: a waiter through the new master is woken within a
/// second of `guard`'s release, and gets a fencing token above `token`
/// (tokens went on increasing across the failover).
async fn released_to_a_waiter(other: &LockClient, name: &str, guard: LockGuard, token: u64) {
    let waiting = waiter(other, name, Duration::from_secs(20));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, _) = within(Duration::from_secs(25), "the waiter", waiting)
        .await
        .unwrap();
    let next = got
        .unwrap()
        .expect("the waiter gets the lock after the failover");
    assert!(
        released.elapsed() < Duration::from_secs(1),
        "woken {:?} after the release",
        released.elapsed()
    );
    assert!(next.token() > token, "{} after {token}", next.token());
    next.unlock().await.unwrap();
}

#[redlua_macros::redis_script("tests/user_scripts/incr_by.lua", returns = i64, crate = redlua_runtime)]
struct IncrBy<'a> {
    #[key]
    key: &'a str,
    #[arg]
    by: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_and_scripts_go_to_the_master_the_sentinels_name() {
    let _serial = SERIAL.lock().await;
    let holder = client(Duration::from_secs(3)).await;
    let other = client(Duration::from_secs(3)).await;
    let m = master().await;

    let guard = holder.lock("sentinel:basic").lock().await.unwrap();
    let (fields, pttl) = stored(m, "sentinel:basic").await;
    assert_eq!(
        fields,
        [guard.owner().to_string()],
        "the hash is on the master"
    );
    assert!(pttl > 0);
    let first = guard.token();

    // A waiter woken by the release message: the lease is long, only the
    // message gets it in within a second.
    guard.unlock().await.unwrap();
    let guard = holder
        .lock("sentinel:basic")
        .lock_with_lease(Duration::from_secs(30))
        .await
        .unwrap();
    assert!(guard.token() > first);
    let waiting = waiter(&other, "sentinel:basic", Duration::from_secs(20));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, _) = within(Duration::from_secs(25), "the waiter", waiting)
        .await
        .unwrap();
    got.unwrap()
        .expect("the waiter gets the lock")
        .unlock()
        .await
        .unwrap();
    assert!(
        released.elapsed() < Duration::from_secs(1),
        "woken {:?} after the release",
        released.elapsed()
    );

    // Scripts on the client's connection run on the master.
    let mut con = holder.connection();
    let _: () = redis::cmd("DEL")
        .arg("sentinel:counter")
        .query_async(&mut con)
        .await
        .unwrap();
    let n = IncrBy {
        key: "sentinel:counter",
        by: 4,
    }
    .invoke(&mut con)
    .await
    .unwrap();
    assert_eq!(n, 4);
    let on_master: i64 = redis::cmd("GET")
        .arg("sentinel:counter")
        .query_async(&mut server(m).await)
        .await
        .unwrap();
    assert_eq!(on_master, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_lock_waiters_are_woken_through_the_master_s_pattern_subscription() {
    let _serial = SERIAL.lock().await;
    let holder = client(Duration::from_secs(3)).await;
    let other = client(Duration::from_secs(3)).await;
    let m = master().await;
    let name = "sentinel:fair";
    let guard = holder
        .fair_lock(name)
        .lock_with_lease(Duration::from_secs(30))
        .await
        .unwrap();
    let lock = other.fair_lock(name);
    let waiting = tokio::spawn(async move {
        let guard = lock.lock().await.expect("the waiter's lock()");
        (Instant::now(), guard)
    });
    // Queued, and subscribed with the client's pattern, on the master.
    let mut con = server(m).await;
    let pattern = format!("redisson_lock__channel:{{{name}}}:{}:*", other.id());
    within(
        Duration::from_secs(5),
        "the waiter queued and subscribed",
        async {
            loop {
                let queued: usize = con
                    .llen(format!("redisson_lock_queue:{{{name}}}"))
                    .await
                    .unwrap();
                let patterns: i64 = redis::cmd("PUBSUB")
                    .arg("NUMPAT")
                    .query_async(&mut con)
                    .await
                    .unwrap();
                if queued == 1 && patterns >= 1 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        },
    )
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(Duration::from_secs(5), "the fair waiter", waiting)
        .await
        .unwrap();
    assert!(
        acquired.duration_since(released) < Duration::from_secs(1),
        "woken through {pattern}, not by the 30 s lease"
    );
    guard.unlock().await.unwrap();
}

/// A hold taken away on the master (a `DEL`, no message) is noticed at
/// once, and so it is after a failover, on the new master. The watchdog
/// timeout is 30 s: only the loss watch can say lost within 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_taken_away_is_noticed_at_once_also_after_a_failover() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    let holder = unsynced_client(Duration::from_secs(30)).await;
    let old = master().await;
    let guard = holder.lock("sentinel:taken").lock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!guard.is_lost());
    let deleted: i64 = server(old).await.del("sentinel:taken").await.unwrap();
    assert_eq!(deleted, 1);
    let started = Instant::now();
    within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
    eprintln!("lost {:?} after a DEL on the master", started.elapsed());

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_ne!(new, old);
    // The client follows the sentinels (they are asked every 500 ms).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let guard = holder.lock("sentinel:taken").lock().await.unwrap();
    let (fields, _) = stored(new, "sentinel:taken").await;
    assert_eq!(fields, [guard.owner().to_string()]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!guard.is_lost());
    let deleted: i64 = server(new).await.del("sentinel:taken").await.unwrap();
    assert_eq!(deleted, 1);
    let started = Instant::now();
    within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
    eprintln!("lost {:?} after a DEL on the new master", started.elapsed());
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_synced_mode_a_replicated_hold_follows_a_sentinel_failover() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 2 s.
    let watchdog = Duration::from_secs(6);
    let holder = unsynced_client(watchdog).await;
    let other = unsynced_client(watchdog).await;
    let old = master().await;

    let guard = holder.lock("sentinel:failover").lock().await.unwrap();
    let token = guard.token();
    replicated().await;
    // A waiter caught in the failover gives up at its deadline.
    let caught = waiter(&other, "sentinel:failover", Duration::from_secs(3));

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_ne!(new, old);

    let (got, waited) = within(Duration::from_secs(10), "the caught waiter", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None)),
        "the lock is held: the waiter times out ({:?})",
        got.map(|g| g.is_some())
    );
    assert!(
        waited < Duration::from_secs(5),
        "it gave up after {waited:?}"
    );

    // The old master is still a master, and the client's connections to
    // it still work: the client leaves it because the sentinels name
    // another. The hold is on the new master, and renewed there.
    let (fields, _) = stored(new, "sentinel:failover").await;
    assert_eq!(fields, [guard.owner().to_string()]);
    renewed_on(new, "sentinel:failover", Duration::from_secs(4)).await;
    assert!(!guard.is_lost());

    released_to_a_waiter(&other, "sentinel:failover", guard, token).await;
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query_async(&mut server(old).await)
        .await
        .unwrap();
    assert_eq!(
        redis::from_redis_value::<String>(role[0].clone()).unwrap(),
        "master",
        "the old master was demoted before the checks ended: they proved nothing"
    );
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_master_is_replaced_and_a_synced_hold_moves_with_it() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 5 s: the failover (1 s to notice, a few to elect)
    // ends well within the lease.
    let watchdog = Duration::from_secs(15);
    let holder = client(watchdog).await;
    let other = client(watchdog).await;
    let old = master().await;

    // Synced mode: the acquire returns once the replica has the hold; the
    // test does not wait for it.
    let guard = acquired(holder.lock("sentinel:hung").lock().await).await;
    let token = guard.token();

    deployment.servers()[old].pause();
    let paused = Instant::now();
    // Waiters during the outage give up at their deadline.
    let caught = waiter(&other, "sentinel:hung", Duration::from_secs(2));
    let (got, waited) = within(Duration::from_secs(8), "a waiter during the outage", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None) | Err(_)),
        "nothing is granted while the lock is held"
    );
    assert!(
        waited < Duration::from_secs(4),
        "it gave up after {waited:?}"
    );

    let new = tokio::task::spawn_blocking(move || deployment.wait_new_master(old))
        .await
        .expect("a new master");
    assert_ne!(new, old);
    let failed_over = paused.elapsed();

    // The watchdog's next renewal lands on the new master.
    let pttl = renewed_on(new, "sentinel:hung", Duration::from_secs(7)).await;
    assert!(
        !guard.is_lost(),
        "the hold survived a failover of {failed_over:?} (PTTL now {pttl} ms)"
    );
    let (fields, _) = stored(new, "sentinel:hung").await;
    assert_eq!(fields, [guard.owner().to_string()]);

    // The old master comes back, and is made a replica of the new one.
    deployment.servers()[old].resume();
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
    assert_eq!(master().await, new);

    guard.unlock().await.unwrap();
    let next = other.lock("sentinel:hung").lock().await.unwrap();
    assert!(next.token() > token, "{} after {token}", next.token());
    next.unlock().await.unwrap();
}

/// A client that tries `name` (never waiting) every 25 ms until stopped,
/// and counts the times it was granted the lock (each released at once).
struct Observer {
    stop: Arc<AtomicBool>,
    granted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<usize>,
}

impl Observer {
    fn start(client: LockClient, name: &'static str) -> Observer {
        let stop = Arc::new(AtomicBool::new(false));
        let granted = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (stop.clone(), granted.clone());
        let task = tokio::spawn(async move {
            let mut tries = 0;
            while !flag.load(Ordering::SeqCst) {
                tries += 1;
                // Errors (the master changing under it) are tries too.
                if let Ok(Some(guard)) = client.lock(name).try_lock().await {
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = guard.unlock().await;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            tries
        });
        Observer {
            stop,
            granted,
            task,
        }
    }

    /// Stops it: how many tries it made, and how many were granted.
    async fn stop(self) -> (usize, usize) {
        self.stop.store(true, Ordering::SeqCst);
        let tries = within(Duration::from_secs(5), "the observer", self.task)
            .await
            .unwrap();
        (tries, self.granted.load(Ordering::SeqCst))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_hold_survives_a_sentinel_failover_without_any_help() {
    const NAME: &str = "sentinel:synced";
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 2 s.
    let watchdog = Duration::from_secs(6);
    let holder = client(watchdog).await;
    let other = client(watchdog).await;
    let old = master().await;
    let replica = 1 - old;

    let guard = acquired(holder.lock(NAME).lock().await).await;
    let token = guard.token();
    // No WAIT of the test's own: the acquire returned once the replica
    // had the hold.
    let (fields, pttl) = stored(replica, NAME).await;
    assert_eq!(fields, [guard.owner().to_string()]);
    assert!(pttl > 0);
    // An observer that does not wait for replicas (it would take a lock
    // the new master did not have) tries all along; a waiter caught in the
    // failover gives up at its deadline.
    let observer = Observer::start(unsynced_client(watchdog).await, NAME);
    let caught = waiter(&other, NAME, Duration::from_secs(3));
    let before = guard.valid_until();

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_eq!(new, replica);

    let (got, waited) = within(Duration::from_secs(10), "the caught waiter", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None)),
        "the lock is held: the waiter times out ({:?})",
        got.map(|g| g.is_some())
    );
    assert!(
        waited < Duration::from_secs(5),
        "it gave up after {waited:?}"
    );

    // The watchdog renews the hold on the new master (which has no
    // replica now: the old master is not one yet), and the guard's lease
    // clock moves with it.
    renewed_on(new, NAME, Duration::from_secs(4)).await;
    let moved = Instant::now() + Duration::from_secs(2);
    while guard.valid_until() <= before + Duration::from_secs(1) {
        assert!(
            Instant::now() < moved,
            "the lease clock did not move after the renewal on the new master"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!guard.is_lost());
    assert!(guard.valid_until() > std::time::Instant::now());
    // The observer was never granted the lock while the guard's lease
    // clock said it was held (all along, as it still does).
    let (tries, granted) = observer.stop().await;
    assert!(tries > 20, "the observer tried {tries} times");
    assert_eq!(granted, 0, "another client was granted the held lock");

    released_to_a_waiter(&other, NAME, guard, token).await;
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_acquire_the_paused_replica_cannot_acknowledge_fails_closed() {
    const NAME: &str = "sentinel:paused-replica";
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    let client = client(Duration::from_secs(6)).await;
    let m = master().await;
    let replica = 1 - m;
    // The client counts the replica (its first acquire waits for it).
    let warm = acquired(client.lock(NAME).lock().await).await;
    warm.unlock().await.unwrap();

    deployment.servers()[replica].pause();
    let started = Instant::now();
    let refused = within(Duration::from_secs(5), "a synced acquire", async {
        client.lock(NAME).try_lock().await
    })
    .await;
    let took = started.elapsed();
    let stored_meanwhile = stored(m, NAME).await;
    deployment.servers()[replica].resume();
    match refused {
        Err(Error::NotReplicated {
            name,
            acked: 0,
            wanted: 1,
        }) => assert_eq!(name, NAME),
        other => panic!(
            "expected NotReplicated, got {:?}",
            other.map(|g| g.is_some())
        ),
    }
    // It waited out the sync timeout (250 ms), then undid the acquire.
    assert!(
        Duration::from_millis(250) <= took && took < Duration::from_secs(2),
        "failed after {took:?}"
    );
    assert_eq!(stored_meanwhile, (Vec::<String>::new(), -2));

    // With the replica back, the same client is granted the lock, and the
    // replica has it.
    tokio::task::spawn_blocking(move || deployment.wait_settled())
        .await
        .expect("the deployment settles");
    let guard = within(Duration::from_secs(5), "a synced acquire", async {
        client.lock(NAME).lock().await
    })
    .await
    .unwrap();
    let (fields, _) = stored(replica, NAME).await;
    assert_eq!(fields, [guard.owner().to_string()]);
    guard.unlock().await.unwrap();
}

#[tokio::test]
async fn an_unknown_service_is_a_connect_error() {
    let _serial = SERIAL.lock().await;
    let result = LockClient::sentinel_builder(deployment().await.sentinel_urls(), "nope")
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await;
    match result {
        Err(redlua_runtime::Error::Connect { addr, reason }) => {
            assert!(addr.contains("`nope`"), "{addr}");
            assert!(
                reason.contains("no sentinel knows a master named `nope`"),
                "{reason}"
            );
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
    let not_sentinel = LockClient::builder("redis://127.0.0.1:1/")
        .sentinel_master("redis://master/")
        .connect()
        .await;
    assert!(
        matches!(&not_sentinel, Err(redlua_runtime::Error::Config(why)) if why.contains("sentinel_master")),
        "{not_sentinel:?}"
    );
    let empty = LockClient::sentinel(Vec::<String>::new(), "redlua").await;
    assert!(
        matches!(empty, Err(redlua_runtime::Error::Config(_))),
        "{empty:?}"
    );
}

#[tokio::test]
async fn a_node_that_is_not_a_master_is_refused() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    let replica = 1 - master().await;
    let replica_port = deployment.servers()[replica].port();
    // Sentinels told that the replica is the master of a service `stale`
    // name it when asked (as a sentinel with an old view would).
    let monitor = |add: bool| async move {
        for sentinel in deployment.sentinels() {
            let mut con = sentinel
                .client()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            let mut cmd = redis::cmd("SENTINEL");
            if add {
                cmd.arg("MONITOR")
                    .arg("stale")
                    .arg("127.0.0.1")
                    .arg(replica_port)
                    .arg(2);
            } else {
                cmd.arg("REMOVE").arg("stale");
            }
            let _: () = cmd.query_async(&mut con).await.unwrap();
        }
    };
    monitor(true).await;
    let result = LockClient::sentinel_builder(deployment.sentinel_urls(), "stale")
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await;
    monitor(false).await;
    match result {
        Err(redlua_runtime::Error::Connect { reason, .. }) => assert!(
            reason.contains("is not a master") && reason.contains(&replica_port.to_string()),
            "{reason}"
        ),
        other => panic!("expected a connect error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_acquire_after_a_failover_the_client_has_not_seen_is_never_granted_on_the_replaced_master()
 {
    const NAME: &str = "sentinel:unseen";
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // The client asks the sentinels through proxies that the test stalls:
    // it cannot learn of the failover from them.
    let proxies: Vec<FaultProxy> = deployment
        .sentinels()
        .iter()
        .map(|sentinel| FaultProxy::start(sentinel.port()))
        .collect();
    let urls: Vec<String> = proxies.iter().map(FaultProxy::url).collect();
    let stale = LockClient::sentinel_builder(urls, RedisSentinel::SERVICE)
        .connect_timeout(Duration::from_millis(500))
        .response_timeout(Duration::from_millis(500))
        .connect()
        .await
        .expect("a client through the proxied sentinels");
    let old = master().await;
    for proxy in &proxies {
        proxy.stall();
    }
    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");

    // The old master is still a master, without replicas, until the
    // sentinels demote it: a write there is lost when they do.
    let result = within(
        Duration::from_secs(15),
        "the stale client's try_lock",
        async { stale.lock(NAME).try_lock().await },
    )
    .await;
    let stored_on_old = stored(old, NAME).await;
    assert!(
        result.is_err(),
        "a synced acquire on the replaced master must fail closed, got {:?}",
        result.map(|g| g.map(|g| g.owner().to_string()))
    );
    assert_eq!(
        stored_on_old,
        (Vec::<String>::new(), -2),
        "nothing held on the old master"
    );

    // Once the sentinels answer again, the same client follows the new
    // master and is granted the lock there, on its replica too.
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
    for proxy in &proxies {
        proxy.resume();
    }
    let guard = within(
        Duration::from_secs(10),
        "the client after the failover",
        async { stale.lock(NAME).lock().await },
    )
    .await
    .unwrap();
    let (on_new, _) = stored(new, NAME).await;
    let (on_replica, _) = stored(old, NAME).await;
    assert_eq!(on_new, [guard.owner().to_string()]);
    assert_eq!(on_replica, [guard.owner().to_string()]);
    guard.unlock().await.unwrap();
}

/// Semaphores and latches through the sentinels: a waiter woken through
/// the master's pub/sub, a leased permit renewed, a latch opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphores_and_latches_work_through_the_sentinels() {
    let _serial = SERIAL.lock().await;
    let a = client(Duration::from_millis(900)).await;
    let b = client(Duration::from_secs(30)).await;
    let sem = a.semaphore("sentinel-pool");
    sem.set_permits(1).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let released = Instant::now();
    b.semaphore("sentinel-pool").release(1).await.unwrap();
    let got = within(Duration::from_secs(4), "the waiter", waiter)
        .await
        .unwrap();
    assert!(
        got - released < Duration::from_secs(1),
        "woken after {:?}",
        got - released
    );
    let leased = a.leased_semaphore("sentinel-leased");
    leased.set_permits(1).await.unwrap();
    let permit = leased.acquire(1).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!permit.is_lost(), "renewed past its lease");
    permit.release().await.unwrap();
    let latch = a.count_down_latch("sentinel-latch");
    latch.try_set_count(1).await.unwrap();
    b.count_down_latch("sentinel-latch")
        .count_down()
        .await
        .unwrap();
    assert!(latch.wait_for(Duration::from_secs(2)).await.unwrap());
}
