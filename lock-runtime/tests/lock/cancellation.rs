//! Cancellation: a dropped pending acquire, an acquire dropped in flight, a dropped guard.

use super::{join_waiter, keys_become, map, spawn_waiter};
use crate::common::{DROP_DELAYS, InFlight, Redis, abandon_in_flight, ms};
use crate::redisson::token_key;
use redis::AsyncCommands;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_pending_lock_future_holds_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("pending");
    let guard = lock.lock().await.unwrap();
    let holder = guard.owner().to_string();
    // B waits in another task, then gives up.
    let b = lock.clone();
    tokio::spawn(async move {
        let result = tokio::time::timeout(ms(100), b.lock()).await;
        assert!(result.is_err(), "B got a held lock");
    })
    .await
    .unwrap();
    // C waits in this very task, then gives up.
    let result = tokio::time::timeout(ms(100), lock.lock()).await;
    assert!(result.is_err(), "C got a held lock");
    assert_eq!(redis.hgetall("pending").await, map(&[(&holder, "1")]));
    guard.unlock().await.unwrap();
    tokio::time::sleep(ms(300)).await;
    assert_eq!(
        keys_become(&redis, &[token_key("pending")], ms(1000)).await,
        [token_key("pending")],
        "B or C holds something"
    );
    let third = lock.clone();
    let start = Instant::now();
    let got = tokio::spawn(async move { third.try_lock().await.unwrap() })
        .await
        .unwrap();
    let got = got.expect("the lock is free");
    assert!(start.elapsed() < ms(300));
    assert_eq!(
        redis.hgetall("pending").await,
        map(&[(&got.owner().to_string(), "1")])
    );
    got.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_in_flight_acquire_is_undone() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let lock = client.lock("in-flight");
    // Loads the scripts, so that one poll sends the acquire itself.
    lock.lock().await.unwrap().unlock().await.unwrap();
    let tombstone_prefix = format!("{{in-flight}}:redlua_attempt:{}:", client.id());
    let mut took_effect = 0;
    let mut abandoned = 0;
    for delay in DROP_DELAYS {
        match abandon_in_flight(&redis, "in-flight", lock.lock(), delay).await {
            InFlight::Finished(result) => {
                result.unwrap().unlock().await.unwrap();
                continue;
            }
            InFlight::Abandoned { took_effect: took } => {
                took_effect += usize::from(took);
                abandoned += 1;
            }
        }
        assert!(
            redis.gone_within("in-flight", ms(5000)).await,
            "an abandoned acquire (delay {delay:?}) left a hold: {:?}",
            redis.hgetall("in-flight").await
        );
        assert!(!lock.is_locked().await.unwrap());
        // Each undo leaves a tombstone for its attempt (so that a late copy
        // of the acquire does nothing), and nothing else.
        // (The latch of the first unlock goes with the next undo: until it
        // has run, the latch is there and the tombstone is not.)
        let deadline = Instant::now() + ms(5000);
        let tombstones = loop {
            let tombstones: Vec<String> = redis
                .keys()
                .await
                .into_iter()
                .filter(|k| *k != token_key("in-flight"))
                .collect();
            let settled = tombstones.len() == abandoned
                && tombstones.iter().all(|k| k.starts_with(&tombstone_prefix));
            if settled || Instant::now() >= deadline {
                break tombstones;
            }
            tokio::time::sleep(ms(10)).await;
        };
        assert_eq!(tombstones.len(), abandoned, "{tombstones:?}");
        for key in &tombstones {
            assert!(key.starts_with(&tombstone_prefix), "{key}");
            let value: String = redis.raw().get(key).await.unwrap();
            assert_eq!(value, "0", "{key}");
            let ttl = redis.pttl(key).await;
            assert!(ttl > 0 && ttl <= 30_000, "{key}: pttl {ttl}");
        }
    }
    assert!(took_effect > 0, "no abandoned acquire ever reached Redis");
    // The client's bookkeeping is clean: a new hold counts 1.
    let guard = lock.lock().await.unwrap();
    assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 1);
    assert_eq!(
        redis.hgetall("in-flight").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    assert!(!redis.exists("in-flight").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_guard_is_released_in_the_background() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let lock = client.lock("dropped");
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().clone();
    let waiter = spawn_waiter(&other.lock("dropped"));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let dropped = Instant::now();
    drop(guard);
    let (acquired, waiter_guard, waiter_owner) = join_waiter(waiter, ms(5000)).await;
    assert!(
        acquired.duration_since(dropped) < ms(1000),
        "released {:?} after the drop",
        acquired.duration_since(dropped)
    );
    assert_eq!(redis.hgetall("dropped").await, map(&[(&waiter_owner, "1")]));
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 0);
    drop(waiter_guard);
    assert!(redis.gone_within("dropped", ms(1000)).await);
    // The background release deletes its latch right after the release;
    // the token counter stays.
    assert_eq!(
        keys_become(&redis, &[token_key("dropped")], ms(1000)).await,
        [token_key("dropped")],
        "latch left behind"
    );
    // Reentrant holds dropped one by one.
    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let g2 = g1.reenter().await.unwrap();
    drop(g2);
    tokio::time::sleep(ms(300)).await;
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 1);
    assert!(!g1.is_lost());
    drop(g1);
    assert!(redis.gone_within("dropped", ms(1000)).await);
    assert_eq!(
        keys_become(&redis, &[token_key("dropped")], ms(1000)).await,
        [token_key("dropped")],
        "latch or attempt key left behind"
    );
}
