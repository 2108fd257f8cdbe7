//! The count-down latch (Redisson's `RCountDownLatch` layout) against real
//! redis-server processes: counting, waiting woken by pub/sub, a latch
//! deleted or set again while waited on, exact count-downs after a lost
//! reply, bad input, and interoperability with Redisson's own scripts.

mod common;
mod redisson;

use common::{Redis, ms, within};
use redis::AsyncCommands;
use redisson::{java_latch_count_down, java_latch_try_set_count, latch_channel};
use redlua_runtime::Error;
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test]
async fn a_latch_counts_down_to_open_and_is_set_once_per_round() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let latch = client.count_down_latch("shards");
    assert_eq!(latch.count().await.unwrap(), 0, "never set: open");
    assert!(latch.wait_for(ms(10)).await.unwrap());
    assert!(latch.try_set_count(2).await.unwrap());
    assert!(!latch.try_set_count(5).await.unwrap(), "set once per round");
    assert_eq!(latch.count().await.unwrap(), 2);
    assert!(!latch.wait_for(ms(50)).await.unwrap());
    assert_eq!(latch.count_down().await.unwrap(), 1);
    assert_eq!(latch.count_down().await.unwrap(), 0);
    assert!(!redis.exists("shards").await, "an open latch has no key");
    assert_eq!(latch.count_down().await.unwrap(), 0, "stays open");
    assert!(!redis.exists("shards").await);
    // A new round.
    assert!(latch.try_set_count(1).await.unwrap());
    assert!(latch.delete().await.unwrap());
    assert!(!latch.delete().await.unwrap());
    assert_eq!(latch.count().await.unwrap(), 0);
}

#[tokio::test]
async fn bad_input_fails_before_anything_is_written() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let latch = client.count_down_latch("l");
    assert!(matches!(
        latch.try_set_count(0).await,
        Err(Error::InvalidPermits { .. })
    ));
    // Redisson's channel braces the whole name: a hash tag of its own
    // would put the channel in another slot.
    assert!(matches!(
        client.count_down_latch("a{b}c").try_set_count(1).await,
        Err(Error::InvalidName { .. })
    ));
    assert_eq!(redis.keys().await, Vec::<String>::new());
    let _: () = redis.raw().hset("h", "f", "1").await.unwrap();
    let _: () = redis.raw().set("w", "lots").await.unwrap();
    for name in ["h", "w"] {
        let latch = client.count_down_latch(name);
        assert!(matches!(
            latch.count_down().await,
            Err(Error::WrongType { .. })
        ));
        assert!(matches!(latch.count().await, Err(Error::WrongType { .. })));
        assert!(matches!(latch.wait().await, Err(Error::WrongType { .. })));
    }
    let word: String = redis.raw().get("w").await.unwrap();
    assert_eq!(word, "lots");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_waiter_of_a_client_is_woken_when_the_latch_opens() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let latch = client.count_down_latch("ready");
    latch.try_set_count(1).await.unwrap();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let latch = latch.clone();
            tokio::spawn(async move {
                latch.wait().await.unwrap();
                Instant::now()
            })
        })
        .collect();
    tokio::time::sleep(ms(400)).await;
    let opened = Instant::now();
    // One `0` reaches the client; each waiter that sees the latch open
    // passes the wake-up on.
    other.count_down_latch("ready").count_down().await.unwrap();
    for waiter in waiters {
        let woke = within(ms(4000), "a waiter", waiter).await.unwrap();
        // A waiter looks again every 5 s: a wake-up is far faster.
        assert!(woke - opened < ms(1000), "woken after {:?}", woke - opened);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_latch_deleted_while_waited_on_releases_its_waiters() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let latch = client.count_down_latch("gone");
    latch.try_set_count(3).await.unwrap();
    let waiter = tokio::spawn({
        let latch = latch.clone();
        async move { latch.wait_for(ms(10_000)).await.unwrap() }
    });
    tokio::time::sleep(ms(300)).await;
    let deleted = Instant::now();
    assert!(latch.delete().await.unwrap());
    assert!(within(ms(4000), "the waiter", waiter).await.unwrap());
    assert!(deleted.elapsed() < ms(1000), "{:?}", deleted.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_set_again_before_a_waiter_looked_keeps_it_waiting() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let latch = client.count_down_latch("rounds");
    latch.try_set_count(1).await.unwrap();
    // Open and set again in one step, before any waiter can look: as in
    // Redisson, a waiter that did not see the latch open waits for the new
    // round.
    let waiter = tokio::spawn({
        let latch = latch.clone();
        async move { latch.wait_for(ms(1500)).await.unwrap() }
    });
    tokio::time::sleep(ms(300)).await;
    let _: () = redis::pipe()
        .atomic()
        .del("rounds")
        .set("rounds", 2)
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    assert!(!within(ms(4000), "the waiter", waiter).await.unwrap());
    assert_eq!(latch.count().await.unwrap(), 2);
}

/// A count-down whose reply is lost is sent again with the same request:
/// it counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_down_whose_reply_was_lost_counts_once() {
    let redis = Redis::start().await;
    let (proxy, client) = redis.behind_proxy(Some(ms(300))).await;
    let latch = client.count_down_latch("once");
    latch.try_set_count(5).await.unwrap();
    // The first copy takes 1.2 s each way; the retry, after the delay is
    // gone, is answered first, and the first copy reaches Redis well after
    // answered requests' latches are swept (250 ms).
    proxy.set_delay(ms(1200));
    let slow = tokio::spawn({
        let latch = latch.clone();
        async move { latch.count_down().await }
    });
    tokio::time::sleep(ms(350)).await;
    proxy.set_delay(Duration::ZERO);
    let after = within(ms(5000), "count_down over a slow link", slow)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after, 4);
    // Let the first copy arrive too.
    tokio::time::sleep(ms(2500)).await;
    let count: String = redis.raw().get("once").await.unwrap();
    assert_eq!(count, "4", "the count-down counted twice");
}

