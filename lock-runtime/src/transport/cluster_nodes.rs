//! Where the client's side connections (the pub/sub hub's, the loss
//! watch's) go ([`Nodes`]): on a cluster, the primary that owns a slot
//! (`CLUSTER SLOTS`, read through the command connection), reached with
//! the client's settings.
//!
//! Invariants:
//! - a client has one slot map, which the hub and the loss watch share:
//!   either's failure makes both read it again;
//! - a map read here can be stale at once (a failover, a migration): its
//!   users read it again after any failure, and learn from a `MOVED`;
//! - a single server's (or Sentinel master's) side connection is keyed
//!   [`SERVER`], a cluster node's by its `host:port`.

use crate::base::mutex::locked;
use crate::base::names::slot;
use crate::transport::connection::Connection;
use crate::transport::sentinel::Sentinels;
use crate::transport::tls::with_addr;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, ErrorKind, ProtocolVersion};
use redis::{RedisError, RedisResult, Value};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The node key of a single server's (or Sentinel master's) side
/// connection, where the others are keyed by `host:port`.
pub(crate) const SERVER: &str = "";

/// Where a client's side connections go.
#[derive(Clone)]
pub(crate) enum Nodes {
    /// One server (pub/sub: one RESP2 connection, `SUBSCRIBE`).
    Server(Box<redis::Client>),
    /// The master of a Sentinel service, asked of the sentinels at each
    /// connect; otherwise as `Server`.
    Sentinel(Arc<Sentinels>),
    /// A cluster: a RESP3 connection to each node that owns the slot of a
    /// subscribed channel or a watched lock.
    Cluster(Arc<ClusterNodes>),
}

impl Nodes {
    /// A Sentinel client's changes of master (`None` elsewhere): each
    /// connection to the old master ends.
    pub(crate) fn switches(&self) -> Option<watch::Receiver<u64>> {
        match self {
            Nodes::Sentinel(sentinels) => Some(sentinels.switches()),
            Nodes::Server(_) | Nodes::Cluster(_) => None,
        }
    }

    /// The node a side connection for `key` (a channel, a lock) goes to:
    /// [`SERVER`], or the primary that owns the key's slot (`host:port`),
    /// reading the slot map if it is not known.
    pub(crate) async fn node_of(&self, key: &str) -> RedisResult<String> {
        match self {
            Nodes::Server(_) | Nodes::Sentinel(_) => Ok(SERVER.to_owned()),
            Nodes::Cluster(cluster) => cluster.owner(slot(key)).await,
        }
    }

    /// As [`Nodes::node_of`], reading nothing: `None` while a cluster's
    /// slot map is not known (or names no owner of the slot).
    pub(crate) fn known_node_of(&self, key: &str) -> Option<String> {
        match self {
            Nodes::Server(_) | Nodes::Sentinel(_) => Some(SERVER.to_owned()),
            Nodes::Cluster(cluster) => owner_of(&cluster.known()?, slot(key)).map(str::to_owned),
        }
    }

    /// Forgets a cluster's slot map (nothing elsewhere): it is read again
    /// when next needed.
    pub(crate) fn forget_slots(&self) {
        if let Nodes::Cluster(cluster) = self {
            cluster.forget_slots();
        }
    }

    /// A RESP3 connection (made with `config`) to `node`: the server, the
    /// master the sentinels name, or the cluster node (database 0).
    pub(crate) async fn connect_resp3(
        &self,
        node: &str,
        config: &AsyncConnectionConfig,
    ) -> RedisResult<MultiplexedConnection> {
        let info = match self {
            Nodes::Server(client) => client.get_connection_info().clone(),
            Nodes::Sentinel(sentinels) => sentinels
                .master_client()
                .await?
                .get_connection_info()
                .clone(),
            Nodes::Cluster(cluster) => node_info(&cluster.template, node)?,
        };
        let resp3 = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        redis::Client::open(info.set_redis_settings(resp3))?
            .get_multiplexed_async_connection_with_config(config)
            .await
    }
}

/// Slots `first..=last` are served by the primary at `addr` (`host:port`).
#[derive(Clone)]
pub(crate) struct SlotOwner {
    pub first: u16,
    pub last: u16,
    pub addr: String,
}

/// The node of `slot` in `owners` (first match wins).
fn owner_of(owners: &[SlotOwner], slot: u16) -> Option<&str> {
    owners
        .iter()
        .find(|owner| owner.first <= slot && slot <= owner.last)
        .map(|owner| owner.addr.as_str())
}

