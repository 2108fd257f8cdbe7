//! Redisson's own read/write lock scripts and redlua's readers and writers, side by side.

use super::{join_locker, map, only_token, settled_keys, spawn_locker};
use crate::common::{Redis, ms, within};
use crate::redisson::{
    java_read_acquire, java_read_release, java_write_acquire, java_write_release,
    rwlock_channel as channel, timeout_key,
};
use tokio::time::Instant;

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
