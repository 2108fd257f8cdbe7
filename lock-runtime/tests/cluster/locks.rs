//! Locks on every primary: re-entry, tokens, contention, renewals in slot batches, holds lost.

use super::{
    PRIMARIES, TOPOLOGY, client, client_with_watchdog, exists_anywhere, hgetall, ms, node,
    owner_of, primaries, within,
};
use redis::AsyncCommands;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_on_every_primary_with_braces_reentry_and_tokens() {
    let _topology = TOPOLOGY.read().await;
    let client = client().await;
    // Names until every primary owns one, and names with hash tags.
    let mut names: Vec<String> = Vec::new();
    let mut covered = BTreeSet::new();
    for i in 0..1000 {
        let name = format!("every-{i}");
        if covered.insert(owner_of(&name).await) {
            names.push(name);
        }
        if covered.len() == PRIMARIES {
            break;
        }
    }
    names.extend(["user{7}:cart".to_string(), "{orders}:42".to_string()]);
    let mut nodes_used = Vec::new();
    for name in &names {
        let owner_node = owner_of(name).await;
        nodes_used.push(owner_node);
        let lock = client.lock(name);
        let guard = lock.lock().await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let owner = guard.owner().to_string();
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(owner.clone(), "1".to_string())]),
            "{name}: the hash on the node that owns its slot"
        );
        let again = guard.reenter().await.unwrap();
        assert_eq!(
            again.token(),
            guard.token(),
            "{name}: a re-entry keeps the token"
        );
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(owner.clone(), "2".to_string())])
        );
        assert_eq!(lock.hold_count(guard.owner()).await.unwrap(), 2);
        again.unlock().await.unwrap();
        let first_token = guard.token();
        guard.unlock().await.unwrap();
        assert!(!exists_anywhere(name).await, "{name}: released");
        // The next holder's token is higher.
        let next = lock.try_lock().await.unwrap().expect("free again");
        assert!(next.token() > first_token, "{name}: tokens increase");
        next.unlock().await.unwrap();
    }
    nodes_used.sort_unstable();
    nodes_used.dedup();
    assert_eq!(nodes_used, primaries().await, "locks on every primary");
    // A name whose braces would split its keys is refused, typed.
    let err = client.lock("{}x").lock().await.unwrap_err();
    assert!(
        matches!(err, redlua_runtime::Error::InvalidName { .. }),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_across_clients_never_overlaps_and_tokens_increase() {
    let _topology = TOPOLOGY.read().await;
    const CLIENTS: usize = 3;
    const TASKS: usize = 4;
    const ROUNDS: usize = 5;
    let name = "{contended}:lock";
    let counter = "{contended}:counter";
    let owner_node = owner_of(name).await;
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let last_token = Arc::new(AtomicU64::new(0));
    let regressions = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = client().await;
        for _ in 0..TASKS {
            let lock = client.lock(name);
            let mut con = node(owner_node).await;
            let (inside, overlaps, last_token, regressions) = (
                inside.clone(),
                overlaps.clone(),
                last_token.clone(),
                regressions.clone(),
            );
            tasks.push(tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    let guard = lock.lock().await.expect("lock()");
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    if last_token.fetch_max(guard.token(), Ordering::SeqCst) >= guard.token() {
                        regressions.fetch_add(1, Ordering::SeqCst);
                    }
                    let n: Option<u64> = con.get(counter).await.unwrap();
                    tokio::time::sleep(ms(1)).await;
                    let _: () = con.set(counter, n.unwrap_or(0) + 1).await.unwrap();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.unlock().await.expect("unlock()");
                }
            }));
        }
    }
    within(Duration::from_secs(30), "all workers", async {
        for task in tasks {
            task.await.expect("worker");
        }
    })
    .await;
    let total: u64 = node(owner_node).await.get(counter).await.unwrap();
    assert_eq!(total, (CLIENTS * TASKS * ROUNDS) as u64, "lost updates");
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two holders at once");
    assert_eq!(regressions.load(Ordering::SeqCst), 0, "a token went down");
    assert!(!exists_anywhere(name).await, "the lock is left held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_renews_locks_of_many_slots_in_slot_batches() {
    let _topology = TOPOLOGY.read().await;
    let lease = ms(600);
    let client = client_with_watchdog(lease).await;
    // 150 locks in one slot (two batches), and one on every other slot
    // group of a few names spread over the primaries.
    let mut names: Vec<String> = (0..150).map(|i| format!("{{batch}}:{i}")).collect();
    names.extend((0..9).map(|i| format!("spread-{i}")));
    let mut guards = Vec::new();
    for name in &names {
        guards.push(client.lock(name).lock().await.unwrap());
    }
    // Three leases: only renewals keep them.
    tokio::time::sleep(lease * 3).await;
    for (name, guard) in names.iter().zip(&guards) {
        assert!(!guard.is_lost(), "{name}: lost");
        let owner_node = owner_of(name).await;
        assert_eq!(
            hgetall(owner_node, name).await,
            HashMap::from([(guard.owner().to_string(), "1".to_string())]),
            "{name}"
        );
        let pttl: i64 = node(owner_node).await.pttl(name).await.unwrap();
        assert!(0 < pttl && pttl <= 600, "{name}: pttl {pttl}");
    }
    for guard in guards {
        guard.unlock().await.unwrap();
    }
    for name in &names {
        assert!(!exists_anywhere(name).await, "{name}");
    }
}

/// A hold taken away while held is noticed at once on a cluster too, on
/// every primary: deleted on its node without a message, and force
/// unlocked by another client (the message goes by sharded pub/sub). The
/// watchdog timeout is 30 s: only the loss watch can say lost within 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_taken_away_is_noticed_at_once_on_every_primary() {
    let _topology = TOPOLOGY.read().await;
    let (holder, breaker) = (client().await, client().await);
    let mut names: Vec<String> = Vec::new();
    let mut covered = BTreeSet::new();
    for i in 0..1000 {
        let name = format!("taken-{i}");
        if covered.insert(owner_of(&name).await) {
            names.push(name);
        }
        if covered.len() == PRIMARIES {
            break;
        }
    }
    for name in &names {
        let owner = owner_of(name).await;
        // Deleted on its node, no message.
        let guard = holder.lock(name).lock().await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!guard.is_lost());
        let deleted: i64 = node(owner).await.del(name).await.unwrap();
        assert_eq!(deleted, 1);
        let started = Instant::now();
        within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
        eprintln!(
            "{name} (node {owner}): lost {:?} after a DEL",
            started.elapsed()
        );
        // Force unlocked by another client.
        let guard = holder.read_write_lock(name).write().lock().await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!guard.is_lost());
        assert!(
            breaker
                .read_write_lock(name)
                .write()
                .force_unlock()
                .await
                .unwrap()
        );
        let started = Instant::now();
        within(
            Duration::from_secs(1),
            "lost after force_unlock",
            guard.lost(),
        )
        .await;
        eprintln!(
            "{name} (node {owner}): lost {:?} after force_unlock",
            started.elapsed()
        );
    }
}
