//! The reentrant lock against real redis-server processes: exclusion (every
//! acquire is a new owner), explicit re-entry, leases, the lease clock and
//! the watchdog, fencing tokens, wake-ups, releases that go wrong,
//! cancellation, and interoperability with Redisson's own scripts.
//!
//! Timing assertions use wide margins; each proves a mechanism (a pub/sub
//! wake-up is far faster than the 30 s lease it beats, a renewal keeps a lock
//! several times past its lease, ...). Every wait is bounded, so a hang fails
//! the test instead of stalling the suite.

mod common;
mod redisson;

use common::{DROP_DELAYS, InFlight, Redis, abandon_in_flight, monitor, ms, within};
use redis::AsyncCommands;
use redisson::{
    attempt_key, eval_redisson_release, java_acquire, java_release, latch, lock_channel as channel,
    token_key,
};
use redlua_runtime::{
    Error, LockClient, LockGuard, LockInfo, LockKind, MAX_LEASE, MAX_NAME_LEN, Side,
};
use redlua_test_support::FaultProxy;
use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// redlua's own release script, run by hand to retry a release.
const REDLUA_RELEASE: &str = include_str!("../scripts/lock_release.lua");

/// How long a fencing token counter lives after an acquire with the default
/// 30 s lease: the lease plus one hour.
const TOKEN_TTL_MS: i64 = 30_000 + 3_600_000;

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The holders of a lock as (owner, side, count).
fn holders(info: &LockInfo) -> Vec<(String, Side, u64)> {
    info.holders
        .iter()
        .map(|h| (h.owner.clone(), h.side, h.count))
        .collect()
}

