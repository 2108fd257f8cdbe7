//! The keys and channels a Java RFairLock shares with it, and a Java waiter taking its turn.

use super::{
    deadlines, deadlines_key, queue_key, queue_reaches, server_now_ms, waiter, waiter_channel,
};
use crate::common::{Redis, ms, within};
use redis::AsyncCommands;

#[tokio::test]
async fn keys_and_channels_are_redissons_and_a_java_waiter_takes_its_turn() {
    let redis = Redis::start().await;
    let name = "fair:interop";
    let a = redis.client().await;
    let b = redis.client().await;
    let held = a.fair_lock(name).lock().await.expect("lock");
    // A Java waiter, queued as Redisson's RFairLock queues one: behind
    // nobody, deadline = the lease left + the wait time + now.
    let java = "7f3c9a1e-0000-4000-8000-000000000001:58";
    let now = server_now_ms(&redis).await;
    let pttl = redis.pttl(name).await;
    let mut con = redis.raw();
    let _: () = con
        .zadd(deadlines_key(name), java, now + pttl + 300_000)
        .await
        .unwrap();
    let _: () = con.rpush(queue_key(name), java).await.unwrap();
    // A redlua waiter queues behind it.
    let (_b_task, b_rx) = waiter(&b, name);
    let queued = queue_reaches(&redis, name, 2).await;
    assert_eq!(queued[0], java);
    let ours = queued[1].clone();
    assert!(ours.starts_with(b.id()), "{ours}");
    let scores = deadlines(&redis, name).await;
    let java_deadline = scores.iter().find(|(o, _)| o == java).unwrap().1;
    let our_deadline = scores.iter().find(|(o, _)| *o == ours).unwrap().1;
    // Redisson's arithmetic: the one before it plus the wait time (10 s).
    assert_eq!(our_deadline - java_deadline, 10_000.0);
    // Every key written has an expiry.
    assert!(redis.pttl(&queue_key(name)).await > 0);
    assert!(redis.pttl(&deadlines_key(name)).await > 0);
    // The release wakes the head only: Java's channel, message 0.
    let mut to_java = redis.listen(&waiter_channel(name, java)).await;
    let mut to_ours = redis.listen(&waiter_channel(name, &ours)).await;
    let mut to_all = redis
        .listen(&format!("redisson_lock__channel:{{{name}}}"))
        .await;
    held.unlock().await.expect("unlock");
    let (message, _) = to_java.next_within(ms(2000)).await.expect("Java woken");
    assert_eq!(message, "0");
    assert!(to_all.next_within(ms(100)).await.is_none(), "no broadcast");
    assert!(
        to_ours.next_within(ms(100)).await.is_none(),
        "only the head is woken"
    );
    // Java takes the lock as RFairLock does: leaves the queue, moves the
    // others up by the wait time, holds.
    let _: () = con.lpop(queue_key(name), None).await.unwrap();
    let _: () = con.zrem(deadlines_key(name), java).await.unwrap();
    let _: () = con
        .zincr(deadlines_key(name), &ours, -300_000)
        .await
        .unwrap();
    let _: () = con.hset(name, java, 1).await.unwrap();
    let _: () = con.pexpire(name, 30_000).await.unwrap();
    // ... and releases it, waking the new head as RFairLock does.
    let _: () = con.del(name).await.unwrap();
    let _: () = con.publish(waiter_channel(name, &ours), "0").await.unwrap();
    let (message, _) = to_ours.next_within(ms(2000)).await.expect("ours woken");
    assert_eq!(message, "0");
    let (guard, _) = within(ms(1000), "ours acquiring after Java", b_rx)
        .await
        .expect("guard");
    assert_eq!(guard.owner().to_string(), ours);
    guard.unlock().await.expect("unlock");
}
