//! Bad input: keys that are not read/write locks left alone, leases out of range refused.

use super::{holders, map, only_token, settled_keys, sorted};
use crate::common::{Redis, ms, within};
use crate::redisson::token_key;
use redis::AsyncCommands;
use redlua_runtime::{Error, LockKind, MAX_LEASE, MIN_LEASE, Side};
use std::time::Duration;

/// `result` with its value printed (for reports that list outcomes).
fn debug<T: std::fmt::Debug>(result: Result<T, Error>) -> Result<String, Error> {
    result.map(|value| format!("{value:?}"))
}

#[tokio::test]
async fn wrong_type_keys_are_left_alone_by_both_sides() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    // A string, a hash of another layout, and a reentrant lock.
    let _: () = redis.raw().set("wt", "x").await.unwrap();
    let _: () = redis.raw().hset("wt-hash", "name", "bob").await.unwrap();
    let reentrant = client.lock("wt-re").lock().await.unwrap();
    let owner = reentrant.owner().clone();
    let keys = settled_keys(&redis).await;
    assert_eq!(
        keys,
        sorted(&["wt", "wt-hash", "wt-re", &token_key("wt-re")])
    );
    let re_hash = redis.hgetall("wt-re").await;
    // Everything that reads or changes the lock says WrongType; nothing is
    // written. (Collected, so that one run reports every operation.)
    let mut problems = Vec::new();
    for (name, key_type) in [("wt", "string"), ("wt-hash", "hash"), ("wt-re", "hash")] {
        let rw = client.read_write_lock(name);
        for (side, lock) in [
            ("read", rw.read().into_any()),
            ("write", rw.write().into_any()),
        ] {
            let what = format!("{name}, {side} side");
            let mut check = |op: &str, outcome: Result<String, Error>| match outcome {
                Err(Error::WrongType { name: got }) if got == name => {}
                other => problems.push(format!("{what}: {op}: expected WrongType, got {other:?}")),
            };
            check("force_unlock", debug(lock.force_unlock().await));
            check("try_lock", debug(lock.try_lock().await));
            check("lock", debug(within(ms(2000), "lock()", lock.lock()).await));
            check(
                "try_lock_for",
                debug(within(ms(2000), "try_lock_for()", lock.try_lock_for(ms(500), None)).await),
            );
            check("reenter", debug(lock.reenter(&owner).await));
            check("is_locked", debug(lock.is_locked().await));
            // Reading the key says what it holds.
            let info = lock.inspect().await.unwrap();
            match &info.kind {
                LockKind::Reentrant if name == "wt-re" => {}
                LockKind::NotALock { key_type: got, .. } if got == key_type => {}
                other => panic!("{what}: inspect() says {other:?}"),
            }
            if name == "wt-re" {
                assert_eq!(
                    holders(&info),
                    [(owner.to_string(), Side::Exclusive, 1)],
                    "{what}"
                );
            } else {
                assert!(info.holders.is_empty(), "{what}: {info:?}");
            }
        }
    }
    let value: String = redis.raw().get("wt").await.unwrap();
    assert_eq!(value, "x");
    assert_eq!(redis.hgetall("wt-hash").await, map(&[("name", "bob")]));
    assert_eq!(redis.hgetall("wt-re").await, re_hash);
    assert_eq!(redis.pttl("wt").await, -1, "the value's TTL was touched");
    assert_eq!(
        redis.pttl("wt-hash").await,
        -1,
        "the hash's TTL was touched"
    );
    assert_eq!(settled_keys(&redis).await, keys);
    assert!(problems.is_empty(), "{problems:#?}");
    reentrant.unlock().await.unwrap();
}

#[tokio::test]
async fn leases_out_of_range_are_refused_before_anything_is_sent() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "leases";
    let rw = client.read_write_lock(name);
    let held = rw.read().lock().await.unwrap();
    let owner = held.owner().clone();
    let keys = settled_keys(&redis).await;
    let hash = redis.hgetall(name).await;
    let too_long = MAX_LEASE + ms(1);
    for (side, lock) in [
        ("read", rw.read().into_any()),
        ("write", rw.write().into_any()),
    ] {
        for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
            let what = format!("{side} side, lease {lease:?}");
            assert_err!(
                lock.lock_with_lease(lease).await,
                Error::Config(_),
                "{what}: lock_with_lease"
            );
            assert_err!(
                lock.try_lock_for(ms(100), Some(lease)).await,
                Error::Config(_),
                "{what}: try_lock_for"
            );
            assert_err!(
                lock.reenter_with_lease(&owner, lease).await,
                Error::Config(_),
                "{what}: reenter_with_lease"
            );
        }
    }
    assert_eq!(settled_keys(&redis).await, keys);
    assert_eq!(redis.hgetall(name).await, hash);
    // The bounds themselves are leases.
    let shortest = rw
        .read()
        .reenter_with_lease(&owner, MIN_LEASE)
        .await
        .unwrap();
    assert_eq!(shortest.lease(), Some(MIN_LEASE));
    shortest.unlock().await.unwrap();
    held.unlock().await.unwrap();
    let shortest = rw.write().lock_with_lease(MIN_LEASE).await.unwrap();
    assert_eq!(shortest.lease(), Some(MIN_LEASE));
    within(ms(1000), "lost()", shortest.lost()).await;
    tokio::time::sleep(ms(20)).await;
    assert!(!redis.exists(name).await, "a 1 ms lease is over");
    assert_err!(
        shortest.unlock().await,
        Error::LockLost { .. },
        "after a 1 ms lease"
    );
    // The longest lease, on both sides: taken, and released.
    let mut problems = Vec::new();
    for (side, name) in [("read", "leases-max-r"), ("write", "leases-max-w")] {
        let rw = client.read_write_lock(name);
        let lock = if side == "read" {
            rw.read().into_any()
        } else {
            rw.write().into_any()
        };
        let got = within(
            ms(2000),
            "try_lock_for()",
            lock.try_lock_for(ms(200), Some(MAX_LEASE)),
        )
        .await;
        match got {
            Ok(Some(longest)) => {
                assert_eq!(longest.lease(), Some(MAX_LEASE));
                assert!(!longest.is_lost());
                let ttl = redis.pttl(name).await;
                assert!(ttl > 1_000_000_000_000, "{side}: a lease of {MAX_LEASE:?}, TTL {ttl}");
                longest.unlock().await.unwrap();
                assert_eq!(
                    settled_keys(&redis).await,
                    sorted(&[&token_key("leases"), &token_key(name)])
                );
            }
            other => problems.push(format!(
                "{side} side, a lease of MAX_LEASE ({} ms): {other:?}; left in Redis: {:?} = {:?}, TTL {} ms",
                MAX_LEASE.as_millis(),
                name,
                redis.hgetall(name).await,
                redis.pttl(name).await,
            )),
        }
        redis.del(name).await;
        redis.del(&token_key(name)).await;
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(settled_keys(&redis).await, only_token("leases"));
}