/// Waits until the database holds exactly `expected` (a release's latch is
/// deleted in the background, within about 250 ms); returns what it holds
/// in the end, sorted.
async fn keys_become(redis: &Redis, expected: &[String], limit: Duration) -> Vec<String> {
    let mut expected = expected.to_vec();
    expected.sort();
    let deadline = Instant::now() + limit;
    loop {
        let keys = redis.keys().await;
        if keys == expected || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// The keys without release latches, once they are `expected` (or when
/// `limit` runs out). A release whose reply was lost keeps its latch until
/// the latch expires, so that a late copy of it finds the first result.
async fn keys_but_latches_become(
    redis: &Redis,
    expected: &[String],
    limit: Duration,
) -> Vec<String> {
    let mut expected = expected.to_vec();
    expected.sort();
    let deadline = Instant::now() + limit;
    loop {
        let keys = keys_but_latches(redis).await;
        if keys == expected || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

async fn keys_but_latches(redis: &Redis) -> Vec<String> {
    let mut keys = redis.keys().await;
    keys.retain(|key| !key.starts_with("redisson_unlock_latch:"));
    keys
}

/// Asserts that exactly one release latch of `name` is left, expiring.
async fn one_expiring_latch(redis: &Redis, name: &str) {
    let prefix = format!("redisson_unlock_latch:{{{name}}}:");
    let latches: Vec<String> = redis
        .keys()
        .await
        .into_iter()
        .filter(|key| key.starts_with(&prefix))
        .collect();
    assert_eq!(latches.len(), 1, "{latches:?}");
    let ttl = redis.pttl(&latches[0]).await;
    assert!(ttl > 0 && ttl <= 30_000, "latch ttl {ttl}");
}

/// Runs redlua's release script by hand with EVAL, as the client releases
/// the first hold of `owner` (scripts/lock_release.lua: KEYS lock, channel,
/// latch, first attempt key, the hold's attempt key; ARGV message, lease,
/// owner, latch TTL, mode, attempt TTL, re-entry flag, close flag).
async fn eval_redlua_release(
    redis: &Redis,
    name: &str,
    request_id: &str,
    owner: &str,
    lease_ms: u64,
) -> i64 {
    let attempt = attempt_key(name, owner);
    redis::cmd("EVAL")
        .arg(REDLUA_RELEASE)
        .arg(5)
        .arg(name)
        .arg(channel(name))
        .arg(latch(name, request_id))
        .arg(&attempt)
        .arg(&attempt)
        .arg("0")
        .arg(lease_ms)
        .arg(owner)
        .arg(30_000)
        .arg("release")
        .arg(30_000)
        .arg("0")
        .arg("0")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL redlua release")
}

/// A task that waits for `lock` and reports when it got it, and as whom.
fn spawn_waiter(
    lock: &redlua_runtime::Lock,
) -> tokio::task::JoinHandle<(Instant, LockGuard, String)> {
    let lock = lock.clone();
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("waiter's lock()");
        let owner = guard.owner().to_string();
        (Instant::now(), guard, owner)
    })
}

/// Waits for a waiter task (at most `limit`).
async fn join_waiter(
    waiter: tokio::task::JoinHandle<(Instant, LockGuard, String)>,
    limit: Duration,
) -> (Instant, LockGuard, String) {
    within(limit, "the waiter", waiter)
        .await
        .expect("waiter task")
}

// ---------------------------------------------------------------------------
// Exclusion and reentrancy

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_exclusion_across_clients_and_tasks() {
    const CLIENTS: usize = 3;
    const TASKS: usize = 8;
    const ROUNDS: usize = 5;
    let redis = Redis::start().await;
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    // The fencing token of the latest holder: each new holder's is higher.
    let last_token = Arc::new(AtomicU64::new(0));
    let token_regressions = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = redis.client().await;
        for t in 0..TASKS {
            let lock = client.lock("counter-lock");
            let mut con = redis.raw();
            let inside = inside.clone();
            let overlaps = overlaps.clone();
            let last_token = last_token.clone();
            let token_regressions = token_regressions.clone();
            tasks.push(tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let guard = lock.lock().await.expect("lock()");
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    if last_token.fetch_max(guard.token(), Ordering::SeqCst) >= guard.token() {
                        token_regressions.fetch_add(1, Ordering::SeqCst);
                    }
                    let n: Option<u64> = con.get("counter").await.unwrap();
                    if (t + round) % 2 == 0 {
                        tokio::task::yield_now().await;
                    } else {
                        tokio::time::sleep(ms(1)).await;
                    }
                    let _: () = con.set("counter", n.unwrap_or(0) + 1).await.unwrap();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.unlock().await.expect("unlock()");
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
    assert_eq!(total, (CLIENTS * TASKS * ROUNDS) as u64, "lost updates");
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two holders at once");
    assert_eq!(
        token_regressions.load(Ordering::SeqCst),
        0,
        "a holder's fencing token was not above its predecessor's"
    );
    assert!(!redis.exists("counter-lock").await, "the lock is left held");
    let counter: u64 = redis.raw().get(token_key("counter-lock")).await.unwrap();
    assert_eq!(
        counter,
        last_token.load(Ordering::SeqCst),
        "the counter holds the last holder's token"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reentrant_holds_count_and_release_in_order() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("re");
    let mut listener = redis.listen(&channel("re")).await;

    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let field = owner.to_string();
    let (uuid, id) = field.rsplit_once(':').expect("<uuid>:<owner-id>");
    assert_eq!(uuid, client.id());
    assert_eq!(owner.client_id(), client.id());
    assert_eq!(
        uuid::Uuid::parse_str(uuid)
            .expect("a uuid")
            .get_version_num(),
        4
    );
    assert_eq!(id.parse::<u64>().expect("a decimal owner id"), owner.id());
    assert_eq!(g1.name(), "re");
    assert_eq!(g1.lease(), None);
    assert!(g1.token() > 0);

    // A second plain acquire, even in this same task, is another owner:
    // excluded while the first guard is held.
    assert!(
        lock.try_lock().await.unwrap().is_none(),
        "a second acquire of one task shared the hold"
    );
    assert_eq!(redis.hgetall("re").await, map(&[(&field, "1")]));

    // Re-entry is explicit: one more hold of the same owner.
    let g2 = g1.reenter().await.unwrap();
    assert_eq!(g2.owner(), &owner);
    assert_eq!(g2.token(), g1.token(), "a re-entry keeps the owner's token");
    assert_eq!(g2.lease(), None);
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 2);
    assert_eq!(redis.hgetall("re").await, map(&[(&field, "2")]));
    assert!(lock.is_locked().await.unwrap());
    let info = lock.inspect().await.unwrap();
    assert_eq!(info.name, "re");
    assert_eq!(info.kind, LockKind::Reentrant);
    assert_eq!(holders(&info), [(field.clone(), Side::Exclusive, 2)]);
    assert!(
        info.ttl
            .is_some_and(|ttl| ttl > ms(29_000) && ttl <= ms(30_000)),
        "{:?}",
        info.ttl
    );
    assert_eq!(info.token, Some(g1.token()));
    // The client's inspect reads the same (the TTL has moved on meanwhile).
    let again = client.inspect("re").await.unwrap();
    assert_eq!(
        (&again.name, &again.kind, &again.holders, again.token),
        (&info.name, &info.kind, &info.holders, info.token)
    );
    assert!(again.ttl.is_some_and(|ttl| ttl <= info.ttl.unwrap()));

    // Another task is another owner too: excluded.
    let other = lock.clone();
    let got = tokio::spawn(async move { other.try_lock().await.unwrap().is_some() })
        .await
        .unwrap();
    assert!(!got, "another task acquired a held lock");

    g2.unlock().await.unwrap();
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 1);
    assert_eq!(redis.hget("re", &field).await.as_deref(), Some("1"));
    assert!(!g1.is_lost());
    assert!(
        listener.next_within(ms(150)).await.is_none(),
        "a partial release must not announce the lock free"
    );

    g1.unlock().await.unwrap();
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 0);
    assert!(!lock.is_locked().await.unwrap());
    let (message, _) = listener
        .next_within(ms(1000))
        .await
        .expect("the final release publishes");
    assert_eq!(message, "0");
    // No hold, attempt key or latch is left; the token counter stays, with
    // its expiry, so that the next holder's token is higher.
    assert_eq!(
        keys_become(&redis, &[token_key("re")], ms(1000)).await,
        [token_key("re")],
        "key or latch left"
    );
    let ttl = redis.pttl(&token_key("re")).await;
    assert!(
        ttl > TOKEN_TTL_MS - 10_000 && ttl <= TOKEN_TTL_MS,
        "token counter pttl {ttl}"
    );

    // The owner holds nothing now: re-entering is refused, and writes
    // nothing.
    match lock.reenter(&owner).await {
        Err(Error::NotHeld { name, owner: who }) => {
            assert_eq!(name, "re");
            assert_eq!(who, field);
        }
        other => panic!("expected NotHeld, got {other:?}"),
    }
    assert_eq!(redis.keys().await, [token_key("re")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_owner_is_reentrant_across_tasks() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("shared-owner");
    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let field = owner.to_string();
    assert_eq!(field, format!("{}:{}", client.id(), owner.id()));

    // The owner travels to another task, which re-enters with it.
    let other = lock.clone();
    let travelling = owner.clone();
    let g2 = tokio::spawn(async move { other.reenter(&travelling).await })
        .await
        .unwrap()
        .expect("the owner re-enters from another task");
    assert_eq!(g2.owner(), &owner);
    assert_eq!(g2.token(), g1.token());
    assert_eq!(redis.hgetall("shared-owner").await, map(&[(&field, "2")]));
    // A plain acquire, in this task or another, is someone else.
    assert!(
        client
            .lock("shared-owner")
            .try_lock()
            .await
            .unwrap()
            .is_none()
    );
    let other = lock.clone();
    let got = tokio::spawn(async move { other.try_lock().await.unwrap().is_some() })
        .await
        .unwrap();
    assert!(!got, "another task's plain acquire shared the hold");

    // The holds of one owner are released in any order: the first one
    // first leaves the re-entry holding the lock.
    g1.unlock().await.unwrap();
    assert_eq!(redis.hgetall("shared-owner").await, map(&[(&field, "1")]));
    assert!(!g2.is_lost());
    assert!(lock.try_lock().await.unwrap().is_none());
    g2.unlock().await.unwrap();
    assert!(!redis.exists("shared-owner").await);

    // An owner that holds nothing (any more) cannot re-enter: nothing is
    // written, from any task.
    let other = lock.clone();
    let travelling = owner.clone();
    let result = tokio::spawn(async move { other.reenter(&travelling).await })
        .await
        .unwrap();
    assert!(
        matches!(&result, Err(Error::NotHeld { owner: who, .. }) if *who == field),
        "{result:?}"
    );
    assert!(!redis.exists("shared-owner").await);

    // An owner re-enters only the lock it holds.
    let held = lock.lock().await.unwrap();
    let elsewhere = client.lock("elsewhere");
    let result = elsewhere.reenter(held.owner()).await;
    assert!(matches!(result, Err(Error::NotHeld { .. })), "{result:?}");
    assert!(!redis.exists("elsewhere").await);
    let theirs = elsewhere.lock().await.unwrap();
    let result = elsewhere.reenter(held.owner()).await;
    assert!(matches!(result, Err(Error::NotHeld { .. })), "{result:?}");
    assert_eq!(
        redis.hgetall("elsewhere").await,
        map(&[(&theirs.owner().to_string(), "1")])
    );
    theirs.unlock().await.unwrap();
    held.unlock().await.unwrap();
    assert!(!redis.exists("shared-owner").await);
    assert!(!redis.exists("elsewhere").await);
}

#[tokio::test]
async fn reentry_resets_the_lease() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("ttl");
    let g1 = lock.lock_with_lease(ms(2000)).await.unwrap();
    let owner = g1.owner().clone();
    assert_eq!(g1.lease(), Some(ms(2000)));
    let ttl = redis.pttl("ttl").await;
    assert!((1800..=2000).contains(&ttl), "pttl {ttl}");
    let first_valid_until = g1.valid_until();
    tokio::time::sleep(ms(800)).await;
    let ttl = redis.pttl("ttl").await;
    assert!(ttl > 0 && ttl <= 1300, "pttl {ttl} after 800 ms");

    // Re-entry through the guard: the same fixed lease, started again.
    let g2 = g1.reenter().await.unwrap();
    assert_eq!(g2.lease(), Some(ms(2000)));
    assert_eq!(g2.token(), g1.token());
    let ttl = redis.pttl("ttl").await;
    assert!(ttl > 1800, "re-entry did not reset the lease: pttl {ttl}");
    let remaining = lock.remaining_ttl().await.unwrap().expect("a ttl");
    assert!(
        remaining > ms(1700) && remaining <= ms(2000),
        "{remaining:?}"
    );
    assert_eq!(
        redis.hget("ttl", &owner.to_string()).await.as_deref(),
        Some("2")
    );
    // The owner's lease clock moved forward with it, for both guards.
    assert!(
        g1.valid_until() >= first_valid_until + ms(700),
        "the re-entry did not move the lease clock: {:?}",
        g1.valid_until() - first_valid_until
    );
    assert_eq!(g1.valid_until(), g2.valid_until());

    // Re-entry through the owner, with a longer lease: it runs from now.
    let g3 = lock.reenter_with_lease(&owner, ms(5000)).await.unwrap();
    assert_eq!(g3.lease(), Some(ms(5000)));
    let ttl = redis.pttl("ttl").await;
    assert!(ttl > 4800 && ttl <= 5000, "pttl {ttl}");
    // A shorter one never shortens what the owner's other holds have.
    let g4 = lock.reenter_with_lease(&owner, ms(100)).await.unwrap();
    let ttl = redis.pttl("ttl").await;
    assert!(ttl > 4500, "a re-entry shortened the lease: pttl {ttl}");
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 4);

    g4.unlock().await.unwrap();
    g3.unlock().await.unwrap();
    g2.unlock().await.unwrap();
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 1);
    g1.unlock().await.unwrap();
    assert_eq!(lock.remaining_ttl().await.unwrap(), None);
    assert_eq!(
        keys_become(&redis, &[token_key("ttl")], ms(1000)).await,
        [token_key("ttl")]
    );
}

// ---------------------------------------------------------------------------
// Releases that go wrong

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_by_a_non_owner_leaves_the_lock_untouched() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("no");
    let ga = lock.lock().await.unwrap();
    let owner_a = ga.owner().to_string();
    assert!(lock.force_unlock().await.unwrap(), "a lock was broken");
    assert!(!lock.force_unlock().await.unwrap(), "nothing left to break");
    // Breaking it advanced the fencing token past A's.
    let broken_token = lock.inspect().await.unwrap().token.expect("a token");
    assert!(broken_token > ga.token());
    // B takes it, in another task.
    let b = lock.clone();
    let gb = tokio::spawn(async move { b.lock().await.unwrap() })
        .await
        .unwrap();
    let owner_b = gb.owner().to_string();
    assert_ne!(owner_a, owner_b);
    assert!(gb.token() > broken_token);
    // A's hold is gone: it cannot re-enter, nor release B's.
    let result = ga.reenter().await;
    assert!(
        matches!(&result, Err(Error::NotHeld { owner, .. }) if *owner == owner_a),
        "{result:?}"
    );
    match ga.unlock().await {
        Err(Error::NotOwner { name, owner }) => {
            assert_eq!(name, "no");
            assert_eq!(owner, owner_a);
        }
        other => panic!("expected NotOwner, got {other:?}"),
    }
    assert_eq!(redis.hgetall("no").await, map(&[(&owner_b, "1")]));
    let ttl = redis.pttl("no").await;
    assert!(ttl > 29_000, "B's lease was touched: pttl {ttl}");
    // B's guard, moved here, releases B's hold from this task.
    assert!(!gb.is_lost());
    gb.unlock().await.unwrap();
    assert!(!redis.exists("no").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_after_the_lease_expired_reports_lost() {
    let redis = Redis::start().await;
    let client = redis.client().await;

    // Expired, and nobody took it.
    let lock = client.lock("expired");
    let guard = lock.lock_with_lease(ms(200)).await.unwrap();
    tokio::time::sleep(ms(400)).await;
    assert!(!lock.is_locked().await.unwrap());
    assert!(guard.is_lost());
    let result = guard.reenter().await;
    assert!(matches!(result, Err(Error::NotHeld { .. })), "{result:?}");
    match guard.unlock().await {
        Err(Error::LockLost { name }) => assert_eq!(name, "expired"),
        other => panic!("expected LockLost, got {other:?}"),
    }
    assert_eq!(
        keys_become(&redis, &[token_key("expired")], ms(1000)).await,
        [token_key("expired")]
    );

    // Expired, and another owner took it: its hold is left alone.
    let lock = client.lock("taken");
    let guard = lock.lock_with_lease(ms(200)).await.unwrap();
    let owner = guard.owner().to_string();
    tokio::time::sleep(ms(400)).await;
    let theirs = lock.try_lock().await.unwrap().expect("the lease ended");
    let their_owner = theirs.owner().to_string();
    assert!(theirs.token() > guard.token());
    match guard.unlock().await {
        Err(Error::NotOwner { name, owner: who }) => {
            assert_eq!(name, "taken");
            assert_eq!(who, owner);
        }
        other => panic!("expected NotOwner, got {other:?}"),
    }
    assert_eq!(redis.hgetall("taken").await, map(&[(&their_owner, "1")]));
    assert!(redis.pttl("taken").await > 29_000);
    theirs.unlock().await.unwrap();
}

/// An `unlock` whose reply is lost (Redis hung) returns an error and is
/// finished in the background with the same request id: however many times
/// it reaches Redis, it releases exactly one hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlock_whose_reply_is_lost_releases_exactly_one_hold() {
    let redis = Redis::start().await;
    let client = LockClient::builder(redis.url())
        .response_timeout(ms(300))
        .connect()
        .await
        .unwrap();
    let lock = client.lock("lost-reply");
    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let g2 = g1.reenter().await.unwrap();
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 2);

    redis.server.pause();
    let result = within(ms(5000), "unlock() against a hung Redis", g2.unlock()).await;
    assert!(matches!(result, Err(Error::Redis(_))), "{result:?}");
    // Meanwhile the background retries time out too; then Redis answers
    // everything it was sent.
    tokio::time::sleep(ms(700)).await;
    redis.server.resume();

    // One hold released, not two: g1 still holds the lock. (The key set
    // settles once the release ran: the re-entry's attempt key is deleted
    // by it, and its latch right after it.)
    assert_eq!(
        keys_but_latches_become(
            &redis,
            &["lost-reply".to_string(), token_key("lost-reply")],
            ms(5000)
        )
        .await,
        ["lost-reply".to_string(), token_key("lost-reply")],
        "the release did not complete, or left a key behind"
    );
    tokio::time::sleep(ms(500)).await;
    assert_eq!(
        redis.hgetall("lost-reply").await,
        map(&[(&owner.to_string(), "1")]),
        "the retried release released more or less than one hold"
    );
    assert_eq!(
        keys_but_latches(&redis).await,
        ["lost-reply".to_string(), token_key("lost-reply")],
        "attempt key left behind"
    );
    one_expiring_latch(&redis, "lost-reply").await;
    assert!(!g1.is_lost());
    assert!(
        client
            .lock("lost-reply")
            .try_lock()
            .await
            .unwrap()
            .is_none()
    );
    g1.unlock().await.unwrap();
    assert!(!redis.exists("lost-reply").await);
}

