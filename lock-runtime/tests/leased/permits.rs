//! Permits with ids, leases and tokens in Redisson's layout; bad input; pool changes; blocking.

use super::{available, fresh, pool, pool_becomes};
use crate::common::{Redis, ms, within};
use crate::redisson;
use crate::redisson::leased_timeouts;
use redis::AsyncCommands;
use redlua_runtime::{BATCH_PERMITS, Error};
use std::time::Duration;

#[tokio::test]
async fn permits_have_ids_leases_and_increasing_tokens_in_redissons_layout() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("encoders");
    assert!(sem.try_set_permits(2).await.unwrap());
    let first = sem.acquire(1).await.unwrap();
    let second = sem.try_acquire(1).await.unwrap().expect("a second permit");
    assert!(sem.try_acquire(1).await.unwrap().is_none());
    assert!(second.token() > first.token(), "tokens increase");
    assert_eq!(first.permits(), 1);
    assert_eq!(first.ids()[0].len(), 32);
    // Redisson's layout: the count, and the ids (16 raw bytes) scored by
    // their expiry in ms since the epoch.
    assert_eq!(available(&redis, "encoders").await, 0);
    let members: Vec<(Vec<u8>, f64)> = fresh(&redis)
        .await
        .zrange_withscores(leased_timeouts("encoders"), 0, -1)
        .await
        .unwrap();
    assert_eq!(members.len(), 2);
    let now_ms = redisson::java_now_ms() as f64;
    for (id, expiry) in &members {
        assert_eq!(id.len(), 16);
        let left = expiry - now_ms;
        assert!((25_000.0..=31_000.0).contains(&left), "{left} ms left");
    }
    let mut holders: Vec<String> = sem
        .holders()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    holders.sort();
    let mut ids = vec![first.ids()[0].clone(), second.ids()[0].clone()];
    ids.sort();
    assert_eq!(holders, ids);
    // The lease clock is a little short of Redis's expiry.
    let left = first.valid_until() - std::time::Instant::now();
    assert!(
        left > Duration::from_secs(25) && left < Duration::from_secs(30),
        "{left:?}"
    );
    first.release().await.unwrap();
    assert_eq!(available(&redis, "encoders").await, 1);
    drop(second); // given back in the background
    assert_eq!(
        pool_becomes(&redis, "encoders", (2, 0), ms(2000)).await,
        (2, 0)
    );
}

#[tokio::test]
async fn bad_input_fails_before_anything_is_written() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("small");
    sem.set_permits(2).await.unwrap();
    let held = sem.acquire(1).await.unwrap();
    let before = redis.keys().await;
    for permits in [0, 3, BATCH_PERMITS + 1] {
        let result = sem.try_acquire(permits).await;
        assert!(
            matches!(result, Err(Error::InvalidPermits { .. })),
            "{permits}: {result:?}"
        );
    }
    // More than the pool (available plus taken) is refused even while it
    // would otherwise wait.
    let result = within(ms(2000), "acquire(3)", sem.acquire(3)).await;
    assert!(
        matches!(result, Err(Error::InvalidPermits { .. })),
        "{result:?}"
    );
    assert!(matches!(
        sem.acquire_with_lease(1, Duration::ZERO).await,
        Err(Error::Config(_))
    ));
    assert!(matches!(
        sem.force_release("not-hex").await,
        Err(Error::InvalidPermits { .. })
    ));
    assert_eq!(redis.keys().await, before);
    assert_eq!(pool(&redis, "small").await, (1, 1));
    held.release().await.unwrap();

    let _: () = redis.raw().hset("a-hash", "f", "1").await.unwrap();
    let _: () = redis.raw().set("{b}:timeout", "x").await.unwrap();
    for name in ["a-hash", "b"] {
        let sem = client.leased_semaphore(name);
        let result = sem.try_acquire(1).await;
        assert!(
            matches!(result, Err(Error::WrongType { .. })),
            "{name}: {result:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_the_pool_while_permits_are_held_follows_redisson() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("resized");
    sem.set_permits(3).await.unwrap();
    let a = sem.acquire(1).await.unwrap();
    let b = sem.acquire(1).await.unwrap();
    // The pool is the total: 2 taken, a pool of 1 leaves -1 available.
    sem.set_permits(1).await.unwrap();
    assert_eq!(available(&redis, "resized").await, -1);
    assert!(sem.try_acquire(1).await.unwrap().is_none());
    a.release().await.unwrap();
    b.release().await.unwrap();
    assert_eq!(available(&redis, "resized").await, 1);
    let c = sem.acquire(1).await.unwrap();
    sem.set_permits(4).await.unwrap();
    assert_eq!(available(&redis, "resized").await, 3);
    assert_eq!(sem.add_permits(-1).await.unwrap(), 2);
    c.release().await.unwrap();
    assert_eq!(sem.available().await.unwrap(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_face_holds_renews_and_gives_back() {
    let redis = Redis::start().await;
    let url = redis.url();
    tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::builder(url)
            .watchdog_timeout(ms(300))
            .connect()
            .unwrap();
        let sem = client.leased_semaphore("threads");
        assert!(sem.try_set_permits(1).unwrap());
        let permit = sem.acquire(1).unwrap();
        // Blocking work past the lease: the client's thread renews it.
        std::thread::sleep(ms(700));
        assert!(!permit.is_lost());
        assert!(sem.try_acquire(1).unwrap().is_none());
        assert_eq!(sem.holders().unwrap().len(), 1);
        drop(permit); // given back before the drop returns
        assert_eq!(sem.available().unwrap(), 1);
        let permit = sem.try_acquire_for(1, ms(100), None).unwrap().unwrap();
        permit.release().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permit_had_after_waiting_has_its_whole_lease() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.leased_semaphore("waited");
    sem.set_permits(1).await.unwrap();
    let holder = sem.acquire(1).await.unwrap();
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move { sem.acquire_with_lease(1, ms(500)).await.unwrap() }
    });
    tokio::time::sleep(ms(800)).await;
    holder.release().await.unwrap();
    let permit = within(ms(3000), "the waiter", waiter).await.unwrap();
    // Its lease runs from the try that took it, not from the first try.
    assert!(!permit.is_lost());
    let left = permit.valid_until() - std::time::Instant::now();
    assert!(left > ms(300), "{left:?} left of a 500 ms lease");
    permit.release().await.unwrap();
}
