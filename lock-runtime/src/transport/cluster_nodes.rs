//! The nodes of a Redis Cluster as the client's side connections see them:
//! which primary owns which slots (read with `CLUSTER SLOTS` through the
//! command connection), and the settings of a connection of one's own to
//! one node (the pub/sub hub's, the loss watch's).
//!
//! A map read here can be stale at once (a failover, a migration): its
//! users read it again after any failure, and learn from a `MOVED`.

use crate::transport::connection::Connection;
use crate::transport::tls::with_addr;
use redis::{ConnectionAddr, ConnectionInfo, ErrorKind, RedisError, RedisResult, Value};

/// Slots `first..=last` are served by the primary at `addr` (`host:port`).
#[derive(Clone)]
pub(crate) struct SlotOwner {
    pub first: u16,
    pub last: u16,
    pub addr: String,
}

/// The node of `slot` in `owners` (first match wins).
pub(crate) fn owner_of(owners: &[SlotOwner], slot: u16) -> Option<&str> {
    owners
        .iter()
        .find(|owner| owner.first <= slot && slot <= owner.last)
        .map(|owner| owner.addr.as_str())
}

/// Reads `CLUSTER SLOTS` through the command connection `con`; a node
/// that names no endpoint is at `template`'s host.
pub(crate) async fn read_slots(
    con: &Connection,
    template: &ConnectionInfo,
) -> RedisResult<Vec<SlotOwner>> {
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

/// The settings of a RESP3 connection to the node at `addr` (`host:port`),
/// database 0: `template`'s, its address aside.
pub(crate) fn node_info(template: &ConnectionInfo, addr: &str) -> RedisResult<ConnectionInfo> {
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
    let redis = template
        .redis_settings()
        .clone()
        .set_protocol(redis::ProtocolVersion::RESP3)
        .set_db(0);
    Ok(with_addr(template, host, port).set_redis_settings(redis))
}
