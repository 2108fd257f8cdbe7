//! Releases: a force release breaking only its own side, and retried releases.

use super::{join_locker, keys_become, map, reentry_record, settled_keys, sorted, spawn_locker};
use crate::common::{Redis, ms};
use crate::redisson::{attempt_key, rwlock_channel as channel, timeout_key, timeouts, token_key};
use redis::AsyncCommands;
use redlua_runtime::Error;
use tokio::time::Instant;

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
    const READ_RELEASE: &str = include_str!("../../scripts/rwlock_read_release.lua");
    const WRITE_RELEASE: &str = include_str!("../../scripts/rwlock_write_release.lua");
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
