//! Holds through a failover: noticed when taken away, synced or replicated holds move with it.

use super::{
    SERIAL, acquired, client, client_syncing, deployment, master, server, stored, waiter, within,
};
use redis::AsyncCommands;
use redlua_runtime::{LockClient, LockGuard, SyncReplicas};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// A client through the sentinels that does not wait for replicas.
async fn unsynced_client(watchdog: Duration) -> LockClient {
    client_syncing(watchdog, SyncReplicas::Off).await
}

/// Waits until the master's writes reached the replica.
async fn replicated() {
    let mut con = server(master().await).await;
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(acked, 1, "the replica acknowledged the writes");
}

/// Waits (at most `limit`) until `name`'s PTTL on server `i` climbs (by
/// more than 300 ms) above the lowest it was seen at from now on: the
/// watchdog renewed it there. Returns the PTTL then.
async fn renewed_on(i: usize, name: &str, limit: Duration) -> i64 {
    let deadline = Instant::now() + limit;
    let (_, mut lowest) = stored(i, name).await;
    assert!(lowest > 0, "`{name}` is on server {i} (PTTL {lowest} ms)");
    loop {
        let (_, pttl) = stored(i, name).await;
        assert!(pttl > 0, "`{name}` expired on server {i}");
        if pttl > lowest + 300 {
            return pttl;
        }
        lowest = lowest.min(pttl);
        assert!(
            Instant::now() < deadline,
            "`{name}` not renewed on server {i} within {limit:?} (PTTL {pttl} ms)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// After a failover: a waiter through the new master is woken within a
/// second of `guard`'s release, and gets a fencing token above `token`
/// (tokens went on increasing across the failover).
async fn released_to_a_waiter(other: &LockClient, name: &str, guard: LockGuard, token: u64) {
    let waiting = waiter(other, name, Duration::from_secs(20));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (got, _) = within(Duration::from_secs(25), "the waiter", waiting)
        .await
        .unwrap();
    let next = got
        .unwrap()
        .expect("the waiter gets the lock after the failover");
    assert!(
        released.elapsed() < Duration::from_secs(1),
        "woken {:?} after the release",
        released.elapsed()
    );
    assert!(next.token() > token, "{} after {token}", next.token());
    next.unlock().await.unwrap();
}

/// A hold taken away on the master (a `DEL`, no message) is noticed at
/// once, and so it is after a failover, on the new master. The watchdog
/// timeout is 30 s: only the loss watch can say lost within 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_taken_away_is_noticed_at_once_also_after_a_failover() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    let holder = unsynced_client(Duration::from_secs(30)).await;
    let old = master().await;
    let guard = holder.lock("sentinel:taken").lock().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!guard.is_lost());
    let deleted: i64 = server(old).await.del("sentinel:taken").await.unwrap();
    assert_eq!(deleted, 1);
    let started = Instant::now();
    within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
    eprintln!("lost {:?} after a DEL on the master", started.elapsed());

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_ne!(new, old);
    // The client follows the sentinels (they are asked every 500 ms).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let guard = holder.lock("sentinel:taken").lock().await.unwrap();
    let (fields, _) = stored(new, "sentinel:taken").await;
    assert_eq!(fields, [guard.owner().to_string()]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!guard.is_lost());
    let deleted: i64 = server(new).await.del("sentinel:taken").await.unwrap();
    assert_eq!(deleted, 1);
    let started = Instant::now();
    within(Duration::from_secs(1), "lost after a DEL", guard.lost()).await;
    eprintln!("lost {:?} after a DEL on the new master", started.elapsed());
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_synced_mode_a_replicated_hold_follows_a_sentinel_failover() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 2 s.
    let watchdog = Duration::from_secs(6);
    let holder = unsynced_client(watchdog).await;
    let other = unsynced_client(watchdog).await;
    let old = master().await;

    let guard = holder.lock("sentinel:failover").lock().await.unwrap();
    let token = guard.token();
    replicated().await;
    // A waiter caught in the failover gives up at its deadline.
    let caught = waiter(&other, "sentinel:failover", Duration::from_secs(3));

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_ne!(new, old);

    let (got, waited) = within(Duration::from_secs(10), "the caught waiter", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None)),
        "the lock is held: the waiter times out ({:?})",
        got.map(|g| g.is_some())
    );
    assert!(
        waited < Duration::from_secs(5),
        "it gave up after {waited:?}"
    );

    // The old master is still a master, and the client's connections to
    // it still work: the client leaves it because the sentinels name
    // another. The hold is on the new master, and renewed there.
    let (fields, _) = stored(new, "sentinel:failover").await;
    assert_eq!(fields, [guard.owner().to_string()]);
    renewed_on(new, "sentinel:failover", Duration::from_secs(4)).await;
    assert!(!guard.is_lost());

    released_to_a_waiter(&other, "sentinel:failover", guard, token).await;
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query_async(&mut server(old).await)
        .await
        .unwrap();
    assert_eq!(
        redis::from_redis_value::<String>(role[0].clone()).unwrap(),
        "master",
        "the old master was demoted before the checks ended: they proved nothing"
    );
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_master_is_replaced_and_a_synced_hold_moves_with_it() {
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 5 s: the failover (1 s to notice, a few to elect)
    // ends well within the lease.
    let watchdog = Duration::from_secs(15);
    let holder = client(watchdog).await;
    let other = client(watchdog).await;
    let old = master().await;

    // Synced mode: the acquire returns once the replica has the hold; the
    // test does not wait for it.
    let guard = acquired(holder.lock("sentinel:hung").lock().await).await;
    let token = guard.token();

    deployment.servers()[old].pause();
    let paused = Instant::now();
    // Waiters during the outage give up at their deadline.
    let caught = waiter(&other, "sentinel:hung", Duration::from_secs(2));
    let (got, waited) = within(Duration::from_secs(8), "a waiter during the outage", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None) | Err(_)),
        "nothing is granted while the lock is held"
    );
    assert!(
        waited < Duration::from_secs(4),
        "it gave up after {waited:?}"
    );

    let new = tokio::task::spawn_blocking(move || deployment.wait_new_master(old))
        .await
        .expect("a new master");
    assert_ne!(new, old);
    let failed_over = paused.elapsed();

    // The watchdog's next renewal lands on the new master.
    let pttl = renewed_on(new, "sentinel:hung", Duration::from_secs(7)).await;
    assert!(
        !guard.is_lost(),
        "the hold survived a failover of {failed_over:?} (PTTL now {pttl} ms)"
    );
    let (fields, _) = stored(new, "sentinel:hung").await;
    assert_eq!(fields, [guard.owner().to_string()]);

    // The old master comes back, and is made a replica of the new one.
    deployment.servers()[old].resume();
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
    assert_eq!(master().await, new);

    guard.unlock().await.unwrap();
    let next = other.lock("sentinel:hung").lock().await.unwrap();
    assert!(next.token() > token, "{} after {token}", next.token());
    next.unlock().await.unwrap();
}

