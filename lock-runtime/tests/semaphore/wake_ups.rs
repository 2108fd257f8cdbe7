//! Pub/sub wake-ups, and a woken waiter that leaves passing its wake-up on.

use super::available_becomes;
use crate::common::{Redis, ms, two_waiters, within};
use crate::redisson::semaphore_channel;
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_a_release_long_before_it_would_poll() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let sem = client.semaphore("slots");
    sem.try_set_permits(1).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    // Let it try, subscribe and try again.
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let released = Instant::now();
    other.semaphore("slots").release(1).await.unwrap();
    let got = within(ms(4000), "the woken waiter", waiter).await.unwrap();
    // A waiter polls every 5 s: a wake-up is far faster.
    assert!(
        got - released < ms(1000),
        "woken after {:?}",
        got - released
    );
    assert_eq!(sem.available().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_of_several_permits_wakes_as_many_waiters_of_one_client() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let sem = client.semaphore("batch");
    sem.set_permits(0).await.unwrap();
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let sem = sem.clone();
            tokio::spawn(async move {
                sem.acquire(1).await.unwrap();
                Instant::now()
            })
        })
        .collect();
    tokio::time::sleep(ms(400)).await;
    let released = Instant::now();
    // One message ("3") reaches the client; each waiter that takes a
    // permit and leaves some passes the wake-up on.
    other.semaphore("batch").release(3).await.unwrap();
    for waiter in waiters {
        let got = within(ms(4000), "a woken waiter", waiter).await.unwrap();
        assert!(
            got - released < ms(1000),
            "woken after {:?}",
            got - released
        );
    }
    assert_eq!(sem.available().await.unwrap(), 0);
}

/// A waiter woken by a release and cancelled around its try never strands
/// the other waiter of its client: that one gets the permits within a round
/// trip or so, not at its next poll (5 s), and the pool stays whole. The
/// waiters' client is behind a link with 20 ms each way, and the
/// cancellation comes 0 to 84 ms after the release's message reached
/// Redis's other subscribers: before the waiter is woken (the message wakes
/// the other one), and while its try is under way (the try's undo gives
/// the permits back, and its message wakes the other one). (The hub's
/// passing on of a wake-up its waiter dropped before trying is the locks'
/// mechanism, tested with them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_waiter_cancelled_around_its_try_never_strands_the_other() {
    let redis = Redis::start().await;
    let (proxy, waiters) = redis.behind_proxy(None).await;
    proxy.set_delay(ms(20));
    let releaser = redis.client().await;
    let mut listener = redis.listen(&semaphore_channel("handover")).await;
    let sem = waiters.semaphore("handover");
    let other = releaser.semaphore("handover");
    sem.set_permits(0).await.unwrap();
    let mut cancelled_first = 0;
    for trial in 0..15u64 {
        let (first, second) = two_waiters(|| {
            let sem = sem.clone();
            async move { sem.acquire(2).await.unwrap() }
        })
        .await;
        listener.drain();
        let released = Instant::now();
        other.release(2).await.unwrap();
        listener
            .next_within(ms(2000))
            .await
            .expect("the release's message");
        tokio::time::sleep(ms(trial * 6)).await;
        first.abort();
        let first_won = matches!(first.await, Ok(()));
        if first_won {
            // Its try came first: it holds the permits; give them back.
            other.release(2).await.unwrap();
        } else {
            cancelled_first += 1;
        }
        let ((), got) = within(ms(4000), "the second waiter", second).await.unwrap();
        assert!(
            got - released < ms(1500),
            "trial {trial}: the second waiter got the permits after {:?}",
            got - released
        );
        // Whatever the cancelled try took came back: the pool is whole
        // once the second waiter gives its permits back.
        other.release(2).await.unwrap();
        assert!(sem.try_acquire(2).await.unwrap(), "trial {trial}");
        assert!(!sem.try_acquire(1).await.unwrap(), "trial {trial}: made up");
    }
    println!("{cancelled_first} of 15 trials cancelled the first waiter before it won");
    assert!(cancelled_first > 0, "no trial cancelled the woken waiter");
}

