//! Against real `redis-server` processes (one per test).

use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redlua_test_support::{RedisCluster, RedisServer};

use super::subscription::Subscription;
use super::{PATTERN_LINGER, PubSubHub};
use crate::base::config::Timeouts;
use crate::transport::cluster_nodes::{ClusterNodes, Nodes};
use crate::transport::connection::Connection;
use std::sync::Arc;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio::time::{Instant, sleep, timeout};

impl PubSubHub {
    /// Number of channels that currently have at least one [`Subscription`]
    /// (including subscriptions still waiting for their `SUBSCRIBE` to be
    /// confirmed): 0 again once every waiter is gone.
    fn subscribed_channels(&self) -> usize {
        self.shared.lock().channels.len()
    }
}

/// How long a waiter that must not wake is watched.
const QUIET: Duration = Duration::from_millis(200);
/// The hubs' timeouts.
const THREE_SECONDS: Timeouts = Timeouts {
    connect: Duration::from_secs(3),
    response: Duration::from_secs(3),
};
/// Upper bound for things that must happen (they take a few ms).
const SOON: Duration = Duration::from_secs(5);

/// A server, a hub on it, and a command connection to observe and publish.
struct Env {
    server: RedisServer,
    hub: PubSubHub,
    conn: MultiplexedConnection,
}

async fn env() -> Env {
    let server = RedisServer::start();
    let hub = PubSubHub::new(Nodes::Server(Box::new(server.client())), THREE_SECONDS);
    let conn = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("command connection");
    Env { server, hub, conn }
}

impl Env {
    async fn publish(&mut self, channel: &str, payload: &str) -> i64 {
        redis::cmd("PUBLISH")
            .arg(channel)
            .arg(payload)
            .query_async(&mut self.conn)
            .await
            .expect("PUBLISH")
    }

    /// The server's `PUBSUB NUMSUB` for one channel.
    async fn numsub(&mut self, channel: &str) -> i64 {
        let (_, count): (String, i64) = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(channel)
            .query_async(&mut self.conn)
            .await
            .expect("PUBSUB NUMSUB");
        count
    }

    /// How many times the server ran `command` (from INFO commandstats).
    async fn calls(&mut self, command: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(&mut self.conn)
            .await
            .expect("INFO commandstats");
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map(|rest| {
                rest.split(',')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a call count")
            })
            .unwrap_or(0)
    }

    /// Number of pub/sub client connections on the server.
    async fn pubsub_clients(&mut self) -> usize {
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .arg("TYPE")
            .arg("pubsub")
            .query_async(&mut self.conn)
            .await
            .expect("CLIENT LIST");
        list.lines().filter(|line| !line.trim().is_empty()).count()
    }

    /// Number of client connections other than `self.conn` (a connection
    /// whose subscriptions were all dropped is no longer of type pubsub).
    async fn other_clients(&mut self) -> usize {
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query_async(&mut self.conn)
            .await
            .expect("CLIENT LIST");
        list.lines().filter(|line| !line.trim().is_empty()).count() - 1
    }

