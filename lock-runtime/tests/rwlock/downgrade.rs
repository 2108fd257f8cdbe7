//! Downgrade from writing to reading, and the upgrade refused at once.

use super::{join_locker, keys_become, map, only_token, settled_keys, spawn_locker};
use crate::common::{Redis, ms, within};
use crate::redisson::token_key;
use redlua_runtime::Error;
use tokio::time::Instant;

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
