//! Setting up a client: a connection of your own, bad settings, a single-node client, the ACL user.

use super::{
    NODES, TOPOLOGY, cluster, eventually, exists_anywhere, hgetall, ms, node, owner_of, role,
    spawn_waiter, subscribers, within,
};
use redlua_runtime::LockClient;
use std::collections::HashMap;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_connection_of_your_own_and_bad_settings() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    // A ClusterConnection given to the cluster builder, and to the
    // single-node builder (which then works as a cluster client too).
    let mine = cluster.client().get_async_connection().await.unwrap();
    let clients = [
        LockClient::cluster_builder(cluster.urls())
            .connection(mine.clone())
            .connect()
            .await
            .unwrap(),
        LockClient::builder(cluster.urls()[0].as_str())
            .connection(mine)
            .connect()
            .await
            .unwrap(),
    ];
    let name = "{own}:lock";
    let owner_node = owner_of(name).await;
    let channel = "redisson_lock__channel:{own}:lock";
    let guard = clients[0].lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&clients[1], name);
    eventually(ms(3000), "the waiter subscribes, sharded", || async {
        subscribers(owner_node, channel).await == (1, 0)
    })
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    assert_eq!(
        hgetall(owner_node, name).await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    assert!(!exists_anywhere(name).await);

    // A cluster builder refuses a single-node connection, and no URLs.
    let single = cluster.nodes()[0]
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let err = LockClient::cluster_builder(cluster.urls())
        .connection(single)
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, redlua_runtime::Error::Config(_)), "{err:?}");
    let err = LockClient::cluster(Vec::<String>::new()).await.unwrap_err();
    assert!(matches!(err, redlua_runtime::Error::Config(_)), "{err:?}");
    let err = LockClient::cluster(["not a url"]).await.unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::InvalidUrl { .. }),
        "{err:?}"
    );
    // Nothing listening: a typed connect error, in time.
    let started = Instant::now();
    let err = LockClient::cluster_builder(["redis://127.0.0.1:1/"])
        .connect_timeout(ms(300))
        .response_timeout(ms(300))
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::Connect { .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < ms(2000), "{:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_node_client_on_a_cluster_fails_at_once_with_moved() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    let mut name = String::new();
    for i in 0..1000 {
        let candidate = format!("misplaced-{i}");
        if owner_of(&candidate).await != 0 {
            name = candidate;
            break;
        }
    }
    let single = LockClient::connect(cluster.urls()[0].as_str())
        .await
        .unwrap();
    let err = within(
        ms(3000),
        "lock() on the wrong node",
        single.lock(&name).lock(),
    )
    .await
    .unwrap_err();
    // A primary redirects the script; a replica (node 0 may be one after a
    // failover test) is refused before anything is sent.
    let node_0_is_a_replica = role(0).await == "slave";
    match err {
        redlua_runtime::Error::Redis(e) if node_0_is_a_replica => {
            assert!(e.to_string().contains("is a replica, not a primary"), "{e}")
        }
        redlua_runtime::Error::Redis(e) => assert_eq!(e.code(), Some("MOVED"), "{e}"),
        other => panic!("expected a MOVED error: {other:?}"),
    }
    assert!(!exists_anywhere(&name).await);
}

/// The documented ACL rule (docs/operations.md, `ACL SETUSER locks ...`),
/// its arguments.
fn documented_acl_rule() -> Vec<String> {
    include_str!("../../../docs/operations.md")
        .lines()
        .find(|line| line.starts_with("ACL SETUSER locks "))
        .expect("docs/operations.md gives an ACL SETUSER rule")
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_work_as_the_documented_acl_user_plus_the_cluster_commands() {
    let _topology = TOPOLOGY.read().await;
    let cluster = cluster().await;
    let mut rule = documented_acl_rule();
    rule.extend([
        "+cluster|slots".to_string(),
        "+cluster|myid".to_string(),
        "+pubsub|shardnumsub".to_string(),
    ]);
    for i in 0..NODES {
        let mut admin = node(i).await;
        let _: () = redis::cmd("ACL")
            .arg(&rule)
            .query_async(&mut admin)
            .await
            .unwrap();
        let _: () = redis::cmd("ACL")
            .arg("LOG")
            .arg("RESET")
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let urls: Vec<String> = cluster
        .nodes()
        .iter()
        .map(|n| format!("redis://locks:secret@127.0.0.1:{}/", n.port()))
        .collect();
    let a = LockClient::cluster(urls.clone()).await.unwrap();
    let b = LockClient::cluster(urls).await.unwrap();
    let name = "app:acl";
    let owner_node = owner_of(name).await;
    let guard = a.lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&b, name);
    eventually(ms(3000), "the waiter subscribes", || async {
        subscribers(owner_node, "redisson_lock__channel:{app:acl}").await == (1, 0)
    })
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    let read = b.read_write_lock("app:acl-rw").read().lock().await.unwrap();
    read.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    tokio::time::sleep(ms(200)).await;
    for i in 0..NODES {
        let log: Vec<redis::Value> = redis::cmd("ACL")
            .arg("LOG")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        assert!(log.is_empty(), "node {i} refused: {log:?}");
    }
}