/// The same, over a slow link instead of a hung server: the first copy of
/// the release is delayed in the network past the response timeout, the
/// client retries on a new connection, and the first copy reaches Redis
/// after the retry was answered. Still exactly one hold released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlock_delayed_past_its_retry_releases_exactly_one_hold() {
    let redis = Redis::start().await;
    let proxy = FaultProxy::start(redis.server.port());
    let client = LockClient::builder(proxy.url())
        .response_timeout(ms(300))
        .connect()
        .await
        .unwrap();
    let lock = client.lock("slow-link");
    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let g2 = g1.reenter().await.unwrap();
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 2);

    // The release goes out on a link that now takes 1.5 s; new connections
    // are refused until the link is healthy again.
    proxy.set_delay(ms(1500));
    proxy.refuse(true);
    let sent = Instant::now();
    let result = within(ms(5000), "unlock() over a slow link", g2.unlock()).await;
    assert!(matches!(result, Err(Error::Redis(_))), "{result:?}");
    proxy.set_delay(Duration::ZERO);
    proxy.refuse(false);
    // The background retry, on a new connection, is answered long before
    // the first copy arrives (1.5 s after it was sent).
    let retried = keys_but_latches_become(
        &redis,
        &["slow-link".to_string(), token_key("slow-link")],
        ms(1000),
    )
    .await;
    assert!(
        sent.elapsed() < ms(1400),
        "the retry took {:?}",
        sent.elapsed()
    );
    assert_eq!(retried, [token_key("slow-link"), "slow-link".to_string()]);
    assert_eq!(
        redis.hgetall("slow-link").await,
        map(&[(&owner.to_string(), "1")])
    );
    // Now the first copy arrives.
    tokio::time::sleep(ms(2000).saturating_sub(sent.elapsed())).await;
    assert_eq!(
        redis.hgetall("slow-link").await,
        map(&[(&owner.to_string(), "1")]),
        "the delayed first copy of the release released a second hold"
    );
    one_expiring_latch(&redis, "slow-link").await;
    assert!(!g1.is_lost());
    g1.unlock().await.unwrap();
    assert!(!redis.exists("slow-link").await);
}

