//! Cancellation: dropped pending acquires hold nothing, dropped guards are released.

use super::{
    join_locker, keys_become, map, only_token, settled_keys, spawn_locker, split_attempts,
};
use crate::common::{DROP_DELAYS, InFlight, Redis, abandon_in_flight, ms};
use redis::AsyncCommands;
use redlua_runtime::Error;
use tokio::time::Instant;

/// Waits until the lock `name` is gone and the database holds only its
/// token counter and `tombstones` closed attempt keys (`0`: an abandoned
/// acquire, undone); panics with what is left otherwise.
async fn settles_with_tombstones(redis: &Redis, name: &str, tombstones: usize, what: &str) {
    let deadline = Instant::now() + ms(5000);
    loop {
        let (keys, attempts) = split_attempts(name, settled_keys(redis).await);
        if keys == only_token(name) && attempts.len() == tombstones {
            for key in &attempts {
                let value: Option<String> = redis.raw().get(key).await.unwrap();
                assert_eq!(value.as_deref(), Some("0"), "{what}: attempt key {key}");
                let ttl = redis.pttl(key).await;
                assert!(ttl > 0 && ttl <= 30_000, "{what}: {key} TTL {ttl}");
            }
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: left {keys:?} and attempt keys {attempts:?} (expected {tombstones})"
        );
        tokio::time::sleep(ms(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_pending_futures_hold_nothing() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let other = redis.client().await;
    let name = "pending-rw";
    let rw = client.read_write_lock(name);
    let other_rw = other.read_write_lock(name);

    // Waiting behind a writer, on both sides, then giving up.
    let w = rw.write().lock().await.unwrap();
    let hash = redis.hgetall(name).await;
    for lock in [other_rw.read().into_any(), other_rw.write().into_any()] {
        let result = tokio::time::timeout(ms(100), lock.lock()).await;
        assert!(result.is_err(), "got a lock held by a writer");
    }
    assert_eq!(redis.hgetall(name).await, hash);
    w.unlock().await.unwrap();
    tokio::time::sleep(ms(300)).await;
    // A wait dropped between tries sends nothing more; one dropped while a
    // try was under way leaves that attempt closed.
    let (keys, attempts) = split_attempts(name, settled_keys(&redis).await);
    assert_eq!(keys, only_token(name), "a dropped wait holds");
    let mut tombstones = attempts.len();
    assert!(tombstones <= 2, "{attempts:?}");
    settles_with_tombstones(&redis, name, tombstones, "dropped waits").await;

    // Acquires abandoned while on their way: undone if they took effect,
    // and closed (`{name}:redlua_attempt:<owner>` = 0) so that a late copy
    // does nothing.
    for (side, lock) in [
        ("read", rw.read().into_any()),
        ("write", rw.write().into_any()),
    ] {
        // Loads the scripts, so that one poll sends the acquire itself.
        lock.lock().await.unwrap().unlock().await.unwrap();
        let mut took_effect = 0;
        // Dropped after a fixed delay, and last (`None`) once Redis shows
        // the acquire took effect, however loaded the machine is.
        for delay in DROP_DELAYS {
            match abandon_in_flight(&redis, name, lock.lock(), delay).await {
                InFlight::Finished(result) => {
                    result.unwrap().unlock().await.unwrap();
                    continue;
                }
                InFlight::Abandoned { took_effect: took } => took_effect += usize::from(took),
            }
            tombstones += 1;
            settles_with_tombstones(
                &redis,
                name,
                tombstones,
                &format!("an abandoned {side} acquire (delay {delay:?})"),
            )
            .await;
            assert!(!lock.is_locked().await.unwrap());
        }
        assert!(took_effect > 0, "no abandoned {side} acquire reached Redis");
        let guard = lock.lock().await.unwrap();
        assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 1, "{side}");
        guard.unlock().await.unwrap();
        settles_with_tombstones(&redis, name, tombstones, side).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_guards_are_released_in_the_background() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let name = "dropped-rw";
    let rw = client.read_write_lock(name);
    let other_rw = other.read_write_lock(name);

    // A dropped read guard lets a writer in.
    let r = rw.read().lock().await.unwrap();
    let r_owner = r.owner().clone();
    let writer = spawn_locker(&other_rw.write());
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished());
    let dropped = Instant::now();
    drop(r);
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let after = entered.duration_since(dropped);
    assert!(after < ms(1000), "released {after:?} after the drop");
    assert_eq!(rw.read().hold_count(&r_owner).await.unwrap(), 0);
    assert_err!(
        rw.read().reenter(&r_owner).await,
        Error::NotHeld { .. },
        "dropped reader"
    );

    // A dropped write guard lets a reader in.
    let reader = spawn_locker(&rw.read());
    tokio::time::sleep(ms(300)).await;
    assert!(!reader.is_finished());
    let dropped = Instant::now();
    drop(w);
    let (entered, r) = join_locker(reader, ms(5000)).await;
    let after = entered.duration_since(dropped);
    assert!(after < ms(1000), "released {after:?} after the drop");
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&r.owner().to_string(), "1")])
    );
    drop(r);
    assert_eq!(
        keys_become(&redis, &only_token(name), ms(1000)).await,
        only_token(name),
        "left behind"
    );

    // A guard that outlived its client and every handle is released too
    // when it is dropped.
    for side in ["read", "write"] {
        let lone = {
            let client = redis.client().await;
            let rw = client.read_write_lock(name);
            let lock = if side == "read" {
                rw.read().into_any()
            } else {
                rw.write().into_any()
            };
            lock.lock().await.unwrap()
        };
        assert!(redis.exists(name).await);
        drop(lone);
        assert_eq!(
            keys_become(&redis, &only_token(name), ms(1000)).await,
            only_token(name),
            "a dropped {side} guard whose client is gone is still held"
        );
    }
}
