//! What steady contention sends: three scripts per acquisition, no subscribes, no housekeeping.

use super::{command_calls, queue_reaches, waiter, warm_up};
use crate::common::{Redis, monitor, ms, within};
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::time::Instant;

/// Four clients of `redis`, warmed up on fair lock `name`.
async fn four_warm_clients(redis: &Redis, name: &str) -> Vec<LockClient> {
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(redis.client().await);
    }
    let warm = redis
        .client()
        .await
        .fair_lock(name)
        .lock()
        .await
        .expect("lock");
    warm_up(redis, name, &clients, warm).await;
    clients
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn steady_contention_costs_three_scripts_per_acquisition_and_no_subscribes() {
    let redis = Redis::start().await;
    let name = "fair:cost";
    // Warm up: every client's pattern subscribed, the scripts loaded.
    let clients = four_warm_clients(&redis, name).await;
    let before = command_calls(&redis).await;
    let rounds = 25;
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            tasks.push(tokio::spawn(async move {
                for _ in 0..rounds {
                    let guard = lock.lock().await.expect("lock");
                    tokio::time::sleep(ms(1)).await;
                    guard.unlock().await.expect("unlock");
                }
            }));
        }
    }
    within(ms(30_000), "200 contended acquisitions", async {
        for task in tasks {
            task.await.expect("contender");
        }
    })
    .await;
    let after = command_calls(&redis).await;
    let delta = |command: &str| {
        after.get(command).copied().unwrap_or(0) - before.get(command).copied().unwrap_or(0)
    };
    let acquisitions = (4 * 2 * rounds) as f64;
    let scripts = (delta("evalsha") + delta("eval")) as f64;
    eprintln!(
        "per acquisition: {:.2} scripts; subscribe {}, unsubscribe {}, psubscribe {}, punsubscribe {}",
        scripts / acquisitions,
        delta("subscribe"),
        delta("unsubscribe"),
        delta("psubscribe"),
        delta("punsubscribe"),
    );
    // A failed try that joins the queue, the release that hands the lock
    // over, the new holder's lease extension: three (a little more for the
    // odd retry on a timer).
    assert!(scripts / acquisitions <= 3.1, "{scripts} scripts");
    // Every client's waiters share one pattern, kept between waiters.
    assert_eq!(delta("subscribe"), 0);
    assert_eq!(delta("unsubscribe"), 0);
    assert_eq!(delta("psubscribe"), 0);
    assert_eq!(delta("punsubscribe"), 0);
}

