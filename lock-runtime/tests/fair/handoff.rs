//! Handoffs: a release hands the lock to a waiting redlua client; lost, stale and dropped handoffs.

use super::{deadlines_key, queue, queue_key, queue_reaches, waiter, waiter_channel, warm_up};
use crate::common::{Redis, monitor, ms, within};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard};
use std::time::Duration;
use tokio::time::Instant;

/// The waiters' handoff offers of a fair lock (redlua's key).
fn handoffs_key(name: &str) -> String {
    format!("{{{name}}}:redlua_handoff")
}

/// The fencing token counter's value (Redisson's key).
async fn token_counter(redis: &Redis, name: &str) -> u64 {
    redis
        .raw()
        .get(format!("redisson_lock_token:{{{name}}}"))
        .await
        .expect("GET")
}

/// A fair `lock()` of `client`, polled until its owner is in the queue,
/// then left unpolled: it can only learn what Redis did meanwhile when it
/// is polled again. The client's pattern must be warm (see [`warm_up`]).
async fn queued_and_paused(
    redis: &Redis,
    client: &LockClient,
    name: &str,
    queued: usize,
) -> std::pin::Pin<Box<impl std::future::Future<Output = redlua_runtime::Result<LockGuard>>>> {
    let lock = client.fair_lock(name);
    let mut acquire = Box::pin(async move { lock.lock().await });
    tokio::select! {
        _ = &mut acquire => panic!("acquired a held lock"),
        _ = queue_reaches(redis, name, queued) => {}
    }
    acquire
}

