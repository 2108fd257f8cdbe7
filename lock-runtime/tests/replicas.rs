//! Replica-synced mode on a real primary with real replicas (each test
//! starts its own: a primary and one or two replicas start in a fraction of
//! a second). A replica is made to miss acknowledgements by suspending its
//! process (`SIGSTOP`): it stays connected, as a slow or hung replica does.

use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, SyncReplicas};
use redlua_test_support::RedisServer;
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Fails the test if `future` takes longer than `limit`.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// A primary with `replicas` replicas, all in sync.
async fn deployment(replicas: usize) -> (RedisServer, Vec<RedisServer>) {
    tokio::task::spawn_blocking(move || {
        let primary = RedisServer::start();
        let replicas = (0..replicas)
            .map(|_| RedisServer::start_replica_of(&primary, std::iter::empty::<&str>()))
            .collect();
        (primary, replicas)
    })
    .await
    .expect("starting the servers")
}

/// `server` suspended until this is dropped (even by a failing test).
struct Paused<'a>(&'a RedisServer);

impl<'a> Paused<'a> {
    fn new(server: &'a RedisServer) -> Paused<'a> {
        server.pause();
        Paused(server)
    }
}

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.0.resume();
    }
}

async fn con(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    server
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("a connection")
}

async fn hgetall(server: &RedisServer, key: &str) -> HashMap<String, String> {
    con(server).await.hgetall(key).await.unwrap()
}

async fn exists(server: &RedisServer, key: &str) -> bool {
    let n: i64 = con(server).await.exists(key).await.unwrap();
    n == 1
}

async fn synced_client(primary: &RedisServer, timeout: Duration) -> LockClient {
    LockClient::builder(primary.url())
        .sync_timeout(timeout)
        .connect()
        .await
        .expect("connect")
}

