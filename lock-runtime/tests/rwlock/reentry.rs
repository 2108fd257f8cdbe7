//! Re-entry on both sides: hold counts, the Redis layout, the lease, no wait behind writers.

use super::{
    holders, join_locker, map, only_token, reentry_record, settled_keys, sorted, spawn_locker,
    split_attempts, writer_mark,
};
use crate::common::{Redis, ms, within};
use crate::redisson::{timeout_key, token_key};
use redis::AsyncCommands;
use redlua_runtime::{Error, LockKind, Mode, Owner, Side};
use std::time::Duration;
use tokio::time::Instant;

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
