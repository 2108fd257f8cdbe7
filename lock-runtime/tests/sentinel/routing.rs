//! The master the sentinels name: locks, scripts, wake-ups, semaphores, latches; bad names refused.

use super::{SERIAL, client, deployment, master, server, stored, waiter, within};
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use std::time::Duration;
use tokio::time::Instant;

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
