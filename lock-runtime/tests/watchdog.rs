//! The watchdog's mechanism: one batched renewal per round for all of a
//! client's holds, no renewal once nothing is held, renewal that goes on
//! after Redis errors, thousands of holds all renewed every period, and
//! never starved of renewals by the loss watch on a single-threaded client.

mod common;

use common::Redis;
use redis::AsyncCommands;
use std::time::Duration;

/// The `calls=` of `cmdstat_<command>` in INFO commandstats (0 if absent).
async fn calls(redis: &Redis, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

async fn reset_stats(redis: &Redis) {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut redis.raw())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_renewal_call_per_hundred_locks_and_none_when_idle() {
    let redis = Redis::start().await;
    // Rounds every 200 ms.
    let client = redis.client_with_watchdog(Duration::from_millis(600)).await;
    let mut guards = Vec::new();
    for i in 0..150 {
        guards.push(client.lock(&format!("batch:{i}")).lock().await.unwrap());
    }
    let first_valid_until: Vec<_> = guards.iter().map(|g| g.valid_until()).collect();
    reset_stats(&redis).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let renewals = calls(&redis, "evalsha").await;
    // About 5 rounds of 2 calls (100 + 50 locks). A timer per lock would
    // make 150 calls a round.
    assert!(
        (4..=16).contains(&renewals),
        "{renewals} renewal calls in 1 s for 150 locks"
    );
    for i in 0..150 {
        let ttl = redis.pttl(&format!("batch:{i}")).await;
        assert!(ttl > 0 && ttl <= 600, "batch:{i} ttl {ttl}");
    }
    assert!(guards.iter().all(|g| !g.is_lost()));
    // Every confirmed renewal moved its hold's lease clock forward.
    for (i, (guard, first)) in guards.iter().zip(&first_valid_until).enumerate() {
        assert!(
            guard.valid_until() >= *first + Duration::from_millis(500),
            "batch:{i}: the lease clock moved {:?} in 1 s of renewals",
            guard.valid_until().saturating_duration_since(*first)
        );
    }

    for guard in guards {
        guard.unlock().await.unwrap();
    }
    reset_stats(&redis).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        calls(&redis, "evalsha").await,
        0,
        "the watchdog stopped with the last hold"
    );

    // A new hold starts it again.
    let guard = client.lock("batch:again").lock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert!(
        redis.pttl("batch:again").await > 0,
        "renewed past its 600 ms lease"
    );
    assert!(!guard.is_lost());
    guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_goes_on_after_redis_errors() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(Duration::from_millis(900)).await;
    let guard = client.lock("flaky").lock().await.unwrap();
    // Cut the client's command connection now and then (rounds every
    // 300 ms): a renewal fails, the connection manager reconnects, the next
    // round renews.
    let mut killed = 0;
    for _ in 0..4 {
        killed += redis.close_client_connections().await;
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    assert!(
        killed >= 2,
        "the client's connection was cut {killed} times"
    );
    // 2.4 s later, more than twice the lease: still held, never reported lost.
    assert!(redis.exists("flaky").await);
    assert!(!guard.is_lost());
    let owner: Option<String> = redis
        .raw()
        .hget("flaky", guard.owner().to_string())
        .await
        .unwrap();
    assert_eq!(owner.as_deref(), Some("1"));
    // Renewals went on being confirmed: the lease clock is ahead of now.
    assert!(guard.valid_until() > std::time::Instant::now());
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(redis.pttl("flaky").await > 0);
    guard.unlock().await.unwrap();
    assert!(!redis.exists("flaky").await);
}

/// The lowest PTTL of `keys` (pipelined, so the sample takes little time).
async fn lowest_pttl(redis: &Redis, keys: &[String]) -> i64 {
    let mut pipe = redis::pipe();
    for key in keys {
        pipe.cmd("PTTL").arg(key);
    }
    let ttls: Vec<i64> = pipe.query_async(&mut redis.raw()).await.unwrap();
    ttls.into_iter().min().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_holds_are_all_renewed_every_period() {
    const HOLDS: usize = 5_000;
    const LEASE_MS: i64 = 1_500;
    let redis = Redis::start().await;
    // Rounds every 500 ms.
    let client = redis
        .client_with_watchdog(Duration::from_millis(LEASE_MS as u64))
        .await;
    let keys: Vec<String> = (0..HOLDS).map(|i| format!("many:{i}")).collect();
    let mut guards = Vec::new();
    for chunk in keys.chunks(500) {
        let locks: Vec<_> = chunk.iter().map(|k| client.lock(k)).collect();
        let acquired = futures_util::future::join_all(locks.iter().map(|lock| lock.lock())).await;
        guards.extend(acquired.into_iter().map(Result::unwrap));
    }
    reset_stats(&redis).await;
    let started = std::time::Instant::now();
    // Three leases: without renewals every hold would have expired twice.
    let mut lowest = i64::MAX;
    let mut samples = 0;
    while started.elapsed() < Duration::from_millis(3 * LEASE_MS as u64) {
        lowest = lowest.min(lowest_pttl(&redis, &keys).await);
        samples += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed();
    let renewals = calls(&redis, "evalsha").await;
    assert!(samples >= 10, "{samples} samples");
    // Renewed each period: never below half the lease (without renewals the
    // lowest would be about 0 by now, and a missed round would take it to a
    // third).
    assert!(
        lowest >= LEASE_MS / 2,
        "the lowest PTTL seen was {lowest} ms of a {LEASE_MS} ms lease"
    );
    assert!(guards.iter().all(|g| !g.is_lost()));
    // One call per 100 holds a round: 50 a round, at most 1 + elapsed /
    // period rounds.
    let rounds = 1 + elapsed.as_millis() as u64 / (LEASE_MS as u64 / 3);
    assert!(
        renewals <= rounds * (HOLDS as u64 / 100),
        "{renewals} renewal calls in {elapsed:?} for {HOLDS} holds"
    );
    assert!(
        renewals >= (rounds - 2) * (HOLDS as u64 / 100),
        "{renewals} renewal calls in {elapsed:?}: some holds were not renewed each round"
    );
    let unlocked = futures_util::future::join_all(guards.into_iter().map(|g| g.unlock())).await;
    assert!(unlocked.into_iter().all(|r| r.is_ok()));
    let left: i64 = redis::cmd("EXISTS")
        .arg(&keys)
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    assert_eq!(left, 0, "locks left after their unlock");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_do_not_wait_behind_the_clients_other_commands() {
    let redis = Redis::start().await;
    // Rounds every 300 ms, a 900 ms lease.
    let client = redis.client_with_watchdog(Duration::from_millis(900)).await;
    let guard = client.lock("busy").lock().await.unwrap();
    // The client's command connection is stuck for 2 s behind a blocking
    // command of the user's: more than twice the lease.
    let mut con = client.connection();
    let blocked = tokio::spawn(async move {
        redis::cmd("BLPOP")
            .arg("nothing")
            .arg(2)
            .query_async::<Option<(String, String)>>(&mut con)
            .await
    });
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(!blocked.is_finished(), "BLPOP returned early");
    // The watchdog renews on a connection of its own.
    let ttl = redis.pttl("busy").await;
    assert!(
        ttl > 300,
        "busy: ttl {ttl} while the command connection is blocked"
    );
    assert_eq!(blocked.await.unwrap().unwrap(), None);
    assert!(!guard.is_lost());
    assert!(guard.valid_until() > std::time::Instant::now());
    guard.unlock().await.unwrap();
    assert!(!redis.exists("busy").await);
}

/// How many holds the single-threaded client takes (a chunk at a time),
/// and their lease: rounds of renewals every 300 ms, over 13,000 renewals
/// a second, each a change of a key the loss watch tracks (more than twice
/// its budget of reads, were it to read each one).
const CROWD: usize = 4_000;
const CROWD_LEASE_MS: i64 = 900;

/// The loss watch's budget of reads (`HMGET`) per second and client, as
/// its documentation gives it.
const LOSS_WATCH_READS_PER_SECOND: u64 = 5_000;

/// On a runtime of its own with one thread: takes `keys`, reports them
/// taken, keeps them until `done`, then says whether any was lost.
fn hold_on_one_thread(
    url: String,
    keys: Vec<String>,
    taken: tokio::sync::oneshot::Sender<()>,
    done: tokio::sync::oneshot::Receiver<()>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let client = redlua_runtime::LockClient::builder(url)
                .watchdog_timeout(Duration::from_millis(CROWD_LEASE_MS as u64))
                .connect()
                .await
                .expect("connect");
            let mut guards = Vec::new();
            for chunk in keys.chunks(200) {
                let locks: Vec<_> = chunk.iter().map(|k| client.lock(k)).collect();
                let acquired =
                    futures_util::future::join_all(locks.iter().map(|lock| lock.lock())).await;
                guards.extend(acquired.into_iter().map(Result::unwrap));
            }
            let _ = taken.send(());
            let _ = done.await;
            let lost = guards.iter().filter(|g| g.is_lost()).count();
            let mut guards = guards.into_iter();
            loop {
                let chunk: Vec<_> = guards.by_ref().take(200).collect();
                if chunk.is_empty() {
                    break;
                }
                futures_util::future::join_all(chunk.into_iter().map(|g| g.unlock())).await;
            }
            lost
        })
    })
}

