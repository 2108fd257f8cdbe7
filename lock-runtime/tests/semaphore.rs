//! The semaphore (Redisson's `RSemaphore` layout) against real redis-server
//! processes: taking and giving permits, bad input refused before anything
//! is written, pub/sub wake-ups, exact cancellation (dropped calls, lost
//! replies, a late copy of an abandoned acquire), faults (random
//! cancellation, `CLIENT KILL`, `SIGSTOP`) watched by an observer outside
//! Redis, and interoperability with Redisson's own scripts.

mod common;
mod redisson;

use common::chaos::{self, Chaos, Holders};
use common::{Redis, ms, two_waiters, within};
use redis::AsyncCommands;
use redisson::{
    java_semaphore_release, java_semaphore_try_acquire, java_semaphore_try_set_permits,
    semaphore_channel,
};
use redlua_runtime::{Error, LockClient, MAX_PERMITS, SyncReplicas};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// The permits available, read with a fresh connection (tests that kill
/// clients kill the raw one too).
async fn available(redis: &Redis, name: &str) -> Option<i64> {
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let value: Option<String> = con.get(name).await.unwrap();
    value.map(|v| v.parse().unwrap())
}

/// Keys other than the semaphore itself (attempt keys, request latches).
async fn helper_keys(redis: &Redis, name: &str) -> Vec<String> {
    let mut con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = con.keys("*").await.unwrap();
    keys.into_iter().filter(|k| k != name).collect()
}

