//! How the scripts reach Redis: the healing command connection
//! (`connection.rs`), pub/sub wake-ups (`pubsub/`), where the side
//! connections go (`cluster_nodes.rs`), key tracking for the loss watch
//! (`tracking.rs`), Sentinel, TLS, and replica-synced writes
//! (`replication.rs`, going by the counts of `replica_info.rs`).

pub(crate) mod cluster_nodes;
pub(crate) mod connection;
pub(crate) mod pubsub;
pub(crate) mod replica_info;
pub(crate) mod replication;
pub(crate) mod sentinel;
pub(crate) mod tls;
pub(crate) mod tracking;
