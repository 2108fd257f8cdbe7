//! Settings: a server refusing WAIT, bad sync settings, no WAIT until a replica comes online.

use super::{Paused, calls, con, deployment, exists, hgetall, ms, unsynced_client, within};
use redlua_runtime::{Error, LockClient, SyncReplicas};
use redlua_test_support::RedisServer;
use std::collections::HashMap;
use std::time::Duration;

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
