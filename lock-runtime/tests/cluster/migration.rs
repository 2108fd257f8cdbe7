//! A slot migration: a held lock survives it and its waiters follow it.

use super::{
    NODES, Scene, TOPOLOGY, client, cluster, eventually, keyslot, ms, node, owner_of, primaries,
    subscribers, within,
};
use redis::AsyncCommands;

/// How many keys of `slot` node `i` holds.
async fn keys_in_slot(i: usize, slot: u16) -> i64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query_async(&mut node(i).await)
        .await
        .unwrap()
}

/// The node ids, in start order.
async fn node_ids() -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..NODES {
        let id: String = redis::cmd("CLUSTER")
            .arg("MYID")
            .query_async(&mut node(i).await)
            .await
            .unwrap();
        ids.push(id);
    }
    ids
}

/// Moves `slot` from node `from` to node `to` as `redis-cli --cluster
/// reshard` does: IMPORTING/MIGRATING, MIGRATE of its keys, SETSLOT NODE.
async fn migrate_slot(slot: u16, from: usize, to: usize) {
    let ids = node_ids().await;
    let cluster = cluster().await;
    let setslot = |state: &str, id: &str| {
        let mut cmd = redis::cmd("CLUSTER");
        cmd.arg("SETSLOT").arg(slot).arg(state).arg(id);
        cmd
    };
    let _: () = setslot("IMPORTING", &ids[from])
        .query_async(&mut node(to).await)
        .await
        .unwrap();
    let _: () = setslot("MIGRATING", &ids[to])
        .query_async(&mut node(from).await)
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(1000)
        .query_async(&mut node(from).await)
        .await
        .unwrap();
    assert!(!keys.is_empty(), "the slot holds the lock");
    let mut migrate = redis::cmd("MIGRATE");
    migrate
        .arg("127.0.0.1")
        .arg(cluster.nodes()[to].port())
        .arg("")
        .arg(0)
        .arg(5000)
        .arg("KEYS")
        .arg(&keys);
    let _: () = migrate.query_async(&mut node(from).await).await.unwrap();
    let others: Vec<usize> = primaries()
        .await
        .into_iter()
        .filter(|i| *i != to && *i != from)
        .collect();
    for i in [to, from].into_iter().chain(others) {
        let _: () = setslot("NODE", &ids[to])
            .query_async(&mut node(i).await)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_survives_a_slot_migration_and_waiters_follow_it() {
    let _topology = TOPOLOGY.write().await;
    let from = owner_of("{migrating}:renewed").await;
    let to = *primaries()
        .await
        .iter()
        .find(|i| **i != from)
        .expect("another primary");
    let scene = Scene::start("migrating", from).await;
    let (renewed_name, channel) = (scene.renewed_name.as_str(), scene.channel.as_str());
    // A hold of the slot that the loss watch follows (30 s watchdog).
    let watched_client = client().await;
    let watched = watched_client
        .lock("{migrating}:watched")
        .lock()
        .await
        .unwrap();
    tokio::time::sleep(ms(200)).await;

    migrate_slot(keyslot(renewed_name).await, from, to).await;
    // `owner_of` asks node 0, which may be a replica by now (earlier
    // failovers): it learns the new owner by gossip.
    eventually(
        ms(5000),
        "the cluster sees the slot on its new node",
        || async { owner_of(renewed_name).await == to },
    )
    .await;

    // The subscription follows the slot to its new node.
    eventually(
        ms(5000),
        "the waiter subscribes on the new node",
        || async {
            subscribers(to, channel).await == (1, 0) && subscribers(from, channel).await == (0, 0)
        },
    )
    .await;
    // Renewals follow it too, on the new node only.
    scene.renewals_went_on(to).await;
    assert_eq!(keys_in_slot(from, keyslot(renewed_name).await).await, 0);
    // So does the loss watch: the migration was no loss, and a hold taken
    // away on the new node is noticed at once.
    assert!(!watched.is_lost(), "the migration was taken for a loss");
    let deleted: i64 = node(to).await.del("{migrating}:watched").await.unwrap();
    assert_eq!(deleted, 1);
    within(ms(1000), "lost after a DEL on the new node", watched.lost()).await;
    // A release on the new node wakes the waiter at once.
    scene.release_wakes_the_waiter(to).await;
}
