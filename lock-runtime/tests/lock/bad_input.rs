//! Bad input refused, and keys of another type or with a corrupt hold count left alone.

use super::{keys_become, map};
use crate::common::{Redis, ms, within};
use crate::redisson::token_key;
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient, LockKind, MAX_LEASE, MAX_NAME_LEN};
use std::time::Duration;

#[tokio::test]
async fn wrong_type_key_is_left_alone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let _: () = redis.raw().set("wt", "x").await.unwrap();
    let lock = client.lock("wt");
    fn is_wrong_type<T: std::fmt::Debug>(what: &str, result: Result<T, Error>) {
        match result {
            Err(Error::WrongType { name }) => assert_eq!(name, "wt", "{what}"),
            other => panic!("{what}: expected WrongType, got {other:?}"),
        }
    }
    is_wrong_type("try_lock", lock.try_lock().await);
    is_wrong_type("lock", within(ms(2000), "lock()", lock.lock()).await);
    is_wrong_type(
        "lock_with_lease",
        within(ms(2000), "lock_with_lease()", lock.lock_with_lease(ms(500))).await,
    );
    is_wrong_type("try_lock_for", lock.try_lock_for(ms(300), None).await);
    is_wrong_type("force_unlock", lock.force_unlock().await);
    // Reading it says what it is, without an error.
    let info = client.inspect("wt").await.unwrap();
    assert!(
        matches!(&info.kind, LockKind::NotALock { key_type, .. } if key_type == "string"),
        "{info:?}"
    );
    assert!(info.holders.is_empty());
    assert_eq!(lock.inspect().await.unwrap(), info);
    is_wrong_type("is_locked", lock.is_locked().await);
    is_wrong_type("remaining_ttl", lock.remaining_ttl().await);
    // An owner that holds another lock has no holds here: still WrongType,
    // neither a count nor NotHeld.
    let elsewhere = client.lock("elsewhere").lock().await.unwrap();
    is_wrong_type("hold_count", lock.hold_count(elsewhere.owner()).await);
    is_wrong_type("reenter", lock.reenter(elsewhere.owner()).await);
    elsewhere.unlock().await.unwrap();
    let value: String = redis.raw().get("wt").await.unwrap();
    assert_eq!(value, "x");
    assert_eq!(redis.pttl("wt").await, -1, "the value's TTL was touched");
    assert_eq!(
        keys_become(
            &redis,
            &[token_key("elsewhere"), "wt".to_string()],
            ms(1000)
        )
        .await,
        [token_key("elsewhere"), "wt".to_string()]
    );
}

#[tokio::test]
async fn invalid_names_are_refused() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    // A name with a hash tag of its own keeps it in its derived keys.
    let tagged = client.lock("user{7}:cart");
    let mut listener = redis.listen("redisson_lock__channel:user{7}:cart").await;
    let guard = tagged.try_lock().await.unwrap().expect("free");
    // An owner that holds a lock: refused re-entries below are refused for
    // their names, not for the owner.
    let owner = guard.owner().clone();

    let long = "x".repeat(MAX_NAME_LEN + 1);
    for name in ["", "{}x", long.as_str()] {
        let lock = client.lock(name);
        fn is_invalid<T: std::fmt::Debug>(name: &str, what: &str, result: Result<T, Error>) {
            assert!(
                matches!(result, Err(Error::InvalidName { .. })),
                "{what}({:?}): expected InvalidName, got {result:?}",
                &name[..name.len().min(20)]
            );
        }
        is_invalid(name, "try_lock", lock.try_lock().await);
        is_invalid(name, "lock", within(ms(1000), "lock()", lock.lock()).await);
        is_invalid(name, "lock_with_lease", lock.lock_with_lease(ms(500)).await);
        is_invalid(name, "try_lock_for", lock.try_lock_for(ms(300), None).await);
        is_invalid(name, "reenter", lock.reenter(&owner).await);
        is_invalid(
            name,
            "reenter_with_lease",
            lock.reenter_with_lease(&owner, ms(500)).await,
        );
        is_invalid(name, "force_unlock", lock.force_unlock().await);
        is_invalid(name, "is_locked", lock.is_locked().await);
        is_invalid(name, "hold_count", lock.hold_count(&owner).await);
        is_invalid(name, "remaining_ttl", lock.remaining_ttl().await);
        is_invalid(name, "inspect", lock.inspect().await);
        is_invalid(name, "client.inspect", client.inspect(name).await);
    }
    assert_eq!(
        redis.keys().await,
        ["redisson_lock_token:user{7}:cart", "user{7}:cart"]
    );

    guard.unlock().await.unwrap();
    let (message, _) = listener.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "0");
    assert_eq!(
        keys_become(
            &redis,
            &["redisson_lock_token:user{7}:cart".to_string()],
            ms(1000)
        )
        .await,
        ["redisson_lock_token:user{7}:cart"]
    );
}

