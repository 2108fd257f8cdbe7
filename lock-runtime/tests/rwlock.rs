//! The read/write lock against real redis-server processes: shared readers,
//! exclusive writers, explicit re-entry and the Redis layout, fencing
//! tokens, downgrade and the refused upgrade, wake-ups, zombie readers, the
//! watchdog, writer preference, the lost signal, force release, keys that
//! are not read/write locks, lease limits, cancellation, and
//! interoperability with Redisson's own read/write lock scripts.
//!
//! Every acquire is a new owner (`<client-uuid>:<n>`); re-entry goes through
//! a guard or its [`Owner`]. Every acquire of a new holder advances the
//! fencing token counter `redisson_lock_token:{name}`, which outlives the
//! lock by an hour: a lock that is free again leaves exactly that key.
//!
//! Timing assertions use wide margins; each proves a mechanism (a pub/sub
//! wake-up is far faster than the 30 s lease it beats, readers that overlap
//! finish in a fraction of the time they would take one after the other,
//! ...). Every wait is bounded, so a hang fails the test instead of stalling
//! the suite.

mod common;
mod redisson;

use common::{DROP_DELAYS, InFlight, Redis, abandon_in_flight, ms, within};
use redis::AsyncCommands;
use redisson::{
    attempt_key, java_read_acquire, java_read_release, java_write_acquire, java_write_release,
    rwlock_channel as channel, timeout_key, timeouts, token_key,
};
use redlua_runtime::flavor::{LockFlavor, Read};
use redlua_runtime::{
    Error, Lock, LockClient, LockGuard, LockInfo, LockKind, MAX_LEASE, MIN_LEASE, Mode, Owner, Side,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Asserts that `result` is the error `pattern` (with an optional guard).
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)?) => {
        assert_err!($result, $pattern $(if $guard)?, "")
    };
    ($result:expr, $pattern:pat $(if $guard:expr)?, $($context:tt)+) => {
        match $result {
            Err($pattern) $(if $guard)? => {}
            other => panic!(
                "{}: expected Err({}), got {other:?}",
                format_args!($($context)+),
                stringify!($pattern),
            ),
        }
    };
}

/// The mark a waiting writer leaves on a writer-preferring lock.
fn writer_mark(name: &str) -> String {
    format!("{{{name}}}:redlua_writer_waiting")
}

/// Whether `key` is an attempt key of the lock `name`.
fn is_attempt(name: &str, key: &str) -> bool {
    key.starts_with(&format!("{{{name}}}:redlua_attempt:"))
}

/// `keys` without the attempt keys of the lock `name`, and those.
fn split_attempts(name: &str, keys: Vec<String>) -> (Vec<String>, Vec<String>) {
    keys.into_iter().partition(|key| !is_attempt(name, key))
}