/// A release retried with the same request id (its latch) returns the
/// first result and releases nothing more: redlua's script, by its own
/// contract, and Redisson's, which it interoperates with.
#[tokio::test]
async fn retried_release_returns_the_first_result() {
    let redis = Redis::start().await;
    for label in ["redlua", "redisson"] {
        let name = format!("retried-{label}");
        let owner = "4b1c64e9-0bde-4a35-a2a0-1f2b6f0e9a11:42";
        // Both answer the same, except that Redisson's says nil where
        // redlua's says -1 (not held).
        let release = |request_id: &'static str| {
            let (redis, name) = (&redis, name.clone());
            async move {
                if label == "redlua" {
                    Some(eval_redlua_release(redis, &name, request_id, owner, 10_000).await)
                } else {
                    eval_redisson_release(redis, &name, request_id, owner, 10_000).await
                }
            }
        };
        let _: () = redis.raw().hset(&name, owner, 2).await.unwrap();
        let _: () = redis.raw().pexpire(&name, 5_000).await.unwrap();
        let mut listener = redis.listen(&channel(&name)).await;

        // Count 2 -> 1; the retry with the same latch answers 0 again and
        // does not release a second hold.
        for attempt in 0..2 {
            let reply = release("aa01").await;
            assert_eq!(reply, Some(0), "{label}, attempt {attempt}");
            assert_eq!(
                redis.hget(&name, owner).await.as_deref(),
                Some("1"),
                "{label}, attempt {attempt}"
            );
        }
        let ttl = redis.pttl(&name).await;
        assert!(ttl > 9_000 && ttl <= 10_000, "{label}: lease reset: {ttl}");
        let remembered: String = redis.raw().get(latch(&name, "aa01")).await.unwrap();
        assert_eq!(remembered, "0");
        let latch_ttl = redis.pttl(&latch(&name, "aa01")).await;
        assert!(latch_ttl > 29_000 && latch_ttl <= 30_000, "{latch_ttl}");

        // Count 1 -> free; the retry answers 1, not "not the owner", and
        // publishes nothing more.
        for attempt in 0..2 {
            let reply = release("bb02").await;
            assert_eq!(reply, Some(1), "{label}, attempt {attempt}");
            assert!(!redis.exists(&name).await);
        }
        let (message, _) = listener.next_within(ms(1000)).await.expect("published");
        assert_eq!(message, "0");
        assert!(
            listener.next_within(ms(150)).await.is_none(),
            "published twice"
        );

        // A fresh release by the same owner, now holding nothing: "not
        // held" (redlua -1, Redisson nil), and nothing is written.
        let reply = release("cc03").await;
        let not_held = if label == "redlua" { Some(-1) } else { None };
        assert_eq!(reply, not_held, "{label}");
        let mut keys = vec![latch(&name, "aa01"), latch(&name, "bb02")];
        keys.sort();
        assert_eq!(redis.keys().await, keys, "{label}");
        let _: () = redis::cmd("FLUSHALL")
            .query_async(&mut redis.raw())
            .await
            .unwrap();
    }

    // redlua's release keeps the lease at least its argument, never
    // shorter (Redisson's resets it to exactly that).
    let owner = "4b1c64e9-0bde-4a35-a2a0-1f2b6f0e9a11:43";
    let _: () = redis.raw().hset("longer", owner, 2).await.unwrap();
    let _: () = redis.raw().pexpire("longer", 60_000).await.unwrap();
    assert_eq!(
        eval_redlua_release(&redis, "longer", "dd04", owner, 10_000).await,
        0
    );
    let ttl = redis.pttl("longer").await;
    assert!(ttl > 59_000, "redlua's release shortened the lease: {ttl}");
}

// ---------------------------------------------------------------------------
// Leases, the lease clock and the watchdog

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_keeps_a_lock_past_its_timeout_and_fixed_leases_expire() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    assert_eq!(client.watchdog_timeout(), ms(600));
    let lock = client.lock("wd");
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().to_string();
    let first_valid_until = guard.valid_until();
    let ttl = redis.pttl("wd").await;
    assert!(
        ttl > 0 && ttl <= 600,
        "the watchdog lease is its timeout: {ttl}"
    );

    // A fixed lease taken meanwhile on the same client is not renewed.
    let fixed = client.lock("fixed");
    let fixed_guard = fixed.lock_with_lease(ms(300)).await.unwrap();
    let fixed_at = Instant::now();
    assert!(!fixed_guard.is_lost());

    let started = Instant::now();
    let mut lowest = i64::MAX;
    while started.elapsed() < ms(2000) {
        let ttl = redis.pttl("wd").await;
        lowest = lowest.min(ttl);
        assert!(
            ttl > 0,
            "the watchdog let the lock expire after {:?}",
            started.elapsed()
        );
        assert!(ttl <= 600, "pttl {ttl}");
        assert!(!guard.is_lost());
        assert!(guard.valid_until() > std::time::Instant::now());
        assert_eq!(redis.hget("wd", &owner).await.as_deref(), Some("1"));
        if fixed_at.elapsed() > ms(600) {
            assert!(
                !fixed.is_locked().await.unwrap(),
                "a fixed lease was renewed"
            );
            assert!(fixed_guard.is_lost());
        }
        tokio::time::sleep(ms(50)).await;
    }
    assert!(lowest > 0, "{lowest}");
    // Confirmed renewals moved the lease clock: 2 s later it is well past
    // where the acquire alone put it.
    assert!(
        guard.valid_until() > first_valid_until + ms(1000),
        "renewals did not move the lease clock: {:?}",
        guard
            .valid_until()
            .saturating_duration_since(first_valid_until)
    );
    // lost() of the fixed lease completed long ago: it returns at once.
    within(ms(100), "lost() of an expired lease", fixed_guard.lost()).await;
    match fixed_guard.unlock().await {
        Err(Error::LockLost { name }) => assert_eq!(name, "fixed"),
        other => panic!("expected LockLost, got {other:?}"),
    }
    guard.unlock().await.unwrap();
    assert!(!redis.exists("wd").await);
}

#[tokio::test]
async fn fixed_lease_lost_future_completes_when_the_lease_ends() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("lease");
    let before = std::time::Instant::now();
    let guard = lock.lock_with_lease(ms(300)).await.unwrap();
    let after = std::time::Instant::now();
    // The lease clock runs from the acquire's send, minus 1% + 2 ms.
    let drift = ms(3 + 2);
    assert!(
        guard.valid_until() >= before + ms(300) - drift
            && guard.valid_until() <= after + ms(300) - drift,
        "valid_until is {:?} after the call started, which took {:?}",
        guard.valid_until() - before,
        after - before
    );
    assert!(!guard.is_lost());
    within(ms(2000), "lost() of a 300 ms lease", guard.lost()).await;
    let now = std::time::Instant::now();
    assert!(
        now >= guard.valid_until(),
        "lost() completed {:?} before the lease clock ran out",
        guard.valid_until() - now
    );
    assert!(guard.is_lost());
    tokio::time::sleep(ms(300)).await;
    assert!(!lock.is_locked().await.unwrap());
    assert!(guard.is_lost());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_notices_a_deleted_lock_and_reports_it_lost() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("deleted");
    let guard = lock.lock().await.unwrap();
    assert!(
        tokio::time::timeout(ms(900), guard.lost()).await.is_err(),
        "lost() completed while the lock was held"
    );
    assert!(!guard.is_lost());
    assert!(redis.del("deleted").await);
    let deleted = Instant::now();
    within(ms(2000), "lost() after DEL", guard.lost()).await;
    assert!(guard.is_lost());
    assert!(deleted.elapsed() < ms(2000));
    match guard.unlock().await {
        Err(Error::LockLost { name }) => assert_eq!(name, "deleted"),
        other => panic!("expected LockLost, got {other:?}"),
    }

    // A new hold of the same lock starts clean.
    let guard = lock.lock().await.unwrap();
    assert!(!guard.is_lost());
    tokio::time::sleep(ms(800)).await;
    assert!(!guard.is_lost(), "the earlier loss leaked into a new hold");
    assert!(redis.pttl("deleted").await > 0);
    guard.unlock().await.unwrap();
    assert!(!redis.exists("deleted").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewal_notices_a_lock_taken_over() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let lock = client.lock("taken-over");
    let guard = lock.lock().await.unwrap();
    let intruder = "0b6d7e3c-5d8f-4f49-9c55-1d1f6b0a2c33:1";
    let _: () = redis::pipe()
        .atomic()
        .del("taken-over")
        .hset("taken-over", intruder, 1)
        .pexpire("taken-over", 30_000)
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    within(ms(2000), "lost() after a takeover", guard.lost()).await;
    let result = guard.unlock().await;
    assert!(
        matches!(result, Err(Error::NotOwner { .. })),
        "expected NotOwner, got {result:?}"
    );
    assert_eq!(redis.hgetall("taken-over").await, map(&[(intruder, "1")]));
    let ttl = redis.pttl("taken-over").await;
    assert!(ttl > 29_000, "the intruder's lease was touched: {ttl}");
}

/// Set in the environment of the child process that
/// [`holder_process_killed_frees_the_lock_after_its_lease`] starts (this very
/// test binary): its value is the Redis URL to hold the lock on.
const CHILD_ENV: &str = "REDLUA_TEST_KILLED_HOLDER_URL";
const KILLED_LOCK: &str = "killed";

