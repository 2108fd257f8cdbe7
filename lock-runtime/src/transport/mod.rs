//! How the scripts reach Redis: the healing command connection, pub/sub
//! wake-ups, Sentinel, TLS, and replica-synced writes.
//!
//! - `connection.rs`: the command connection, replaced when it is in doubt;
//! - `pubsub/`: the waiters' subscriptions (one connection per node): the
//!   hub, a subscription, the shared state, the driver of a connection;
//! - `sentinel.rs`: the master of a Sentinel service, and its failovers;
//! - `tls.rs`: the certificates every connection is opened with;
//! - `cluster_nodes.rs`: where the side connections (pub/sub, the loss
//!   watch) go, and a cluster's slot map, read from its nodes;
//! - `tracking.rs`: key-tracking connections (one per node), on which
//!   Redis says when a held key changed;
//! - `replication.rs`: a script sent with `WAIT`/`WAITAOF`, and the
//!   replicas that acknowledged it (replica-synced mode);
//! - `replica_info.rs`: the replica counts it goes by, read from `INFO`.

pub(crate) mod cluster_nodes;
pub(crate) mod connection;
pub(crate) mod pubsub;
pub(crate) mod replica_info;
pub(crate) mod replication;
pub(crate) mod sentinel;
pub(crate) mod tls;
pub(crate) mod tracking;