async fn unsynced_client(primary: &RedisServer) -> LockClient {
    LockClient::builder(primary.url())
        .sync_replicas(SyncReplicas::Off)
        .connect()
        .await
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_acquires_and_releases_wait_for_every_connected_replica() {
    let (primary, replicas) = deployment(2).await;
    // Redisson's defaults: the connected replicas, 1 s.
    let client = LockClient::connect(primary.url()).await.unwrap();
    let guard = client.lock("orders").lock().await.unwrap();
    // The acquire, and the token counter it raised, are on both replicas
    // by the time the guard exists: no sleeping here.
    for replica in &replicas {
        assert_eq!(
            hgetall(replica, "orders").await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())])
        );
        let token: u64 = con(replica)
            .await
            .get("redisson_lock_token:{orders}")
            .await
            .unwrap();
        assert_eq!(token, guard.token());
    }
    guard.unlock().await.unwrap();
    for replica in &replicas {
        assert!(!exists(replica, "orders").await);
    }
    // A flushed script cache (a restart, a new node): the pipeline meets
    // NOSCRIPT, loads the script and is sent again, once.
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut con(&primary).await)
        .await
        .unwrap();
    let guard = client.lock("orders").lock().await.unwrap();
    for replica in &replicas {
        assert_eq!(
            hgetall(replica, "orders").await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())])
        );
    }
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_a_replica_did_not_acknowledge_is_undone_and_fails_closed() {
    let (primary, replicas) = deployment(1).await;
    let default = LockClient::connect(primary.url()).await.unwrap();
    let quick = synced_client(&primary, ms(300)).await;
    let unsynced = unsynced_client(&primary).await;
    let held = quick.lock("held").lock().await.unwrap();

    let paused = Paused::new(&replicas[0]);
    // The default sync timeout is 1 s; then the acquire is undone.
    let started = Instant::now();
    let err = within(ms(5000), "try_lock", default.lock("jobs").try_lock())
        .await
        .unwrap_err();
    let failed_after = started.elapsed();
    assert!(
        matches!(&err, Error::NotReplicated { name, acked: 0, wanted: 1 } if name == "jobs"),
        "{err:?}"
    );
    assert!(
        ms(1000) <= failed_after && failed_after < ms(2500),
        "failed after {failed_after:?}"
    );
    // Undone before the error was returned: nothing is held.
    assert!(!exists(&primary, "jobs").await);
    // A waiting acquire fails the same way (it does not wait on).
    let err = within(ms(5000), "lock", quick.lock("jobs").lock())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert!(!exists(&primary, "jobs").await);
    // A re-entry too: the owner keeps its one hold, and no other.
    let err = held.reenter().await.unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert_eq!(
        hgetall(&primary, "held").await,
        HashMap::from([(held.owner().to_string(), "1".to_string())])
    );
    // Without synced mode the same acquire is granted at once: the lock is
    // free, and nothing of the failed ones stayed.
    let started = Instant::now();
    let unreplicated = unsynced.lock("jobs").try_lock().await.unwrap().unwrap();
    assert!(started.elapsed() < ms(500));
    let unreplicated_token = unreplicated.token();
    unreplicated.unlock().await.unwrap();

    drop(paused);
    let guard = quick.lock("jobs").try_lock().await.unwrap().unwrap();
    assert!(guard.token() > unreplicated_token, "tokens increase");
    assert_eq!(
        hgetall(&replicas[0], "jobs").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    held.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fair_waiter_whose_acquire_is_not_acknowledged_undoes_it_and_leaves_the_queue() {
    let (primary, replicas) = deployment(1).await;
    let quick = synced_client(&primary, ms(300)).await;
    let unsynced = unsynced_client(&primary).await;
    let held = unsynced.fair_lock("fair-jobs").lock().await.unwrap();
    let lock = quick.fair_lock("fair-jobs");
    let waiter = tokio::spawn(async move { lock.lock().await });
    let mut con = primary
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    within(ms(5000), "the waiter queued", async {
        while con
            .llen::<_, usize>("redisson_lock_queue:{fair-jobs}")
            .await
            .unwrap()
            != 1
        {
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
    let paused = Paused::new(&replicas[0]);
    held.unlock().await.unwrap();
    // Woken, it takes the lock; the replica does not acknowledge: undone,
    // and out of the queue, before the error is returned.
    let err = within(ms(5000), "the fair waiter", waiter)
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, Error::NotReplicated { .. }), "{err:?}");
    assert!(!exists(&primary, "fair-jobs").await);
    assert!(!exists(&primary, "redisson_lock_queue:{fair-jobs}").await);
    assert!(!exists(&primary, "redisson_lock_timeout:{fair-jobs}").await);
    drop(paused);
    let guard = quick
        .fair_lock("fair-jobs")
        .try_lock()
        .await
        .unwrap()
        .unwrap();
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_operation_queued_behind_another_wait_still_gets_its_answer() {
    let (primary, replicas) = deployment(1).await;
    // Two WAITs of 300 ms in a row take longer than the response timeout,
    // not longer than a synced pipeline's deadline (500 + 300 ms).
    let client = LockClient::builder(primary.url())
        .response_timeout(ms(500))
        .sync_timeout(ms(300))
        .connect()
        .await
        .expect("connect");
    let held = client.lock("queued:held").lock().await.unwrap();
    let new = client.lock("queued:new");

    let paused = Paused::new(&replicas[0]);
    let started = Instant::now();
    // One connection: Redis runs the second pipeline only after the
    // first one's WAIT gave up, so one of them waits for both.
    let (acquired, released) = within(ms(5000), "an acquire and a release", async {
        tokio::join!(new.try_lock(), held.unlock())
    })
    .await;
    let took = started.elapsed();
    assert!(
        matches!(&acquired, Err(Error::NotReplicated { name, acked: 0, wanted: 1 }) if name == "queued:new"),
        "{:?}",
        acquired.map(|g| g.is_some())
    );
    assert!(
        matches!(&released, Err(Error::ReleaseNotReplicated { name, acked: 0, wanted: 1 }) if name == "queued:held"),
        "{released:?}"
    );
    assert!(
        ms(600) <= took && took < ms(1500),
        "the two WAITs ran one after the other: {took:?}"
    );
    // Both ran on the primary: the acquire was undone, the release done.
    assert!(!exists(&primary, "queued:new").await);
    assert!(!exists(&primary, "queued:held").await);
    drop(paused);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_acknowledgement_of_two_is_not_enough() {
    let (primary, replicas) = deployment(2).await;
    // Room for each replica that is not paused to acknowledge, however
    // busy the machine: a count below the one expected is then the
    // paused replica's, not a slow one's.
    let room = ms(2000);
    let connected = synced_client(&primary, room).await;
    let at_least_one = LockClient::builder(primary.url())
        .sync_replicas(SyncReplicas::AtLeast(1))
        .sync_timeout(room)
        .connect()
        .await
        .unwrap();
    let at_least_three = LockClient::builder(primary.url())
        .sync_replicas(SyncReplicas::AtLeast(3))
        .sync_timeout(room)
        .connect()
        .await
        .unwrap();
    // More than there are: never enough.
    let err = at_least_three.lock("x").try_lock().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotReplicated {
                acked: 2,
                wanted: 3,
                ..
            }
        ),
        "{err:?}"
    );

    let paused = Paused::new(&replicas[1]);
    // Redisson fails only when no replica acknowledged; this fails when
    // any connected one did not.
    let err = connected.lock("x").try_lock().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotReplicated {
                acked: 1,
                wanted: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!exists(&primary, "x").await);
    // Asked for one, one is enough.
    let guard = at_least_one.lock("x").try_lock().await.unwrap().unwrap();
    assert_eq!(
        hgetall(&replicas[0], "x").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    drop(paused);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_a_replica_did_not_acknowledge_is_reported() {
    let (primary, replicas) = deployment(1).await;
    let client = synced_client(&primary, ms(300)).await;
    let guard = client.lock("r").lock().await.unwrap();
    let paused = Paused::new(&replicas[0]);
    let err = guard.unlock().await.unwrap_err();
    assert!(
        matches!(&err, Error::ReleaseNotReplicated { name, acked: 0, wanted: 1 } if name == "r"),
        "{err:?}"
    );
    // Released on the primary all the same.
    assert!(!exists(&primary, "r").await);
    drop(paused);
    let again = client.lock("r").try_lock().await.unwrap().unwrap();
    again.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_after_the_counted_replica_left_is_counted_again_and_succeeds() {
    // The count is older than the replica's leaving (as a cluster's count
    // is older than a failover to a primary without replicas): the release
    // waits for one acknowledgement that cannot come, then the primary is
    // counted again, and with no replica left the release is all it can be.
    let (primary, replicas) = deployment(1).await;
    let client = synced_client(&primary, ms(300)).await;
    let guard = client.lock("left").lock().await.unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut con(&replicas[0]).await)
        .await
        .unwrap();
    within(ms(5000), "the primary seeing its replica leave", async {
        loop {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut con(&primary).await)
                .await
                .unwrap();
            if info.contains("connected_slaves:0") {
                break;
            }
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
    within(ms(5000), "the release", guard.unlock())
        .await
        .expect("released: no replica is left to acknowledge it");
    assert!(!exists(&primary, "left").await);
    // The next acquire goes without WAIT (the primary was counted again).
    let waits = calls(&primary, "wait").await;
    let again = client.lock("left").try_lock().await.unwrap().unwrap();
    again.unlock().await.unwrap();
    assert_eq!(calls(&primary, "wait").await, waits);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_a_replica_did_not_acknowledge_moves_no_lease_clock() {
    let (primary, replicas) = deployment(1).await;
    // Renewed every 300 ms; a renewal waits at most 150 ms for the replica.
    let lease = ms(900);
    let client = LockClient::builder(primary.url())
        .watchdog_timeout(lease)
        .sync_timeout(ms(150))
        .connect()
        .await
        .unwrap();
    let guard = client.lock("w").lock().await.unwrap();
    let first = guard.valid_until();
    tokio::time::sleep(ms(450)).await;
    assert!(guard.valid_until() > first, "acknowledged renewals move it");

    let paused = Paused::new(&replicas[0]);
    // Past any renewal acknowledged before the pause.
    tokio::time::sleep(ms(500)).await;
    let stuck = guard.valid_until();
    tokio::time::sleep(ms(1200)).await;
    assert_eq!(guard.valid_until(), stuck, "no renewal moved the clock");
    assert!(guard.is_lost(), "the clock has passed");
    // Yet Redis renewed it: 1.7 s after the pause, past its 900 ms lease,
    // the primary still holds it with a fresh lease.
    assert_eq!(
        hgetall(&primary, "w").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    let pttl: i64 = con(&primary).await.pttl("w").await.unwrap();
    assert!(0 < pttl && pttl <= 900, "pttl {pttl}");

    // Once passed, a later acknowledged renewal does not revive it.
    drop(paused);
    tokio::time::sleep(ms(700)).await;
    assert!(guard.is_lost());
    assert_eq!(guard.valid_until(), stuck);
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_wait_fails_the_connect_of_a_synced_client() {
    let server = tokio::task::spawn_blocking(|| {
        RedisServer::start_with(["--rename-command", "WAIT", "WAIT_RENAMED_BY_TEST"])
    })
    .await
    .unwrap();
    let err = LockClient::connect(server.url()).await.unwrap_err();
    let Error::SyncUnavailable { reason } = &err else {
        panic!("SyncUnavailable: {err:?}")
    };
    assert!(reason.contains("unknown command"), "{reason}");
    let dbsize: i64 = redis::cmd("DBSIZE")
        .query_async(&mut con(&server).await)
        .await
        .unwrap();
    assert_eq!(dbsize, 0, "nothing was written");
    // Turned off knowingly, locks work.
    let client = unsynced_client(&server).await;
    let guard = client.lock("k").try_lock().await.unwrap().unwrap();
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sync_settings_are_refused_before_connecting() {
    // Nothing listens there: the settings are refused first.
    let url = "redis://127.0.0.1:1/";
    let refused = [
        LockClient::builder(url).sync_timeout(Duration::ZERO),
        LockClient::builder(url).sync_timeout(ms(3000)),
        LockClient::builder(url)
            .response_timeout(ms(500))
            .sync_timeout(ms(600)),
        LockClient::builder(url).sync_replicas(SyncReplicas::AtLeast(0)),
    ];
    for builder in refused {
        let err = builder.connect().await.unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err:?}");
    }
    // Off ignores the timeout.
    let err = LockClient::builder(url)
        .sync_replicas(SyncReplicas::Off)
        .sync_timeout(Duration::ZERO)
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
}

/// The `calls=` of `cmdstat_<command>` in the primary's INFO commandstats
/// (0 if it never ran).
async fn calls(server: &RedisServer, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut con(server).await)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_replicas_no_wait_is_sent_until_a_replica_comes_online() {
    let (primary, _) = deployment(0).await;
    let client = LockClient::connect(primary.url()).await.unwrap();
    // The connect probed WAIT once (`WAIT 0 0`).
    let probed = calls(&primary, "wait").await;
    let scripts = calls(&primary, "evalsha").await;
    for _ in 0..20 {
        let guard = client.lock("jobs").lock().await.unwrap();
        guard.unlock().await.unwrap();
    }
    // 40 lock scripts, none with a WAIT (it would have returned at once).
    assert_eq!(calls(&primary, "wait").await, probed);
    assert!(calls(&primary, "evalsha").await >= scripts + 40);

    // A replica comes online: within about a second the primary is counted
    // again, and from then on every acquire waits for the replica.
    let replica = tokio::task::block_in_place(|| {
        RedisServer::start_replica_of(&primary, std::iter::empty::<&str>())
    });
    tokio::time::sleep(ms(1500)).await;
    let guard = client.lock("jobs").lock().await.unwrap();
    assert_eq!(
        hgetall(&replica, "jobs").await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    assert!(calls(&primary, "wait").await > probed);
    // Waited for: with the replica suspended, an acquire fails closed.
    let paused = Paused::new(&replica);
    let err = within(ms(5000), "try_lock", client.lock("jobs").try_lock())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::NotReplicated {
                acked: 0,
                wanted: 1,
                ..
            }
        ),
        "{err:?}"
    );
    drop(paused);
    assert!(!exists(&primary, "jobs").await);
}

/// Acquires and releases `per_client` locks at once on every client of
/// `clients`, all together (names from `round`, so none waits for another).
async fn acquire_all_at_once(clients: &[LockClient], per_client: usize, round: &str) {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, client) in clients.iter().enumerate() {
        for j in 0..per_client {
            let client = client.clone();
            let name = format!("{round}-{i}-{j}");
            tasks.spawn(async move {
                let guard = client.lock(&name).lock().await.unwrap();
                guard.unlock().await.unwrap();
            });
        }
    }
    within(ms(5000), "the acquires", async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    })
    .await;
}

/// The `INFO` commands `server` ran since `before` was read with
/// [`calls`] (that read was one of them).
async fn infos_since(server: &RedisServer, before: u64) -> u64 {
    calls(server, "info").await - before - 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_of_a_process_count_a_primary_once_between_them() {
    let (primary, _) = deployment(0).await;
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(LockClient::connect(primary.url()).await.unwrap());
    }
    // 4 clients, 4 acquires each, all at once: one INFO between them (each
    // client counting for itself, each task that found no count asking,
    // sent up to 16).
    let before = calls(&primary, "info").await;
    let counted = Instant::now();
    acquire_all_at_once(&clients, 4, "first").await;
    assert_eq!(infos_since(&primary, before).await, 1);

    // A client that connects after that count asks for its own (the count
    // was asked before its connection was opened); the others then go by
    // the newer count.
    clients.push(LockClient::connect(primary.url()).await.unwrap());
    let before = calls(&primary, "info").await;
    let late = clients.last().unwrap();
    late.lock("late")
        .lock()
        .await
        .unwrap()
        .unlock()
        .await
        .unwrap();
    acquire_all_at_once(&clients, 2, "second").await;
    assert_eq!(infos_since(&primary, before).await, 1);
    // All of that within the second a count without replicas lasts (else
    // the recount would be due, and the counts above say nothing).
    let elapsed = counted.elapsed();
    assert!(elapsed < ms(900), "too slow to tell: {elapsed:?}");

    // A second later, the count is due again: once more, one INFO.
    tokio::time::sleep(ms(1200)).await;
    let before = calls(&primary, "info").await;
    let recounted = Instant::now();
    acquire_all_at_once(&clients, 4, "third").await;
    assert_eq!(infos_since(&primary, before).await, 1);
    let elapsed = recounted.elapsed();
    assert!(elapsed < ms(900), "too slow to tell: {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_failed_count_lets_the_other_acquires_count() {
    let (primary, _) = deployment(0).await;
    let client = LockClient::builder(primary.url())
        .response_timeout(ms(1000))
        .connect()
        .await
        .unwrap();
    // The primary suspended: the first acquire's INFO gets no reply. It is
    // cancelled while a second acquire waits for that count; the second
    // then counts itself once the primary is back.
    let paused = Paused::new(&primary);
    let first = tokio::spawn({
        let client = client.clone();
        async move { tokio::time::timeout(ms(300), client.lock("first").lock()).await }
    });
    tokio::time::sleep(ms(100)).await;
    let second = tokio::spawn({
        let client = client.clone();
        async move {
            let guard = client.lock("second").lock().await?;
            guard.unlock().await
        }
    });
    assert!(first.await.unwrap().is_err(), "cancelled by its timeout");
    drop(paused);
    within(ms(3000), "the second acquire", second)
        .await
        .unwrap()
        .unwrap();

    // An INFO that fails (no reply within the response timeout) fails its
    // acquire; the next acquire counts again.
    tokio::time::sleep(ms(1100)).await;
    let paused = Paused::new(&primary);
    let err = within(ms(5000), "an acquire", client.lock("third").try_lock())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Redis(_)), "{err:?}");
    drop(paused);
    let before = calls(&primary, "info").await;
    let guard = client.lock("third").lock().await.unwrap();
    guard.unlock().await.unwrap();
    assert_eq!(infos_since(&primary, before).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fair_waiter_that_waits_for_replicas_is_woken_not_handed_the_lock() {
    let (primary, replicas) = deployment(1).await;
    let handoffs = "{fair-handoff}:redlua_handoff";
    let queue = "redisson_lock_queue:{fair-handoff}";
    // Synced (the default, one replica counted) and unsynced waiters.
    for synced in [true, false] {
        let holder = LockClient::connect(primary.url()).await.unwrap();
        let waiter = if synced {
            LockClient::connect(primary.url()).await.unwrap()
        } else {
            unsynced_client(&primary).await
        };
        let held = holder.fair_lock("fair-handoff").lock().await.unwrap();
        let lock = waiter.fair_lock("fair-handoff");
        let task = tokio::spawn(async move { lock.lock().await });
        within(ms(5000), "the waiter queued", async {
            loop {
                let queued: Vec<String> = con(&primary).await.lrange(queue, 0, -1).await.unwrap();
                if queued.len() == 1 {
                    break;
                }
                tokio::time::sleep(ms(5)).await;
            }
        })
        .await;
        // A waiter whose scripts wait for the replica offers no handoff: a
        // release's WAIT would not be its own. An unsynced one does.
        let offers = hgetall(&primary, handoffs).await;
        assert_eq!(
            offers.len(),
            usize::from(!synced),
            "synced {synced}: {offers:?}"
        );
        held.unlock().await.unwrap();
        let guard = within(ms(5000), "the waiter's guard", task)
            .await
            .unwrap()
            .unwrap();
        // Either way its hold is on the replica once the guard exists when
        // synced (its own acquire waited for it).
        if synced {
            assert_eq!(
                hgetall(&replicas[0], "fair-handoff").await,
                HashMap::from([(guard.owner().to_string(), "1".to_string())])
            );
        }
        guard.unlock().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_sharing_a_count_of_a_primary_that_became_a_replica_are_refused_never_granted() {
    let (primary, replicas) = deployment(1).await;
    let replica = &replicas[0];
    // Two clients of this process, one count between them: the primary's
    // one replica.
    let a = LockClient::connect(primary.url()).await.unwrap();
    let b = LockClient::connect(primary.url()).await.unwrap();
    for client in [&a, &b] {
        let guard = client.lock("shared:warm").lock().await.unwrap();
        guard.unlock().await.unwrap();
    }

    // A failover behind their backs (an orchestrator's, no Sentinel): the
    // replica is promoted, the primary made its replica.
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut con(replica).await)
        .await
        .unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(replica.port())
        .query_async(&mut con(&primary).await)
        .await
        .unwrap();
    let deadline = Instant::now() + ms(10_000);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut con(&primary).await)
            .await
            .unwrap();
        if info.contains("role:slave") && info.contains("master_link_status:up") {
            break;
        }
        assert!(Instant::now() < deadline, "the old primary never synced");
        tokio::time::sleep(ms(50)).await;
    }

    // Whatever count each client goes by, no acquire is granted on the
    // demoted server; once its connection was replaced (the first refusal
    // drops it) the count is asked again, and the answer, a replica's, is
    // refused with an error that says so.
    for client in [&a, &b] {
        let mut last = None;
        for _ in 0..3 {
            let result = within(ms(5000), "try_lock", client.lock("shared:lock").try_lock()).await;
            match result {
                Ok(granted) => panic!(
                    "an acquire on a replica was answered: {:?}",
                    granted.map(|g| g.owner().to_string())
                ),
                Err(error) => last = Some(error.to_string()),
            }
        }
        let last = last.unwrap();
        assert!(last.contains("is a replica, not a primary"), "{last}");
    }
    assert!(!exists(replica, "shared:lock").await);
    assert!(!exists(&primary, "shared:lock").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_semaphore_acquire_a_replica_did_not_acknowledge_is_given_back() {
    let (primary, replicas) = deployment(1).await;
    let client = synced_client(&primary, ms(300)).await;
    let sem = client.semaphore("replicated");
    sem.set_permits(2).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    // On the replica by the time the call returned.
    let on_replica: String = con(&replicas[0]).await.get("replicated").await.unwrap();
    assert_eq!(on_replica, "1");

    let paused = Paused::new(&replicas[0]);
    let result = within(ms(5000), "try_acquire", sem.try_acquire(1)).await;
    assert!(
        matches!(&result, Err(Error::NotReplicated { name, acked: 0, wanted: 1 }) if name == "replicated"),
        "{result:?}"
    );
    // Given back before the error was returned.
    let left: String = con(&primary).await.get("replicated").await.unwrap();
    assert_eq!(left, "1");
    // A leased permit: the same, its id gone from the set too.
    let leased = client.leased_semaphore("leased-replicated");
    let set = within(ms(5000), "set_permits", leased.set_permits(1)).await;
    assert!(
        matches!(set, Err(Error::ReleaseNotReplicated { .. })),
        "{set:?}"
    );
    let result = within(ms(5000), "leased try_acquire", leased.try_acquire(1)).await;
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
    drop(paused);

    assert!(sem.try_acquire(1).await.unwrap());
    assert_eq!(sem.available().await.unwrap(), 0);
    let permit = leased.try_acquire(1).await.unwrap().expect("the permit");
    let on_replica: i64 = con(&replicas[0])
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