/// The one re-entry record of `owner` among `keys`
/// (`{name}:redlua_attempt:<owner>:<n>`); panics unless there is exactly one.
fn reentry_record(name: &str, owner: &str, keys: &[String]) -> String {
    let prefix = format!("{}:", attempt_key(name, owner));
    let records: Vec<&String> = keys
        .iter()
        .filter(|key| {
            key.strip_prefix(&prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    assert_eq!(records.len(), 1, "re-entry records of {owner}: {keys:?}");
    records[0].clone()
}

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn sorted(keys: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    keys.sort();
    keys
}

/// What a free read/write lock leaves behind: its token counter.
fn only_token(name: &str) -> Vec<String> {
    vec![token_key(name)]
}

/// `result` with its value printed (for reports that list outcomes).
fn debug<T: std::fmt::Debug>(result: Result<T, Error>) -> Result<String, Error> {
    result.map(|value| format!("{value:?}"))
}

/// A lock's holders as (owner, side, count), sorted (read before write).
fn holders(info: &LockInfo) -> Vec<(String, Side, u64)> {
    let rank = |side: Side| match side {
        Side::Exclusive => 0,
        Side::Read => 1,
        Side::Write => 2,
    };
    let mut holders: Vec<(String, Side, u64)> = info
        .holders
        .iter()
        .map(|h| (h.owner.clone(), h.side, h.count))
        .collect();
    holders.sort_by(|a, b| (&a.0, rank(a.1)).cmp(&(&b.0, rank(b.1))));
    holders
}

/// Waits until the database holds exactly `expected` (sorted); returns what
/// it holds at the end (`expected` unless `limit` passed first).
async fn keys_become(redis: &Redis, expected: &[String], limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let keys = redis.keys().await;
        if keys == expected || Instant::now() >= deadline {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// Every key in the database once the releases' latches
/// (`redisson_unlock_latch:{name}:<request-id>`, which a release keeps for
/// its retries and the client deletes in the background once it has its
/// reply) are gone, or after 1 s with whatever is left.
async fn settled_keys(redis: &Redis) -> Vec<String> {
    let deadline = Instant::now() + ms(1000);
    loop {
        let keys = redis.keys().await;
        if !keys.iter().any(|k| k.starts_with("redisson_unlock_latch:"))
            || Instant::now() >= deadline
        {
            return keys;
        }
        tokio::time::sleep(ms(10)).await;
    }
}

/// A task that waits for `lock` (a new owner) and reports when it got it,
/// with the guard.
fn spawn_locker<F: LockFlavor>(lock: &Lock<F>) -> JoinHandle<(Instant, LockGuard)> {
    let lock = lock.clone();
    tokio::spawn(async move {
        let guard = lock.lock().await.expect("waiter's lock()");
        (Instant::now(), guard)
    })
}

/// Waits for a locker task (at most `limit`).
async fn join_locker(
    task: JoinHandle<(Instant, LockGuard)>,
    limit: Duration,
) -> (Instant, LockGuard) {
    within(limit, "the waiter", task)
        .await
        .expect("waiter task")
}

// ---------------------------------------------------------------------------
// Sharing and exclusion

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

// ---------------------------------------------------------------------------
// Re-entry and layout

#[tokio::test]
async fn reentrant_read_and_write_holds_and_their_layout() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "re-rw";
    let rw = client.read_write_lock(name);
    let (read, write) = (rw.read(), rw.write());
    let token = token_key(name);

    // Read holds: a count in the hash, one timeout key per hold.
    let r1 = read.lock().await.unwrap();
    let owner_a: Owner = r1.owner().clone();
    let a = owner_a.to_string();
    assert_eq!(a, format!("{}:{}", client.id(), owner_a.id()));
    assert_eq!(owner_a.client_id(), client.id());
    let t = |n| timeout_key(name, &a, n);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "1")])
    );
    assert_eq!(settled_keys(&redis).await, sorted(&[name, &t(1), &token]));
    let ttl = redis.pttl(&t(1)).await;
    assert!(ttl > 29_000 && ttl <= 30_000, "timeout key TTL {ttl}");
    let ttl = redis.pttl(name).await;
    assert!(ttl > 29_000 && ttl <= 30_000, "lock TTL {ttl}");
    let ttl = redis.pttl(&token).await;
    assert!(
        ttl > 3_629_000 && ttl <= 3_630_000,
        "token counter TTL {ttl} (lease + 1 h)"
    );
    let info = read.inspect().await.unwrap();
    assert_eq!(info.name, name);
    assert_eq!(info.kind, LockKind::ReadWrite { mode: Mode::Read });
    assert_eq!(holders(&info), [(a.clone(), Side::Read, 1)]);
    assert_eq!(info.token, Some(r1.token()));
    assert!(info.ttl.is_some_and(|ttl| ttl > ms(29_000)), "{info:?}");
    // The client reads the same (the TTL may have ticked meanwhile).
    let again = client.inspect(name).await.unwrap();
    assert_eq!(
        (&again.name, &again.kind, &again.holders, again.token),
        (&info.name, &info.kind, &info.holders, info.token)
    );

    // Re-entry: one more hold of the same owner, its own timeout key, the
    // owner's token; recorded under its attempt key while it is held.
    let r2 = within(ms(1000), "reenter()", r1.reenter()).await.unwrap();
    assert_eq!(r2.owner(), &owner_a);
    assert_eq!(r2.token(), r1.token());
    assert_eq!(read.hold_count(&owner_a).await.unwrap(), 2);
    assert_eq!(write.hold_count(&owner_a).await.unwrap(), 0);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "2")])
    );
    let (keys, records) = split_attempts(name, settled_keys(&redis).await);
    assert_eq!(keys, sorted(&[name, &t(1), &t(2), &token]));
    let r2_record = reentry_record(name, &a, &records);
    assert_eq!(records, std::slice::from_ref(&r2_record));
    let value: String = redis.raw().get(&r2_record).await.unwrap();
    assert_eq!(value, "1", "a re-entry that took effect");
    assert!(read.is_locked().await.unwrap());
    assert!(write.is_locked().await.unwrap());

    // Another acquire, even from this task, is another owner: it reads
    // along; nobody can write.
    let rb = read.try_lock().await.unwrap().expect("readers share");
    let owner_b = rb.owner().clone();
    let b = owner_b.to_string();
    assert_ne!(owner_b, owner_a);
    assert!(rb.token() > r1.token(), "a new reader, a new token");
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "2"), (&b, "1")])
    );
    assert!(redis.exists(&timeout_key(name, &b, 1)).await);
    assert_eq!(holders(&read.inspect().await.unwrap()), {
        let mut expected = vec![(a.clone(), Side::Read, 2), (b.clone(), Side::Read, 1)];
        expected.sort_by(|x, y| x.0.cmp(&y.0));
        expected
    });
    assert_eq!(read.inspect().await.unwrap().token, Some(rb.token()));
    assert!(write.try_lock().await.unwrap().is_none());
    let b_token = rb.token();
    rb.unlock().await.unwrap();
    assert!(!redis.exists(&timeout_key(name, &b, 1)).await);
    // An owner that released its last hold can never re-enter.
    assert_err!(
        read.reenter(&owner_b).await,
        Error::NotHeld { .. },
        "b after release"
    );

    // Releases go in reverse: the highest timeout key goes first; the
    // re-entry's record goes with its hold.
    r2.unlock().await.unwrap();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "1")])
    );
    assert_eq!(settled_keys(&redis).await, sorted(&[name, &t(1), &token]));
    assert_eq!(read.hold_count(&owner_a).await.unwrap(), 1);
    r1.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));
    assert!(!read.is_locked().await.unwrap());
    assert_eq!(read.inspect().await.unwrap().kind, LockKind::Free);
    assert_eq!(read.hold_count(&owner_a).await.unwrap(), 0);
    assert_err!(
        read.reenter(&owner_a).await,
        Error::NotHeld { .. },
        "a after release"
    );
    assert_err!(
        write.reenter(&owner_a).await,
        Error::NotHeld { .. },
        "a, write side"
    );
    assert_eq!(
        settled_keys(&redis).await,
        only_token(name),
        "a refused re-entry wrote"
    );

    // Write holds: `<owner>:write` counts, no timeout keys.
    let w1 = write.lock().await.unwrap();
    let owner_c = w1.owner().clone();
    let c = owner_c.to_string();
    let c_write = format!("{c}:write");
    assert!(
        w1.token() > b_token,
        "the writer's token is above the readers'"
    );
    let c_token = w1.token();
    let w2 = w1.reenter().await.unwrap();
    assert_eq!(w2.token(), w1.token());
    assert_eq!(write.hold_count(&owner_c).await.unwrap(), 2);
    assert_eq!(read.hold_count(&owner_c).await.unwrap(), 0);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&c_write, "2")])
    );
    let (keys, records) = split_attempts(name, settled_keys(&redis).await);
    assert_eq!(keys, sorted(&[name, &token]));
    let w2_record = reentry_record(name, &c, &records);
    assert_eq!(records, std::slice::from_ref(&w2_record));
    assert!(write.is_locked().await.unwrap());
    assert!(read.is_locked().await.unwrap());
    let ttl = write.remaining_ttl().await.unwrap().expect("a lease");
    assert!(ttl > ms(29_000), "{ttl:?}");
    let info = write.inspect().await.unwrap();
    assert_eq!(info.kind, LockKind::ReadWrite { mode: Mode::Write });
    assert_eq!(holders(&info), [(c.clone(), Side::Write, 2)]);
    assert_eq!(info.token, Some(w1.token()));
    // Other owners (new acquires of this task too) are shut out on both
    // sides.
    assert!(read.try_lock().await.unwrap().is_none());
    assert!(write.try_lock().await.unwrap().is_none());

    // The writer may read too (re-entering the read side): the hash then
    // counts both.
    let r = read.reenter(&owner_c).await.unwrap();
    assert_eq!(r.owner(), &owner_c);
    assert_eq!(r.token(), w1.token());
    assert_eq!(read.hold_count(&owner_c).await.unwrap(), 1);
    assert_eq!(write.hold_count(&owner_c).await.unwrap(), 2);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&c_write, "2"), (&c, "1")])
    );
    let (keys, records) = split_attempts(name, settled_keys(&redis).await);
    assert_eq!(keys, sorted(&[name, &timeout_key(name, &c, 1), &token]));
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.contains(&w2_record), "{records:?}");
    assert_eq!(
        holders(&read.inspect().await.unwrap()),
        [(c.clone(), Side::Read, 1), (c.clone(), Side::Write, 2)]
    );
    r.unlock().await.unwrap();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&c_write, "2")])
    );
    assert_eq!(
        settled_keys(&redis).await,
        sorted(&[name, &token, &w2_record])
    );

    w2.unlock().await.unwrap();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&c_write, "1")])
    );
    assert_eq!(settled_keys(&redis).await, sorted(&[name, &token]));
    w1.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));
    assert!(!write.is_locked().await.unwrap());
    assert_eq!(write.hold_count(&owner_c).await.unwrap(), 0);
    assert_err!(
        write.reenter(&owner_c).await,
        Error::NotHeld { .. },
        "c after release"
    );
    // The token counter outlives the lock: the next holder goes above it.
    assert_eq!(read.inspect().await.unwrap().token, Some(c_token));
}

