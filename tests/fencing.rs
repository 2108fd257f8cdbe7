//! The point of fencing tokens: a holder cut off from Redis past its lease
//! (paused, partitioned) writes late, and the resource guarded by the typed
//! `FencedSet` script refuses it, keeping the next holder's write.

use redis::AsyncCommands;
use redlua::LockClient;
use redlua::fencing::FencedSet;
use redlua_test_support::{FaultProxy, RedisServer};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_holder_is_refused_by_the_fenced_resource() {
    let server = tokio::task::spawn_blocking(RedisServer::start)
        .await
        .unwrap();
    let proxy = FaultProxy::start(server.port());
    // A reaches Redis only through the proxy: its lock client and the
    // connection it writes the resource with.
    let a = LockClient::builder(proxy.url())
        .watchdog_timeout(Duration::from_secs(1))
        .response_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    // A long response timeout: its late write waits for the link to heal.
    let patient =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(30)));
    let mut a_con = proxy
        .client()
        .get_multiplexed_async_connection_with_config(&patient)
        .await
        .unwrap();
    let b = LockClient::connect(server.url()).await.unwrap();
    let mut b_con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let fenced = |token: u64, value: &'static str| FencedSet {
        resource: "report:body",
        fence: "report:fence",
        token,
        value,
    };

    let held_by_a = a.lock("report").lock().await.unwrap();
    assert_eq!(
        fenced(held_by_a.token(), "A, on time")
            .invoke(&mut a_con)
            .await
            .unwrap(),
        1
    );
    // A is cut off; the write it sends now is held on the way.
    proxy.stall();
    let late_write = tokio::spawn({
        let token = held_by_a.token();
        async move { fenced(token, "A, late").invoke(&mut a_con).await }
    });
    // Its lease ends; B takes the lock and writes.
    let held_by_b = b
        .lock("report")
        .try_lock_for(Duration::from_secs(5), None)
        .await
        .unwrap()
        .expect("A's lease ends");
    let taken_at = Instant::now();
    assert!(
        held_by_a.is_lost(),
        "A's guard knows before B holds the lock"
    );
    assert!(held_by_a.valid_until() < taken_at);
    assert!(held_by_b.token() > held_by_a.token());
    assert_eq!(
        fenced(held_by_b.token(), "B")
            .invoke(&mut b_con)
            .await
            .unwrap(),
        1
    );
    // The link heals: A's late write arrives, and is refused.
    proxy.resume();
    let late = late_write.await.unwrap();
    assert_eq!(late.unwrap(), 0, "the stale token was accepted");
    let body: String = b_con.get("report:body").await.unwrap();
    assert_eq!(body, "B");
    let fence: u64 = b_con.get("report:fence").await.unwrap();
    assert_eq!(fence, held_by_b.token());
    held_by_b.unlock().await.unwrap();
}

#[tokio::test]
async fn equal_and_higher_tokens_write_lower_ones_do_not() {
    let server = tokio::task::spawn_blocking(RedisServer::start)
        .await
        .unwrap();
    let mut con = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let set = |token: u64, value: &'static str| FencedSet {
        resource: "r",
        fence: "f",
        token,
        value,
    };
    assert_eq!(set(10, "a").invoke(&mut con).await.unwrap(), 1);
    assert_eq!(set(10, "b").invoke(&mut con).await.unwrap(), 1);
    assert_eq!(set(9, "c").invoke(&mut con).await.unwrap(), 0);
    assert_eq!(set(11, "d").invoke(&mut con).await.unwrap(), 1);
    let value: String = con.get("r").await.unwrap();
    assert_eq!(value, "d");
}
