//! Shared readers and exclusive writers: overlap, exclusion, wake-ups of readers, bounded waits.

use super::{join_locker, only_token, settled_keys, sorted, spawn_locker};
use crate::common::{Redis, ms, within};
use crate::redisson::token_key;
use redis::AsyncCommands;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_overlap() {
    const READERS: usize = 6;
    const HOLD: Duration = ms(300);
    let redis = Redis::start().await;
    let clients = [
        redis.client().await,
        redis.client().await,
        redis.client().await,
    ];
    let go = Arc::new(tokio::sync::Barrier::new(READERS));
    let began = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..READERS {
        // Each acquire is an owner of its own.
        let read = clients[i % clients.len()].read_write_lock("shared").read();
        let go = go.clone();
        tasks.push(tokio::spawn(async move {
            go.wait().await;
            let guard = read.lock().await.expect("read lock()");
            let entered = Instant::now();
            let token = guard.token();
            tokio::time::sleep(HOLD).await;
            let left = Instant::now();
            guard.unlock().await.expect("read unlock()");
            (entered, left, token)
        }));
    }
    let intervals = within(ms(10_000), "the readers", async {
        let mut intervals = Vec::new();
        for task in tasks {
            intervals.push(task.await.expect("reader task"));
        }
        intervals
    })
    .await;
    let total = began.elapsed();
    // The most readers inside at one moment (a reader's entry instant).
    let most = intervals
        .iter()
        .map(|&(at, _, _)| {
            intervals
                .iter()
                .filter(|&&(entered, left, _)| entered <= at && at < left)
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(most, READERS, "not all readers were inside at once");
    assert!(
        total < HOLD * READERS as u32 / 2,
        "{READERS} readers of {HOLD:?} took {total:?}: they did not overlap"
    );
    // Every reader is a new holder: each got a token of its own.
    let mut tokens: Vec<u64> = intervals.iter().map(|&(_, _, token)| token).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), READERS, "readers shared a fencing token");
    assert_eq!(settled_keys(&redis).await, only_token("shared"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_exclude_readers_and_each_other() {
    const CLIENTS: usize = 3;
    const TASKS: usize = 4;
    const ROUNDS: usize = 5;
    let redis = Redis::start().await;
    let writers_inside = Arc::new(AtomicUsize::new(0));
    let readers_inside = Arc::new(AtomicUsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let reads = Arc::new(AtomicUsize::new(0));
    // Fencing: the highest token seen inside, and the highest a writer had.
    let highest = Arc::new(AtomicU64::new(0));
    let highest_writer = Arc::new(AtomicU64::new(0));
    let stale_tokens = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = redis.client().await;
        for t in 0..TASKS {
            let rw = client.read_write_lock("counted");
            let mut con = redis.raw();
            let writers_inside = writers_inside.clone();
            let readers_inside = readers_inside.clone();
            let violations = violations.clone();
            let reads = reads.clone();
            let highest = highest.clone();
            let highest_writer = highest_writer.clone();
            let stale_tokens = stale_tokens.clone();
            tasks.push(tokio::spawn(async move {
                for round in 0..ROUNDS {
                    if t % 2 == 0 {
                        let guard = rw.write().lock().await.expect("write lock()");
                        if writers_inside.fetch_add(1, Ordering::SeqCst) != 0
                            || readers_inside.load(Ordering::SeqCst) != 0
                        {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        // Every holder before this writer has left: its
                        // token is above all of theirs.
                        if highest.fetch_max(guard.token(), Ordering::SeqCst) >= guard.token() {
                            stale_tokens.fetch_add(1, Ordering::SeqCst);
                        }
                        highest_writer.fetch_max(guard.token(), Ordering::SeqCst);
                        let n: Option<u64> = con.get("counter").await.unwrap();
                        if (t + round) % 2 == 0 {
                            tokio::task::yield_now().await;
                        } else {
                            tokio::time::sleep(ms(1)).await;
                        }
                        let _: () = con.set("counter", n.unwrap_or(0) + 1).await.unwrap();
                        writers_inside.fetch_sub(1, Ordering::SeqCst);
                        guard.unlock().await.expect("write unlock()");
                    } else {
                        let guard = rw.read().lock().await.expect("read lock()");
                        readers_inside.fetch_add(1, Ordering::SeqCst);
                        if writers_inside.load(Ordering::SeqCst) != 0 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        // Every writer before this reader has left.
                        if highest_writer.load(Ordering::SeqCst) >= guard.token() {
                            stale_tokens.fetch_add(1, Ordering::SeqCst);
                        }
                        highest.fetch_max(guard.token(), Ordering::SeqCst);
                        let _: Option<u64> = con.get("counter").await.unwrap();
                        tokio::time::sleep(ms(2)).await;
                        if writers_inside.load(Ordering::SeqCst) != 0 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        readers_inside.fetch_sub(1, Ordering::SeqCst);
                        reads.fetch_add(1, Ordering::SeqCst);
                        guard.unlock().await.expect("read unlock()");
                    }
                }
            }));
        }
    }
    within(Duration::from_secs(30), "all workers", async {
        for task in tasks {
            task.await.expect("worker task");
        }
    })
    .await;
    let total: u64 = redis.raw().get("counter").await.unwrap();
    assert_eq!(total, (CLIENTS * TASKS / 2 * ROUNDS) as u64, "lost updates");
    assert_eq!(reads.load(Ordering::SeqCst), CLIENTS * TASKS / 2 * ROUNDS);
    assert_eq!(
        violations.load(Ordering::SeqCst),
        0,
        "a writer was inside with someone else"
    );
    assert_eq!(
        stale_tokens.load(Ordering::SeqCst),
        0,
        "a holder's fencing token was not above its predecessors'"
    );
    let (holds, latches): (Vec<String>, Vec<String>) = settled_keys(&redis)
        .await
        .into_iter()
        .partition(|k| !k.starts_with("redisson_unlock_latch:"));
    assert_eq!(
        holds,
        sorted(&["counter", &token_key("counted")]),
        "the lock is left held"
    );
    // Every release's latch is gone once `unlock` returned and the client
    // had time to clean up (here the clients are dropped with the workers'
    // last guards).
    assert!(
        latches.is_empty(),
        "release latches left behind 1 s after the last unlock: {latches:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_release_wakes_every_waiting_reader() {
    let redis = Redis::start().await;
    let writer = redis.client().await;
    let c2 = redis.client().await;
    let c3 = redis.client().await;
    let name = "wake-all";
    let w = writer.read_write_lock(name).write().lock().await.unwrap();
    let w_token = w.token();
    let readers: Vec<_> = [&c2, &c2, &c3, &c3]
        .into_iter()
        .map(|c| spawn_locker(&c.read_write_lock(name).read()))
        .collect();
    tokio::time::sleep(ms(300)).await;
    assert!(readers.iter().all(|r| !r.is_finished()));
    let released = Instant::now();
    w.unlock().await.unwrap();
    let mut guards = Vec::new();
    let mut expected = vec![("mode".to_string(), "read".to_string())];
    for reader in readers {
        let (entered, guard) = join_locker(reader, ms(5000)).await;
        let after = entered.duration_since(released);
        assert!(
            after < ms(200),
            "a reader entered {after:?} after the release"
        );
        assert!(guard.token() > w_token);
        expected.push((guard.owner().to_string(), "1".to_string()));
        guards.push(guard);
    }
    assert_eq!(
        redis.hgetall(name).await,
        expected.into_iter().collect::<HashMap<_, _>>()
    );
    for guard in guards {
        guard.unlock().await.unwrap();
    }
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_lock_for_gives_up_after_its_wait_on_both_sides() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let rw = client.read_write_lock("doc:wait");
    let writing = rw.write().lock().await.unwrap();
    let hash = redis.hgetall("doc:wait").await;
    for side in [rw.read().into_any(), rw.write().into_any()] {
        let started = Instant::now();
        let got = side
            .try_lock_for(Duration::from_millis(600), None)
            .await
            .unwrap();
        let waited = started.elapsed();
        assert!(got.is_none());
        assert!(
            waited >= Duration::from_millis(600) && waited < Duration::from_millis(1_100),
            "waited {waited:?}"
        );
    }
    assert_eq!(redis.hgetall("doc:wait").await, hash);
    writing.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token("doc:wait"));
}