// ---------------------------------------------------------------------------
// Downgrade and upgrade

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downgrade_keeps_reading_and_wakes_waiting_readers() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let other = redis.client().await;
    let name = "down";
    let rw = holder.read_write_lock(name);

    let w = rw.write().lock().await.unwrap();
    let owner_a = w.owner().clone();
    let a = owner_a.to_string();
    // The writer's owner takes a read hold: a re-entry of the read side.
    let r = within(ms(1000), "read().reenter()", rw.read().reenter(&owner_a))
        .await
        .unwrap();
    assert_eq!(r.owner(), &owner_a);
    assert_eq!(r.token(), w.token(), "a re-entry keeps the owner's token");
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&format!("{a}:write"), "1"), (&a, "1")])
    );
    // A reader of another owner (30 s lease) waits for the writer.
    let waiter = spawn_locker(&other.read_write_lock(name).read());
    tokio::time::sleep(ms(300)).await;
    assert!(!waiter.is_finished(), "a reader got in beside a writer");

    // Releasing the write hold leaves the owner reading, and lets the
    // waiting reader in at once (Redisson would leave it asleep).
    let w_token = w.token();
    let released = Instant::now();
    w.unlock().await.unwrap();
    let (entered, g) = join_locker(waiter, ms(5000)).await;
    let after = entered.duration_since(released);
    assert!(
        after < ms(200),
        "the waiting reader entered {after:?} after the downgrade"
    );
    let b = g.owner().to_string();
    assert!(
        g.token() > w_token,
        "the new reader's token is above the writer's"
    );
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "1"), (&b, "1")])
    );
    assert_eq!(rw.read().hold_count(&owner_a).await.unwrap(), 1);
    assert_eq!(rw.write().hold_count(&owner_a).await.unwrap(), 0);
    assert!(!r.is_lost());
    // The owner reads on: it may re-enter the read side, not the write side
    // (that would be an upgrade).
    let r2 = r.reenter().await.unwrap();
    assert_eq!(rw.read().hold_count(&owner_a).await.unwrap(), 2);
    r2.unlock().await.unwrap();
    assert_err!(
        rw.write().reenter(&owner_a).await,
        Error::Upgrade { name: ref got } if got == name,
        "upgrade after the downgrade"
    );
    r.unlock().await.unwrap();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&b, "1")])
    );
    g.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_is_refused_at_once_and_changes_nothing() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    for (name, rw) in [
        ("up", client.read_write_lock("up")),
        (
            "up-pref",
            client.read_write_lock("up-pref").writer_preferring(),
        ),
    ] {
        let (read, write) = (rw.read(), rw.write());
        let r1 = read.lock().await.unwrap();
        let r2 = r1.reenter().await.unwrap();
        let owner = r1.owner().clone();
        let keys = settled_keys(&redis).await;
        let hash = redis.hgetall(name).await;

        // Re-entering the write side with the reader's owner: refused at
        // once, whatever the lease.
        assert_err!(
            within(ms(200), "reenter()", write.reenter(&owner)).await,
            Error::Upgrade { name: ref got } if got == name,
            "{name}: reenter"
        );
        assert_err!(
            within(
                ms(200),
                "reenter_with_lease()",
                write.reenter_with_lease(&owner, ms(5000)),
            )
            .await,
            Error::Upgrade { name: ref got } if got == name,
            "{name}: reenter_with_lease"
        );
        assert_eq!(settled_keys(&redis).await, keys, "{name}: keys changed");
        assert_eq!(redis.hgetall(name).await, hash, "{name}: the lock changed");
        assert_eq!(read.hold_count(&owner).await.unwrap(), 2);
        assert_eq!(write.hold_count(&owner).await.unwrap(), 0);

        // A plain acquire of the write side is a new writer, not an
        // upgrade: it waits for every reader, this task's own included
        // (as tokio's RwLock does).
        assert!(write.try_lock().await.unwrap().is_none(), "{name}");
        let started = Instant::now();
        let got = write.try_lock_for(ms(300), None).await.unwrap();
        let waited = started.elapsed();
        assert!(got.is_none(), "{name}: a writer beside readers");
        assert!(waited >= ms(300), "{name}: gave up after {waited:?}");
        // Having given up, it leaves nothing behind (a preferring writer
        // takes its mark away).
        assert_eq!(
            keys_become(&redis, &keys, ms(1000)).await,
            keys,
            "{name}: a writer that gave up left something"
        );
        assert_eq!(redis.hgetall(name).await, hash, "{name}: the lock changed");

        // A waiting writer gets in once the read holds are gone.
        let writer = spawn_locker(&write);
        tokio::time::sleep(ms(300)).await;
        assert!(!writer.is_finished(), "{name}: a writer beside readers");
        r2.unlock().await.unwrap();
        r1.unlock().await.unwrap();
        let (_, w) = join_locker(writer, ms(5000)).await;
        assert_ne!(w.owner(), &owner);
        assert_eq!(
            redis.hgetall(name).await,
            map(&[("mode", "write"), (&format!("{}:write", w.owner()), "1")]),
            "{name}"
        );
        // The reader's owner holds nothing now, on either side.
        assert_err!(
            write.reenter(&owner).await,
            Error::NotHeld { .. },
            "{name}: write"
        );
        assert_err!(
            read.reenter(&owner).await,
            Error::NotHeld { .. },
            "{name}: read"
        );
        w.unlock().await.unwrap();
        assert_eq!(settled_keys(&redis).await, only_token(name), "{name}");
        // Only this lock's counter is left: drop it for the next round.
        assert!(redis.del(&token_key(name)).await);
    }
}

// ---------------------------------------------------------------------------
// Wake-ups and zombies

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
async fn zombie_readers_do_not_block_writers() {
    let redis = Redis::start().await;
    let readers = redis.client().await;
    let writers = redis.client().await;
    let name = "zombie";
    let rw = readers.read_write_lock(name);

    // A reader whose lease runs out without a release.
    let zombie = rw.read().lock_with_lease(ms(300)).await.unwrap();
    let z = zombie.owner().to_string();
    let live = rw.read().lock().await.unwrap();
    let ttl = redis.pttl(name).await;
    assert!(
        ttl > 29_000,
        "the lock lives as long as its longest hold: {ttl}"
    );
    let writer = spawn_locker(&writers.read_write_lock(name).write());
    tokio::time::sleep(ms(600)).await;
    assert!(zombie.is_lost(), "its lease clock has passed");
    assert!(zombie.valid_until() <= std::time::Instant::now());
    assert!(!live.is_lost());
    assert!(!redis.exists(&timeout_key(name, &z, 1)).await);
    assert_eq!(
        redis.hget(name, &z).await.as_deref(),
        Some("1"),
        "still listed"
    );
    assert!(
        !writer.is_finished(),
        "the writer got in beside a live reader"
    );
    // The live reader's release finds only the zombie left: the lock is free.
    let released = Instant::now();
    live.unlock().await.unwrap();
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let after = entered.duration_since(released);
    assert!(
        after < ms(200),
        "the writer entered {after:?} after the release"
    );
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&format!("{}:write", w.owner()), "1")])
    );
    // The zombie's release finds the lock held by someone else.
    assert_err!(
        zombie.unlock().await,
        Error::NotOwner { .. },
        "a lost hold released"
    );
    w.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));

    // A reader whose timeout key disappeared (deleted by hand).
    let zombie = rw.read().lock().await.unwrap();
    let live = rw.read().lock().await.unwrap();
    assert!(
        redis
            .del(&timeout_key(name, &zombie.owner().to_string(), 1))
            .await
    );
    let writer = spawn_locker(&writers.read_write_lock(name).write());
    tokio::time::sleep(ms(300)).await;
    assert!(
        !writer.is_finished(),
        "the writer got in beside a live reader"
    );
    let released = Instant::now();
    live.unlock().await.unwrap();
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let after = entered.duration_since(released);
    assert!(
        after < ms(200),
        "the writer entered {after:?} after the release"
    );
    assert_err!(
        zombie.unlock().await,
        Error::NotOwner { .. },
        "a lost hold released"
    );
    w.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

