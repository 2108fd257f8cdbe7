//! Opening a driver's connection (`open`), its sending half (`Link`:
//! `SUBSCRIBE`, `SSUBSCRIBE`, `PSUBSCRIBE` and their opposites, and pings)
//! and what arrives on it (`Incoming`).
//!
//! Invariants: a single server or Sentinel master gets a RESP2 pub/sub
//! connection; a cluster node a RESP3 one, whose pushes are read for
//! messages, unsubscribes the node did on its own, and disconnection.

use crate::base::config::Timeouts;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use redis::aio::{MultiplexedConnection, PubSubSink};
use redis::{Msg, PushInfo, PushKind, RedisResult, Value};
use tokio::sync::mpsc;

use super::driver::RunningPing;
use crate::transport::cluster_nodes::Nodes;

/// The sending half of a driver's connection.
#[derive(Clone)]
pub(super) enum Link {
    /// A RESP2 pub/sub connection.
    Server(PubSubSink),
    /// A RESP3 connection to a cluster node; `sharded`: `SSUBSCRIBE`.
    Node {
        con: MultiplexedConnection,
        sharded: bool,
    },
}

/// What arrives on a driver's connection.
pub(super) enum Incoming {
    /// A message on a subscribed channel.
    Message(Msg),
    /// The server unsubscribed a channel (asked for, or because its slot
    /// left the node).
    Unsubscribed(String),
    /// The connection is gone.
    Closed,
}

/// Opens a driver's connection to `node` of `nodes`: its sending half and
/// what it receives. A single server or Sentinel master gets a RESP2
/// pub/sub connection, a cluster node a RESP3 one.
pub(super) async fn open(
    nodes: &Nodes,
    node: &str,
    timeouts: Timeouts,
) -> RedisResult<(Link, BoxStream<'static, Incoming>)> {
    let client = match nodes {
        Nodes::Server(client) => (**client).clone(),
        Nodes::Sentinel(sentinels) => sentinels.master_client().await?,
        Nodes::Cluster(cluster) => {
            let (pushes, mut received) = mpsc::unbounded_channel::<PushInfo>();
            let config = timeouts.config().set_push_sender(pushes);
            let con = nodes.connect_resp3(node, &config).await?;
            let stream = futures_util::stream::poll_fn(move |cx| received.poll_recv(cx))
                .filter_map(|push| std::future::ready(incoming(push)))
                .boxed();
            let sharded = cluster.sharded;
            return Ok((Link::Node { con, sharded }, stream));
        }
    };
    let (sink, stream) = client.get_async_pubsub().await?.split();
    Ok((Link::Server(sink), stream.map(Incoming::Message).boxed()))
}

/// What a RESP3 push means to a driver, if anything.
pub(super) fn incoming(push: PushInfo) -> Option<Incoming> {
    match push.kind {
        PushKind::Message | PushKind::SMessage | PushKind::PMessage => {
            Msg::from_push_info(push).map(Incoming::Message)
        }
        PushKind::Unsubscribe | PushKind::SUnsubscribe => match push.data.first() {
            Some(Value::BulkString(channel)) => Some(Incoming::Unsubscribed(
                String::from_utf8_lossy(channel).into_owned(),
            )),
            _ => None,
        },
        PushKind::Disconnection => Some(Incoming::Closed),
        _ => None,
    }
}

impl Link {
    /// A ping; its answer does not matter, only that it came.
    pub(super) fn ping(&self) -> RunningPing {
        match self.clone() {
            Link::Server(mut sink) => Box::pin(async move { sink.ping::<Value>().await.map(drop) }),
            Link::Node { mut con, .. } => Box::pin(async move {
                redis::cmd("PING")
                    .query_async::<Value>(&mut con)
                    .await
                    .map(drop)
            }),
        }
    }

    /// Subscribes (or unsubscribes) `channel`, or the pattern `channel`.
    pub(super) async fn send(
        &mut self,
        subscribe: bool,
        pattern: bool,
        channel: &str,
    ) -> RedisResult<()> {
        match self {
            Link::Server(sink) => match (subscribe, pattern) {
                (true, false) => sink.subscribe(channel).await,
                (false, false) => sink.unsubscribe(channel).await,
                (true, true) => sink.psubscribe(channel).await,
                (false, true) => sink.punsubscribe(channel).await,
            },
            Link::Node { con, sharded } => {
                let command = match (subscribe, pattern, *sharded) {
                    (true, true, _) => "PSUBSCRIBE",
                    (false, true, _) => "PUNSUBSCRIBE",
                    (true, false, true) => "SSUBSCRIBE",
                    (true, false, false) => "SUBSCRIBE",
                    (false, false, true) => "SUNSUBSCRIBE",
                    (false, false, false) => "UNSUBSCRIBE",
                };
                redis::cmd(command)
                    .arg(channel)
                    .query_async::<Value>(con)
                    .await
                    .map(drop)
            }
        }
    }
}