/// Kills the child process when dropped (the test failing included).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holder_process_killed_frees_the_lock_after_its_lease() {
    if let Ok(url) = std::env::var(CHILD_ENV) {
        // The child: hold the lock with a 600 ms watchdog, say so, and wait
        // to be killed.
        let client = LockClient::builder(url)
            .watchdog_timeout(ms(600))
            .connect()
            .await
            .expect("child connect");
        let guard = client.lock(KILLED_LOCK).lock().await.expect("child lock");
        println!("REDLUA_CHILD_HELD {} {}", guard.owner(), guard.token());
        // Killed long before; the limit only spares an orphan if the
        // parent itself was killed.
        tokio::time::sleep(Duration::from_secs(60)).await;
        std::process::exit(1);
    }

    let redis = Redis::start().await;
    let exe = std::env::current_exe().unwrap();
    let mut child = KillOnDrop(
        std::process::Command::new(exe)
            .args([
                "holder_process_killed_frees_the_lock_after_its_lease",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, redis.url())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("spawning the holder process"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (child_owner, child_token) = within(
        Duration::from_secs(30),
        "the child process taking the lock",
        tokio::task::spawn_blocking(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let line = line.expect("child stdout");
                // libtest prints "test <name> ... " on the same line first.
                if let Some((_, held)) = line.split_once("REDLUA_CHILD_HELD ") {
                    let (owner, token) = held.trim().split_once(' ').expect("owner and token");
                    return (owner.to_string(), token.parse::<u64>().expect("a token"));
                }
            }
            panic!("the child exited without taking the lock");
        }),
    )
    .await
    .unwrap();
    assert_eq!(
        redis.hgetall(KILLED_LOCK).await,
        map(&[(&child_owner, "1")])
    );

    // A waiter in this process, on a client with the default 30 s watchdog.
    let client = redis.client().await;
    let waiter = spawn_waiter(&client.lock(KILLED_LOCK));

    // The child's watchdog keeps its 600 ms lease alive.
    tokio::time::sleep(ms(1500)).await;
    let ttl = redis.pttl(KILLED_LOCK).await;
    assert!(
        ttl > 0 && ttl <= 600,
        "the child's lease was not renewed: {ttl}"
    );
    assert!(
        !waiter.is_finished(),
        "the waiter got a lock the child holds"
    );

    // SIGKILL: no release, no renewal.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let killed = Instant::now();
    assert_eq!(
        redis.hget(KILLED_LOCK, &child_owner).await.as_deref(),
        Some("1"),
        "the lock must outlive its holder until the lease ends"
    );
    let (acquired, guard, waiter_owner) = join_waiter(waiter, Duration::from_secs(5)).await;
    let after = acquired.duration_since(killed);
    assert!(
        after < ms(1500),
        "the lock was free {after:?} after the kill (lease 600 ms)"
    );
    assert_eq!(
        redis.hgetall(KILLED_LOCK).await,
        map(&[(&waiter_owner, "1")])
    );
    assert!(
        guard.token() > child_token,
        "the next holder's fencing token is not above the killed one's"
    );
    guard.unlock().await.unwrap();
}

