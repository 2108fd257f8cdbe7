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

mod fail_closed;
mod failover;
mod routing;

use redis::aio::MultiplexedConnection;
use redlua_runtime::{LockClient, LockGuard, SyncReplicas};
use redlua_test_support::RedisSentinel;
use std::future::Future;
use std::sync::OnceLock;
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
