//! The count of a primary's replicas, shared by a process's clients: cancelled, failed, stale.

use super::{Paused, calls, con, deployment, exists, hgetall, ms, unsynced_client, within};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient};
use redlua_test_support::RedisServer;
use std::collections::HashMap;
use std::time::Instant;

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