/// Waits until the semaphore holds `expected` permits: what it holds then.
async fn available_becomes(redis: &Redis, name: &str, expected: i64, limit: Duration) -> i64 {
    let deadline = Instant::now() + limit;
    loop {
        let now = available(redis, name).await.unwrap_or(0);
        if now == expected || Instant::now() >= deadline {
            return now;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

#[tokio::test]
async fn permits_are_taken_only_while_enough_are_available_and_given_back_by_anyone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let sem = client.semaphore("jobs");
    assert_eq!(sem.available().await.unwrap(), 0);
    assert!(!sem.try_acquire(1).await.unwrap(), "no pool yet");
    assert!(sem.try_set_permits(3).await.unwrap());
    assert!(!sem.try_set_permits(10).await.unwrap(), "set once");
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(!sem.try_acquire(2).await.unwrap());
    assert_eq!(sem.available().await.unwrap(), 1);
    // Nobody owns permits: another client gives them back.
    assert_eq!(other.semaphore("jobs").release(2).await.unwrap(), 3);
    assert_eq!(sem.add_permits(-4).await.unwrap(), -1);
    assert!(!sem.try_acquire(1).await.unwrap());
    assert_eq!(sem.add_permits(2).await.unwrap(), 1);
    sem.set_permits(5).await.unwrap();
    assert_eq!(available(&redis, "jobs").await, Some(5));
    // The counter has no expiry (it is the pool, as in Redisson); the
    // attempt keys and request latches are gone soon after.
    assert_eq!(redis.pttl("jobs").await, -1);
    let deadline = Instant::now() + ms(2000);
    while !helper_keys(&redis, "jobs").await.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(ms(20)).await;
    }
    assert_eq!(helper_keys(&redis, "jobs").await, Vec::<String>::new());
}

#[tokio::test]
async fn bad_input_fails_before_anything_is_written() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("pool");
    for result in [
        sem.try_acquire(0).await,
        sem.try_acquire(MAX_PERMITS + 1).await,
        sem.try_acquire_for(0, ms(10)).await,
    ] {
        assert!(
            matches!(result, Err(Error::InvalidPermits { .. })),
            "{result:?}"
        );
    }
    assert!(matches!(
        sem.acquire(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.release(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.add_permits(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        sem.set_permits(MAX_PERMITS + 1).await,
        Err(Error::InvalidPermits { .. })
    ));
    assert!(matches!(
        client.semaphore("").try_acquire(1).await,
        Err(Error::InvalidName { .. })
    ));
    assert_eq!(redis.keys().await, Vec::<String>::new());

    // Keys of another type, or a string that is not a count, are left alone.
    let _: () = redis.raw().hset("a-hash", "f", "1").await.unwrap();
    let _: () = redis.raw().set("a-word", "many").await.unwrap();
    for name in ["a-hash", "a-word"] {
        let sem = client.semaphore(name);
        assert!(matches!(
            sem.try_acquire(1).await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(sem.release(1).await, Err(Error::WrongType { .. })));
        assert!(matches!(
            sem.set_permits(1).await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(
            sem.available().await,
            Err(Error::WrongType { .. })
        ));
    }
    assert_eq!(redis.hgetall("a-hash").await.len(), 1);
    let word: String = redis.raw().get("a-word").await.unwrap();
    assert_eq!(word, "many");
}

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

#[tokio::test]
async fn try_acquire_for_gives_up_at_its_deadline_and_takes_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("full");
    sem.set_permits(1).await.unwrap();
    let started = Instant::now();
    assert!(!sem.try_acquire_for(2, ms(300)).await.unwrap());
    let waited = started.elapsed();
    assert!(waited >= ms(300) && waited < ms(1500), "{waited:?}");
    assert_eq!(sem.available().await.unwrap(), 1);
}

/// Dropped at every point of its life, an acquire takes nothing: on a pool
/// of 1, each round drops an acquire after a delay, then checks that the
/// permit comes back (undone in the background when it was taken).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_acquires_never_take_or_leak_a_permit() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let sem = client.semaphore("cancel");
    sem.set_permits(1).await.unwrap();
    let mut dropped_in_flight = 0;
    // Dropped after 1, 2, 3, ... polls (yielding between them).
    for polls in [1usize, 1, 2, 2, 3, 4, 6, 8, 12, 16] {
        let mut acquire = Box::pin(sem.try_acquire(1));
        let mut finished = None;
        for _ in 0..polls {
            tokio::select! {
                biased;
                result = &mut acquire => { finished = Some(result); break; }
                _ = tokio::task::yield_now() => {}
            }
        }
        match finished {
            Some(result) => {
                // It finished first: a normal acquire, released normally.
                assert!(result.unwrap());
                sem.release(1).await.unwrap();
            }
            None => {
                dropped_in_flight += 1;
                drop(acquire);
            }
        }
        assert_eq!(
            available_becomes(&redis, "cancel", 1, ms(3000)).await,
            1,
            "after a drop at {polls} polls"
        );
    }
    assert!(dropped_in_flight >= 3, "{dropped_in_flight} dropped");

    // Dropped after its script took the permit, before the reply came
    // back (a link with 200 ms each way).
    let (proxy, slow) = redis.behind_proxy(None).await;
    let slow_sem = slow.semaphore("cancel");
    proxy.set_delay(ms(200));
    let mut acquire = Box::pin(slow_sem.try_acquire(1));
    tokio::select! {
        result = &mut acquire => panic!("finished before its permit was seen taken: {result:?}"),
        _ = async {
            while available(&redis, "cancel").await != Some(0) {
                tokio::time::sleep(ms(5)).await;
            }
        } => {}
    }
    drop(acquire);
    assert_eq!(available_becomes(&redis, "cancel", 1, ms(3000)).await, 1);
}

/// A reply lost on a slow link: the call fails, the client closes the
/// attempt in the background, and the copy that reaches Redis later takes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_copy_of_an_abandoned_acquire_takes_nothing() {
    let redis = Redis::start().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(300))).await;
    let sem = client.semaphore("slow");
    sem.set_permits(1).await.unwrap();
    // Redis knows the script (a first EVALSHA of it would find NOSCRIPT,
    // and its late copy would do nothing anyway).
    assert!(sem.try_acquire(1).await.unwrap());
    sem.release(1).await.unwrap();
    proxy.set_delay(ms(1500));
    proxy.refuse(true);
    let sent = Instant::now();
    let result = within(ms(5000), "try_acquire over a slow link", sem.try_acquire(1)).await;
    assert!(matches!(result, Err(Error::Redis(_))), "{result:?}");
    proxy.set_delay(Duration::ZERO);
    proxy.refuse(false);
    // The undo closes the attempt long before the first copy arrives.
    tokio::time::sleep(ms(2500).saturating_sub(sent.elapsed())).await;
    assert_eq!(
        available(&redis, "slow").await,
        Some(1),
        "the late copy took a permit that nobody holds"
    );
    // The pool works on.
    assert!(sem.try_acquire(1).await.unwrap());
}

/// A try whose reply was lost, then a retry that took the permits: the
/// call returns, and the first copy reaching Redis later takes nothing
/// (its attempt key is kept for it, not deleted with the answered ones).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_copy_of_an_answered_acquire_takes_nothing() {
    let redis = Redis::start().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(300))).await;
    let sem = client.semaphore("answered");
    sem.set_permits(3).await.unwrap();
    assert!(sem.try_acquire(1).await.unwrap());
    proxy.set_delay(ms(1500));
    proxy.refuse(true);
    let sent = Instant::now();
    let acquire = tokio::spawn({
        let sem = sem.clone();
        async move { sem.acquire(1).await }
    });
    // The first try's reply is lost (300 ms); the retries go on a new
    // connection once the link is healthy again.
    tokio::time::sleep(ms(450)).await;
    proxy.set_delay(Duration::ZERO);
    proxy.refuse(false);
    within(ms(3000), "the retried acquire", acquire)
        .await
        .unwrap()
        .unwrap();
    assert!(
        sent.elapsed() < ms(1400),
        "answered after {:?}",
        sent.elapsed()
    );
    assert_eq!(available(&redis, "answered").await, Some(1));
    // The first copy arrives 1.5 s after it was sent.
    tokio::time::sleep(ms(2200).saturating_sub(sent.elapsed())).await;
    assert_eq!(
        available(&redis, "answered").await,
        Some(1),
        "the late copy took permits a second time"
    );
}