// ---------------------------------------------------------------------------
// Waiting and wake-ups

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_wakes_within_200ms_of_a_release() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other_client = redis.client().await;
    // A waiter on another client, then one on the holder's own client.
    for (label, waiter_client) in [("other client", &other_client), ("same client", &holder)] {
        let name = format!("wake-{}", label.replace(' ', "-"));
        let guard = holder.lock(&name).lock().await.unwrap();
        assert!(redis.pttl(&name).await > 29_000);
        let waiter = spawn_waiter(&waiter_client.lock(&name));
        tokio::time::sleep(ms(300)).await;
        assert!(!waiter.is_finished(), "{label}: the waiter got a held lock");
        let released = Instant::now();
        guard.unlock().await.unwrap();
        let (acquired, guard, owner) = join_waiter(waiter, ms(5000)).await;
        let after = acquired.duration_since(released);
        assert!(after < ms(200), "{label}: woke {after:?} after the release");
        assert_eq!(redis.hgetall(&name).await, map(&[(&owner, "1")]));
        guard.unlock().await.unwrap();
    }

    // And a waiter that is another future of the holder's own task: it
    // waits too, and wakes on the release.
    let lock = holder.lock("wake-same-task");
    let guard = lock.lock().await.unwrap();
    let holder_owner = guard.owner().to_string();
    let waiting = async {
        let guard = lock.lock().await.expect("the same task's second lock()");
        (Instant::now(), guard)
    };
    let releasing = async {
        tokio::time::sleep(ms(300)).await;
        assert_eq!(
            redis.hgetall("wake-same-task").await,
            map(&[(&holder_owner, "1")]),
            "same task: the waiter got a held lock"
        );
        let released = Instant::now();
        guard.unlock().await.unwrap();
        released
    };
    let ((acquired, waiter_guard), released) = within(ms(5000), "same task", async {
        tokio::join!(waiting, releasing)
    })
    .await;
    let after = acquired.duration_since(released);
    assert!(
        after < ms(200),
        "same task: woke {after:?} after the release"
    );
    let waiter_owner = waiter_guard.owner().to_string();
    assert_ne!(waiter_owner, holder_owner);
    assert_eq!(
        redis.hgetall("wake-same-task").await,
        map(&[(&waiter_owner, "1")])
    );
    waiter_guard.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_of_one_client_take_turns() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiters = redis.client().await;
    let guard = holder.lock("turns").lock().await.unwrap();
    let (got_tx, mut got) = tokio::sync::mpsc::unbounded_channel();
    let mut releases = Vec::new();
    for i in 0..3 {
        let lock = waiters.lock("turns");
        let got_tx = got_tx.clone();
        let (release_tx, release) = tokio::sync::oneshot::channel::<()>();
        releases.push(Some(release_tx));
        tokio::spawn(async move {
            let guard = lock.lock().await.unwrap();
            let at = Instant::now();
            // Re-entering and releasing that hold lets nobody in.
            let inner = guard.reenter().await.unwrap();
            let count = lock.hold_count(guard.owner()).await.unwrap();
            inner.unlock().await.unwrap();
            got_tx.send((i, at, count)).unwrap();
            let _ = release.await;
            guard.unlock().await.unwrap();
        });
    }
    tokio::time::sleep(ms(300)).await;
    assert!(got.try_recv().is_err(), "a waiter got a held lock");
    let mut released = Instant::now();
    guard.unlock().await.unwrap();
    let mut order = Vec::new();
    for turn in 0..3 {
        let (i, at, count) = within(ms(5000), "the next waiter", got.recv())
            .await
            .unwrap();
        assert_eq!(count, 2, "turn {turn}: the re-entry was not counted");
        let after = at.duration_since(released);
        assert!(
            after < ms(200),
            "turn {turn}: woke {after:?} after the release"
        );
        order.push(i);
        tokio::time::sleep(ms(100)).await;
        assert!(got.try_recv().is_err(), "two waiters hold the lock at once");
        let holders = redis.hgetall("turns").await;
        assert_eq!(holders.len(), 1, "turn {turn}: {holders:?}");
        assert_eq!(
            holders.values().next().map(String::as_str),
            Some("1"),
            "turn {turn}: the re-entry was not released"
        );
        released = Instant::now();
        releases[i].take().unwrap().send(()).unwrap();
    }
    order.sort();
    assert_eq!(order, [0, 1, 2]);
    assert!(redis.gone_within("turns", ms(1000)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_lock_for_gives_up_after_its_wait() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other = redis.client().await;
    let guard = holder.lock("tlf").lock().await.unwrap();
    for (label, client) in [("other client", &other), ("same client", &holder)] {
        let lock = client.lock("tlf");
        let (waited, got) = tokio::spawn(async move {
            let start = Instant::now();
            let got = lock.try_lock_for(ms(700), None).await.unwrap();
            (start.elapsed(), got.is_some())
        })
        .await
        .unwrap();
        assert!(!got, "{label}: acquired a held lock");
        assert!(
            waited >= ms(700) && waited < ms(1200),
            "{label}: try_lock_for(700 ms) returned after {waited:?}"
        );
    }
    // The holder's own task is another acquirer too: it waits, and gives up.
    let start = Instant::now();
    let got = holder
        .lock("tlf")
        .try_lock_for(ms(700), None)
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(got.is_none(), "same task: acquired a held lock");
    assert!(
        waited >= ms(700) && waited < ms(1200),
        "same task: try_lock_for(700 ms) returned after {waited:?}"
    );
    assert_eq!(
        redis.hgetall("tlf").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    // Free: at once.
    guard.unlock().await.unwrap();
    let start = Instant::now();
    let got = other.lock("tlf").try_lock_for(ms(700), None).await.unwrap();
    assert!(start.elapsed() < ms(300), "{:?}", start.elapsed());
    got.expect("a free lock").unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_retries_when_the_holders_lease_ends() {
    // A lease that expires publishes nothing: the waiter must come back by
    // itself after the TTL the acquire script returned.
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other = redis.client().await;
    let guard = holder
        .lock("expiring")
        .lock_with_lease(ms(400))
        .await
        .unwrap();
    let taken = Instant::now();
    let lock = other.lock("expiring");
    let (at, got) = tokio::spawn(async move {
        let got = lock.try_lock_for(ms(3000), Some(ms(1000))).await.unwrap();
        (Instant::now(), got)
    })
    .await
    .unwrap();
    let got = got.expect("the lease ended within the wait");
    let after = at.duration_since(taken);
    assert!(after >= ms(350), "acquired a held lock after {after:?}");
    assert!(
        after < ms(1000),
        "acquired {after:?} after a 400 ms lease was taken"
    );
    assert_eq!(got.lease(), Some(ms(1000)));
    assert!(got.token() > guard.token());
    assert!(guard.is_lost(), "the expired holder's lease clock ran out");
    got.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_unlock_wakes_waiters() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiting = redis.client().await;
    let breaker = redis.client().await;
    let guard = holder.lock("forced").lock().await.unwrap();
    let waiter = spawn_waiter(&waiting.lock("forced"));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let broken = Instant::now();
    assert!(breaker.lock("forced").force_unlock().await.unwrap());
    let (acquired, waiter_guard, waiter_owner) = join_waiter(waiter, ms(5000)).await;
    let after = acquired.duration_since(broken);
    assert!(after < ms(200), "woke {after:?} after force_unlock");
    assert!(waiter_guard.token() > guard.token());
    let result = guard.unlock().await;
    assert!(
        matches!(result, Err(Error::NotOwner { .. })),
        "expected NotOwner, got {result:?}"
    );
    assert_eq!(redis.hgetall("forced").await, map(&[(&waiter_owner, "1")]));
    waiter_guard.unlock().await.unwrap();
}

// ---------------------------------------------------------------------------
// Cancellation and dropped guards

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_pending_lock_future_holds_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("pending");
    let guard = lock.lock().await.unwrap();
    let holder = guard.owner().to_string();
    // B waits in another task, then gives up.
    let b = lock.clone();
    tokio::spawn(async move {
        let result = tokio::time::timeout(ms(100), b.lock()).await;
        assert!(result.is_err(), "B got a held lock");
    })
    .await
    .unwrap();
    // C waits in this very task, then gives up.
    let result = tokio::time::timeout(ms(100), lock.lock()).await;
    assert!(result.is_err(), "C got a held lock");
    assert_eq!(redis.hgetall("pending").await, map(&[(&holder, "1")]));
    guard.unlock().await.unwrap();
    tokio::time::sleep(ms(300)).await;
    assert_eq!(
        keys_become(&redis, &[token_key("pending")], ms(1000)).await,
        [token_key("pending")],
        "B or C holds something"
    );
    let third = lock.clone();
    let start = Instant::now();
    let got = tokio::spawn(async move { third.try_lock().await.unwrap() })
        .await
        .unwrap();
    let got = got.expect("the lock is free");
    assert!(start.elapsed() < ms(300));
    assert_eq!(
        redis.hgetall("pending").await,
        map(&[(&got.owner().to_string(), "1")])
    );
    got.unlock().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_in_flight_acquire_is_undone() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let lock = client.lock("in-flight");
    // Loads the scripts, so that one poll sends the acquire itself.
    lock.lock().await.unwrap().unlock().await.unwrap();
    let tombstone_prefix = format!("{{in-flight}}:redlua_attempt:{}:", client.id());
    let mut took_effect = 0;
    let mut abandoned = 0;
    for delay in DROP_DELAYS {
        match abandon_in_flight(&redis, "in-flight", lock.lock(), delay).await {
            InFlight::Finished(result) => {
                result.unwrap().unlock().await.unwrap();
                continue;
            }
            InFlight::Abandoned { took_effect: took } => {
                took_effect += usize::from(took);
                abandoned += 1;
            }
        }
        assert!(
            redis.gone_within("in-flight", ms(1000)).await,
            "an abandoned acquire (delay {delay:?}) left a hold: {:?}",
            redis.hgetall("in-flight").await
        );
        assert!(!lock.is_locked().await.unwrap());
        // Each undo leaves a tombstone for its attempt (so that a late copy
        // of the acquire does nothing), and nothing else.
        let deadline = Instant::now() + ms(1000);
        let tombstones = loop {
            let tombstones: Vec<String> = redis
                .keys()
                .await
                .into_iter()
                .filter(|k| *k != token_key("in-flight"))
                .collect();
            // (The latch of the first unlock goes with the next sweep.)
            if tombstones.len() == abandoned || Instant::now() >= deadline {
                break tombstones;
            }
            tokio::time::sleep(ms(10)).await;
        };
        assert_eq!(tombstones.len(), abandoned, "{tombstones:?}");
        for key in &tombstones {
            assert!(key.starts_with(&tombstone_prefix), "{key}");
            let value: String = redis.raw().get(key).await.unwrap();
            assert_eq!(value, "0", "{key}");
            let ttl = redis.pttl(key).await;
            assert!(ttl > 0 && ttl <= 30_000, "{key}: pttl {ttl}");
        }
    }
    assert!(took_effect > 0, "no abandoned acquire ever reached Redis");
    // The client's bookkeeping is clean: a new hold counts 1.
    let guard = lock.lock().await.unwrap();
    assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 1);
    assert_eq!(
        redis.hgetall("in-flight").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    assert!(!redis.exists("in-flight").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_guard_is_released_in_the_background() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let lock = client.lock("dropped");
    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().clone();
    let waiter = spawn_waiter(&other.lock("dropped"));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    let dropped = Instant::now();
    drop(guard);
    let (acquired, waiter_guard, waiter_owner) = join_waiter(waiter, ms(5000)).await;
    assert!(
        acquired.duration_since(dropped) < ms(1000),
        "released {:?} after the drop",
        acquired.duration_since(dropped)
    );
    assert_eq!(redis.hgetall("dropped").await, map(&[(&waiter_owner, "1")]));
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 0);
    drop(waiter_guard);
    assert!(redis.gone_within("dropped", ms(1000)).await);
    // The background release deletes its latch right after the release;
    // the token counter stays.
    assert_eq!(
        keys_become(&redis, &[token_key("dropped")], ms(1000)).await,
        [token_key("dropped")],
        "latch left behind"
    );
    // Reentrant holds dropped one by one.
    let g1 = lock.lock().await.unwrap();
    let owner = g1.owner().clone();
    let g2 = g1.reenter().await.unwrap();
    drop(g2);
    tokio::time::sleep(ms(300)).await;
    assert_eq!(lock.hold_count(&owner).await.unwrap(), 1);
    assert!(!g1.is_lost());
    drop(g1);
    assert!(redis.gone_within("dropped", ms(1000)).await);
    assert_eq!(
        keys_become(&redis, &[token_key("dropped")], ms(1000)).await,
        [token_key("dropped")],
        "latch or attempt key left behind"
    );
}

// ---------------------------------------------------------------------------
// Bad keys, names and settings

#[tokio::test]
async fn wrong_type_key_is_left_alone() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let _: () = redis.raw().set("wt", "x").await.unwrap();
    let lock = client.lock("wt");
    fn is_wrong_type<T: std::fmt::Debug>(what: &str, result: Result<T, Error>) {
        match result {
            Err(Error::WrongType { name }) => assert_eq!(name, "wt", "{what}"),
            other => panic!("{what}: expected WrongType, got {other:?}"),
        }
    }
    is_wrong_type("try_lock", lock.try_lock().await);
    is_wrong_type("lock", within(ms(2000), "lock()", lock.lock()).await);
    is_wrong_type(
        "lock_with_lease",
        within(ms(2000), "lock_with_lease()", lock.lock_with_lease(ms(500))).await,
    );
    is_wrong_type("try_lock_for", lock.try_lock_for(ms(300), None).await);
    is_wrong_type("force_unlock", lock.force_unlock().await);
    // Reading it says what it is, without an error.
    let info = client.inspect("wt").await.unwrap();
    assert!(
        matches!(&info.kind, LockKind::NotALock { key_type, .. } if key_type == "string"),
        "{info:?}"
    );
    assert!(info.holders.is_empty());
    assert_eq!(lock.inspect().await.unwrap(), info);
    is_wrong_type("is_locked", lock.is_locked().await);
    is_wrong_type("remaining_ttl", lock.remaining_ttl().await);
    // An owner that holds another lock has no holds here: still WrongType,
    // neither a count nor NotHeld.
    let elsewhere = client.lock("elsewhere").lock().await.unwrap();
    is_wrong_type("hold_count", lock.hold_count(elsewhere.owner()).await);
    is_wrong_type("reenter", lock.reenter(elsewhere.owner()).await);
    elsewhere.unlock().await.unwrap();
    let value: String = redis.raw().get("wt").await.unwrap();
    assert_eq!(value, "x");
    assert_eq!(redis.pttl("wt").await, -1, "the value's TTL was touched");
    assert_eq!(
        keys_become(
            &redis,
            &[token_key("elsewhere"), "wt".to_string()],
            ms(1000)
        )
        .await,
        [token_key("elsewhere"), "wt".to_string()]
    );
}

#[tokio::test]
async fn invalid_names_are_refused() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    // A name with a hash tag of its own keeps it in its derived keys.
    let tagged = client.lock("user{7}:cart");
    let mut listener = redis.listen("redisson_lock__channel:user{7}:cart").await;
    let guard = tagged.try_lock().await.unwrap().expect("free");
    // An owner that holds a lock: refused re-entries below are refused for
    // their names, not for the owner.
    let owner = guard.owner().clone();

    let long = "x".repeat(MAX_NAME_LEN + 1);
    for name in ["", "{}x", long.as_str()] {
        let lock = client.lock(name);
        fn is_invalid<T: std::fmt::Debug>(name: &str, what: &str, result: Result<T, Error>) {
            assert!(
                matches!(result, Err(Error::InvalidName { .. })),
                "{what}({:?}): expected InvalidName, got {result:?}",
                &name[..name.len().min(20)]
            );
        }
        is_invalid(name, "try_lock", lock.try_lock().await);
        is_invalid(name, "lock", within(ms(1000), "lock()", lock.lock()).await);
        is_invalid(name, "lock_with_lease", lock.lock_with_lease(ms(500)).await);
        is_invalid(name, "try_lock_for", lock.try_lock_for(ms(300), None).await);
        is_invalid(name, "reenter", lock.reenter(&owner).await);
        is_invalid(
            name,
            "reenter_with_lease",
            lock.reenter_with_lease(&owner, ms(500)).await,
        );
        is_invalid(name, "force_unlock", lock.force_unlock().await);
        is_invalid(name, "is_locked", lock.is_locked().await);
        is_invalid(name, "hold_count", lock.hold_count(&owner).await);
        is_invalid(name, "remaining_ttl", lock.remaining_ttl().await);
        is_invalid(name, "inspect", lock.inspect().await);
        is_invalid(name, "client.inspect", client.inspect(name).await);
    }
    assert_eq!(
        redis.keys().await,
        ["redisson_lock_token:user{7}:cart", "user{7}:cart"]
    );

    guard.unlock().await.unwrap();
    let (message, _) = listener.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "0");
    assert_eq!(
        keys_become(
            &redis,
            &["redisson_lock_token:user{7}:cart".to_string()],
            ms(1000)
        )
        .await,
        ["redisson_lock_token:user{7}:cart"]
    );
}

