//! Exact cancellation: a dropped acquire, and a woken waiter's wake-up passed on.

use super::{pool_becomes, taken};
use crate::common::{Redis, ms, two_waiters, within};
use crate::redisson;
use crate::redisson::{leased_timeouts, semaphore_channel};
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use std::time::Duration;
use tokio::time::Instant;

/// Dropped after its script took the permits, before the reply came back:
/// the permits come back, and a late copy takes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_acquire_holds_nothing() {
    let redis = Redis::start().await;
    let direct = redis.unsynced_client().await;
    direct
        .leased_semaphore("cancel")
        .set_permits(2)
        .await
        .unwrap();
    let (proxy, slow) = redis.behind_proxy(None).await;
    let sem = slow.leased_semaphore("cancel");
    // The script is known to Redis (a late copy of a first EVALSHA would
    // find NOSCRIPT and do nothing anyway).
    sem.acquire(1).await.unwrap().release().await.unwrap();
    proxy.set_delay(ms(200));
    let mut acquire = Box::pin(sem.try_acquire(2));
    tokio::select! {
        result = &mut acquire => panic!("finished before its permits were seen taken: {result:?}"),
        _ = async {
            while taken(&redis, "cancel").await != 2 {
                tokio::time::sleep(ms(5)).await;
            }
        } => {}
    }
    drop(acquire);
    assert_eq!(
        pool_becomes(&redis, "cancel", (2, 0), ms(3000)).await,
        (2, 0)
    );

    // A dropped guard gives its permits back too.
    proxy.set_delay(Duration::ZERO);
    let guard = sem.acquire(2).await.unwrap();
    drop(guard);
    assert_eq!(
        pool_becomes(&redis, "cancel", (2, 0), ms(3000)).await,
        (2, 0)
    );
}

/// Two waiters of one client for two leased permits each, behind a link
/// with 20 ms each way. Two permits appear without a message, then one
/// message announces one permit: it wakes one waiter of the client, the
/// first (it waits longest). That waiter is cancelled 0 to 108 ms after
/// Redis published: before its wake-up reaches it, once it is woken, while
/// its try is under way, after. What it was given is passed on: a wake-up
/// it did not use, or, through the undo of its try, the permits and a
/// message. The other waiter gets the permits within a round trip or so,
/// not at its next poll (5 s), and the pool stays whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_waiter_cancelled_around_its_try_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let (proxy, waiters) = redis.behind_proxy(None).await;
    proxy.set_delay(ms(20));
    let mut listener = redis.listen(&semaphore_channel("handover")).await;
    let sem = waiters.leased_semaphore("handover");
    let mut cancelled_first = 0;
    for trial in 0..10u64 {
        // Two permits taken (by a holder that is not a client here).
        let far = redisson::java_now_ms() + 600_000;
        let _: () = redis::pipe()
            .atomic()
            .set("handover", 0)
            .zadd(leased_timeouts("handover"), [1u8; 16].to_vec(), far)
            .zadd(leased_timeouts("handover"), [2u8; 16].to_vec(), far)
            .query_async(&mut redis.raw())
            .await
            .unwrap();
        let (first, second) = two_waiters(|| {
            let sem = sem.clone();
            async move { sem.acquire(2).await.unwrap() }
        })
        .await;
        // Given back without a message.
        let _: () = redis::pipe()
            .atomic()
            .del(leased_timeouts("handover"))
            .set("handover", 2)
            .query_async(&mut redis.raw())
            .await
            .unwrap();
        let published = Instant::now();
        let _: i64 = redis
            .raw()
            .publish(semaphore_channel("handover"), "1")
            .await
            .unwrap();
        tokio::time::sleep(ms(trial * 12)).await;
        first.abort();
        if let Ok(guard) = first.await {
            // Its try came first: it holds the permits; give them back.
            guard.release().await.unwrap();
        } else {
            cancelled_first += 1;
        }
        let (guard, got) = within(ms(4000), "the second waiter", second).await.unwrap();
        assert!(
            got - published < ms(1500),
            "trial {trial}: the second waiter got the permits after {:?}",
            got - published
        );
        guard.release().await.unwrap();
        // Whatever the cancelled try took came back, once.
        assert_eq!(
            pool_becomes(&redis, "handover", (2, 0), ms(2000)).await,
            (2, 0),
            "trial {trial}"
        );
        listener.drain();
    }
    println!("{cancelled_first} of 10 trials cancelled the first waiter before it won");
    assert!(cancelled_first > 0, "no trial cancelled the woken waiter");
}

/// A waiter woken by a release and cancelled before its try reached Redis
/// passes the wake-up on: the other waiter of its client gets the permit at
/// once, not at its next poll (5 s). The waiters' tries go through a link
/// that is stalled while the first one is cancelled (that try never runs,
/// and the undo of its attempt gives nothing back, so sends no message);
/// their wake-ups come directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_waiter_cancelled_before_its_try_arrives_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let proxy = redlua_test_support::FaultProxy::start(redis.server.port());
    let tries = proxy.client().get_connection_manager().await.unwrap();
    let waiters = LockClient::from_client(redis.server.client())
        .connection(tries)
        .connect()
        .await
        .unwrap();
    let holder = redis.client().await;
    for round in 0..3 {
        let name = format!("pass-on:{round}");
        let other = holder.leased_semaphore(&name);
        other.set_permits(1).await.unwrap();
        let held = other.acquire(1).await.unwrap();
        let spawn_waiter = || {
            let sem = waiters.leased_semaphore(&name);
            tokio::spawn(async move { (sem.acquire(1).await.unwrap(), Instant::now()) })
        };
        let first = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        let second = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        // The release's message wakes the first waiter (the longest
        // waiting); its try is held on the link, and it is cancelled before
        // the try arrives.
        proxy.stall();
        let released = Instant::now();
        held.release().await.unwrap();
        tokio::time::sleep(ms(50)).await;
        first.abort();
        tokio::time::sleep(ms(50)).await;
        proxy.resume_dropping();
        let (got, at) = within(ms(10_000), "the second waiter", second)
            .await
            .unwrap();
        assert!(
            at - released < ms(1000),
            "round {round}: the free permit waited {:?} for the second waiter",
            at - released
        );
        got.release().await.unwrap();
        assert_eq!(pool_becomes(&redis, &name, (1, 0), ms(2000)).await, (1, 0));
    }
}
