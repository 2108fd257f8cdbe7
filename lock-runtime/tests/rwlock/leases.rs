//! Leases on both sides: zombie readers, the watchdog, a deleted lock, readers that die.

use super::{join_locker, map, only_token, settled_keys, sorted, spawn_locker};
use crate::common::{Redis, ms, within};
use crate::redisson::{timeout_key, token_key};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockClient};
use std::time::Duration;
use tokio::time::Instant;

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
