//! Exclusion across clients and tasks, and explicit re-entry (hold counts, owners, leases).

use super::{holders, keys_become, map};
use crate::common::{Redis, ms, within};
use crate::redisson::{lock_channel as channel, token_key};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockKind, Side};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// How long a fencing token counter lives after an acquire with the default
/// 30 s lease: the lease plus one hour.
const TOKEN_TTL_MS: i64 = 30_000 + 3_600_000;

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