/// The fault test: 12 tasks on a 3-permit pool, cancelled at random, while
/// Redis kills every client connection every 300 ms and is stopped
/// (SIGSTOP) now and then. An observer outside Redis counts holders: never
/// more than 3; in the end every permit is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_random_cancellation_client_kill_and_sigstop_the_count_stays_exact() {
    const PERMITS: i64 = 3;
    let redis = Redis::start().await;
    let client = LockClient::builder(redis.url())
        .response_timeout(ms(400))
        .sync_replicas(SyncReplicas::Off)
        .connect()
        .await
        .unwrap();
    let sem = client.semaphore("faults");
    sem.set_permits(PERMITS as u64).await.unwrap();
    let holders = Holders::default();
    let seed = chaos::seed();
    let stop_at = Instant::now() + ms(6000);
    let faults = Chaos::start(&redis, stop_at);
    let tasks: Vec<_> = (0..12u64)
        .map(|i| {
            let sem = sem.clone();
            let holders = holders.clone();
            let mut next = chaos::rng(seed, i);
            tokio::spawn(async move {
                while Instant::now() < stop_at {
                    let limit = ms(next() % 400);
                    if let Ok(Ok(())) = tokio::time::timeout(limit, sem.acquire(1)).await {
                        holders.enter();
                        tokio::time::sleep(ms(next() % 30)).await;
                        holders.leave();
                        // A release that fails is retried until it
                        // counts (exactly once).
                        while sem.release(1).await.is_err() {
                            tokio::time::sleep(ms(50)).await;
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        within(ms(30_000), "a contender", task).await.unwrap();
    }
    faults.finish().await;
    let (most, acquired) = (holders.most(), holders.acquired());
    println!("acquired {acquired} times, at most {most} holders at once");
    assert!(
        most <= PERMITS as usize,
        "{most} holders at once (seed {seed})"
    );
    assert!(
        acquired > 20,
        "only {acquired} acquires: the test did not test"
    );
    // Every abandoned acquire is undone in the background.
    assert_eq!(
        available_becomes(&redis, "faults", PERMITS, ms(10_000)).await,
        PERMITS,
        "permits lost or made up (seed {seed})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_share_one_semaphore_and_wake_each_other() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let sem = client.semaphore("shared-pool");
    // Java sizes the pool; Rust sees it and takes from it.
    assert!(java_semaphore_try_set_permits(&redis, "shared-pool", 2).await);
    assert!(!sem.try_set_permits(5).await.unwrap());
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(!java_semaphore_try_acquire(&redis, "shared-pool", 1).await);
    // A Java release wakes a Rust waiter.
    let waiter = tokio::spawn({
        let sem = sem.clone();
        async move {
            sem.acquire(1).await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(ms(300)).await;
    let released = Instant::now();
    java_semaphore_release(&redis, "shared-pool", 1).await;
    let got = within(ms(4000), "a waiter woken by Java", waiter)
        .await
        .unwrap();
    assert!(
        got - released < ms(1000),
        "woken after {:?}",
        got - released
    );
    // A Rust release announces the permits available as Redisson does, on
    // Redisson's channel, and Java takes them.
    let mut listener = redis.listen(&semaphore_channel("shared-pool")).await;
    assert_eq!(sem.release(2).await.unwrap(), 2);
    let (message, _) = listener.next_within(ms(2000)).await.expect("a message");
    assert_eq!(message, "2");
    assert!(java_semaphore_try_acquire(&redis, "shared-pool", 2).await);
    assert_eq!(sem.available().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_face_takes_waits_and_gives_back() {
    let redis = Redis::start().await;
    let url = redis.url();
    let waited = tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::connect(url).unwrap();
        let sem = client.semaphore("threads");
        assert!(sem.try_set_permits(1).unwrap());
        sem.acquire(1).unwrap();
        assert!(!sem.try_acquire_for(1, ms(200)).unwrap());
        let waiter = std::thread::spawn({
            let sem = sem.clone();
            move || {
                sem.acquire(1).unwrap();
                std::time::Instant::now()
            }
        });
        std::thread::sleep(ms(300));
        let released = std::time::Instant::now();
        assert_eq!(sem.release(1).unwrap(), 1);
        let got = waiter.join().unwrap();
        assert_eq!(sem.available().unwrap(), 0);
        assert!(matches!(
            sem.try_acquire(0),
            Err(Error::InvalidPermits { .. })
        ));
        got - released
    })
    .await
    .unwrap();
    assert!(waited < ms(1000), "woken after {waited:?}");
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

/// Redis restarts (reloading its append-only file) while permits are taken
/// and acquirers wait: the waiters subscribe again and get the permits
/// given back after the restart, each release gives back once, and the
/// count is exact, as an observer outside Redis counts the permits held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_while_permits_are_held_and_acquirers_wait_keeps_the_count_exact() {
    const PERMITS: i64 = 3;
    let redis = Redis::start_persistent().await;
    let client = redis.client().await;
    let sem = client.semaphore("restarted");
    sem.set_permits(PERMITS as u64).await.unwrap();
    // The observer: permits held by this test's holders.
    let held = Arc::new(AtomicUsize::new(0));
    assert!(sem.try_acquire(2).await.unwrap());
    assert!(sem.try_acquire(1).await.unwrap());
    held.fetch_add(3, Ordering::SeqCst);
    // Only waiters subscribe to the channel.
    let channel = semaphore_channel("restarted");
    assert_eq!(redis.subscribers(&channel).await, 0);
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let sem = sem.clone();
            let held = held.clone();
            tokio::spawn(async move {
                sem.acquire(1).await.unwrap();
                held.fetch_add(1, Ordering::SeqCst);
                Instant::now()
            })
        })
        .collect();
    assert!(redis.subscribers_become(&channel, 1, ms(3000)).await >= 1);
    tokio::time::sleep(ms(200)).await;
    assert!(waiters.iter().all(|w| !w.is_finished()));

    let redis = redis.restart().await;
    assert_eq!(available(&redis, "restarted").await, Some(0), "kept");
    // The waiters' subscription heals.
    assert!(
        redis.subscribers_become(&channel, 1, ms(5000)).await >= 1,
        "no waiter subscribed again"
    );
    assert!(waiters.iter().all(|w| !w.is_finished()));

    // A release after the restart gives back once and wakes one waiter.
    held.fetch_sub(1, Ordering::SeqCst);
    let released = Instant::now();
    sem.release(1).await.unwrap();
    let mut waiters = waiters.into_iter();
    let mut first = waiters.next().unwrap();
    let mut second = waiters.next().unwrap();
    let (got, other) = tokio::select! {
        got = &mut first => (got.unwrap(), second),
        got = &mut second => (got.unwrap(), first),
        _ = tokio::time::sleep(ms(4000)) => panic!("no waiter got the permit given back"),
    };
    // A waiter polls every 5 s: it was woken by the release.
    assert!(
        got - released < ms(2000),
        "woken after {:?}",
        got - released
    );
    assert!(!other.is_finished(), "one permit, one waiter");
    assert_eq!(available(&redis, "restarted").await, Some(0));
    held.fetch_sub(2, Ordering::SeqCst);
    sem.release(2).await.unwrap();
    within(ms(3000), "the second waiter", other).await.unwrap();
    // Every permit is held or available, each once.
    let held_now = held.load(Ordering::SeqCst) as i64;
    assert_eq!(held_now, 2);
    assert_eq!(
        available(&redis, "restarted").await,
        Some(PERMITS - held_now)
    );
    sem.release(2).await.unwrap();
    assert_eq!(available(&redis, "restarted").await, Some(PERMITS));
}

/// A release that took effect, then Redis restarted (append-only file
/// kept) before its reply came back: the retry on the restarted server
/// gives nothing back twice and returns the first result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_reply_was_lost_in_a_restart_gives_back_once() {
    let redis = Redis::start_persistent().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(1000))).await;
    let sem = client.semaphore("replied");
    sem.set_permits(3).await.unwrap();
    assert!(sem.try_acquire(2).await.unwrap());
    proxy.set_delay(ms(300));
    let release = tokio::spawn({
        let sem = sem.clone();
        async move { sem.release(1).await }
    });
    // Given back in Redis; the reply is still on its way: it never comes.
    assert_eq!(available_becomes(&redis, "replied", 2, ms(3000)).await, 2);
    proxy.stall();
    let redis = redis.restart().await;
    proxy.resume_dropping();
    proxy.set_delay(Duration::ZERO);
    let result = within(ms(10_000), "the release", release).await.unwrap();
    assert_eq!(result.unwrap(), 2, "the first result");
    tokio::time::sleep(ms(300)).await;
    assert_eq!(
        available(&redis, "replied").await,
        Some(2),
        "given back once"
    );
    assert_eq!(sem.release(1).await.unwrap(), 3);
    assert_eq!(available(&redis, "replied").await, Some(3));
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
