//! Locks and scripts over TLS (feature `tls-rustls`), against TLS-only
//! redis-servers (`--port 0 --tls-port ...`) whose certificates a private
//! CA, made at test time with `openssl`, signed. Each test starts its own
//! server (a few milliseconds): a plain connection cannot reach any of
//! them, so everything that works here went over TLS.

use redlua_runtime::{Error, LockClient};
use redlua_test_support::{Issued, RedisCluster, RedisSentinel, RedisServer, TestCa};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// A typed script call, as users write it.
#[redlua_macros::redis_script("tests/user_scripts/incr_by.lua", returns = i64, crate = redlua_runtime)]
struct IncrBy<'a> {
    #[key]
    key: &'a str,
    #[arg]
    by: i64,
}

/// A private CA, a server certificate for 127.0.0.1, and a TLS-only server
/// presenting it (client certificates as `auth_clients` says).
struct Tls {
    ca: TestCa,
    server: RedisServer,
    /// A certificate of the CA for clients (mutual TLS).
    client_cert: Issued,
}

async fn tls_server(auth_clients: &'static str) -> Tls {
    tokio::task::spawn_blocking(move || {
        let ca = TestCa::new("redlua test CA");
        let cert = ca.issue("redis", &["IP:127.0.0.1"]);
        let server = RedisServer::start_tls(&cert, ["--tls-auth-clients", auth_clients]);
        let client_cert = ca.issue("locks client", &["DNS:client.invalid"]);
        Tls {
            ca,
            server,
            client_cert,
        }
    })
    .await
    .expect("starting a TLS redis-server")
}

/// A client of `tls`'s server trusting its CA.
async fn client(tls: &Tls, watchdog: Duration) -> LockClient {
    LockClient::builder(tls.server.url())
        .tls_root_certificate(tls.ca.cert_pem())
        .watchdog_timeout(watchdog)
        .connect()
        .await
        .expect("a TLS client trusting the CA")
}