#[tokio::test]
async fn a_client_s_pattern_is_dropped_a_little_after_its_last_waiter() {
    let redis = Redis::start().await;
    let name = "fair:linger";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    let (_task, rx) = waiter(&b, name);
    queue_reaches(&redis, name, 1).await;
    let pattern = format!("redisson_lock__channel:{{{name}}}:{}:*", b.id());
    let numpat = || async {
        let n: i64 = redis::cmd("PUBSUB")
            .arg("NUMPAT")
            .query_async(&mut redis.raw())
            .await
            .expect("PUBSUB NUMPAT");
        n
    };
    within(ms(2000), "the pattern subscribed", async {
        while numpat().await != 1 {
            tokio::time::sleep(ms(5)).await;
        }
    })
    .await;
    held.unlock().await.expect("unlock");
    let (guard, _) = within(ms(1000), "the waiter acquiring", rx)
        .await
        .expect("guard");
    guard.unlock().await.expect("unlock");
    // Still there just after, gone within the linger plus a ping interval.
    assert_eq!(numpat().await, 1, "{pattern} kept for the next waiter");
    let gone = Instant::now();
    within(ms(3000), "the pattern unsubscribed", async {
        while numpat().await != 0 {
            tokio::time::sleep(ms(20)).await;
        }
    })
    .await;
    assert!(gone.elapsed() >= ms(300), "{:?}", gone.elapsed());
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// Over 2.5 s of steady contention (10 latch-sweep periods, 2 pub/sub ping
/// intervals), the clients send their three scripts per acquisition and
/// nothing else but the replica recount (one `INFO` a second, shared by
/// the clients of the process) and the loss watch's reads of holds that
/// lived past 50 ms: no latch `DEL` (each goes with the next release script), no
/// keep-alive `PING` (messages keep the pub/sub connection proven alive),
/// no subscribe or unsubscribe.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn steady_contention_sends_no_housekeeping_commands() {
    let redis = Redis::start().await;
    let name = "fair:housekeeping";
    let clients = four_warm_clients(&redis, name).await;
    let acquisitions = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for client in &clients {
        for _ in 0..2 {
            let lock = client.fair_lock(name);
            let (acquisitions, stop) = (acquisitions.clone(), stop.clone());
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let guard = lock.lock().await.expect("lock");
                    acquisitions.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(ms(1)).await;
                    guard.unlock().await.expect("unlock");
                }
            }));
        }
    }
    // The warm-up's last latch (its client holds no more) is swept first.
    tokio::time::sleep(ms(500)).await;
    let monitor = monitor(&redis);
    let from = unix_now();
    let first = acquisitions.load(Ordering::Relaxed);
    tokio::time::sleep(ms(2500)).await;
    let to = unix_now();
    let made = acquisitions.load(Ordering::Relaxed) - first;
    stop.store(true, Ordering::Relaxed);
    within(ms(10_000), "the contenders stopping", async {
        for task in tasks {
            task.await.expect("contender");
        }
    })
    .await;
    let seen = monitor.stop(&redis).await;
    let mut commands: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, command, _) in seen.iter().filter(|(t, _, _)| (from..to).contains(t)) {
        *commands.entry(command.clone()).or_default() += 1;
    }
    eprintln!("{made} acquisitions; client commands: {commands:?}");
    assert!(made >= 200, "only {made} acquisitions in 2.5 s");
    let scripts = commands.remove("EVALSHA").unwrap_or(0) as f64;
    // The replica recount (synced mode, no replica): at most one a second,
    // whatever the number of clients (2.5 s: up to 3).
    let recounts = commands.remove("INFO").unwrap_or(0);
    assert!(recounts <= 3, "{recounts} INFO");
    // A sweep every 250 ms and a ping every second per client would be at
    // least 36 DEL and 8 PING here. None is expected; a few are allowed
    // for a machine so busy that a client released nothing for 250 ms or
    // heard nothing for a second.
    let sweeps = commands.remove("DEL").unwrap_or(0);
    let pings = commands.remove("PING").unwrap_or(0);
    assert!(
        sweeps <= 4,
        "{sweeps} latch-sweep DEL under steady contention"
    );
    assert!(
        pings <= 2,
        "{pings} keep-alive PING under steady contention"
    );
    // The loss watch: a tracking connection per client (opened once, with
    // `HELLO` and `CLIENT TRACKING`), and a read of each hold that is still
    // held 50 ms after its acquire (a waiter's wait and the runtime's
    // scheduling can keep one that long here), or whose key changed while
    // it was watched: a small fraction of the acquisitions.
    for opened in ["HELLO", "CLIENT"] {
        let n = commands.remove(opened).unwrap_or(0);
        assert!(
            n <= clients.len(),
            "{n} {opened} for {} clients",
            clients.len()
        );
    }
    let reads = commands.remove("HMGET").unwrap_or(0);
    assert!(
        reads * 3 <= made,
        "{reads} loss-watch reads, {made} acquisitions"
    );
    assert!(
        commands.is_empty(),
        "other commands under steady contention: {commands:?}"
    );
    // Join the queue, take the lock, release it: three (a little more for
    // the odd retry on a timer, and the acquisitions under way at the
    // window's ends).
    assert!(
        scripts / made as f64 <= 3.1,
        "{scripts} scripts, {made} acquisitions"
    );
    // And the latches were deleted all the same (by the next releases, the
    // last ones by the sweep 250 ms later), not left to expire.
    tokio::time::sleep(ms(600)).await;
    let latches: Vec<String> = redis
        .raw()
        .keys("redisson_unlock_latch:*")
        .await
        .expect("KEYS");
    assert!(latches.is_empty(), "latches left: {latches:?}");
}
