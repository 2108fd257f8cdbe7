//! [`LockClientBuilder`]: a client's settings (timeouts, replica-synced
//! mode, TLS, a connection of the user's) and where it connects (`Seeds`).
//!
//! Invariants: a setting is only recorded here; every check of it is in
//! `connect.rs`, before anything connects, so that a bad setting fails
//! `connect` with `Error::Config` whatever the order of the calls.

use crate::base::config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_FAIR_LOCK_WAIT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT,
    DEFAULT_WATCHDOG_TIMEOUT,
};
use crate::base::error::{Error, Result};
use crate::base::sync_replicas::SyncReplicas;
use crate::transport::connection::Connection;
use crate::transport::tls::TlsSettings;
use redis::{ConnectionInfo, IntoConnectionInfo};
use std::time::Duration;

use super::LockClient;

/// Builds a [`LockClient`]; see [`LockClient::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `connect` is called"]
pub struct LockClientBuilder {
    pub(super) seeds: Result<Seeds>,
    pub(super) connection: Option<Connection>,
    pub(super) watchdog_timeout: Duration,
    pub(super) fair_wait: Duration,
    pub(super) connect_timeout: Duration,
    pub(crate) response_timeout: Duration,
    pub(super) sync_replicas: SyncReplicas,
    /// `None`: the default, cut to half the response timeout.
    pub(super) sync_timeout: Option<Duration>,
    pub(super) tls: TlsSettings,
    /// How to reach a Sentinel service's master, if not the default.
    pub(super) master: Option<Result<ConnectionInfo>>,
}

/// Where a client connects.
#[derive(Debug)]
pub(super) enum Seeds {
    /// One server (or, with a cluster connection given, a node of a
    /// cluster).
    Server(redis::Client),
    /// Some nodes of a cluster.
    Cluster(Vec<ConnectionInfo>),
    /// The sentinels of a service.
    Sentinel {
        sentinels: Vec<ConnectionInfo>,
        service: String,
    },
}

impl LockClientBuilder {
    pub(super) fn new(client: redis::RedisResult<redis::Client>) -> LockClientBuilder {
        LockClientBuilder::with_seeds(client.map(Seeds::Server).map_err(Error::from_url))
    }

    pub(super) fn with_seeds(seeds: Result<Seeds>) -> LockClientBuilder {
        LockClientBuilder {
            seeds,
            connection: None,
            watchdog_timeout: DEFAULT_WATCHDOG_TIMEOUT,
            fair_wait: DEFAULT_FAIR_LOCK_WAIT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            sync_replicas: SyncReplicas::default(),
            sync_timeout: None,
            tls: TlsSettings::default(),
            master: None,
        }
    }