/// A change sent again with its request key answers what its first copy
/// answered, changed or not, and changes nothing more.
#[tokio::test]
async fn a_change_sent_again_answers_its_first_reply() {
    let redis = Redis::start().await;
    let script = redis::Script::new(include_str!("../scripts/count_down_latch_change.lua"));
    let change = async |request: &str, mode: &str| -> (i64, i64) {
        script
            .key("again")
            .key(latch_channel("again"))
            .key(request)
            .arg(mode)
            .arg(3)
            .arg(30_000)
            .arg("publish")
            .invoke_async(&mut redis.raw())
            .await
            .unwrap()
    };
    for _ in 0..2 {
        assert_eq!(change("{again}:set", "try_set").await, (1, 3));
        assert_eq!(change("{again}:set_again", "try_set").await, (0, 3));
        assert_eq!(change("{again}:down", "count_down").await, (1, 2));
    }
    let count: String = redis.raw().get("again").await.unwrap();
    assert_eq!(count, "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_count_down_and_wait_on_one_latch() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let latch = client.count_down_latch("mixed");
    assert!(java_latch_try_set_count(&redis, "mixed", 2).await);
    assert!(!latch.try_set_count(9).await.unwrap());
    assert_eq!(latch.count().await.unwrap(), 2);
    let mut listener = redis.listen(&latch_channel("mixed")).await;
    // Rust counts down: no message until it opens.
    assert_eq!(latch.count_down().await.unwrap(), 1);
    let waiter = tokio::spawn({
        let latch = latch.clone();
        async move {
            latch.wait().await.unwrap();
            Instant::now()
        }
    });
    tokio::time::sleep(ms(300)).await;
    // Java's count-down opens it and wakes the Rust waiter.
    let opened = Instant::now();
    java_latch_count_down(&redis, "mixed").await;
    let woke = within(ms(4000), "the waiter", waiter).await.unwrap();
    assert!(woke - opened < ms(1000), "woken after {:?}", woke - opened);
    assert!(!redis.exists("mixed").await);
    // Rust's messages are Redisson's: `1` for a new count, `0` on opening.
    assert!(latch.try_set_count(1).await.unwrap());
    latch.count_down().await.unwrap();
    let mut messages = Vec::new();
    while let Some((message, _)) = listener.next_within(ms(1000)).await {
        messages.push(message);
        if messages.len() == 3 {
            break;
        }
    }
    assert_eq!(messages, ["0", "1", "0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_face_counts_down_and_waits() {
    let redis = Redis::start().await;
    let url = redis.url();
    tokio::task::spawn_blocking(move || {
        let client = redlua_runtime::blocking::LockClient::connect(url).unwrap();
        let latch = client.count_down_latch("threads");
        assert!(latch.try_set_count(2).unwrap());
        assert!(!latch.wait_for(ms(100)).unwrap());
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                std::thread::spawn(move || latch.count_down().unwrap())
            })
            .collect();
        latch.wait().unwrap();
        for counter in counters {
            counter.join().unwrap();
        }
        assert_eq!(latch.count().unwrap(), 0);
        assert!(!latch.delete().unwrap());
    })
    .await
    .unwrap();
}