/// The loss watch reads a held key again after each change of it, and a
/// renewal is one: with one read after every renewal of every hold, its
/// work would grow with the holds and, on a runtime of one thread, starve
/// the watchdog's renewals until leases ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_holds_on_a_single_threaded_client_are_never_starved_of_renewals() {
    let redis = Redis::start().await;
    let keys: Vec<String> = (0..CROWD).map(|i| format!("crowd:{i}")).collect();
    let (taken_tx, taken) = tokio::sync::oneshot::channel();
    let (done, done_rx) = tokio::sync::oneshot::channel();
    let holder = hold_on_one_thread(redis.url(), keys.clone(), taken_tx, done_rx);
    taken.await.expect("the holder thread ended early");
    reset_stats(&redis).await;
    let started = std::time::Instant::now();
    // Five leases (15 rounds of renewals): without them, every hold would
    // have expired four times over.
    let mut lowest = i64::MAX;
    let mut samples = 0;
    while started.elapsed() < Duration::from_millis(5 * CROWD_LEASE_MS as u64) {
        lowest = lowest.min(lowest_pttl(&redis, &keys).await);
        samples += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed();
    let reads = calls(&redis, "hmget").await;
    let _ = done.send(());
    let lost = tokio::task::spawn_blocking(move || holder.join().unwrap())
        .await
        .unwrap();
    assert!(samples >= 10, "{samples} samples");
    assert_eq!(lost, 0, "holds lost out of {CROWD}");
    assert!(
        lowest >= CROWD_LEASE_MS / 3,
        "the lowest PTTL seen was {lowest} ms of a {CROWD_LEASE_MS} ms lease"
    );
    // The loss watch's reads stay within its budget, instead of one after
    // each renewal of each hold (CROWD every 300 ms).
    let budget = LOSS_WATCH_READS_PER_SECOND as f64 * elapsed.as_secs_f64();
    assert!(
        reads as f64 <= 2.0 * budget,
        "{reads} loss watch reads in {elapsed:?}"
    );
}