/// Reads `CLUSTER SLOTS` through the command connection `con`; a node
/// that names no endpoint is at `template`'s host.
async fn read_slots(con: &Connection, template: &ConnectionInfo) -> RedisResult<Vec<SlotOwner>> {
    let mut con = con.clone();
    let ranges: Vec<Vec<Value>> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut con)
        .await?;
    let default_host = match template.addr() {
        ConnectionAddr::Tcp(host, _) | ConnectionAddr::TcpTls { host, .. } => host.clone(),
        _ => String::from("127.0.0.1"),
    };
    let mut owners = Vec::new();
    for range in ranges {
        let [
            Value::Int(first),
            Value::Int(last),
            Value::Array(primary),
            ..,
        ] = &range[..]
        else {
            continue;
        };
        let (Some(host), Some(Value::Int(port))) = (primary.first(), primary.get(1)) else {
            continue;
        };
        let host = match host {
            Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Value::SimpleString(text) => text.clone(),
            _ => continue,
        };
        // An unknown endpoint ("" or "?") is the address we asked.
        let host = if host.is_empty() || host == "?" {
            default_host.clone()
        } else {
            host
        };
        let (Ok(first), Ok(last)) = (u16::try_from(*first), u16::try_from(*last)) else {
            continue;
        };
        owners.push(SlotOwner {
            first,
            last,
            addr: format!("{host}:{port}"),
        });
    }
    Ok(owners)
}

/// The settings of a connection to the node at `addr` (`host:port`),
/// database 0: `template`'s, its address aside.
fn node_info(template: &ConnectionInfo, addr: &str) -> RedisResult<ConnectionInfo> {
    let bad = || {
        RedisError::from((
            ErrorKind::Client,
            "redlua: the cluster named a node address that cannot be parsed",
            addr.to_owned(),
        ))
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let db0 = template.redis_settings().clone().set_db(0);
    Ok(with_addr(template, host, port).set_redis_settings(db0))
}

/// How the side connections find and reach the nodes of a cluster.
pub(crate) struct ClusterNodes {
    /// Settings of the node connections (each gets its node's address).
    pub(crate) template: ConnectionInfo,
    /// Reads `CLUSTER SLOTS` (the client's command connection).
    pub(crate) con: Connection,
    /// `SSUBSCRIBE` (sharded pub/sub) rather than `SUBSCRIBE`.
    pub(crate) sharded: bool,
    /// The slot ranges last read and their primaries (`host:port`), first
    /// match wins; `None` until read, and again after a failure.
    pub(crate) slots: Mutex<Option<Arc<Vec<SlotOwner>>>>,
}

impl ClusterNodes {
    /// The nodes of the cluster `con` is connected to, reached with
    /// `template`'s settings; the slot map is read when first needed.
    pub(crate) fn new(template: ConnectionInfo, con: Connection, sharded: bool) -> ClusterNodes {
        ClusterNodes {
            template,
            con,
            sharded,
            slots: Mutex::new(None),
        }
    }

    /// The `host:port` of the primary that owns `slot`, reading the slot
    /// map if it is not known.
    pub(crate) async fn owner(&self, slot: u16) -> RedisResult<String> {
        let map = match self.known() {
            Some(map) => map,
            None => self.read().await?,
        };
        owner_of(&map, slot).map(str::to_owned).ok_or_else(|| {
            RedisError::from((
                ErrorKind::Server(redis::ServerErrorKind::ClusterDown),
                "redlua: no node serves the slot of a lock's channel",
                format!("slot {slot}"),
            ))
        })
    }

    /// The slot map, if known.
    fn known(&self) -> Option<Arc<Vec<SlotOwner>>> {
        locked(&self.slots).clone()
    }

    /// Reads the slot map, and keeps it.
    pub(crate) async fn read(&self) -> RedisResult<Arc<Vec<SlotOwner>>> {
        let map = Arc::new(read_slots(&self.con, &self.template).await?);
        *locked(&self.slots) = Some(map.clone());
        Ok(map)
    }

    /// Forgets the slot map: it is read again when next needed.
    pub(crate) fn forget_slots(&self) {
        *locked(&self.slots) = None;
    }

    /// Learns from a failed subscribe: a `MOVED` names the slot's owner;
    /// anything else forgets the map.
    pub(crate) fn failed(&self, error: &RedisError) {
        let mut slots = locked(&self.slots);
        match (error.redirect_node(), slots.as_ref()) {
            (Some((addr, slot)), Some(map)) if error.code() == Some("MOVED") => {
                let mut moved = vec![SlotOwner {
                    first: slot,
                    last: slot,
                    addr: addr.to_owned(),
                }];
                moved.extend(map.iter().cloned());
                *slots = Some(Arc::new(moved));
            }
            _ => *slots = None,
        }
    }
}