    /// Trusts the certificate authorities in `pem`, *instead of* the
    /// platform's root certificates, for every `rediss://` connection of
    /// the client (a server whose certificate a private CA signed): the
    /// server's certificate and name are verified against them. With the
    /// `tls-rustls` feature. A PEM that cannot be parsed, or certificates
    /// for a `redis://` URL, fail [`connect`](Self::connect) with
    /// [`Error::Config`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("/etc/redis/tls/ca.crt")?;
    /// let client = redlua::LockClient::builder("rediss://redis.internal:6380/")
    ///     .tls_root_certificate(ca)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tls-rustls")]
    pub fn tls_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.root = Some(pem.into());
        self
    }

    /// Presents this client certificate chain and private key (both PEM)
    /// to servers that ask for one (mutual TLS; `tls-auth-clients` on the
    /// server). With the `tls-rustls` feature.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redlua::LockClient::builder("rediss://redis.internal:6380/")
    ///     .tls_root_certificate(std::fs::read("ca.crt")?)
    ///     .tls_client_certificate(std::fs::read("client.crt")?, std::fs::read("client.key")?)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tls-rustls")]
    pub fn tls_client_certificate(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client = Some((cert_pem.into(), key_pem.into()));
        self
    }

    /// How a Sentinel client ([`LockClient::sentinel_builder`]) reaches the
    /// master: the scheme (`rediss://` for TLS), credentials and database
    /// of `url`, whose host and port are replaced by the master's. By
    /// default: the sentinels' scheme, no credentials, database 0. Other
    /// builders refuse it ([`Error::Config`]).
    pub fn sentinel_master(mut self, url: impl IntoConnectionInfo) -> Self {
        self.master = Some(url.into_connection_info().map_err(Error::from_url));
        self
    }

    /// Sets the watchdog timeout (default 30 s): the lease of holds taken
    /// without an explicit lease. The watchdog renews them every third of it
    /// while they are held. At least 30 ms.
    pub fn watchdog_timeout(mut self, timeout: Duration) -> Self {
        self.watchdog_timeout = timeout;
        self
    }

    /// Sets the wait time of a fair lock's waiter (default
    /// [`DEFAULT_FAIR_LOCK_WAIT_TIMEOUT`], 10 s; Redisson's
    /// `fairLockWaitTimeout`, 5 minutes by default): how long a waiter that
    /// stopped asking (its process died) keeps its place in a
    /// [`FairLock`](crate::FairLock)'s queue, from the deadline of the one
    /// before it; live waiters ask again every half of it. At least 1 ms.
    pub fn fair_lock_wait_timeout(mut self, wait: Duration) -> Self {
        self.fair_wait = wait;
        self
    }

    /// Sets how long opening a connection may take (default 3 s; then
    /// [`Error::Connect`]). On a cluster it bounds each node's connection;
    /// making the cluster connection (which also reads the slots) may take
    /// it plus twice the response timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets how long Redis may take to answer (default 3 s); a connection
    /// that lets it pass is replaced. Keep it well above your slowest
    /// command (the lock scripts take microseconds). In replica-synced mode
    /// a lock script and its `WAIT` may take this plus the
    /// [sync timeout](Self::sync_timeout) (on the client's own cluster
    /// connection, every request may); a connection given with
    /// [`connection`](Self::connection) keeps its own timeout.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Sets how many replicas must acknowledge every acquire, release and
    /// renewal (replica-synced mode; see [`SyncReplicas`]). The default,
    /// [`SyncReplicas::Connected`], waits for the replicas the primary
    /// reports connected, as Redisson's `checkLockSyncedSlaves` does, but
    /// fails an acquire when *any* of them did not acknowledge in time, not
    /// only when none did. With no replica, nothing is waited for.
    ///
    /// The cost: the `WAIT` goes in the script's pipeline, so an operation
    /// takes the replicas' acknowledgement (about one more round trip) and,
    /// while a replica is slow, up to the sync timeout; the client's other
    /// operations queue behind it. One queued behind one whole `WAIT` still
    /// gets its answer within the response timeout plus the sync timeout;
    /// one queued behind more fails as a reply that did not come (an
    /// acquire undone, a release retried), never as a success. Renewals
    /// have a connection of their own (except on a connection you gave the
    /// client). A server that refuses `WAIT` fails
    /// [`connect`](Self::connect) with [`Error::SyncUnavailable`].
    /// [`SyncReplicas::Off`] turns it off: the lock is then as safe as
    /// Redis's asynchronous replication, and fencing tokens protect the
    /// resource across a failover.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// use redlua::{LockClient, SyncReplicas};
    /// let client = LockClient::builder("redis://127.0.0.1:6379/")
    ///     .sync_replicas(SyncReplicas::Off) // a cache-like lock, no failover worries
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn sync_replicas(mut self, replicas: SyncReplicas) -> Self {
        self.sync_replicas = replicas;
        self
    }

    /// Sets how long a lock operation waits for its replicas in synced mode
    /// (default 1 s, as Redisson's `slavesSyncTimeout`, or half a shorter
    /// response timeout); an acquire not acknowledged by then is undone:
    /// [`Error::NotReplicated`]. Longer than zero and shorter than the
    /// response timeout.
    pub fn sync_timeout(mut self, timeout: Duration) -> Self {
        self.sync_timeout = Some(timeout);
        self
    }

    /// Sends commands on this existing connection instead of the client's
    /// own healing one (see [`Connection`]). A redis-rs cluster connection
    /// makes a cluster client, whichever builder it is given to (the URLs
    /// then only tell how to reach the nodes for pub/sub); a cluster
    /// builder refuses a single-node connection ([`Error::Config`]).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let urls = ["redis://127.0.0.1:7000/", "redis://127.0.0.1:7001/"];
    /// let cluster = redlua::redis::cluster::ClusterClient::new(urls.to_vec())?;
    /// let client = redlua::LockClient::cluster_builder(urls)
    ///     .connection(cluster.get_async_connection().await?)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn connection(mut self, connection: impl Into<Connection>) -> Self {
        self.connection = Some(connection.into());
        self
    }

    /// Checks the settings, connects and starts the client's tasks on the
    /// current tokio runtime.
    ///
    /// Errors: [`Error::Config`] for a bad setting (nothing is sent),
    /// [`Error::Connect`] when Redis cannot be reached in time, and in
    /// replica-synced mode (the default) [`Error::SyncUnavailable`] when the
    /// server refuses `WAIT` (probed here).
    ///
    /// # Cancellation
    ///
    /// As for [`LockClient::connect`].
    pub async fn connect(self) -> Result<LockClient> {
        let (client, _worker) = self.connect_with_worker().await?;
        Ok(client)
    }
}