// ---------------------------------------------------------------------------
// The watchdog and the lost signal

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_renews_read_and_write_holds_and_only_its_own_timeouts() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    let name = "renewed";
    let r1 = client.read_write_lock(name).read().lock().await.unwrap();
    let r2 = r1.reenter().await.unwrap();
    let a = r1.owner().to_string();
    // A foreign reader's hold, made by hand with a short lease.
    let foreign = "f00d:7";
    let _: () = redis.raw().hset(name, foreign, 1).await.unwrap();
    let _: () = redis::cmd("SET")
        .arg(timeout_key(name, foreign, 1))
        .arg(1)
        .arg("PX")
        .arg(700)
        .query_async(&mut redis.raw())
        .await
        .unwrap();
    let w = client
        .read_write_lock("renewed-w")
        .write()
        .lock()
        .await
        .unwrap();

    let watched = [
        name.to_string(),
        timeout_key(name, &a, 1),
        timeout_key(name, &a, 2),
        "renewed-w".to_string(),
    ];
    let start = Instant::now();
    let valid_until = r1.valid_until();
    while start.elapsed() < ms(2000) {
        for key in &watched {
            let ttl = redis.pttl(key).await;
            assert!(
                ttl > 0 && ttl <= 600,
                "{key}: TTL {ttl} at {:?} (lease 600 ms)",
                start.elapsed()
            );
        }
        tokio::time::sleep(ms(100)).await;
    }
    assert!(
        !redis.exists(&timeout_key(name, foreign, 1)).await,
        "the watchdog renewed another owner's read hold"
    );
    assert!(!r1.is_lost() && !r2.is_lost() && !w.is_lost());
    // Renewals moved the guards' lease clocks (shared by the owner's holds).
    assert!(r1.valid_until() > valid_until + ms(1000));
    assert_eq!(r1.valid_until(), r2.valid_until());
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "2"), (foreign, "1")])
    );
    // The foreign hold is a zombie: the last live release frees the lock.
    r2.unlock().await.unwrap();
    r1.unlock().await.unwrap();
    assert_eq!(
        settled_keys(&redis).await,
        sorted(&["renewed-w", &token_key(name), &token_key("renewed-w")])
    );
    w.unlock().await.unwrap();
    assert_eq!(
        settled_keys(&redis).await,
        sorted(&[&token_key(name), &token_key("renewed-w")])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_rwlock_is_reported_lost_on_both_sides() {
    let redis = Redis::start().await;
    let client = redis.client_with_watchdog(ms(600)).await;
    for (name, lock) in [
        ("lost-r", client.read_write_lock("lost-r").read().into_any()),
        (
            "lost-w",
            client.read_write_lock("lost-w").write().into_any(),
        ),
    ] {
        let guard = lock.lock().await.unwrap();
        assert!(!guard.is_lost());
        assert!(redis.del(name).await);
        within(ms(2000), "lost()", guard.lost()).await;
        assert!(guard.is_lost(), "{name}");
        // The owner holds nothing: there is nothing to re-enter.
        assert_err!(
            guard.reenter().await,
            Error::NotHeld { .. },
            "{name}: reenter"
        );
        assert_err!(
            guard.unlock().await,
            Error::LockLost { .. },
            "{name}: unlock"
        );
    }
}

/// A read hold taken by a client whose process then dies: after `alive`
/// (the watchdog renewing meanwhile) its tokio runtime is shut down, so it
/// neither releases nor renews again. Returns the dead reader's owner.
async fn reader_that_dies(url: String, name: &str, watchdog: Duration, alive: Duration) -> String {
    let name = name.to_string();
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (client, guard) = runtime.block_on(async {
            let client = LockClient::builder(url)
                .watchdog_timeout(watchdog)
                .connect()
                .await
                .expect("connect");
            let guard = client
                .read_write_lock(&name)
                .read()
                .lock()
                .await
                .expect("read lock()");
            tokio::time::sleep(alive).await;
            (client, guard)
        });
        let owner = guard.owner().to_string();
        drop(runtime);
        // Dead: what it holds is never released nor renewed.
        std::mem::forget(guard);
        std::mem::forget(client);
        owner
    })
    .await
    .expect("the dying reader")
}

/// The watchdog's renewal of a read hold never shortens the lock's TTL below
/// another reader's longer lease (fixed in eb35200; before, it set the TTL to
/// the watchdog timeout): if the renewing reader's process dies, the lock
/// still lives as long as its longest read hold, and no writer enters while
/// the other reader's lease runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_watched_reader_does_not_cut_another_readers_lease() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let writers = redis.client().await;
    let name = "lease-kept";
    let live = client
        .read_write_lock(name)
        .read()
        .lock_with_lease(ms(4000))
        .await
        .unwrap();
    let live_owner = live.owner().to_string();
    let live_timeout = timeout_key(name, &live_owner, 1);
    let dead = reader_that_dies(redis.url(), name, ms(600), ms(500)).await;
    let lock_ttl = redis.pttl(name).await;
    let live_ttl = redis.pttl(&live_timeout).await;
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&live_owner, "1"), (&dead, "1")])
    );
    assert!(
        lock_ttl + 20 >= live_ttl,
        "the lock has {lock_ttl} ms to live, a reader's hold {live_ttl} ms"
    );
    // The live reader's lease has ~3.5 s left: no writer within 1.5 s.
    let write = writers.read_write_lock(name).write();
    let got = write.try_lock_for(ms(1500), None).await.unwrap();
    let live_left = redis.pttl(&live_timeout).await;
    let live_lost = live.is_lost();
    if let Some(guard) = got {
        guard.unlock().await.unwrap();
        panic!(
            "a writer entered while a reader's lease had {live_left} ms left \
             (its guard lost: {live_lost}); when the renewing reader died the lock had \
             {lock_ttl} ms to live, the live reader's hold {live_ttl} ms"
        );
    }
    assert!(!live_lost);
    live.unlock().await.unwrap();
}

// ---------------------------------------------------------------------------
// Writer preference and starvation

/// What happened around a writer that arrived in a stream of readers.
struct Stream {
    writer_started: Instant,
    writer_entered: Instant,
    writer_left: Instant,
    stream_stopped: Instant,
    readers: Vec<(Instant, Instant)>,
}

