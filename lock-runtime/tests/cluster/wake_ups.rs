//! Wake-ups by sharded pub/sub on the owning node, for each primitive and the blocking client.

use super::{
    NODES, TOPOLOGY, client, cluster, eventually, exists_anywhere, hgetall, ms, node, owner_of,
    spawn_waiter, subscribers, unsynced_client, within,
};
use redis::AsyncCommands;
use redlua_runtime::LockClient;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wake_ups_arrive_through_sharded_pubsub_on_the_owning_node() {
    let _topology = TOPOLOGY.read().await;
    let holder = client().await;
    let waiting = client().await;
    let name = "wake-sharded";
    let channel = "redisson_lock__channel:{wake-sharded}";
    let owner_node = owner_of(name).await;
    let guard = holder.lock(name).lock().await.unwrap();
    let waiter = spawn_waiter(&waiting, name);
    eventually(ms(3000), "the waiter subscribes", || async {
        subscribers(owner_node, channel).await == (1, 0)
    })
    .await;
    for other in (0..NODES).filter(|i| *i != owner_node) {
        assert_eq!(subscribers(other, channel).await, (0, 0), "node {other}");
    }
    tokio::time::sleep(ms(200)).await;
    assert!(!waiter.is_finished(), "the waiter got a held lock");
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let (acquired, guard) = within(ms(5000), "the waiter", waiter).await.unwrap();
    let after = acquired.duration_since(released);
    assert!(
        after < ms(500),
        "woke {after:?} after the release (30 s lease)"
    );
    assert_eq!(
        hgetall(owner_node, name).await,
        HashMap::from([(guard.owner().to_string(), "1".to_string())])
    );
    guard.unlock().await.unwrap();
    eventually(ms(3000), "the waiter unsubscribes", || async {
        subscribers(owner_node, channel).await == (0, 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_lock_waiters_queue_and_wake_in_order_through_sharded_pubsub() {
    let _topology = TOPOLOGY.read().await;
    let holder = client().await;
    // Waiters that never wait for replicas (the cluster's primaries have
    // one each: synced waiters take no handoff).
    let lease = Duration::from_secs(30);
    let (first, second) = (unsynced_client(lease).await, unsynced_client(lease).await);
    let name = "fair-sharded";
    let owner_node = owner_of(name).await;
    let guard = holder.fair_lock(name).lock().await.unwrap();
    let queue = || async move {
        let queue: Vec<String> = node(owner_node)
            .await
            .lrange("redisson_lock_queue:{fair-sharded}", 0, -1)
            .await
            .unwrap();
        queue
    };
    let spawn = |client: &LockClient| {
        let lock = client.fair_lock(name);
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the waiter's lock()");
            let at = Instant::now();
            guard.unlock().await.expect("unlock");
            at
        })
    };
    let a = spawn(&first);
    eventually(ms(3000), "the first waiter queues", || async {
        queue().await.len() == 1
    })
    .await;
    let b = spawn(&second);
    eventually(ms(3000), "the second waiter queues", || async {
        queue().await.len() == 2
    })
    .await;
    let queued = queue().await;
    // Each waiter has its own channel, subscribed (sharded) on the node
    // that owns the lock's slot.
    for owner in &queued {
        let channel = format!("redisson_lock__channel:{{fair-sharded}}:{owner}");
        eventually(ms(3000), "the waiter subscribes", || {
            let channel = channel.clone();
            async move { subscribers(owner_node, &channel).await == (1, 0) }
        })
        .await;
    }
    // Both offered to take a direct handoff (the release then hands the
    // lock to the first, and tells it with SPUBLISH on its channel).
    let offers = hgetall(owner_node, "{fair-sharded}:redlua_handoff").await;
    assert_eq!(
        offers.keys().collect::<std::collections::BTreeSet<_>>(),
        queued.iter().collect(),
        "{offers:?}"
    );
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let a_at = within(ms(5000), "the first waiter", a).await.unwrap();
    let b_at = within(ms(5000), "the second waiter", b).await.unwrap();
    assert!(a_at < b_at, "served in the order they queued");
    assert!(
        b_at.duration_since(released) < ms(1000),
        "woken, not polling (30 s lease)"
    );
    assert!(queue().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_locks_exclude_and_wake_on_a_cluster() {
    let _topology = TOPOLOGY.read().await;
    let a = client().await;
    let b = client().await;
    let name = "{rw}:doc";
    let owner_node = owner_of(name).await;
    let read_a = a.read_write_lock(name).read().lock().await.unwrap();
    let read_b = b.read_write_lock(name).read().lock().await.unwrap();
    let hash = hgetall(owner_node, name).await;
    assert_eq!(hash.get("mode").map(String::as_str), Some("read"));
    assert_eq!(hash.len(), 3, "mode and two readers: {hash:?}");
    let writer = {
        let lock = b.read_write_lock(name).write();
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the writer's lock()");
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(ms(300)).await;
    assert!(!writer.is_finished(), "the writer got in beside readers");
    read_a.unlock().await.unwrap();
    tokio::time::sleep(ms(200)).await;
    assert!(!writer.is_finished(), "the writer got in beside a reader");
    let released = Instant::now();
    read_b.unlock().await.unwrap();
    let (acquired, write) = within(ms(5000), "the writer", writer).await.unwrap();
    let after = acquired.duration_since(released);
    assert!(
        after < ms(500),
        "the writer woke {after:?} after the last reader left"
    );
    let hash = hgetall(owner_node, name).await;
    assert_eq!(hash.get("mode").map(String::as_str), Some("write"));
    assert_eq!(
        hash.get(&format!("{}:write", write.owner()))
            .map(String::as_str),
        Some("1")
    );
    // A reader waits for the writer, and wakes on its release.
    let reader = {
        let lock = a.read_write_lock(name).read();
        tokio::spawn(async move {
            let guard = lock.lock().await.expect("the reader's lock()");
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(ms(300)).await;
    assert!(!reader.is_finished(), "a reader got in beside the writer");
    let released = Instant::now();
    write.unlock().await.unwrap();
    let (acquired, read) = within(ms(5000), "the reader", reader).await.unwrap();
    assert!(acquired.duration_since(released) < ms(500));
    read.unlock().await.unwrap();
    assert!(!exists_anywhere(name).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_client_locks_and_wakes_on_a_cluster() {
    let _topology = TOPOLOGY.read().await;
    let urls = cluster().await.urls();
    let names = ["blocking-a", "{blocking}:b", "blocking-c"];
    let mut owners = Vec::new();
    for name in names {
        owners.push(owner_of(name).await);
    }
    tokio::task::spawn_blocking(move || {
        use redlua_runtime::blocking;
        let holder = blocking::LockClient::cluster_builder(urls.clone())
            .watchdog_timeout(ms(900))
            .connect()
            .expect("a blocking cluster client");
        let other = blocking::LockClient::cluster(urls).expect("a blocking cluster client");
        for name in names {
            let guard = holder.lock(name).lock().unwrap();
            assert!(other.lock(name).try_lock().unwrap().is_none());
            // A waiter on another thread is woken by the release.
            let lock = other.lock(name);
            let waiter = std::thread::spawn(move || {
                let started = Instant::now();
                let guard = lock.try_lock_for(Duration::from_secs(20), None).unwrap();
                (guard.map(|g| g.unlock()), started.elapsed())
            });
            // Past a lease period: renewed on the cluster by the client's thread.
            std::thread::sleep(ms(1_200));
            assert!(!guard.is_lost());
            guard.unlock().unwrap();
            let (unlocked, waited) = waiter.join().unwrap();
            assert!(matches!(unlocked, Some(Ok(()))), "{name}");
            assert!(waited < Duration::from_secs(5), "{name}: {waited:?}");
        }
    })
    .await
    .unwrap();
    // The names were spread over more than one primary.
    let mut distinct = owners.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 1, "{owners:?}");
}

/// Semaphores and count-down latches on the cluster: every key and channel
/// of one primitive in its name's slot, waiters woken through sharded
/// pub/sub on the node that owns it (a waiter polls every 5 s: each wake-up
/// here comes within a second), and a leased permit taken away noticed by
/// its holder at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphores_and_latches_live_in_their_slot_and_wake_their_waiters_there() {
    let _topology = TOPOLOGY.read().await;
    let a = client().await;
    let b = client().await;
    for name in ["sem-a", "sem-b", "sem-c", "tenant{7}:sem"] {
        let sem = a.semaphore(name);
        assert!(sem.try_set_permits(1).await.unwrap());
        assert!(sem.try_acquire(1).await.unwrap());
        let waiter = tokio::spawn({
            let sem = sem.clone();
            async move {
                sem.acquire(1).await.unwrap();
                Instant::now()
            }
        });
        tokio::time::sleep(ms(400)).await;
        assert!(!waiter.is_finished());
        let released = Instant::now();
        b.semaphore(name).release(1).await.unwrap();
        let got = within(ms(4000), "a semaphore waiter", waiter)
            .await
            .unwrap();
        assert!(
            got - released < ms(1000),
            "{name}: woken after {:?}",
            got - released
        );
        let leased = a.leased_semaphore(&format!("leased-{name}"));
        leased.set_permits(1).await.unwrap();
        let permit = leased.acquire(1).await.unwrap();
        assert!(leased.try_acquire(1).await.unwrap().is_none());
        permit.release().await.unwrap();
        // A permit given back by another client is noticed by its holder
        // at once, on the node that owns the slot (a renewal round is 10 s
        // away with the default watchdog).
        let permit = leased.acquire(1).await.unwrap();
        tokio::time::sleep(ms(200)).await;
        assert!(!permit.is_lost(), "{name}");
        let id = permit.ids().remove(0);
        assert!(
            b.leased_semaphore(&format!("leased-{name}"))
                .force_release(&id)
                .await
                .unwrap()
        );
        within(ms(1000), "a permit taken away said lost", permit.lost()).await;
        assert!(permit.release().await.is_err(), "{name}");
    }
    for name in ["latch-a", "latch-b", "latch-c"] {
        let latch = a.count_down_latch(name);
        assert!(latch.try_set_count(1).await.unwrap());
        let waiter = tokio::spawn({
            let latch = latch.clone();
            async move {
                latch.wait().await.unwrap();
                Instant::now()
            }
        });
        tokio::time::sleep(ms(400)).await;
        let opened = Instant::now();
        b.count_down_latch(name).count_down().await.unwrap();
        let woke = within(ms(4000), "a latch waiter", waiter).await.unwrap();
        assert!(
            woke - opened < ms(1000),
            "{name}: woken after {:?}",
            woke - opened
        );
    }
}
