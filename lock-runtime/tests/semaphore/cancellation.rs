//! Exact cancellation: dropped acquires, and late copies of abandoned or answered acquires.

use super::{available, available_becomes};
use crate::common::{Redis, ms, within};
use redlua_runtime::Error;
use std::time::Duration;
use tokio::time::Instant;

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
