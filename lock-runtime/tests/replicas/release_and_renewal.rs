//! Releases and renewals the replicas did not acknowledge, and a counted replica that left.

use super::{Paused, calls, con, deployment, exists, hgetall, ms, synced_client, within};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient};
use std::collections::HashMap;

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