    /// Waits until `NUMSUB channel` is `expected`, failing after [`SOON`].
    async fn wait_numsub(&mut self, channel: &str, expected: i64) {
        let deadline = Instant::now() + SOON;
        loop {
            let now = self.numsub(channel).await;
            if now == expected {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "NUMSUB {channel} stayed {now}, expected {expected}"
            );
            sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Polls `future` exactly once.
async fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

/// Spawns a task that reports `id` on `woken` after each wake-up.
fn waiter(id: usize, mut subscription: Subscription, woken: mpsc::UnboundedSender<usize>) {
    tokio::spawn(async move {
        loop {
            subscription.wake().await;
            if woken.send(id).is_err() {
                return;
            }
        }
    });
}

/// Asserts that nothing arrives on `woken` for [`QUIET`].
async fn assert_quiet(woken: &mut UnboundedReceiver<usize>) {
    if let Ok(Some(id)) = timeout(QUIET, woken.recv()).await {
        panic!("waiter {id} woke up unexpectedly");
    }
}

async fn recv(woken: &mut UnboundedReceiver<usize>) -> usize {
    timeout(SOON, woken.recv())
        .await
        .expect("a waiter wakes up")
        .expect("waiters alive")
}

#[tokio::test]
async fn pattern_members_are_woken_by_their_own_channel_and_the_pattern_lingers() {
    let mut env = env().await;
    let pattern = "fair:{l}:client:*";
    let mut a = env
        .hub
        .member(pattern, "fair:{l}:client:1")
        .expect("member");
    let b = env
        .hub
        .member(pattern, "fair:{l}:client:2")
        .expect("member");
    assert!(!a.is_live(), "nothing sent yet");
    a.confirm().await.expect("PSUBSCRIBE");
    assert!(a.is_live() && b.is_live(), "one pattern for both");
    assert_eq!(env.calls("psubscribe").await, 1);
    let (woken, mut rx) = mpsc::unbounded_channel();
    waiter(1, a, woken.clone());
    waiter(2, b, woken);
    // A message on one member's channel wakes that member only.
    assert_eq!(env.publish("fair:{l}:client:2", "0").await, 1);
    assert_eq!(recv(&mut rx).await, 2);
    assert_quiet(&mut rx).await;
    assert_eq!(env.publish("fair:{l}:client:1", "0").await, 1);
    assert_eq!(recv(&mut rx).await, 1);
    // A channel without a member wakes nobody.
    assert_eq!(env.publish("fair:{l}:client:3", "0").await, 1);
    assert_quiet(&mut rx).await;
    drop(rx); // the waiter tasks end (and drop their members) at the next wake-up
    env.publish("fair:{l}:client:1", "0").await;
    env.publish("fair:{l}:client:2", "0").await;
    timeout(SOON, async {
        while env
            .hub
            .shared
            .lock()
            .channels
            .get(pattern)
            .map(|e| e.waiters)
            != Some(0)
        {
            sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the members are gone");
    // Kept subscribed: a new member is live at once, with no command.
    let c = env
        .hub
        .member(pattern, "fair:{l}:client:4")
        .expect("member");
    assert!(c.is_live());
    drop(c);
    assert_eq!(env.calls("psubscribe").await, 1);
    // Dropped after the linger (and at most one ping interval more).
    let idle = Instant::now();
    timeout(SOON, async {
        while env.calls("punsubscribe").await == 0 {
            sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("PUNSUBSCRIBE after the linger");
    assert!(idle.elapsed() >= PATTERN_LINGER / 2, "{:?}", idle.elapsed());
    assert_eq!(env.hub.subscribed_channels(), 0);
    let mut d = env
        .hub
        .member(pattern, "fair:{l}:client:5")
        .expect("member");
    assert!(!d.is_live());
    d.confirm().await.expect("PSUBSCRIBE again");
    assert_eq!(env.calls("psubscribe").await, 2);
}

#[test]
fn types_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send_static<T: Send + 'static>() {}
    send_sync::<PubSubHub>();
    send_static::<Subscription>();
}

#[tokio::test]
async fn futures_are_send() {
    fn send<T: Send>(_: &T) {}
    let hub = PubSubHub::new(
        Nodes::Server(Box::new(
            redis::Client::open("redis://127.0.0.1:1/").unwrap(),
        )),
        THREE_SECONDS,
    );
    let subscribe = hub.subscribe("ch");
    send(&subscribe);
    drop(subscribe);
    let mut subscription = hub.register("ch", None);
    let wake = subscription.wake();
    send(&wake);
}

#[tokio::test]
async fn one_subscribe_per_channel_and_unsubscribe_after_the_last_waiter() {
    let mut env = env().await;
    let a1 = env.hub.subscribe("ch:a").await.unwrap();
    let a2 = env.hub.subscribe("ch:a").await.unwrap();
    let a3 = env.hub.subscribe("ch:a").await.unwrap();
    let b1 = env.hub.subscribe("ch:b").await.unwrap();
    assert_eq!(env.hub.subscribed_channels(), 2);
    assert_eq!(env.numsub("ch:a").await, 1);
    assert_eq!(env.numsub("ch:b").await, 1);
    assert_eq!(env.calls("subscribe").await, 2);
    assert_eq!(env.pubsub_clients().await, 1, "one shared connection");

    drop(a1);
    drop(a2);
    assert_eq!(env.hub.subscribed_channels(), 2);
    sleep(Duration::from_millis(50)).await;
    assert_eq!(env.numsub("ch:a").await, 1, "a3 still waits");
    assert_eq!(env.calls("unsubscribe").await, 0);

    drop(a3);
    assert_eq!(env.hub.subscribed_channels(), 1);
    env.wait_numsub("ch:a", 0).await;
    assert_eq!(env.numsub("ch:b").await, 1);
    assert_eq!(env.calls("unsubscribe").await, 1);

    drop(b1);
    assert_eq!(env.hub.subscribed_channels(), 0);
    env.wait_numsub("ch:b", 0).await;
    assert_eq!(env.calls("unsubscribe").await, 2);
}

#[tokio::test]
async fn unlock_message_wakes_exactly_one_waiter() {
    let mut env = env().await;
    let (tx, mut woken) = mpsc::unbounded_channel();
    for id in 0..3 {
        waiter(id, env.hub.subscribe("ch").await.unwrap(), tx.clone());
    }
    // Let the three waiters block in wake().
    sleep(Duration::from_millis(50)).await;
    assert_eq!(
        env.publish("ch", "0").await,
        1,
        "one connection receives it"
    );
    recv(&mut woken).await;
    assert_quiet(&mut woken).await;

    // Each further "0" wakes one more.
    assert_eq!(env.publish("ch", "0").await, 1);
    recv(&mut woken).await;
    assert_quiet(&mut woken).await;

    // Other payloads and other channels wake nobody.
    env.publish("ch", "hello").await;
    env.publish("other", "0").await;
    assert_quiet(&mut woken).await;
}

#[tokio::test]
async fn wake_all_message_wakes_every_waiter() {
    let mut env = env().await;
    let (tx, mut woken) = mpsc::unbounded_channel();
    for id in 0..3 {
        waiter(id, env.hub.subscribe("ch").await.unwrap(), tx.clone());
    }
    sleep(Duration::from_millis(50)).await;
    assert_eq!(env.publish("ch", "1").await, 1);
    let mut ids = vec![
        recv(&mut woken).await,
        recv(&mut woken).await,
        recv(&mut woken).await,
    ];
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2]);
    assert_quiet(&mut woken).await;
}

#[tokio::test]
async fn messages_published_before_wake_are_not_lost() {
    let mut env = env().await;
    let mut a = env.hub.subscribe("ch").await.unwrap();
    let mut b = env.hub.subscribe("ch").await.unwrap();

    // A "0" while nobody waits is kept for exactly one later wake().
    assert_eq!(env.publish("ch", "0").await, 1);
    sleep(Duration::from_millis(100)).await;
    timeout(SOON, a.wake()).await.expect("the stored 0 wakes a");
    assert!(
        timeout(QUIET, b.wake()).await.is_err(),
        "one 0, one wake-up"
    );

    // A "1" while nobody waits reaches every subscription, once.
    assert_eq!(env.publish("ch", "1").await, 1);
    sleep(Duration::from_millis(100)).await;
    timeout(SOON, a.wake()).await.expect("the 1 wakes a");
    timeout(SOON, b.wake()).await.expect("the 1 wakes b");
    assert!(timeout(QUIET, a.wake()).await.is_err(), "the 1 was seen");
    assert!(timeout(QUIET, b.wake()).await.is_err(), "the 1 was seen");
}

#[tokio::test]
async fn a_dropped_chosen_wake_passes_the_wake_up_on() {
    let mut env = env().await;
    let mut a = env.hub.subscribe("ch").await.unwrap();
    let mut b = env.hub.subscribe("ch").await.unwrap();
    let mut wake_a = Box::pin(a.wake());
    let mut wake_b = Box::pin(b.wake());
    assert!(poll_once(wake_a.as_mut()).await.is_pending());
    assert!(poll_once(wake_b.as_mut()).await.is_pending());

    assert_eq!(env.publish("ch", "0").await, 1);
    // The driver dispatches the 0 to the first waiter, `wake_a`, which is
    // not polled.
    sleep(Duration::from_millis(200)).await;
    assert!(
        poll_once(wake_b.as_mut()).await.is_pending(),
        "the 0 went to the first waiter"
    );
    drop(wake_a);
    timeout(SOON, wake_b)
        .await
        .expect("the dropped waiter's wake-up passes to b");
    assert!(
        timeout(QUIET, a.wake()).await.is_err(),
        "the single 0 woke only one waiter"
    );
}

#[tokio::test]
async fn a_cancelled_subscribe_leaks_nothing() {
    let mut env = env().await;
    let mut first = Box::pin(env.hub.subscribe("ch"));
    assert!(poll_once(first.as_mut()).await.is_pending());
    assert_eq!(env.hub.subscribed_channels(), 1);
    drop(first);
    assert_eq!(env.hub.subscribed_channels(), 0);
    // The SUBSCRIBE queued before the cancellation is followed by an
    // UNSUBSCRIBE.
    let deadline = Instant::now() + SOON;
    while env.calls("unsubscribe").await == 0 {
        assert!(Instant::now() < deadline, "no UNSUBSCRIBE was sent");
        sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(env.calls("subscribe").await, 1);
    assert_eq!(env.numsub("ch").await, 0);

    // A waiter whose subscribe() shares a cancelled one's SUBSCRIBE keeps it.
    let mut cancelled = Box::pin(env.hub.subscribe("ch2"));
    assert!(poll_once(cancelled.as_mut()).await.is_pending());
    let kept = env.hub.subscribe("ch2");
    drop(cancelled);
    let _kept = kept.await.unwrap();
    assert_eq!(env.numsub("ch2").await, 1);
    assert_eq!(env.hub.subscribed_channels(), 1);
}

#[tokio::test]
async fn subscribing_while_an_unsubscribe_is_in_flight_ends_subscribed() {
    let mut env = env().await;
    for round in 0..20 {
        let gone = env.hub.subscribe("ch").await.unwrap();
        drop(gone); // queues UNSUBSCRIBE
        let mut again = env.hub.subscribe("ch").await.unwrap();
        assert_eq!(env.numsub("ch").await, 1, "round {round}");
        assert_eq!(env.publish("ch", "0").await, 1, "round {round}");
        timeout(SOON, again.wake())
            .await
            .unwrap_or_else(|_| panic!("round {round}: the 0 is received"));
    }
    env.wait_numsub("ch", 0).await;
    assert_eq!(env.calls("subscribe").await, 40);
    assert_eq!(env.calls("unsubscribe").await, 40);
}

#[tokio::test]
async fn a_lost_connection_wakes_waiters_and_is_replaced() {
    let mut env = env().await;
    let mut a = env.hub.subscribe("ch").await.unwrap();
    let mut b = env.hub.subscribe("ch").await.unwrap();
    let mut wake_a = Box::pin(a.wake());
    assert!(poll_once(wake_a.as_mut()).await.is_pending());

    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut env.conn)
        .await
        .unwrap();
    assert_eq!(killed, 1);
    // The pending wake() returns at once (its caller tries the lock);
    // the next one subscribes again, on a new connection, and returns
    // once that is confirmed.
    timeout(SOON, wake_a).await.expect("the loss wakes a");
    timeout(SOON, a.wake()).await.expect("re-subscribed");
    assert!(a.is_live());
    assert_eq!(env.numsub("ch").await, 1);
    assert_eq!(env.calls("subscribe").await, 2);
    assert_eq!(env.pubsub_clients().await, 1);
    // b was not waiting: its next wake() returns at once, as it may have
    // missed a message.
    timeout(SOON, b.wake()).await.expect("the loss wakes b");

    // Messages reach the new connection.
    assert_eq!(env.publish("ch", "0").await, 1);
    timeout(SOON, a.wake())
        .await
        .expect("a 0 after the reconnect");
    assert!(timeout(QUIET, b.wake()).await.is_err());

    // New channels use the new connection.
    let _c = env.hub.subscribe("other").await.unwrap();
    assert_eq!(env.numsub("other").await, 1);
    assert_eq!(env.pubsub_clients().await, 1);
    assert_eq!(env.hub.subscribed_channels(), 2);
}

#[tokio::test]
async fn a_new_subscribe_reconnects_after_a_loss_without_waiters() {
    let mut env = env().await;
    drop(env.hub.subscribe("ch").await.unwrap());
    env.wait_numsub("ch", 0).await;
    // Without subscriptions, the hub's connection is of type normal.
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query_async(&mut env.conn)
        .await
        .unwrap();
    assert_eq!(killed, 1);
    sleep(Duration::from_millis(50)).await;
    let mut a = env.hub.subscribe("ch").await.unwrap();
    assert_eq!(env.numsub("ch").await, 1);
    assert_eq!(env.publish("ch", "0").await, 1);
    timeout(SOON, a.wake())
        .await
        .expect("a 0 on the new connection");
}

#[tokio::test]
async fn dropping_the_hub_closes_its_connection() {
    let mut env = env().await;
    drop(env.hub.subscribe("ch").await.unwrap());
    assert_eq!(env.other_clients().await, 1);
    let Env {
        server,
        hub,
        mut conn,
    } = env;
    drop(hub);
    let mut env = Env {
        hub: PubSubHub::new(Nodes::Server(Box::new(server.client())), THREE_SECONDS),
        server,
        conn: conn.clone(),
    };
    let deadline = Instant::now() + SOON;
    while env.other_clients().await != 0 {
        assert!(Instant::now() < deadline, "the connection stays open");
        sleep(Duration::from_millis(10)).await;
    }
    let _: () = redis::cmd("PING").query_async(&mut conn).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_each_channel_is_subscribed_on_the_node_of_its_slot() {
    let cluster = tokio::task::spawn_blocking(|| RedisCluster::start(3))
        .await
        .expect("starting a cluster");
    let con = Connection::from(cluster.client().get_async_connection().await.unwrap());
    let template = cluster.nodes()[0].client().get_connection_info().clone();
    for sharded in [true, false] {
        let (subscribe, publish) = if sharded {
            ("SHARDNUMSUB", "SPUBLISH")
        } else {
            ("NUMSUB", "PUBLISH")
        };
        let hub = PubSubHub::new(
            Nodes::Cluster(Arc::new(ClusterNodes::new(
                template.clone(),
                con.clone(),
                sharded,
            ))),
            THREE_SECONDS,
        );
        // Slots: "b" 3300 (node 0), "c" 7365 (node 1), "a" 15495 (node 2).
        for (channel, node) in [("ch{b}", 0), ("ch{c}", 1), ("ch{a}", 2)] {
            let mut subscription = hub.subscribe(channel).await.unwrap();
            assert!(subscription.is_live());
            let mut direct = cluster.nodes()[node]
                .client()
                .get_multiplexed_async_connection()
                .await
                .unwrap();
            let (_, count): (String, i64) = redis::cmd("PUBSUB")
                .arg(subscribe)
                .arg(channel)
                .query_async(&mut direct)
                .await
                .unwrap();
            assert_eq!(count, 1, "{channel} ({subscribe}) on node {node}");
            let received: i64 = redis::cmd(publish)
                .arg(channel)
                .arg("0")
                .query_async(&mut direct)
                .await
                .unwrap();
            assert_eq!(received, 1, "{channel}: {publish} reaches the hub");
            timeout(SOON, subscription.wake())
                .await
                .expect("the message wakes the waiter");
        }
        assert_eq!(hub.shared.lock().conns.len(), 3, "one connection per node");
    }
}

#[tokio::test]
async fn an_unreachable_server_is_an_error() {
    let server = RedisServer::start();
    let client = server.client();
    drop(server);
    let hub = PubSubHub::new(Nodes::Server(Box::new(client)), THREE_SECONDS);
    let err = timeout(SOON, hub.subscribe("ch"))
        .await
        .expect("fails fast")
        .expect_err("nothing to connect to");
    assert!(
        err.is_connection_refusal() || err.is_connection_dropped(),
        "{err}"
    );
    assert_eq!(hub.subscribed_channels(), 0);
}