/// Readers arrive every 40 ms and each reads 300 ms (always several inside
/// at once); a writer arrives after 300 ms and writes 50 ms; no new reader
/// arrives after 1.5 s.
async fn writer_in_a_reader_stream(redis: &Redis, name: &str, prefer: bool) -> Stream {
    let clients = [redis.client().await, redis.client().await];
    let writer_client = redis.client().await;
    let handle = |c: &LockClient| {
        let rw = c.read_write_lock(name);
        if prefer { rw.writer_preferring() } else { rw }
    };
    let reads: Vec<Lock<Read>> = clients.iter().map(|c| handle(c).read()).collect();
    let write = handle(&writer_client).write();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let began = Instant::now();
    let stream = tokio::spawn(async move {
        let mut readers = Vec::new();
        let mut i = 0;
        while !stopped.load(Ordering::SeqCst) {
            let read = reads[i % reads.len()].clone();
            i += 1;
            readers.push(tokio::spawn(async move {
                let guard = read.lock().await.expect("read lock()");
                let entered = Instant::now();
                tokio::time::sleep(ms(300)).await;
                let left = Instant::now();
                guard.unlock().await.expect("read unlock()");
                (entered, left)
            }));
            tokio::time::sleep(ms(40)).await;
        }
        readers
    });
    tokio::time::sleep_until(began + ms(300)).await;
    let writer_started = Instant::now();
    let writer = tokio::spawn(async move {
        let guard = write.lock().await.expect("write lock()");
        let entered = Instant::now();
        tokio::time::sleep(ms(50)).await;
        let left = Instant::now();
        guard.unlock().await.expect("write unlock()");
        (entered, left)
    });
    tokio::time::sleep_until(began + ms(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let stream_stopped = Instant::now();
    let readers = within(ms(10_000), "the reader stream", async {
        let mut intervals = Vec::new();
        for reader in stream.await.expect("stream task") {
            intervals.push(reader.await.expect("reader task"));
        }
        intervals
    })
    .await;
    let (writer_entered, writer_left) = within(ms(10_000), "the writer", writer)
        .await
        .expect("writer task");
    assert_eq!(
        settled_keys(redis).await,
        only_token(name),
        "{name}: left held"
    );
    Stream {
        writer_started,
        writer_entered,
        writer_left,
        stream_stopped,
        readers,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_preference_bounds_a_writers_wait() {
    let redis = Redis::start().await;
    let s = writer_in_a_reader_stream(&redis, "preferring", true).await;
    let waited = s.writer_entered.duration_since(s.writer_started);
    assert!(
        waited < ms(1000),
        "the writer waited {waited:?} in a stream of readers, despite the preference"
    );
    assert!(
        s.writer_entered < s.stream_stopped,
        "the stream stopped first"
    );
    assert!(s.readers.len() >= 20, "only {} readers", s.readers.len());
    for &(entered, left) in &s.readers {
        assert!(
            left <= s.writer_entered || entered >= s.writer_left,
            "a reader was inside with the writer"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_starve_a_writer_without_preference() {
    let redis = Redis::start().await;
    let s = writer_in_a_reader_stream(&redis, "starving", false).await;
    let waited = s.writer_entered.duration_since(s.writer_started);
    assert!(
        s.writer_entered > s.stream_stopped && waited > ms(1000),
        "the writer got in after {waited:?}, {:?} before the reader stream stopped \
         (expected starvation)",
        s.stream_stopped.saturating_duration_since(s.writer_entered)
    );
    let after_stop = s.writer_entered.duration_since(s.stream_stopped);
    assert!(
        after_stop < ms(2000),
        "the writer entered {after_stop:?} after the stream stopped"
    );
    for &(entered, left) in &s.readers {
        assert!(
            left <= s.writer_entered || entered >= s.writer_left,
            "a reader was inside with the writer"
        );
    }
}

/// A reader that re-enters while a writer waits on a writer-preferring lock
/// does not wait behind it (re-entry never waits), where a new reader does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reentry_does_not_wait_behind_a_waiting_writer() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let name = "pref-reentry";
    let rw = client.read_write_lock(name).writer_preferring();
    let r = rw.read().lock().await.unwrap();
    let writer = spawn_locker(&other.read_write_lock(name).writer_preferring().write());
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished());
    assert!(redis.exists(&writer_mark(name)).await, "no writer's mark");
    // A new reader waits behind the writer; the holder's re-entry does not.
    assert!(rw.read().try_lock().await.unwrap().is_none());
    let r2 = within(ms(500), "reenter()", r.reenter()).await.unwrap();
    assert_eq!(rw.read().hold_count(r.owner()).await.unwrap(), 2);
    r2.unlock().await.unwrap();
    assert!(!writer.is_finished(), "a writer beside a reader");
    let released = Instant::now();
    r.unlock().await.unwrap();
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let after = entered.duration_since(released);
    assert!(
        after < ms(200),
        "the writer entered {after:?} after the release"
    );
    // The writer took its mark away with the lock.
    assert_eq!(
        settled_keys(&redis).await,
        sorted(&[name, &token_key(name)])
    );
    w.unlock().await.unwrap();
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

/// A writer-preferring writer that stops waiting — `try_lock` refused (it
/// leaves no mark), `try_lock_for` timed out, `lock()` future dropped —
/// takes its `{name}:redlua_writer_waiting` mark away at once (not when it
/// expires, 3 s later): new readers need not wait behind a writer that is
/// gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_gives_up_leaves_no_mark_behind() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "gave-up";
    let rw = client.read_write_lock(name).writer_preferring();
    for how in ["try_lock()", "try_lock_for()", "a dropped lock() future"] {
        let r = rw.read().lock().await.unwrap();
        let write = rw.write();
        match how {
            "try_lock()" => {
                assert!(write.try_lock().await.unwrap().is_none());
                assert!(
                    !redis.exists(&writer_mark(name)).await,
                    "try_lock() left a mark"
                );
            }
            "try_lock_for()" => {
                assert!(write.try_lock_for(ms(200), None).await.unwrap().is_none())
            }
            _ => {
                let waiting = tokio::time::timeout(ms(200), write.lock()).await;
                assert!(waiting.is_err(), "a writer beside a reader");
            }
        }
        r.unlock().await.unwrap();
        assert!(
            redis.gone_within(&writer_mark(name), ms(1000)).await,
            "after {how}: the writer's mark is still there ({} ms to live)",
            redis.pttl(&writer_mark(name)).await
        );
        // Nobody writes or waits to write: a new reader gets in at once.
        let guard = rw
            .read()
            .try_lock()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("after {how}: a reader of a free lock was refused"));
        guard.unlock().await.unwrap();
        assert_eq!(settled_keys(&redis).await, only_token(name), "after {how}");
    }
}

// ---------------------------------------------------------------------------
// Force release, keys that are not read/write locks, lease limits

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_unlock_breaks_only_its_own_side() {
    let redis = Redis::start().await;
    let holder = redis.client().await;
    let waiting = redis.client().await;
    let breaker = redis.client().await;
    let name = "forced";
    let mut listener = redis.listen(&channel(name)).await;
    let broken_rw = breaker.read_write_lock(name);

    // A write-mode lock: the read side cannot break it, the write side can.
    let w = holder.read_write_lock(name).write().lock().await.unwrap();
    let w_field = format!("{}:write", w.owner());
    let reader = spawn_locker(&waiting.read_write_lock(name).read());
    tokio::time::sleep(ms(300)).await;
    assert!(!reader.is_finished());
    assert!(!broken_rw.read().force_unlock().await.unwrap());
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&w_field, "1")])
    );
    assert_eq!(breaker.inspect(name).await.unwrap().token, Some(w.token()));
    assert!(listener.next_within(ms(100)).await.is_none());
    let broken = Instant::now();
    assert!(broken_rw.write().force_unlock().await.unwrap());
    let (entered, r) = join_locker(reader, ms(5000)).await;
    let after = entered.duration_since(broken);
    assert!(
        after < ms(200),
        "the reader entered {after:?} after force_unlock"
    );
    let (message, _) = listener.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "1");
    // Breaking advanced the token: the next holder's is above the broken one's.
    assert!(r.token() > w.token(), "{} after {}", r.token(), w.token());
    assert_err!(
        w.unlock().await,
        Error::NotOwner { .. },
        "the broken writer"
    );

    // A read-mode lock: the other way round.
    let r_owner = r.owner().to_string();
    let hash = map(&[("mode", "read"), (&r_owner, "1")]);
    assert_eq!(redis.hgetall(name).await, hash);
    assert!(!broken_rw.write().force_unlock().await.unwrap());
    assert_eq!(redis.hgetall(name).await, hash);
    assert_eq!(breaker.inspect(name).await.unwrap().token, Some(r.token()));
    assert!(broken_rw.read().force_unlock().await.unwrap());
    assert!(!redis.exists(name).await);
    let forced = breaker.inspect(name).await.unwrap().token;
    assert!(
        forced.is_some_and(|t| t > r.token()),
        "breaking did not advance the token: {forced:?} after {}",
        r.token()
    );
    let (message, _) = listener.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "1");
    assert_err!(
        r.unlock().await,
        Error::LockLost { .. },
        "the broken reader"
    );
    // Nothing to break.
    assert!(!broken_rw.read().force_unlock().await.unwrap());
    assert!(!broken_rw.write().force_unlock().await.unwrap());
    assert!(listener.drain().is_empty());
    // As with Redisson's forceUnlock, the broken reader's hold timeout is
    // left to expire with its lease.
    let orphan = timeout_key(name, &r_owner, 1);
    assert_eq!(
        settled_keys(&redis).await,
        sorted(&[&token_key(name), &orphan])
    );
    let ttl = redis.pttl(&orphan).await;
    assert!(ttl > 0 && ttl <= 30_000, "{orphan}: TTL {ttl}");
}

