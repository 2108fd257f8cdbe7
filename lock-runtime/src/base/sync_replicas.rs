//! [`SyncReplicas`]: how many replicas must acknowledge a lock's writes
//! before the client relies on them (replica-synced mode).

use std::time::Duration;

/// The default time a lock operation waits for its replicas: 1 s, as
/// Redisson's `slavesSyncTimeout`.
pub const DEFAULT_SYNC_TIMEOUT: Duration = Duration::from_secs(1);

/// How many replicas must acknowledge an acquire, a release or a renewal
/// (replica-synced mode), set with
/// [`LockClientBuilder::sync_replicas`](crate::LockClientBuilder::sync_replicas).
///
/// Redis replicates asynchronously: a primary that fails right after an
/// acquire can be replaced by a replica that never saw it, and that replica
/// grants the lock to a second client. In synced mode every lock script is
/// sent pipelined with `WAIT <n> <timeout>` (`WAITAOF 1 <n> <timeout>` where
/// the server has it and keeps an append-only file) on the same connection,
/// to the same node, and the client counts the replicas that acknowledged:
///
/// - an acquire (or re-entry) acknowledged by fewer than wanted is undone and
///   fails with [`Error::NotReplicated`](crate::Error::NotReplicated): no
///   guard, no fencing token;
/// - a renewal acknowledged by fewer does not move the hold's lease clock
///   ([`LockGuard::valid_until`](crate::LockGuard::valid_until)), and is
///   retried soon;
/// - a release acknowledged by fewer is reported by
///   [`LockGuard::unlock`](crate::LockGuard::unlock) as
///   [`Error::ReleaseNotReplicated`](crate::Error::ReleaseNotReplicated).
///
/// It narrows the window in which a failover can lose a hold; it does not
/// close it (see the guide, "Replica-synced mode"): fencing tokens do.
///
/// ```no_run
/// # async fn demo() -> Result<(), redlua::Error> {
/// use redlua::{LockClient, SyncReplicas};
/// use std::time::Duration;
/// let client = LockClient::builder("redis://127.0.0.1:6379/")
///     .sync_replicas(SyncReplicas::AtLeast(2))
///     .sync_timeout(Duration::from_millis(500))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncReplicas {
    /// Do not wait for replicas: a lock script's reply is relied on as soon
    /// as the primary sends it.
    Off,
    /// Wait for every replica the primary reports connected and in sync
    /// (`INFO replication`: the `slaveN` lines with `state=online`), as
    /// Redisson does. The count is read once per primary (per slot on a
    /// cluster) and read again whenever an acknowledgement shows it changed,
    /// the node's connection failed, or the client's own connection was
    /// replaced (a Sentinel failover among others: the new master's
    /// replicas are counted). With no replica, nothing is waited for: the
    /// lock scripts go without `WAIT`, and the primary is counted again
    /// every second, so a replica that comes online is waited for from
    /// then on. One `INFO` at a time asks, whatever the number of
    /// operations that need the count; the clients of one process whose
    /// own connections go to the same server (given by IP address or Unix
    /// socket, not a host name, a Sentinel master or a cluster) share it:
    /// one `INFO` a second between them. The default.
    ///
    /// A count is taken only from the node that is the primary at that
    /// moment, also after a failover the client has not seen yet:
    ///
    /// - an answer from a replica (`role:slave`: the request was routed by
    ///   an old view of the topology) is never used: the client reads the
    ///   topology again (a cluster's slots; the master the sentinels name)
    ///   and asks again, and fails closed with a retryable `TRYAGAIN` error
    ///   if the topology does not settle within a few hundred milliseconds.
    ///   A single server that is a replica is refused at once;
    /// - on a cluster, the count records which node it is of
    ///   (`CLUSTER MYID`), and each lock script goes in one pipeline with
    ///   `CLUSTER MYID`: a script that ran on another node than the one
    ///   counted (the slot map changed in between) is taken as not
    ///   replicated (an acquire is undone and fails with
    ///   [`Error::NotReplicated`](crate::Error::NotReplicated));
    /// - a Sentinel master that reports no replicas (its lock scripts would
    ///   go without `WAIT`) is confirmed with the sentinels first: a master
    ///   that was replaced takes writes until the sentinels demote it, and
    ///   loses them then. With no sentinel answering, such an acquire fails.
    ///
    /// On a cluster with an ACL, allow `CLUSTER MYID` (`+cluster|myid`):
    /// without it, `connect()` fails with
    /// [`Error::SyncUnavailable`](crate::Error::SyncUnavailable).
    #[default]
    Connected,
    /// Wait for at least this many replicas, however many are connected:
    /// with fewer, every acquire fails. At least 1.
    AtLeast(u32),
}