/// A waiter that takes permits and leaves some passes its wake-up on: three
/// waiters of one client, permits set with no message of their own, then
/// one message announcing one permit. Each taker wakes the next; none waits
/// for its 5 s poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_that_leaves_permits_passes_its_wake_up_on() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("chain");
    sem.set_permits(0).await.unwrap();
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let sem = sem.clone();
            tokio::spawn(async move {
                sem.acquire(1).await.unwrap();
                Instant::now()
            })
        })
        .collect();
    tokio::time::sleep(ms(400)).await;
    let _: () = redis.raw().set("chain", 3).await.unwrap();
    let announced = Instant::now();
    let _: i64 = redis
        .raw()
        .publish(semaphore_channel("chain"), "1")
        .await
        .unwrap();
    for waiter in waiters {
        let got = within(ms(4000), "a waiter", waiter).await.unwrap();
        assert!(
            got - announced < ms(1000),
            "woken after {:?}",
            got - announced
        );
    }
    assert_eq!(sem.available().await.unwrap(), 0);
}

/// Two waiters of one client for two permits each, behind a link with
/// 20 ms each way. Two permits appear without a message, then one message
/// announces one permit: it wakes one waiter of the client, the first (it
/// waits longest). That waiter is cancelled 0 to 108 ms after Redis
/// published: before its wake-up reaches it, once it is woken, while its
/// try is under way, after. What it was given is passed on: a wake-up it
/// did not use, or, through the undo of its try, the permits and a
/// message. The other waiter gets the permits within a round trip or so,
/// not at its next poll (5 s), and the pool stays whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_waiter_a_message_wakes_passes_its_wake_up_on_when_cancelled() {
    let redis = Redis::start().await;
    let (proxy, waiters) = redis.behind_proxy(None).await;
    proxy.set_delay(ms(20));
    let sem = waiters.semaphore("handover");
    let mut cancelled_first = 0;
    for trial in 0..10u64 {
        let _: () = redis.raw().set("handover", 0).await.unwrap();
        let (first, second) = two_waiters(|| {
            let sem = sem.clone();
            async move { sem.acquire(2).await.unwrap() }
        })
        .await;
        // Given back without a message, then one announced.
        let _: () = redis.raw().set("handover", 2).await.unwrap();
        let published = Instant::now();
        let _: i64 = redis
            .raw()
            .publish(semaphore_channel("handover"), "1")
            .await
            .unwrap();
        tokio::time::sleep(ms(trial * 12)).await;
        first.abort();
        if first.await.is_ok() {
            // Its try came first: it holds the permits; give them back.
            sem.release(2).await.unwrap();
        } else {
            cancelled_first += 1;
        }
        let ((), got) = within(ms(4000), "the second waiter", second).await.unwrap();
        assert!(
            got - published < ms(1500),
            "trial {trial}: the second waiter got the permits after {:?}",
            got - published
        );
        sem.release(2).await.unwrap();
        // Whatever the cancelled try took came back, once.
        assert_eq!(
            available_becomes(&redis, "handover", 2, ms(2000)).await,
            2,
            "trial {trial}"
        );
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
    let other = redis.client().await.semaphore("pass-on");
    other.set_permits(0).await.unwrap();
    for round in 0..3 {
        let spawn_waiter = || {
            let sem = waiters.semaphore("pass-on");
            tokio::spawn(async move {
                sem.acquire(1).await.unwrap();
                Instant::now()
            })
        };
        let first = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        let second = spawn_waiter();
        tokio::time::sleep(ms(300)).await;
        // The release's message (one permit) wakes the first waiter (the
        // longest waiting); its try is held on the link, and it is
        // cancelled before the try arrives.
        proxy.stall();
        let released = Instant::now();
        other.release(1).await.unwrap();
        tokio::time::sleep(ms(50)).await;
        first.abort();
        tokio::time::sleep(ms(50)).await;
        proxy.resume_dropping();
        let at = within(ms(10_000), "the second waiter", second)
            .await
            .unwrap();
        assert!(
            at - released < ms(1000),
            "round {round}: the free permit waited {:?} for the second waiter",
            at - released
        );
        assert_eq!(available_becomes(&redis, "pass-on", 0, ms(2000)).await, 0);
    }
}
