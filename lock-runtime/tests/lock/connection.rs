//! The connection: an existing one, what an uncontended lock sends, one closed while idle.

use super::map;
use crate::common::{Redis, monitor, ms};
use redlua_runtime::LockClient;

#[tokio::test]
async fn client_on_an_existing_connection() {
    let redis = Redis::start().await;
    let con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let client = LockClient::from_client(redis.server.client())
        .connection(con)
        .connect()
        .await
        .unwrap();
    let lock = client.lock("own-con");
    let guard = lock.try_lock().await.unwrap().expect("free");
    let owner = guard.owner().to_string();
    assert_eq!(redis.hgetall("own-con").await, map(&[(&owner, "1")]));
    let inner = guard.reenter().await.unwrap();
    assert_eq!(redis.hgetall("own-con").await, map(&[(&owner, "2")]));
    inner.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    assert!(!redis.exists("own-con").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncontended_lock_and_unlock_send_one_script_each_and_nothing_else() {
    let redis = Redis::start().await;
    // Unsynced: synced mode adds its once-a-second replica count.
    let client = redis.unsynced_client().await;
    let lock = client.lock("uncontended");
    // The scripts loaded, the connection open.
    lock.lock().await.unwrap().unlock().await.unwrap();
    let watching = monitor(&redis);
    for _ in 0..20 {
        lock.lock().await.unwrap().unlock().await.unwrap();
    }
    let seen = watching.stop(&redis).await;
    let commands: Vec<&str> = seen
        .iter()
        .map(|(_, command, _)| command.as_str())
        .collect();
    // One round trip for each acquire and each release: the scripts. Each
    // release's latch goes with the next release script, not a `DEL` of
    // its own.
    assert_eq!(commands, vec!["EVALSHA"; 40], "{seen:#?}");
    let releases = seen
        .iter()
        .filter(|(_, _, arguments)| arguments.contains("redisson_unlock_latch"))
        .count();
    assert_eq!(releases, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_while_idle_costs_no_error() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("idle");
    let guard = lock.try_lock().await.unwrap().unwrap();
    tokio::time::sleep(ms(50)).await;
    assert!(redis.close_client_connections().await >= 1);
    tokio::time::sleep(ms(50)).await;
    // Found closed: sent again at once, on a new connection.
    guard.unlock().await.unwrap();
    assert!(!redis.exists("idle").await);
    assert!(redis.close_client_connections().await >= 1);
    tokio::time::sleep(ms(50)).await;
    let guard = lock.try_lock().await.unwrap().expect("the lock is free");
    assert_eq!(
        redis.hgetall("idle").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    assert!(!redis.exists("idle").await);
}