#[tokio::test]
async fn wrong_type_keys_are_left_alone_by_both_sides() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    // A string, a hash of another layout, and a reentrant lock.
    let _: () = redis.raw().set("wt", "x").await.unwrap();
    let _: () = redis.raw().hset("wt-hash", "name", "bob").await.unwrap();
    let reentrant = client.lock("wt-re").lock().await.unwrap();
    let owner = reentrant.owner().clone();
    let keys = settled_keys(&redis).await;
    assert_eq!(
        keys,
        sorted(&["wt", "wt-hash", "wt-re", &token_key("wt-re")])
    );
    let re_hash = redis.hgetall("wt-re").await;
    // Everything that reads or changes the lock says WrongType; nothing is
    // written. (Collected, so that one run reports every operation.)
    let mut problems = Vec::new();
    for (name, key_type) in [("wt", "string"), ("wt-hash", "hash"), ("wt-re", "hash")] {
        let rw = client.read_write_lock(name);
        for (side, lock) in [
            ("read", rw.read().into_any()),
            ("write", rw.write().into_any()),
        ] {
            let what = format!("{name}, {side} side");
            let mut check = |op: &str, outcome: Result<String, Error>| match outcome {
                Err(Error::WrongType { name: got }) if got == name => {}
                other => problems.push(format!("{what}: {op}: expected WrongType, got {other:?}")),
            };
            check("force_unlock", debug(lock.force_unlock().await));
            check("try_lock", debug(lock.try_lock().await));
            check("lock", debug(within(ms(2000), "lock()", lock.lock()).await));
            check(
                "try_lock_for",
                debug(within(ms(2000), "try_lock_for()", lock.try_lock_for(ms(500), None)).await),
            );
            check("reenter", debug(lock.reenter(&owner).await));
            check("is_locked", debug(lock.is_locked().await));
            // Reading the key says what it holds.
            let info = lock.inspect().await.unwrap();
            match &info.kind {
                LockKind::Reentrant if name == "wt-re" => {}
                LockKind::NotALock { key_type: got, .. } if got == key_type => {}
                other => panic!("{what}: inspect() says {other:?}"),
            }
            if name == "wt-re" {
                assert_eq!(
                    holders(&info),
                    [(owner.to_string(), Side::Exclusive, 1)],
                    "{what}"
                );
            } else {
                assert!(info.holders.is_empty(), "{what}: {info:?}");
            }
        }
    }
    let value: String = redis.raw().get("wt").await.unwrap();
    assert_eq!(value, "x");
    assert_eq!(redis.hgetall("wt-hash").await, map(&[("name", "bob")]));
    assert_eq!(redis.hgetall("wt-re").await, re_hash);
    assert_eq!(redis.pttl("wt").await, -1, "the value's TTL was touched");
    assert_eq!(
        redis.pttl("wt-hash").await,
        -1,
        "the hash's TTL was touched"
    );
    assert_eq!(settled_keys(&redis).await, keys);
    assert!(problems.is_empty(), "{problems:#?}");
    reentrant.unlock().await.unwrap();
}

#[tokio::test]
async fn leases_out_of_range_are_refused_before_anything_is_sent() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "leases";
    let rw = client.read_write_lock(name);
    let held = rw.read().lock().await.unwrap();
    let owner = held.owner().clone();
    let keys = settled_keys(&redis).await;
    let hash = redis.hgetall(name).await;
    let too_long = MAX_LEASE + ms(1);
    for (side, lock) in [
        ("read", rw.read().into_any()),
        ("write", rw.write().into_any()),
    ] {
        for lease in [Duration::ZERO, Duration::from_micros(999), too_long] {
            let what = format!("{side} side, lease {lease:?}");
            assert_err!(
                lock.lock_with_lease(lease).await,
                Error::Config(_),
                "{what}: lock_with_lease"
            );
            assert_err!(
                lock.try_lock_for(ms(100), Some(lease)).await,
                Error::Config(_),
                "{what}: try_lock_for"
            );
            assert_err!(
                lock.reenter_with_lease(&owner, lease).await,
                Error::Config(_),
                "{what}: reenter_with_lease"
            );
        }
    }
    assert_eq!(settled_keys(&redis).await, keys);
    assert_eq!(redis.hgetall(name).await, hash);
    // The bounds themselves are leases.
    let shortest = rw
        .read()
        .reenter_with_lease(&owner, MIN_LEASE)
        .await
        .unwrap();
    assert_eq!(shortest.lease(), Some(MIN_LEASE));
    shortest.unlock().await.unwrap();
    held.unlock().await.unwrap();
    let shortest = rw.write().lock_with_lease(MIN_LEASE).await.unwrap();
    assert_eq!(shortest.lease(), Some(MIN_LEASE));
    within(ms(1000), "lost()", shortest.lost()).await;
    tokio::time::sleep(ms(20)).await;
    assert!(!redis.exists(name).await, "a 1 ms lease is over");
    assert_err!(
        shortest.unlock().await,
        Error::LockLost { .. },
        "after a 1 ms lease"
    );
    // The longest lease, on both sides: taken, and released.
    let mut problems = Vec::new();
    for (side, name) in [("read", "leases-max-r"), ("write", "leases-max-w")] {
        let rw = client.read_write_lock(name);
        let lock = if side == "read" {
            rw.read().into_any()
        } else {
            rw.write().into_any()
        };
        let got = within(
            ms(2000),
            "try_lock_for()",
            lock.try_lock_for(ms(200), Some(MAX_LEASE)),
        )
        .await;
        match got {
            Ok(Some(longest)) => {
                assert_eq!(longest.lease(), Some(MAX_LEASE));
                assert!(!longest.is_lost());
                let ttl = redis.pttl(name).await;
                assert!(ttl > 1_000_000_000_000, "{side}: a lease of {MAX_LEASE:?}, TTL {ttl}");
                longest.unlock().await.unwrap();
                assert_eq!(
                    settled_keys(&redis).await,
                    sorted(&[&token_key("leases"), &token_key(name)])
                );
            }
            other => problems.push(format!(
                "{side} side, a lease of MAX_LEASE ({} ms): {other:?}; left in Redis: {:?} = {:?}, TTL {} ms",
                MAX_LEASE.as_millis(),
                name,
                redis.hgetall(name).await,
                redis.pttl(name).await,
            )),
        }
        redis.del(name).await;
        redis.del(&token_key(name)).await;
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(settled_keys(&redis).await, only_token("leases"));
}

// ---------------------------------------------------------------------------
// Cancellation and dropped guards

