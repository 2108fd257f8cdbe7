//! Fencing tokens strictly increase.

use crate::common::Redis;
use redis::AsyncCommands;

/// Tokens grow strictly with each new holder, across clients and both lock
/// kinds, survive the counter's expiry, and advance on a forced unlock.
#[tokio::test]
async fn fencing_tokens_strictly_increase() {
    let redis = Redis::start().await;
    let a = redis.client().await;
    let b = redis.client().await;
    let mut last = 0;
    for round in 0..10 {
        let client = if round % 2 == 0 { &a } else { &b };
        let guard = client.lock("fenced").lock().await.unwrap();
        assert!(
            guard.token() > last,
            "round {round}: {} after {last}",
            guard.token()
        );
        last = guard.token();
        let inner = guard.reenter().await.unwrap();
        assert_eq!(inner.token(), last);
        inner.unlock().await.unwrap();
        guard.unlock().await.unwrap();
    }
    // Redisson's layout, with an expiry.
    let counter: u64 = redis
        .raw()
        .get("redisson_lock_token:{fenced}")
        .await
        .unwrap();
    assert_eq!(counter, last);
    assert!(redis.pttl("redisson_lock_token:{fenced}").await > 0);
    // A forced unlock advances it: the broken holder's token is stale.
    let guard = a.lock("fenced").lock().await.unwrap();
    assert!(b.lock("fenced").force_unlock().await.unwrap());
    let after: u64 = redis
        .raw()
        .get("redisson_lock_token:{fenced}")
        .await
        .unwrap();
    assert!(after > guard.token());
    drop(guard);
    // The counter expired (deleted here): tokens still do not go back.
    redis.del("redisson_lock_token:{fenced}").await;
    let guard = b.lock("fenced").lock().await.unwrap();
    assert!(guard.token() > after);
    guard.unlock().await.unwrap();
    // Readers and writers of a read/write lock get growing tokens too.
    let rw = a.read_write_lock("fenced-rw");
    let r1 = rw.read().lock().await.unwrap();
    let r2 = rw.read().lock().await.unwrap();
    assert!(r2.token() > r1.token());
    let reader_token = r2.token();
    r1.unlock().await.unwrap();
    r2.unlock().await.unwrap();
    let w = rw.write().lock().await.unwrap();
    assert!(w.token() > reader_token);
    w.unlock().await.unwrap();
}
