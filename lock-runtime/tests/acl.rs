//! Every lock feature as a Redis user restricted by the documented ACL rule
//! (read from docs/operations.md itself, so that the two cannot drift apart), and
//! what a narrower rule says.

use redis::aio::MultiplexedConnection;
use redlua_runtime::{Error, LockClient, LockGuard};
use redlua_test_support::RedisServer;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

/// The documented rule (docs/operations.md): the arguments of its
/// `ACL SETUSER locks ...` line.
fn documented_rule() -> Vec<String> {
    let guide = include_str!("../../docs/operations.md");
    let line = guide
        .lines()
        .find(|line| line.starts_with("ACL SETUSER locks "))
        .expect("docs/operations.md gives an ACL SETUSER rule");
    line.split_whitespace().skip(1).map(str::to_owned).collect()
}

/// A server, and a connection to it as the default (unrestricted) user.
async fn server() -> (RedisServer, MultiplexedConnection) {
    let server = tokio::task::spawn_blocking(RedisServer::start)
        .await
        .expect("starting redis-server");
    let admin = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    (server, admin)
}

async fn set_user(admin: &mut MultiplexedConnection, rule: &[String]) {
    let _: () = redis::cmd("ACL")
        .arg(rule)
        .query_async(admin)
        .await
        .unwrap();
}

fn user_url(server: &RedisServer) -> String {
    format!("redis://locks:secret@127.0.0.1:{}/", server.port())
}

/// What the server refused since `ACL LOG RESET`, one line each.
async fn refusals(admin: &mut MultiplexedConnection) -> Vec<String> {
    let log: Vec<redis::Value> = redis::cmd("ACL")
        .arg("LOG")
        .query_async(admin)
        .await
        .unwrap();
    log.iter().map(|entry| format!("{entry:?}")).collect()
}