/// Waits until the lock `name` is gone and the database holds only its
/// token counter and `tombstones` closed attempt keys (`0`: an abandoned
/// acquire, undone); panics with what is left otherwise.
async fn settles_with_tombstones(redis: &Redis, name: &str, tombstones: usize, what: &str) {
    let deadline = Instant::now() + ms(1000);
    loop {
        let (keys, attempts) = split_attempts(name, settled_keys(redis).await);
        if keys == only_token(name) && attempts.len() == tombstones {
            for key in &attempts {
                let value: Option<String> = redis.raw().get(key).await.unwrap();
                assert_eq!(value.as_deref(), Some("0"), "{what}: attempt key {key}");
                let ttl = redis.pttl(key).await;
                assert!(ttl > 0 && ttl <= 30_000, "{what}: {key} TTL {ttl}");
            }
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: left {keys:?} and attempt keys {attempts:?} (expected {tombstones})"
        );
        tokio::time::sleep(ms(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_pending_futures_hold_nothing() {
    let redis = Redis::start().await;
    let client = redis.unsynced_client().await;
    let other = redis.client().await;
    let name = "pending-rw";
    let rw = client.read_write_lock(name);
    let other_rw = other.read_write_lock(name);

    // Waiting behind a writer, on both sides, then giving up.
    let w = rw.write().lock().await.unwrap();
    let hash = redis.hgetall(name).await;
    for lock in [other_rw.read().into_any(), other_rw.write().into_any()] {
        let result = tokio::time::timeout(ms(100), lock.lock()).await;
        assert!(result.is_err(), "got a lock held by a writer");
    }
    assert_eq!(redis.hgetall(name).await, hash);
    w.unlock().await.unwrap();
    tokio::time::sleep(ms(300)).await;
    // A wait dropped between tries sends nothing more; one dropped while a
    // try was under way leaves that attempt closed.
    let (keys, attempts) = split_attempts(name, settled_keys(&redis).await);
    assert_eq!(keys, only_token(name), "a dropped wait holds");
    let mut tombstones = attempts.len();
    assert!(tombstones <= 2, "{attempts:?}");
    settles_with_tombstones(&redis, name, tombstones, "dropped waits").await;

    // Acquires abandoned while on their way: undone if they took effect,
    // and closed (`{name}:redlua_attempt:<owner>` = 0) so that a late copy
    // does nothing.
    for (side, lock) in [
        ("read", rw.read().into_any()),
        ("write", rw.write().into_any()),
    ] {
        // Loads the scripts, so that one poll sends the acquire itself.
        lock.lock().await.unwrap().unlock().await.unwrap();
        let mut took_effect = 0;
        // Dropped after a fixed delay, and last (`None`) once Redis shows
        // the acquire took effect, however loaded the machine is.
        for delay in DROP_DELAYS {
            match abandon_in_flight(&redis, name, lock.lock(), delay).await {
                InFlight::Finished(result) => {
                    result.unwrap().unlock().await.unwrap();
                    continue;
                }
                InFlight::Abandoned { took_effect: took } => took_effect += usize::from(took),
            }
            tombstones += 1;
            settles_with_tombstones(
                &redis,
                name,
                tombstones,
                &format!("an abandoned {side} acquire (delay {delay:?})"),
            )
            .await;
            assert!(!lock.is_locked().await.unwrap());
        }
        assert!(took_effect > 0, "no abandoned {side} acquire reached Redis");
        let guard = lock.lock().await.unwrap();
        assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 1, "{side}");
        guard.unlock().await.unwrap();
        settles_with_tombstones(&redis, name, tombstones, side).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_guards_are_released_in_the_background() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let other = redis.client().await;
    let name = "dropped-rw";
    let rw = client.read_write_lock(name);
    let other_rw = other.read_write_lock(name);

    // A dropped read guard lets a writer in.
    let r = rw.read().lock().await.unwrap();
    let r_owner = r.owner().clone();
    let writer = spawn_locker(&other_rw.write());
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished());
    let dropped = Instant::now();
    drop(r);
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let after = entered.duration_since(dropped);
    assert!(after < ms(1000), "released {after:?} after the drop");
    assert_eq!(rw.read().hold_count(&r_owner).await.unwrap(), 0);
    assert_err!(
        rw.read().reenter(&r_owner).await,
        Error::NotHeld { .. },
        "dropped reader"
    );

    // A dropped write guard lets a reader in.
    let reader = spawn_locker(&rw.read());
    tokio::time::sleep(ms(300)).await;
    assert!(!reader.is_finished());
    let dropped = Instant::now();
    drop(w);
    let (entered, r) = join_locker(reader, ms(5000)).await;
    let after = entered.duration_since(dropped);
    assert!(after < ms(1000), "released {after:?} after the drop");
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&r.owner().to_string(), "1")])
    );
    drop(r);
    assert_eq!(
        keys_become(&redis, &only_token(name), ms(1000)).await,
        only_token(name),
        "left behind"
    );

    // A guard that outlived its client and every handle is released too
    // when it is dropped.
    for side in ["read", "write"] {
        let lone = {
            let client = redis.client().await;
            let rw = client.read_write_lock(name);
            let lock = if side == "read" {
                rw.read().into_any()
            } else {
                rw.write().into_any()
            };
            lock.lock().await.unwrap()
        };
        assert!(redis.exists(name).await);
        drop(lone);
        assert_eq!(
            keys_become(&redis, &only_token(name), ms(1000)).await,
            only_token(name),
            "a dropped {side} guard whose client is gone is still held"
        );
    }
}

// ---------------------------------------------------------------------------
// Interoperability with Redisson (its own scripts, run through EVAL as a
// Java service would)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_readers_and_redlua_readers_and_writers() {
    let redis = Redis::start().await;
    let readers = redis.client().await;
    let writers = redis.client().await;
    let name = "interop-rw";
    let java = format!("{}:1", uuid::Uuid::new_v4());
    // The Java side's subscription, as Redisson makes it.
    let mut java_channel = redis.listen(&channel(name)).await;

    // A Java reader holds; a redlua reader enters too.
    assert_eq!(java_read_acquire(&redis, name, 30_000, &java).await, None);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&java, "1")])
    );
    assert!(redis.exists(&timeout_key(name, &java, 1)).await);
    let read = readers.read_write_lock(name).read();
    let r = within(ms(1000), "redlua read lock()", read.lock())
        .await
        .unwrap();
    let a = r.owner().to_string();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&java, "1"), (&a, "1")])
    );
    // A redlua writer waits for both.
    let writer = spawn_locker(&writers.read_write_lock(name).write());
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished(), "a writer got in beside readers");

    // Java's release while redlua reads: Redisson's TTL scan finds redlua's
    // timeout key and keeps the lock for it.
    assert_eq!(java_read_release(&redis, name, &java).await, Some(0));
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&a, "1")])
    );
    let ttl = redis.pttl(name).await;
    assert!(ttl > 29_000, "Redisson's release cut redlua's lease: {ttl}");
    // Java reads again; redlua's release keeps the lock for Java's hold.
    assert_eq!(java_read_acquire(&redis, name, 30_000, &java).await, None);
    r.unlock().await.unwrap();
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&java, "1")])
    );
    assert!(redis.pttl(name).await > 29_000);
    tokio::time::sleep(ms(200)).await;
    assert!(
        !writer.is_finished(),
        "a writer got in beside a Java reader"
    );
    assert!(
        java_channel.drain().is_empty(),
        "a partial release published"
    );

    // Java's last release publishes; the redlua writer gets in.
    let released = Instant::now();
    assert_eq!(java_read_release(&redis, name, &java).await, Some(1));
    let (entered, w) = join_locker(writer, ms(5000)).await;
    let w_owner = w.owner().to_string();
    let after = entered.duration_since(released);
    assert!(
        after < ms(200),
        "the writer entered {after:?} after Java's release"
    );
    let (message, _) = java_channel.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "0");
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&format!("{w_owner}:write"), "1")])
    );

    // Java is shut out on both sides while redlua writes.
    let pttl = java_read_acquire(&redis, name, 30_000, &java).await;
    assert!(
        matches!(pttl, Some(t) if t > 29_000 && t <= 30_000),
        "{pttl:?}"
    );
    let pttl = java_write_acquire(&redis, name, 30_000, &java).await;
    assert!(
        matches!(pttl, Some(t) if t > 29_000 && t <= 30_000),
        "{pttl:?}"
    );
    assert_eq!(java_write_release(&redis, name, &java).await, None);
    assert!(java_channel.drain().is_empty());

    // redlua's write release reaches the Java side's subscription.
    w.unlock().await.unwrap();
    let (message, _) = java_channel
        .next_within(ms(1000))
        .await
        .expect("Redisson's subscription got the release");
    assert_eq!(message, "1");
    assert_eq!(java_read_acquire(&redis, name, 30_000, &java).await, None);
    assert_eq!(java_read_release(&redis, name, &java).await, Some(1));
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_writer_excludes_redlua_and_its_release_wakes_redlua_readers() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let name = "interop-w";
    let java = format!("{}:1", uuid::Uuid::new_v4());
    let java_field = format!("{java}:write");

    assert_eq!(java_write_acquire(&redis, name, 30_000, &java).await, None);
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "write"), (&java_field, "1")])
    );
    let rw = client.read_write_lock(name);
    assert!(rw.read().try_lock().await.unwrap().is_none());
    assert!(rw.write().try_lock().await.unwrap().is_none());
    assert!(rw.write().is_locked().await.unwrap());
    let readers: Vec<_> = (0..3).map(|_| spawn_locker(&rw.read())).collect();
    tokio::time::sleep(ms(300)).await;
    assert!(readers.iter().all(|r| !r.is_finished()));
    // Java's write release (READ_UNLOCK_MESSAGE) wakes every redlua reader.
    let released = Instant::now();
    assert_eq!(java_write_release(&redis, name, &java).await, Some(1));
    let mut guards = Vec::new();
    for reader in readers {
        let (entered, guard) = join_locker(reader, ms(5000)).await;
        let after = entered.duration_since(released);
        assert!(
            after < ms(200),
            "a reader entered {after:?} after Java's release"
        );
        guards.push(guard);
    }
    assert_eq!(redis.hgetall(name).await.len(), 4, "mode and three readers");
    // Java reads along with redlua's readers.
    assert_eq!(java_read_acquire(&redis, name, 30_000, &java).await, None);
    for guard in guards {
        guard.unlock().await.unwrap();
    }
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&java, "1")])
    );
    assert_eq!(java_read_release(&redis, name, &java).await, Some(1));
    assert_eq!(settled_keys(&redis).await, only_token(name));
}