/// Fails the test if `future` takes longer than `limit`.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// The reason of a connect error, or a failure of the test.
fn connect_reason(result: Result<LockClient, Error>) -> String {
    match result {
        Err(Error::Connect { addr, reason }) => {
            assert!(addr.starts_with("rediss://127.0.0.1:"), "{addr}");
            reason
        }
        other => panic!("expected Error::Connect, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_work_over_tls_with_a_private_ca() {
    let tls = tls_server("no").await;
    let holder = client(&tls, Duration::from_millis(600)).await;
    let waiter = client(&tls, Duration::from_millis(600)).await;

    // Lock, unlock, and a fencing token that grows.
    let guard = holder.lock("tls:plain").lock().await.unwrap();
    let first = guard.token();
    guard.unlock().await.unwrap();
    let guard = holder.lock("tls:plain").lock().await.unwrap();
    assert!(guard.token() > first);
    guard.unlock().await.unwrap();

    // A waiter woken by the release message (pub/sub over TLS): the holder's
    // lease is 30 s, so only the message can get it in within a second.
    let guard = holder
        .lock("tls:wake")
        .lock_with_lease(Duration::from_secs(30))
        .await
        .unwrap();
    let lock = waiter.lock("tls:wake");
    let waiting = tokio::spawn(async move {
        let started = Instant::now();
        let got = lock.try_lock_for(Duration::from_secs(20), None).await;
        (got, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, waited) = within(Duration::from_secs(25), "the waiter", waiting)
        .await
        .unwrap();
    let got = got.unwrap().expect("the waiter gets the lock");
    assert!(
        released.elapsed() < Duration::from_secs(1),
        "woken {:?} after the release (waited {waited:?})",
        released.elapsed()
    );
    got.unlock().await.unwrap();

    // The watchdog renews over TLS: held for more than three leases.
    let guard = holder.lock("tls:watched").lock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(!guard.is_lost());
    let info = holder.inspect("tls:watched").await.unwrap();
    assert_eq!(info.holders.len(), 1);
    assert!(info.ttl.is_some_and(|ttl| ttl > Duration::ZERO));
    guard.unlock().await.unwrap();

    // Read/write locks: readers share, a writer waits for them.
    let rw = holder.read_write_lock("tls:rw");
    let r1 = rw.read().lock().await.unwrap();
    let r2 = waiter
        .read_write_lock("tls:rw")
        .read()
        .lock()
        .await
        .unwrap();
    let writer = waiter.read_write_lock("tls:rw").write();
    assert!(writer.try_lock().await.unwrap().is_none());
    let writing =
        tokio::spawn(async move { writer.try_lock_for(Duration::from_secs(20), None).await });
    r1.unlock().await.unwrap();
    r2.unlock().await.unwrap();
    let w = within(Duration::from_secs(5), "the writer", writing)
        .await
        .unwrap()
        .unwrap()
        .expect("the writer gets the lock once the readers left");
    w.unlock().await.unwrap();
}

#[tokio::test]
async fn scripts_run_over_tls() {
    let tls = tls_server("no").await;
    let certificates = redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(tls.ca.cert_pem()),
    };
    let redis = redis::Client::build_with_tls(tls.server.url(), certificates).unwrap();
    let mut con = redis.get_multiplexed_async_connection().await.unwrap();
    // The first call loads the script (NOSCRIPT recovery), the second
    // finds it.
    let first = IncrBy {
        key: "tls:counter",
        by: 2,
    }
    .invoke(&mut con)
    .await
    .unwrap();
    let second = IncrBy {
        key: "tls:counter",
        by: 3,
    }
    .invoke(&mut con)
    .await
    .unwrap();
    assert_eq!((first, second), (2, 5));
}

#[tokio::test]
async fn the_server_certificate_is_verified_by_default() {
    let tls = tls_server("no").await;
    // Not trusting the private CA: the platform's roots do not know it.
    let reason = connect_reason(LockClient::connect(tls.server.url()).await);
    assert!(
        reason.contains("invalid peer certificate") && reason.contains("UnknownIssuer"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused() {
    let ca = TestCa::new("redlua test CA");
    let cert = ca.issue("elsewhere", &["DNS:redis.invalid", "IP:10.0.0.1"]);
    let server = tokio::task::spawn_blocking(move || {
        RedisServer::start_tls(&cert, ["--tls-auth-clients", "no"])
    })
    .await
    .unwrap();
    let result = LockClient::builder(server.url())
        .tls_root_certificate(ca.cert_pem())
        .connect()
        .await;
    let reason = connect_reason(result);
    assert!(
        reason.contains("invalid peer certificate")
            && reason.contains("not valid for name \"127.0.0.1\""),
        "{reason}"
    );
}

#[tokio::test]
async fn mutual_tls_presents_the_client_certificate() {
    let tls = tls_server("yes").await;
    // Without a client certificate the server refuses the handshake.
    let refused = LockClient::builder(tls.server.url())
        .tls_root_certificate(tls.ca.cert_pem())
        .connect()
        .await;
    connect_reason(refused);
    let client = LockClient::builder(tls.server.url())
        .tls_root_certificate(tls.ca.cert_pem())
        .tls_client_certificate(tls.client_cert.cert_pem(), tls.client_cert.key_pem())
        .connect()
        .await
        .expect("a client with a certificate of the CA");
    let guard = client.lock("tls:mutual").lock().await.unwrap();
    guard.unlock().await.unwrap();
}

#[tokio::test]
async fn bad_tls_settings_are_typed_errors() {
    // Certificates for a URL without TLS.
    let err = LockClient::builder("redis://127.0.0.1:1/")
        .tls_root_certificate(b"-----BEGIN CERTIFICATE-----".to_vec())
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Config(why) if why.contains("rediss://")),
        "{err:?}"
    );
    // A root certificate that is not PEM.
    let err = LockClient::builder("rediss://127.0.0.1:1/")
        .tls_root_certificate(b"not a certificate".to_vec())
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Config(why) if why.contains("bad TLS certificate")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_work_on_a_cluster_over_tls() {
    let ca = TestCa::new("redlua test CA");
    let cert = ca.issue("redis", &["IP:127.0.0.1"]);
    let cluster = tokio::task::spawn_blocking(move || RedisCluster::start_tls(3, &cert))
        .await
        .expect("starting a TLS cluster");
    let client = |watchdog| {
        LockClient::cluster_builder(cluster.tls_urls())
            .tls_root_certificate(ca.cert_pem())
            .watchdog_timeout(watchdog)
            .connect()
    };
    let holder = client(Duration::from_millis(600))
        .await
        .expect("a TLS cluster client");
    let waiter = client(Duration::from_millis(600))
        .await
        .expect("a TLS cluster client");
    // Without the CA, the seed nodes' certificates are refused.
    let refused = LockClient::cluster(cluster.tls_urls()).await;
    assert!(matches!(refused, Err(Error::Connect { .. })), "{refused:?}");

    // Slots: "b" 3300 (node 0), "c" 7365 (node 1), "a" 15495 (node 2): a
    // lock on each node, a waiter woken by (sharded) pub/sub on each node
    // over TLS, and renewals there.
    for name in ["b", "c", "a"] {
        let guard = holder
            .lock(name)
            .lock_with_lease(Duration::from_secs(30))
            .await
            .unwrap();
        let lock = waiter.lock(name);
        let waiting =
            tokio::spawn(async move { lock.try_lock_for(Duration::from_secs(20), None).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let released = Instant::now();
        guard.unlock().await.unwrap();
        let got = within(Duration::from_secs(25), "the waiter", waiting)
            .await
            .unwrap()
            .unwrap()
            .expect("the waiter gets the lock");
        assert!(
            released.elapsed() < Duration::from_secs(1),
            "`{name}`: woken {:?} after the release",
            released.elapsed()
        );
        // Held for three leases by the watchdog.
        tokio::time::sleep(Duration::from_millis(1800)).await;
        assert!(!got.is_lost(), "`{name}`");
        got.unlock().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_follow_a_sentinel_failover_over_tls() {
    let ca = TestCa::new("redlua test CA");
    let cert = ca.issue("redis", &["IP:127.0.0.1"]);
    // Kept until the binary exits (its processes are killed then).
    let deployment =
        tokio::task::spawn_blocking(move || RedisSentinel::start_tls(1, 3, &cert).until_exit())
            .await
            .expect("starting a Sentinel deployment over TLS");
    let client = |watchdog| {
        LockClient::sentinel_builder(deployment.sentinel_tls_urls(), RedisSentinel::SERVICE)
            .tls_root_certificate(ca.cert_pem())
            .watchdog_timeout(watchdog)
            .connect_timeout(Duration::from_millis(500))
            .response_timeout(Duration::from_millis(500))
            .connect()
    };
    let holder = client(Duration::from_secs(6))
        .await
        .expect("a client through TLS sentinels");
    let waiter = client(Duration::from_secs(6))
        .await
        .expect("a client through TLS sentinels");
    // Without the CA, the sentinels' certificates are refused.
    let refused =
        LockClient::sentinel(deployment.sentinel_tls_urls(), RedisSentinel::SERVICE).await;
    match refused {
        Err(Error::Connect { reason, .. }) => assert!(reason.contains("UnknownIssuer"), "{reason}"),
        other => panic!("expected a connect error, got {other:?}"),
    }

    let guard = holder.lock("tls:sentinel").lock().await.unwrap();
    let token = guard.token();
    let old = deployment.master();
    // The hold reaches the replica before the failover (WAIT through the
    // client's own connection, over TLS).
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query_async(&mut holder.connection())
        .await
        .unwrap();
    assert_eq!(acked, 1);
    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_ne!(new, old);

    // A waiter through the new master is woken by the release, within a
    // second: pub/sub moved to the new master, over TLS.
    let lock = waiter.lock("tls:sentinel");
    let waiting =
        tokio::spawn(async move { lock.try_lock_for(Duration::from_secs(20), None).await });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!guard.is_lost());
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let next = within(Duration::from_secs(25), "the waiter", waiting)
        .await
        .unwrap()
        .unwrap()
        .expect("the waiter gets the lock after the failover");
    assert!(
        released.elapsed() < Duration::from_secs(1),
        "woken {:?} after the release",
        released.elapsed()
    );
    assert!(next.token() > token);
    next.unlock().await.unwrap();
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphores_and_latches_work_over_tls() {
    let tls = tls_server("no").await;
    let client = client(&tls, Duration::from_millis(600)).await;
    let other = client_of(&tls).await;
    // A plain semaphore: a waiter woken through pub/sub over TLS.
    let sem = client.semaphore("tls-pool");
    assert!(sem.try_set_permits(1).await.unwrap());
    assert!(sem.try_acquire(1).await.unwrap());
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    other.semaphore("tls-pool").release(1).await.unwrap();
    let got = within(Duration::from_secs(4), "the waiter", waiter)
        .await
        .unwrap();
    assert!(
        got - released < Duration::from_secs(1),
        "{:?}",
        got - released
    );
    // A leased permit, renewed past its lease over TLS.
    let leased = client.leased_semaphore("tls-leased");
    leased.set_permits(1).await.unwrap();
    let permit = leased.acquire(1).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!permit.is_lost());
    permit.release().await.unwrap();
    // A latch.
    let latch = client.count_down_latch("tls-latch");
    assert!(latch.try_set_count(1).await.unwrap());
    other
        .count_down_latch("tls-latch")
        .count_down()
        .await
        .unwrap();
    assert!(latch.wait_for(Duration::from_secs(2)).await.unwrap());
}

/// A second client of `tls`'s server with the default watchdog.
async fn client_of(tls: &Tls) -> LockClient {
    client(tls, Duration::from_secs(30)).await
}