fn spawn_lock<F: redlua_runtime::flavor::LockFlavor>(
    lock: redlua_runtime::Lock<F>,
) -> tokio::task::JoinHandle<(Instant, LockGuard)> {
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("the waiter's lock()");
        (Instant::now(), guard)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lock_feature_works_as_the_documented_user() {
    let (server, mut admin) = server().await;
    set_user(&mut admin, &documented_rule()).await;
    let _: () = redis::cmd("ACL")
        .arg("LOG")
        .arg("RESET")
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = user_url(&server);
    let renewing = LockClient::builder(url.as_str())
        .watchdog_timeout(ms(300))
        .connect()
        .await
        .unwrap();
    let a = LockClient::connect(url.as_str()).await.unwrap();
    let b = LockClient::connect(url.as_str()).await.unwrap();

    // Acquire, re-enter, inspect, release.
    let lock = a.lock("app:one");
    let guard = lock.lock().await.unwrap();
    let again = guard.reenter().await.unwrap();
    assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 2);
    let info = a.inspect("app:one").await.unwrap();
    assert_eq!(info.holders.len(), 1);
    assert_eq!(info.token, Some(guard.token()));
    again.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    assert!(!lock.is_locked().await.unwrap());

    // A waiter on another client is woken through pub/sub.
    let guard = a.lock("app:wake").lock().await.unwrap();
    let waiter = spawn_lock(b.lock("app:wake"));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    assert!(
        acquired.duration_since(released) < ms(500),
        "woken by pub/sub"
    );
    // try_lock_for gives up in time while it is held.
    assert!(
        a.lock("app:wake")
            .try_lock_for(ms(200), None)
            .await
            .unwrap()
            .is_none()
    );
    // A forced unlock by another client.
    assert!(a.lock("app:wake").force_unlock().await.unwrap());
    assert!(guard.unlock().await.is_err(), "the broken hold is gone");

    // The watchdog renews (three leases of 300 ms).
    let renewed = renewing.lock("app:renewed").lock().await.unwrap();
    tokio::time::sleep(ms(900)).await;
    assert!(!renewed.is_lost());
    renewed.unlock().await.unwrap();

    // Read/write locks: readers together, a writer after them, woken.
    let rw = "app:doc";
    let read_a = a.read_write_lock(rw).read().lock().await.unwrap();
    let read_b = b.read_write_lock(rw).read().lock().await.unwrap();
    let writer = spawn_lock(b.read_write_lock(rw).writer_preferring().write());
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished());
    read_a.unlock().await.unwrap();
    let released = Instant::now();
    read_b.unlock().await.unwrap();
    let (acquired, write) = within(ms(5000), "the writer", writer).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    // A dropped guard is released in the background.
    drop(write);
    let deadline = Instant::now() + ms(3000);
    while a.read_write_lock(rw).write().is_locked().await.unwrap() {
        assert!(
            Instant::now() < deadline,
            "the dropped guard was not released"
        );
        tokio::time::sleep(ms(20)).await;
    }

    // Nothing was refused along the way (not even what the client does in
    // the background).
    tokio::time::sleep(ms(200)).await;
    assert_eq!(refusals(&mut admin).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_locks_work_as_the_documented_user_without_pattern_subscriptions() {
    let (server, mut admin) = server().await;
    set_user(&mut admin, &documented_rule()).await;
    let _: () = redis::cmd("ACL")
        .arg("LOG")
        .arg("RESET")
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = user_url(&server);
    let a = LockClient::connect(url.as_str()).await.unwrap();
    let b = LockClient::connect(url.as_str()).await.unwrap();
    let name = "app:fair";
    let guard = a.fair_lock(name).lock().await.unwrap();
    let lock = b.fair_lock(name);
    let waiter = tokio::spawn(async move {
        let guard = lock.lock().await.expect("the waiter's lock()");
        (Instant::now(), guard)
    });
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    // A later waiter of the same client goes straight to its own channel.
    assert!(
        b.fair_lock(name)
            .try_lock_for(ms(200), None)
            .await
            .unwrap()
            .is_none()
    );
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the fair waiter", waiter).await.unwrap();
    assert!(
        acquired.duration_since(released) < ms(500),
        "woken on its own channel"
    );
    guard.unlock().await.unwrap();
    // The only refusal: the one pattern subscription the client tried (a
    // rule that lists channels allows no pattern of them).
    tokio::time::sleep(ms(200)).await;
    let refused = refusals(&mut admin).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("psubscribe"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrower_rule_says_what_is_missing() {
    let (server, mut admin) = server().await;
    let rule: Vec<String> = documented_rule()
        .into_iter()
        .filter(|part| part != "+hset")
        .collect();
    set_user(&mut admin, &rule).await;
    let client = LockClient::connect(user_url(&server)).await.unwrap();
    let err = client.lock("app:x").try_lock().await.unwrap_err();
    // Redis names the script and the line of the refused call only; the
    // error names the command.
    let Error::Redis(redis_error) = &err else {
        panic!("a Redis error: {err:?}")
    };
    assert_eq!(redis_error.code(), Some("NOPERM"), "{redis_error}");
    let message = err.to_string();
    assert!(
        message.contains("the Redis user may not run HSET (scripts/lock_acquire.lua line 57)")
            && message.contains("The user executing the script can't run this command"),
        "{message}"
    );
    assert!(!client.lock("app:x").is_locked().await.unwrap());

    // A name outside the rule's keys.
    set_user(&mut admin, &documented_rule()).await;
    let err = client.lock("elsewhere:x").try_lock().await.unwrap_err();
    let Error::Redis(redis_error) = &err else {
        panic!("a Redis error: {err:?}")
    };
    assert_eq!(redis_error.code(), Some("NOPERM"), "{redis_error}");
    assert!(
        err.to_string()
            .contains("no permissions to access one of the keys"),
        "{err}"
    );

    // Without WAIT, replica-synced mode (the default) cannot work: the
    // connect says so, and nothing is written.
    let rule: Vec<String> = documented_rule()
        .into_iter()
        .filter(|part| part != "+wait")
        .collect();
    set_user(&mut admin, &rule).await;
    let err = LockClient::connect(user_url(&server)).await.unwrap_err();
    let Error::SyncUnavailable { reason } = &err else {
        panic!("SyncUnavailable: {err:?}")
    };
    assert!(
        reason.contains("no permissions to run the 'wait' command"),
        "{reason}"
    );
    assert!(err.to_string().contains("SyncReplicas::Off"), "{err}");
    let client = LockClient::builder(user_url(&server))
        .sync_replicas(redlua_runtime::SyncReplicas::Off)
        .connect()
        .await
        .unwrap();
    let guard = client.lock("app:x").try_lock().await.unwrap().unwrap();
    guard.unlock().await.unwrap();
}