/// A client that tries `name` (never waiting) every 25 ms until stopped,
/// and counts the times it was granted the lock (each released at once).
struct Observer {
    stop: Arc<AtomicBool>,
    granted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<usize>,
}

impl Observer {
    fn start(client: LockClient, name: &'static str) -> Observer {
        let stop = Arc::new(AtomicBool::new(false));
        let granted = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (stop.clone(), granted.clone());
        let task = tokio::spawn(async move {
            let mut tries = 0;
            while !flag.load(Ordering::SeqCst) {
                tries += 1;
                // Errors (the master changing under it) are tries too.
                if let Ok(Some(guard)) = client.lock(name).try_lock().await {
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = guard.unlock().await;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            tries
        });
        Observer {
            stop,
            granted,
            task,
        }
    }

    /// Stops it: how many tries it made, and how many were granted.
    async fn stop(self) -> (usize, usize) {
        self.stop.store(true, Ordering::SeqCst);
        let tries = within(Duration::from_secs(5), "the observer", self.task)
            .await
            .unwrap();
        (tries, self.granted.load(Ordering::SeqCst))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_hold_survives_a_sentinel_failover_without_any_help() {
    const NAME: &str = "sentinel:synced";
    let _serial = SERIAL.lock().await;
    let deployment = deployment().await;
    // Renewals every 2 s.
    let watchdog = Duration::from_secs(6);
    let holder = client(watchdog).await;
    let other = client(watchdog).await;
    let old = master().await;
    let replica = 1 - old;

    let guard = acquired(holder.lock(NAME).lock().await).await;
    let token = guard.token();
    // No WAIT of the test's own: the acquire returned once the replica
    // had the hold.
    let (fields, pttl) = stored(replica, NAME).await;
    assert_eq!(fields, [guard.owner().to_string()]);
    assert!(pttl > 0);
    // An observer that does not wait for replicas (it would take a lock
    // the new master did not have) tries all along; a waiter caught in the
    // failover gives up at its deadline.
    let observer = Observer::start(unsynced_client(watchdog).await, NAME);
    let caught = waiter(&other, NAME, Duration::from_secs(3));
    let before = guard.valid_until();

    let new = tokio::task::spawn_blocking(move || deployment.failover())
        .await
        .expect("the failover");
    assert_eq!(new, replica);

    let (got, waited) = within(Duration::from_secs(10), "the caught waiter", caught)
        .await
        .unwrap();
    assert!(
        matches!(got, Ok(None)),
        "the lock is held: the waiter times out ({:?})",
        got.map(|g| g.is_some())
    );
    assert!(
        waited < Duration::from_secs(5),
        "it gave up after {waited:?}"
    );

    // The watchdog renews the hold on the new master (which has no
    // replica now: the old master is not one yet), and the guard's lease
    // clock moves with it.
    renewed_on(new, NAME, Duration::from_secs(4)).await;
    let moved = Instant::now() + Duration::from_secs(2);
    while guard.valid_until() <= before + Duration::from_secs(1) {
        assert!(
            Instant::now() < moved,
            "the lease clock did not move after the renewal on the new master"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!guard.is_lost());
    assert!(guard.valid_until() > std::time::Instant::now());
    // The observer was never granted the lock while the guard's lease
    // clock said it was held (all along, as it still does).
    let (tries, granted) = observer.stop().await;
    assert!(tries > 20, "the observer tried {tries} times");
    assert_eq!(granted, 0, "another client was granted the held lock");

    released_to_a_waiter(&other, NAME, guard, token).await;
    tokio::task::spawn_blocking(move || deployment.rejoin(old))
        .await
        .expect("the deployment settles");
}
