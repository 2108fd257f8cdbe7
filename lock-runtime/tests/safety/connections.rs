//! Healing connections: dead ones replaced, dead addresses, polling without pub/sub.

use super::spawn_waiter;
use crate::common::{Redis, within};
use redlua_runtime::{Error, LockClient, LockGuard};
use redlua_test_support::FaultProxy;
use std::time::{Duration, Instant};

/// Starts `waiter` waiting for `name`, held by `holder`; silences every
/// connection through `proxy` at 200 ms, releases at 1 s, and returns the
/// waiter's guard once it got it — within 3 s of the start, or it fails.
async fn waits_through_a_dead_connection(
    waiter: &LockClient,
    holder: &LockClient,
    proxy: &FaultProxy,
    name: &str,
) -> LockGuard {
    let guard = holder.lock(name).lock().await.unwrap();
    let started = Instant::now();
    let wait = spawn_waiter(waiter, name);
    tokio::time::sleep(Duration::from_millis(200)).await;
    proxy.stall_current();
    tokio::time::sleep(Duration::from_millis(800)).await;
    guard.unlock().await.unwrap();
    let (got, at) = within(Duration::from_secs(10), "waiter", wait)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - started <= Duration::from_secs(3),
        "got it after {:?}",
        at - started
    );
    got
}

/// A waiter whose pub/sub connection dies silently gets a lock freed at 1 s
/// within 3 s, in every one of five rounds, with the default response
/// timeout (3 s): the silent link is found by a ping that waits at most
/// 1 s, not the response timeout. The client keeps working: the
/// subscription is restored on a new connection and wakes the next waiter
/// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_dead_pubsub_connection_is_replaced() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let commands = redis.server.client();
    let waiter = LockClient::from_client(proxy.client())
        .connection(commands.get_multiplexed_async_connection().await.unwrap())
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let mut took = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let guard = waits_through_a_dead_connection(&waiter, &holder, &proxy, "pubsub").await;
        took.push(started.elapsed());
        guard.unlock().await.unwrap();
    }
    eprintln!("a waiter behind a silent pub/sub link got the lock after {took:?}");
    assert!(took.iter().all(|t| *t < Duration::from_secs(3)), "{took:?}");
    // Recovered: the next release reaches it through pub/sub, promptly,
    // although the holder's lease (30 s) is far away.
    let first = holder.lock("pubsub").lock().await.unwrap();
    let again = spawn_waiter(&waiter, "pubsub");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    first.unlock().await.unwrap();
    let (next, at) = within(Duration::from_secs(5), "woken", again)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - released < Duration::from_millis(500),
        "woken after {:?}",
        at - released
    );
    next.unlock().await.unwrap();
}

/// A silently dead command connection is replaced: the waiter gets a lock
/// freed at 1 s within 3 s, and the client goes on working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_dead_command_connection_is_replaced() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let waiter = LockClient::builder(proxy.url())
        .response_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let got = waits_through_a_dead_connection(&waiter, &holder, &proxy, "commands").await;
    got.unlock().await.unwrap();
    // The same client goes on: no timeouts left.
    for _ in 0..5 {
        let guard = within(
            Duration::from_secs(1),
            "lock",
            waiter.lock("commands").lock(),
        )
        .await
        .unwrap();
        guard.unlock().await.unwrap();
    }
    assert!(!redis.exists("commands").await);
}

/// Connecting to a dead address fails within the connect timeout.
#[tokio::test]
async fn connecting_to_a_dead_address_fails_quickly() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    proxy.stall();
    let started = Instant::now();
    let result = LockClient::builder(proxy.url())
        .connect_timeout(Duration::from_millis(300))
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Connect { .. })), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Nothing listening at all: refused at once, same error.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let result = LockClient::connect(format!("redis://127.0.0.1:{closed}/")).await;
    assert!(matches!(result, Err(Error::Connect { .. })), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(4));
    proxy.resume_dropping();
}

/// A waiter that cannot subscribe at all (pub/sub refused) polls: it gets
/// a released lock promptly, without hammering Redis meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_without_pubsub_polls_gently() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    proxy.refuse(true);
    let waiter = LockClient::from_client(proxy.client())
        .connection(
            redis
                .server
                .client()
                .get_multiplexed_async_connection()
                .await
                .unwrap(),
        )
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    let guard = holder.lock("no-pubsub").lock().await.unwrap();
    let calls_before = evalsha_calls(&redis).await;
    let wait = tokio::spawn({
        let waiter = waiter.clone();
        async move {
            waiter
                .lock("no-pubsub")
                .lock()
                .await
                .map(|g| (g, Instant::now()))
        }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, at) = within(Duration::from_secs(5), "waiter", wait)
        .await
        .unwrap()
        .unwrap();
    assert!(
        at - released < Duration::from_millis(500),
        "got it after {:?}",
        at - released
    );
    // About ten tries a second, not a busy loop.
    let calls = evalsha_calls(&redis).await - calls_before;
    assert!((5..=40).contains(&calls), "{calls} script calls in 1.5 s");
    got.unlock().await.unwrap();
}

async fn evalsha_calls(redis: &Redis) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