#[tokio::test]
async fn bad_settings_are_refused() {
    let redis = Redis::start().await;
    for timeout in [ms(10), ms(29)] {
        let result = LockClient::builder(redis.url())
            .watchdog_timeout(timeout)
            .connect()
            .await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "watchdog {timeout:?}: {result:?}"
        );
    }
    let result = LockClient::builder(redis.url())
        .connect_timeout(Duration::ZERO)
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
    let result = LockClient::builder(redis.url())
        .response_timeout(Duration::ZERO)
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
    // 30 ms is the shortest watchdog timeout.
    let shortest = LockClient::builder(redis.url())
        .watchdog_timeout(ms(30))
        .connect()
        .await
        .unwrap();
    assert_eq!(shortest.watchdog_timeout(), ms(30));

    let client = redis.client().await;
    let too_long = MAX_LEASE + ms(1);
    for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
        let result = client.lock("bad").lock_with_lease(lease).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "lock_with_lease({lease:?}): {result:?}"
        );
        let result = client.lock("bad").try_lock_for(ms(100), Some(lease)).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "try_lock_for(_, {lease:?}): {result:?}"
        );
    }
    assert_eq!(redis.keys().await, Vec::<String>::new());

    // The longest lease is accepted, and so is the shortest.
    let guard = client
        .lock("longest")
        .lock_with_lease(MAX_LEASE)
        .await
        .unwrap();
    assert!(redis.pttl("longest").await > 1_000_000_000_000);
    assert!(!guard.is_lost());
    let owner = guard.owner().clone();
    let lock = client.lock("longest");
    for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
        let result = lock.reenter_with_lease(&owner, lease).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "reenter_with_lease({lease:?}): {result:?}"
        );
    }
    assert_eq!(
        redis.hgetall("longest").await,
        map(&[(&owner.to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    let guard = client
        .lock("shortest")
        .lock_with_lease(ms(1))
        .await
        .unwrap();
    assert!(redis.gone_within("shortest", ms(1000)).await);
    assert!(guard.is_lost());
    assert!(matches!(guard.unlock().await, Err(Error::LockLost { .. })));
}

/// A hold whose count is not a number (the key tampered with) is one typed
/// error, [`Error::WrongType`], for every method that reads or changes it,
/// for every kind of lock; the key is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_count_that_is_not_a_number_is_a_wrong_type_error_everywhere() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let wrong = |what: &str, result: Result<(), Error>| match result {
        Err(Error::WrongType { .. }) => {}
        other => panic!("{what}: {other:?}"),
    };
    for side in ["lock", "fair", "read", "write"] {
        let name = format!("corrupt-{side}");
        let lock = match side {
            "lock" => client.lock(&name).into_any(),
            "read" => client.read_write_lock(&name).read().into_any(),
            "write" => client.read_write_lock(&name).write().into_any(),
            _ => client.fair_lock(&name).into_any(),
        };
        let guard = lock.lock().await.unwrap();
        let field = match side {
            "write" => format!("{}:write", guard.owner()),
            _ => guard.owner().to_string(),
        };
        let mut con = redis.raw();
        let () = con.hset(&name, &field, "not a count").await.unwrap();
        let what = |method: &str| format!("{side}: {method}");
        let mut other = None;
        wrong(&what("guard.reenter()"), guard.reenter().await.map(drop));
        wrong(
            &what("reenter(owner)"),
            lock.reenter(guard.owner()).await.map(drop),
        );
        wrong(
            &what("hold_count"),
            lock.hold_count(guard.owner()).await.map(drop),
        );
        match side {
            // A new holder finds the hash not a reentrant lock.
            "lock" | "fair" => wrong(&what("try_lock"), lock.try_lock().await.map(drop)),
            // A read/write lock's new holder goes by its mode and its own
            // field: another reader enters, a writer waits.
            "read" => other = lock.try_lock().await.unwrap(),
            _ => assert!(lock.try_lock().await.unwrap().is_none(), "{side}: held"),
        }
        wrong(&what("unlock"), guard.unlock().await);
        assert_eq!(
            redis.hget(&name, &field).await.as_deref(),
            Some("not a count"),
            "{side}: left as it was"
        );
        if side == "read" {
            let other = other.expect("another reader entered");
            other.unlock().await.unwrap();
        }
        redis.del(&name).await;
    }
}
