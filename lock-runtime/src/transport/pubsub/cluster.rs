//! A cluster's nodes as the hub reaches them: the primary that owns a
//! channel's slot, from `CLUSTER SLOTS` read through the command
//! connection.
//!
//! Invariants: the slot map is remembered until a failure (a `MOVED`
//! reply names the new owner at once; any other failure forgets the map,
//! read again on the next subscribe).

use std::sync::{Arc, Mutex, PoisonError};

use redis::{ConnectionInfo, ErrorKind, RedisError, RedisResult};

use crate::transport::cluster_nodes::{SlotOwner, owner_of, read_slots};
use crate::transport::connection::Connection;

/// How a hub finds and reaches the nodes of a cluster.
pub(super) struct ClusterTarget {
    /// Settings of the node connections (each gets its node's address).
    pub(super) template: ConnectionInfo,
    /// Reads `CLUSTER SLOTS` (the client's command connection).
    pub(super) con: Connection,
    /// `SSUBSCRIBE` (sharded pub/sub) rather than `SUBSCRIBE`.
    pub(super) sharded: bool,
    /// The slot ranges last read and their primaries (`host:port`), first
    /// match wins; `None` until read, and again after a failure.
    pub(super) slots: Mutex<Option<Arc<Vec<SlotOwner>>>>,
}

impl ClusterTarget {
    /// The `host:port` of the primary that owns `slot`, reading the slot
    /// map if it is not known.
    pub(super) async fn owner(&self, slot: u16) -> RedisResult<String> {
        let known = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let map = match known {
            Some(map) => map,
            None => {
                let map = Arc::new(read_slots(&self.con, &self.template).await?);
                *self.slots.lock().unwrap_or_else(PoisonError::into_inner) = Some(map.clone());
                map
            }
        };
        owner_of(&map, slot).map(str::to_owned).ok_or_else(|| {
            RedisError::from((
                ErrorKind::Server(redis::ServerErrorKind::ClusterDown),
                "redlua: no node serves the slot of a lock's channel",
                format!("slot {slot}"),
            ))
        })
    }

    /// Forgets the slot map: it is read again before the next subscribe.
    pub(super) fn forget_slots(&self) {
        *self.slots.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Learns from a failed subscribe: a `MOVED` names the slot's new
    /// owner; anything else makes the map be read again.
    pub(super) fn failed(&self, error: &RedisError) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
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