#[tokio::test]
async fn bad_settings_are_refused() {
    let redis = Redis::start().await;
    for timeout in [ms(10), ms(29)] {
        let result = LockClient::builder(redis.url())
            .watchdog_timeout(timeout)
            .connect()
            .await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "watchdog {timeout:?}: {result:?}"
        );
    }
    let result = LockClient::builder(redis.url())
        .connect_timeout(Duration::ZERO)
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
    let result = LockClient::builder(redis.url())
        .response_timeout(Duration::ZERO)
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
    // 30 ms is the shortest watchdog timeout.
    let shortest = LockClient::builder(redis.url())
        .watchdog_timeout(ms(30))
        .connect()
        .await
        .unwrap();
    assert_eq!(shortest.watchdog_timeout(), ms(30));

    let client = redis.client().await;
    let too_long = MAX_LEASE + ms(1);
    for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
        let result = client.lock("bad").lock_with_lease(lease).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "lock_with_lease({lease:?}): {result:?}"
        );
        let result = client.lock("bad").try_lock_for(ms(100), Some(lease)).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "try_lock_for(_, {lease:?}): {result:?}"
        );
    }
    assert_eq!(redis.keys().await, Vec::<String>::new());

    // The longest lease is accepted, and so is the shortest.
    let guard = client
        .lock("longest")
        .lock_with_lease(MAX_LEASE)
        .await
        .unwrap();
    assert!(redis.pttl("longest").await > 1_000_000_000_000);
    assert!(!guard.is_lost());
    let owner = guard.owner().clone();
    let lock = client.lock("longest");
    for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
        let result = lock.reenter_with_lease(&owner, lease).await;
        assert!(
            matches!(result, Err(Error::Config(_))),
            "reenter_with_lease({lease:?}): {result:?}"
        );
    }
    assert_eq!(
        redis.hgetall("longest").await,
        map(&[(&owner.to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    let guard = client
        .lock("shortest")
        .lock_with_lease(ms(1))
        .await
        .unwrap();
    assert!(redis.gone_within("shortest", ms(1000)).await);
    assert!(guard.is_lost());
    assert!(matches!(guard.unlock().await, Err(Error::LockLost { .. })));
}

#[tokio::test]
async fn client_on_an_existing_connection() {
    let redis = Redis::start().await;
    let con = redis
        .server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let client = LockClient::from_client(redis.server.client())
        .connection(con)
        .connect()
        .await
        .unwrap();
    let lock = client.lock("own-con");
    let guard = lock.try_lock().await.unwrap().expect("free");
    let owner = guard.owner().to_string();
    assert_eq!(redis.hgetall("own-con").await, map(&[(&owner, "1")]));
    let inner = guard.reenter().await.unwrap();
    assert_eq!(redis.hgetall("own-con").await, map(&[(&owner, "2")]));
    inner.unlock().await.unwrap();
    guard.unlock().await.unwrap();
    assert!(!redis.exists("own-con").await);
}

// ---------------------------------------------------------------------------
// Interoperability with Redisson (its own scripts, run through EVAL as a
// Java service would)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_holder_excludes_redlua_and_its_release_wakes_redlua() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let java = format!("{}:1", uuid::Uuid::new_v4());
    let lock = client.lock("interop-a");

    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
    assert_eq!(redis.hgetall("interop-a").await, map(&[(&java, "1")]));
    assert!(
        lock.try_lock().await.unwrap().is_none(),
        "redlua took a Java hold"
    );
    assert!(lock.is_locked().await.unwrap());
    let info = lock.inspect().await.unwrap();
    assert_eq!(info.kind, LockKind::Reentrant);
    assert_eq!(holders(&info), [(java.clone(), Side::Exclusive, 1)]);
    assert_eq!(info.token, None, "Redisson's RLock takes no token");
    let ttl = lock.remaining_ttl().await.unwrap().expect("a lease");
    assert!(ttl > ms(29_000), "{ttl:?}");
    // Java re-enters.
    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
    assert_eq!(redis.hget("interop-a", &java).await.as_deref(), Some("2"));

    let waiter = spawn_waiter(&lock);
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished());
    // Java's partial release keeps it held.
    assert_eq!(java_release(&redis, "interop-a", &java).await, Some(0));
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished(), "redlua got a lock Java still holds");
    assert_eq!(redis.hget("interop-a", &java).await.as_deref(), Some("1"));
    // Java's final release wakes the redlua waiter.
    let released = Instant::now();
    assert_eq!(java_release(&redis, "interop-a", &java).await, Some(1));
    let (acquired, guard, owner) = join_waiter(waiter, ms(5000)).await;
    let after = acquired.duration_since(released);
    assert!(after < ms(200), "woke {after:?} after Java's release");
    assert_eq!(redis.hgetall("interop-a").await, map(&[(&owner, "1")]));
    assert_eq!(
        client.inspect("interop-a").await.unwrap().token,
        Some(guard.token())
    );
    // Now Java is excluded.
    let pttl = java_acquire(&redis, "interop-a", 30_000, &java).await;
    assert!(matches!(pttl, Some(t) if t > 29_000), "{pttl:?}");
    guard.unlock().await.unwrap();
    assert_eq!(java_acquire(&redis, "interop-a", 30_000, &java).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redlua_holder_excludes_redisson_and_its_release_wakes_redisson() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let java = format!("{}:1", uuid::Uuid::new_v4());
    let lock = client.lock("interop-b");
    // The Java side's subscription, as Redisson makes it.
    let mut java_channel = redis.listen("redisson_lock__channel:{interop-b}").await;

    let guard = lock.lock().await.unwrap();
    let owner = guard.owner().to_string();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));
    let ttl = redis.pttl("interop-b").await;
    assert!(ttl > 29_000 && ttl <= 30_000, "the lease is 30 s: {ttl}");

    // Java's acquire is refused with the remaining lease.
    let pttl = java_acquire(&redis, "interop-b", 30_000, &java).await;
    assert!(
        matches!(pttl, Some(t) if t > 29_000 && t <= 30_000),
        "{pttl:?}"
    );
    // Java's release of a hold it does not have: nil, and nothing changes.
    assert_eq!(java_release(&redis, "interop-b", &java).await, None);
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));

    // redlua re-enters (explicitly); a partial release announces nothing.
    let inner = guard.reenter().await.unwrap();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "2")]));
    inner.unlock().await.unwrap();
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&owner, "1")]));
    assert!(java_channel.next_within(ms(150)).await.is_none());

    // The final release reaches the Java side's subscription.
    let token = guard.token();
    guard.unlock().await.unwrap();
    let (message, _) = java_channel
        .next_within(ms(1000))
        .await
        .expect("Redisson's subscription got the release");
    assert_eq!(message, "0");
    assert_eq!(java_acquire(&redis, "interop-b", 30_000, &java).await, None);
    assert_eq!(redis.hgetall("interop-b").await, map(&[(&java, "1")]));
    // And a Java hold that redlua breaks is broken the Redisson way (and
    // the fencing token moves past every redlua holder's).
    assert!(lock.force_unlock().await.unwrap());
    let (message, _) = java_channel.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "0");
    assert!(java_channel.drain().is_empty());
    assert!(!redis.exists("interop-b").await);
    let info = lock.inspect().await.unwrap();
    assert_eq!(info.kind, LockKind::Free);
    assert!(info.token.is_some_and(|t| t > token), "{info:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncontended_lock_and_unlock_send_one_script_each_and_nothing_else() {
    let redis = Redis::start().await;
    // Unsynced: synced mode adds its once-a-second replica count.
    let client = redis.unsynced_client().await;
    let lock = client.lock("uncontended");
    // The scripts loaded, the connection open.
    lock.lock().await.unwrap().unlock().await.unwrap();
    let watching = monitor(&redis);
    for _ in 0..20 {
        lock.lock().await.unwrap().unlock().await.unwrap();
    }
    let seen = watching.stop(&redis).await;
    let commands: Vec<&str> = seen
        .iter()
        .map(|(_, command, _)| command.as_str())
        .collect();
    // One round trip for each acquire and each release: the scripts. Each
    // release's latch goes with the next release script, not a `DEL` of
    // its own.
    assert_eq!(commands, vec!["EVALSHA"; 40], "{seen:#?}");
    let releases = seen
        .iter()
        .filter(|(_, _, arguments)| arguments.contains("redisson_unlock_latch"))
        .count();
    assert_eq!(releases, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_while_idle_costs_no_error() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let lock = client.lock("idle");
    let guard = lock.try_lock().await.unwrap().unwrap();
    tokio::time::sleep(ms(50)).await;
    assert!(redis.close_client_connections().await >= 1);
    tokio::time::sleep(ms(50)).await;
    // Found closed: sent again at once, on a new connection.
    guard.unlock().await.unwrap();
    assert!(!redis.exists("idle").await);
    assert!(redis.close_client_connections().await >= 1);
    tokio::time::sleep(ms(50)).await;
    let guard = lock.try_lock().await.unwrap().expect("the lock is free");
    assert_eq!(
        redis.hgetall("idle").await,
        map(&[(&guard.owner().to_string(), "1")])
    );
    guard.unlock().await.unwrap();
    assert!(!redis.exists("idle").await);
}

/// Contenders of one client on a current-thread runtime: each loops lock,
/// 1 ms inside, unlock, for `run`; how many holds each got.
async fn contend_on_one_client(client: &LockClient, tasks: usize, run: Duration) -> Vec<usize> {
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let stop = Instant::now() + run;
    let mut handles = Vec::new();
    for i in 0..tasks {
        let lock = client.lock("one-client-contention");
        let counts = counts.clone();
        handles.push(tokio::spawn(async move {
            while Instant::now() < stop {
                let guard = lock.lock().await.unwrap();
                counts[i].fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(ms(1)).await;
                guard.unlock().await.unwrap();
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn on_a_current_thread_runtime_one_clients_contenders_all_get_the_lock() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let counts = contend_on_one_client(&client, 4, ms(2000)).await;
    let total: usize = counts.iter().sum();
    let least = *counts.iter().min().unwrap();
    assert!(total >= 40, "{counts:?}");
    // Each at least half the mean (without the handoff: [782, 1, 1, 1]).
    assert!(least * 4 * 2 >= total, "a contender starved: {counts:?}");
}

/// A hold whose count is not a number (the key tampered with) is one typed
/// error, [`Error::WrongType`], for every method that reads or changes it,
/// for every kind of lock; the key is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_count_that_is_not_a_number_is_a_wrong_type_error_everywhere() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let wrong = |what: &str, result: Result<(), Error>| match result {
        Err(Error::WrongType { .. }) => {}
        other => panic!("{what}: {other:?}"),
    };
    for side in ["lock", "fair", "read", "write"] {
        let name = format!("corrupt-{side}");
        let lock = match side {
            "lock" => client.lock(&name).into_any(),
            "read" => client.read_write_lock(&name).read().into_any(),
            "write" => client.read_write_lock(&name).write().into_any(),
            _ => client.fair_lock(&name).into_any(),
        };
        let guard = lock.lock().await.unwrap();
        let field = match side {
            "write" => format!("{}:write", guard.owner()),
            _ => guard.owner().to_string(),
        };
        let mut con = redis.raw();
        let () = con.hset(&name, &field, "not a count").await.unwrap();
        let what = |method: &str| format!("{side}: {method}");
        let mut other = None;
        wrong(&what("guard.reenter()"), guard.reenter().await.map(drop));
        wrong(
            &what("reenter(owner)"),
            lock.reenter(guard.owner()).await.map(drop),
        );
        wrong(
            &what("hold_count"),
            lock.hold_count(guard.owner()).await.map(drop),
        );
        match side {
            // A new holder finds the hash not a reentrant lock.
            "lock" | "fair" => wrong(&what("try_lock"), lock.try_lock().await.map(drop)),
            // A read/write lock's new holder goes by its mode and its own
            // field: another reader enters, a writer waits.
            "read" => other = lock.try_lock().await.unwrap(),
            _ => assert!(lock.try_lock().await.unwrap().is_none(), "{side}: held"),
        }
        wrong(&what("unlock"), guard.unlock().await);
        assert_eq!(
            redis.hget(&name, &field).await.as_deref(),
            Some("not a count"),
            "{side}: left as it was"
        );
        if side == "read" {
            let other = other.expect("another reader entered");
            other.unlock().await.unwrap();
        }
        redis.del(&name).await;
    }
}
