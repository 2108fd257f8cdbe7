//! Releases that go wrong: by a non-owner, after the lease, with a lost or late reply, retried.

use super::{keys_become, map};
use crate::common::{Redis, ms, within};
use crate::redisson::{
    attempt_key, eval_redisson_release, latch, lock_channel as channel, token_key,
};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient};
use redlua_test_support::FaultProxy;
use std::time::Duration;
use tokio::time::Instant;

/// redlua's own release script, run by hand to retry a release.
const REDLUA_RELEASE: &str = include_str!("../../scripts/lock_release.lua");

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