// ---------------------------------------------------------------------------
// Release scripts, waits and leases

/// Runs one of our release scripts with EVAL (so that the same latch can be
/// used twice, as a release retried after a lost reply does).
async fn eval(redis: &Redis, script: &str, keys: &[&str], args: &[&str]) -> Option<i64> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
    cmd.query_async(&mut redis.raw()).await.unwrap()
}

/// A release retried with the same latch (after a lost reply) returns the
/// first result and releases once — called as the scripts' header comments
/// say (mode `release`, no late copy of the acquire to stop).
#[tokio::test]
async fn retried_read_and_write_releases_return_the_first_result() {
    const READ_RELEASE: &str = include_str!("../scripts/rwlock_read_release.lua");
    const WRITE_RELEASE: &str = include_str!("../scripts/rwlock_write_release.lua");
    let redis = Redis::start().await;
    let client = redis.client().await;

    // The release of a re-entered read hold.
    let name = "doc:latch";
    let first = client.read_write_lock(name).read().lock().await.unwrap();
    let second = first.reenter().await.unwrap();
    let owner = first.owner().to_string();
    let record = reentry_record(name, &owner, &settled_keys(&redis).await);
    let latch = format!("redisson_unlock_latch:{{{name}}}:retried-read");
    let keys = [
        name.to_string(),
        channel(name),
        timeouts(name, &owner),
        format!("{{{name}}}"),
        latch.clone(),
        attempt_key(name, &owner),
        record.clone(),
    ];
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let args = ["1", &owner, "10000", "release", "30000", "1", "0"];
    assert_eq!(eval(&redis, READ_RELEASE, &keys, &args).await, Some(0));
    assert_eq!(
        eval(&redis, READ_RELEASE, &keys, &args).await,
        Some(0),
        "retried: first result"
    );
    assert_eq!(
        redis.hgetall(name).await,
        map(&[("mode", "read"), (&owner, "1")]),
        "released once"
    );
    assert!(redis.exists(&timeout_key(name, &owner, 1)).await);
    assert!(!redis.exists(&timeout_key(name, &owner, 2)).await);
    assert!(!redis.exists(&record).await, "the re-entry's record stayed");
    let kept: String = redis.raw().get(&latch).await.unwrap();
    assert_eq!(kept, "0");
    // The script released the re-entered hold: its guard must not release
    // it again.
    std::mem::forget(second);
    first.unlock().await.unwrap();
    assert!(!redis.exists(name).await);

    // The release of a write hold: it frees the lock and publishes once.
    let name = "doc:w";
    let held = client.read_write_lock(name).write().lock().await.unwrap();
    let owner = held.owner().to_string();
    let field = format!("{owner}:write");
    let mut listener = redis.listen(&channel(name)).await;
    let latch = format!("redisson_unlock_latch:{{{name}}}:retried-write");
    let first_attempt = attempt_key(name, &owner);
    let keys = [name, &channel(name), &latch, &first_attempt, &first_attempt];
    let keys: Vec<&str> = keys.iter().map(|s| &**s).collect();
    let args = ["1", "30000", &field, "10000", "release", "30000", "0", "0"];
    assert_eq!(eval(&redis, WRITE_RELEASE, &keys, &args).await, Some(1));
    assert_eq!(
        eval(&redis, WRITE_RELEASE, &keys, &args).await,
        Some(1),
        "retried: first result"
    );
    assert!(!redis.exists(name).await);
    let (message, _) = listener.next_within(ms(1000)).await.expect("published");
    assert_eq!(message, "1");
    assert!(
        listener.next_within(ms(200)).await.is_none(),
        "the retry published again"
    );
    // The guard's own release (another request) finds nothing to release.
    assert_err!(
        held.unlock().await,
        Error::LockLost { .. },
        "released by the script"
    );
    // The script's latches stay for retries (10 s); the guards' own are
    // deleted by the client.
    let expected = sorted(&[
        &token_key("doc:latch"),
        &token_key(name),
        "redisson_unlock_latch:{doc:latch}:retried-read",
        &latch,
    ]);
    assert_eq!(keys_become(&redis, &expected, ms(1000)).await, expected);
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

#[tokio::test]
async fn read_reentry_resets_the_lease() {
    let redis = Redis::start().await;
    let client = redis.client().await;
    let read = client.read_write_lock("doc:ttl").read();
    let first = read.lock_with_lease(Duration::from_secs(2)).await.unwrap();
    let owner = first.owner().to_string();
    let valid_until = first.valid_until();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(redis.pttl("doc:ttl").await <= 1_300);
    // Re-entry through the guard keeps its kind of lease: the same 2 s.
    let second = first.reenter().await.unwrap();
    assert_eq!(second.lease(), Some(Duration::from_secs(2)));
    assert!(
        redis.pttl("doc:ttl").await > 1_800,
        "re-entry starts the lease again"
    );
    assert!(redis.pttl(&timeout_key("doc:ttl", &owner, 2)).await > 1_800);
    // Both guards of the owner see the renewed lease.
    assert!(first.valid_until() > valid_until + ms(700));
    assert_eq!(first.valid_until(), second.valid_until());
    second.unlock().await.unwrap();
    first.unlock().await.unwrap();
    assert!(!redis.exists("doc:ttl").await);
    assert_eq!(settled_keys(&redis).await, only_token("doc:ttl"));
}