/// Client `a` holds fair lock `name`, and client `b`'s acquire of it is
/// queued and paused (see [`queued_and_paused`]), after `b` and `others`
/// were warmed up: the guard, the paused acquire, and `b`'s owner.
async fn held_with_a_paused_waiter(
    redis: &Redis,
    name: &str,
    a: &LockClient,
    b: &LockClient,
    others: &[LockClient],
) -> (
    LockGuard,
    std::pin::Pin<Box<impl std::future::Future<Output = redlua_runtime::Result<LockGuard>>>>,
    String,
) {
    let mut warm = vec![b.clone()];
    warm.extend_from_slice(others);
    warm_up(
        redis,
        name,
        &warm,
        a.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let paused = queued_and_paused(redis, b, name, 1).await;
    let ours = queue(redis, name).await[0].clone();
    assert!(ours.starts_with(b.id()), "{ours}");
    (held, paused, ours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_hands_the_lock_to_a_waiting_redlua_client_which_then_needs_no_try() {
    let redis = Redis::start().await;
    let name = "fair:handoff";
    let (a, b) = (redis.client().await, redis.client().await);
    let (held, paused, ours) = held_with_a_paused_waiter(&redis, name, &a, &b, &[]).await;
    // The waiter offered to take a handoff (expiry: its wait time, 10 s,
    // shorter than its 30 s lease).
    let offers = redis.hgetall(&handoffs_key(name)).await;
    assert_eq!(offers.len(), 1, "{offers:?}");
    assert!(offers[&ours].starts_with("10000:"), "{offers:?}");
    // Like every key redlua writes, the offers expire (with the queue).
    let ttl = redis.pttl(&handoffs_key(name)).await;
    assert!(ttl > 0, "{ttl}");
    held.unlock().await.expect("unlock");
    // The release handed B the lock, though B has done nothing since: B
    // holds it for the handoff's expiry, with the next fencing token, and
    // has left the queue.
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    let pttl = redis.pttl(name).await;
    assert!((9_000..=10_000).contains(&pttl), "{pttl}");
    assert!(queue(&redis, name).await.is_empty());
    assert!(redis.hgetall(&handoffs_key(name)).await.is_empty());
    let token = token_counter(&redis, name).await;
    // Polled again, B returns the guard without another acquire script:
    // the only script it sends extends the lease to its own.
    let monitor = monitor(&redis);
    let guard = within(ms(1000), "the handed-over guard", paused)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    assert_eq!(guard.token(), token);
    within(ms(2000), "the lease extended to 30 s", async {
        while redis.pttl(name).await < 20_000 {
            tokio::time::sleep(ms(10)).await;
        }
    })
    .await;
    let seen = monitor.stop(&redis).await;
    // Scripts that name B's owner: the lease extension (one lock: `1` key),
    // maybe sent twice (a NOSCRIPT first), and no acquire (seven keys).
    let scripts: Vec<&String> = seen
        .iter()
        .filter(|(_, command, arguments)| {
            command.starts_with("EVAL") && arguments.contains(&format!("\"{ours}\""))
        })
        .map(|(_, _, arguments)| arguments)
        .collect();
    assert!(!scripts.is_empty(), "no extension");
    for script in &scripts {
        let keys = script.split(' ').nth(2);
        assert_eq!(keys, Some("\"1\""), "not the lease extension: {script}");
    }
    let left = guard.valid_until() - std::time::Instant::now();
    assert!(left > ms(25_000), "{left:?}");
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_cancelled_after_it_was_handed_the_lock_passes_it_on_at_once() {
    let redis = Redis::start().await;
    let name = "fair:handoff-cancelled";
    let a = redis.client().await;
    let (b, c) = (redis.client().await, redis.client().await);
    let (held, paused, ours) =
        held_with_a_paused_waiter(&redis, name, &a, &b, std::slice::from_ref(&c)).await;
    let (_c_task, c_rx) = waiter(&c, name);
    queue_reaches(&redis, name, 2).await;
    held.unlock().await.expect("unlock");
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    // B is dropped before it learned it holds the lock: it gives the lock
    // up, and C (next in line) gets it at once, not after the handoff's
    // 10 s expiry.
    let dropped = Instant::now();
    drop(paused);
    let (guard, at) = within(ms(2000), "C after B was dropped", c_rx)
        .await
        .expect("C's guard");
    assert!(at - dropped < ms(1000), "{:?}", at - dropped);
    assert!(guard.owner().to_string().starts_with(c.id()));
    assert_eq!(redis.hget(name, &ours).await, None);
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
    assert!(queue(&redis, name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_whose_handoff_message_was_lost_finds_the_lock_at_its_next_try() {
    let redis = Redis::start().await;
    let name = "fair:handoff-lost";
    let (a, b) = (redis.client().await, redis.client().await);
    let (held, paused, ours) = held_with_a_paused_waiter(&redis, name, &a, &b, &[]).await;
    // B's pub/sub connection is cut before the release: the handoff
    // message reaches nobody.
    let killed: i64 = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "pubsub"])
        .query_async(&mut redis.raw())
        .await
        .expect("CLIENT KILL");
    assert!(killed >= 1, "{killed}");
    held.unlock().await.expect("unlock");
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    // Polled again, B finds its connection lost, tries, and its try finds
    // the lock handed to it: one hold (not a re-entry), the full lease.
    let guard = within(ms(2000), "B after the lost message", paused)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    assert_eq!(
        redis.hgetall(name).await,
        [(ours.clone(), "1".to_string())].into()
    );
    assert!(redis.pttl(name).await > 25_000);
    let token = token_counter(&redis, name).await;
    assert_eq!(guard.token(), token);
    guard.unlock().await.expect("unlock");
    assert!(redis.hgetall(name).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handoff_message_for_another_try_is_not_taken_as_the_lock() {
    let redis = Redis::start().await;
    let name = "fair:handoff-stale";
    let a = redis.client().await;
    let b = redis.client().await;
    warm_up(
        &redis,
        name,
        std::slice::from_ref(&b),
        a.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let (_task, rx) = waiter(&b, name);
    let ours = queue_reaches(&redis, name, 1).await[0].clone();
    let offer = redis
        .hget(&handoffs_key(name), &ours)
        .await
        .expect("an offer");
    let (_, try_number) = offer.split_once(':').expect("<expiry>:<try>");
    let try_number: u64 = try_number.parse().expect("a try number");
    // A message as a release writes it, but for an earlier try of B (as a
    // late one would be): B wakes, tries, finds the lock held, waits on.
    let _: () = redis
        .raw()
        .publish(
            waiter_channel(name, &ours),
            format!("redlua:handoff:1:{}", try_number - 1),
        )
        .await
        .expect("PUBLISH");
    let mut rx = rx;
    assert!(
        tokio::time::timeout(ms(500), &mut rx).await.is_err(),
        "B took a handoff that answered another try"
    );
    assert_eq!(queue(&redis, name).await, vec![ours.clone()]);
    assert_eq!(redis.hgetall(name).await.len(), 1);
    assert_eq!(redis.hget(name, &ours).await, None);
    held.unlock().await.expect("unlock");
    let (guard, _) = within(ms(2000), "B after the release", rx)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    guard.unlock().await.expect("unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_dropped_around_a_handoff_leave_no_hold_and_no_offer() {
    let redis = Redis::start().await;
    let name = "fair:handoff-abandoned";
    let holder = redis.client().await;
    let others = [redis.client().await, redis.client().await];
    warm_up(
        &redis,
        name,
        &others,
        holder.fair_lock(name).lock().await.expect("lock"),
    )
    .await;
    for round in 0..30u64 {
        let held = holder.fair_lock(name).lock().await.expect("lock");
        let mut tasks = Vec::new();
        for (i, client) in others.iter().enumerate() {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                let _guard = lock.lock().await.expect("lock");
                std::future::pending::<()>().await;
            }));
            queue_reaches(&redis, name, i + 1).await;
        }
        // The release hands the lock to the first waiter; both are dropped
        // a little later, wherever they are then (before the message came,
        // while taking it, holding).
        held.unlock().await.expect("unlock");
        tokio::time::sleep(Duration::from_micros(200 * (round % 6))).await;
        for task in &tasks {
            task.abort();
        }
        within(
            ms(2000),
            &format!("round {round}: everything gone"),
            async {
                loop {
                    let mut left = Vec::new();
                    for key in [
                        name.to_string(),
                        queue_key(name),
                        deadlines_key(name),
                        handoffs_key(name),
                    ] {
                        if redis.exists(&key).await {
                            left.push(key);
                        }
                    }
                    if left.is_empty() {
                        break;
                    }
                    tokio::time::sleep(ms(5)).await;
                }
            },
        )
        .await;
    }
}
