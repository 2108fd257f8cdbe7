//! Synced acquires fail closed: a replica that cannot acknowledge, a failover not yet seen.

use super::{SERIAL, acquired, client, deployment, master, stored, within};
use redlua_runtime::{Error, LockClient};
use redlua_test_support::{FaultProxy, RedisSentinel};
use std::time::Duration;
use tokio::time::Instant;

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
