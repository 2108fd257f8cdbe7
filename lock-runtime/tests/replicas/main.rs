//! Replica-synced mode on a real primary with real replicas (each test
//! starts its own: a primary and one or two replicas start in a fraction of
//! a second). A replica is made to miss acknowledgements by suspending its
//! process (`SIGSTOP`): it stays connected, as a slow or hung replica does.

mod acquire;
mod release_and_renewal;
mod settings;
mod shared_count;

use redis::AsyncCommands;
use redlua_runtime::{LockClient, SyncReplicas};
use redlua_test_support::RedisServer;
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

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
