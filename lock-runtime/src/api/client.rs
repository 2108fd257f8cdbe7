//! [`LockClient`]: one identity (a uuid), one command connection, one
//! pub/sub connection (one per node on Redis Cluster), one watchdog and one
//! background worker, shared by every lock made from it.

use crate::api::fair::FairLock;
use crate::api::inspect::{LockInfo, inspect};
use crate::api::lock::Lock;
use crate::api::rwlock::ReadWriteLock;
use crate::base::config::{
    Config, DEFAULT_CONNECT_TIMEOUT, DEFAULT_FAIR_LOCK_WAIT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT,
    DEFAULT_WATCHDOG_TIMEOUT, LATCH_TTL, MIN_WATCHDOG_TIMEOUT, check_lease,
};
use crate::base::error::{Error, Failure, Result, classify};
use crate::base::kind::Kind;
use crate::base::owner::Ids;
use crate::base::sync_replicas::{DEFAULT_SYNC_TIMEOUT, SyncReplicas};
use crate::holds::background;
use crate::holds::latches::Latches;
use crate::holds::loss_watch::{LossWatch, WatchTarget};
use crate::holds::registry::Holds;
use crate::holds::shared::Shared;
use crate::protocol::replies::Publish;
use crate::transport::connection::{Connection, Source};
use crate::transport::pubsub::PubSubHub;
use crate::transport::replication::Replication;
use crate::transport::sentinel::Sentinels;
use crate::transport::tls::TlsSettings;
use redis::{ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// A handle to Redis for locks. Cheap to clone; clones share everything.
///
/// Each client has a random uuid (v4): the owners of its holds are
/// `<uuid>:<owner-id>`, as Redisson writes them. It keeps one multiplexed
/// command connection (replaced when it fails or goes silent), one pub/sub
/// connection shared by every waiter (pinged after a second with nothing
/// on it, replaced when it does not answer), and one watchdog task that
/// renews all of its holds.
/// On Redis Cluster ([`LockClient::cluster`]) the command connection is
/// redis-rs's cluster connection, and there is one pub/sub connection per
/// node that owns the slot of a lock someone waits for. Through Redis
/// Sentinel ([`LockClient::sentinel`]) both connections go to the master
/// the sentinels name, and move when they name another.
///
/// ```no_run
/// # async fn demo() -> Result<(), redlua::Error> {
/// let client = redlua::LockClient::connect("redis://127.0.0.1:6379/").await?;
/// let guard = client.lock("orders:42").lock().await?;
/// // ... the lock is held, its lease renewed by the watchdog ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
///
/// # On a blocked runtime
///
/// The watchdog, the pub/sub connection and background releases are tasks
/// of the runtime the client was made on. On a current-thread runtime
/// (`#[tokio::main(flavor = "current_thread")]`, `#[tokio::test]`), code
/// that blocks the thread while holding a lock (`std::thread::sleep`, a
/// blocking read, a long computation) stops them all: the lease is not
/// renewed, Redis frees the lock after the watchdog timeout, and another
/// client may take it. The guard shows it, even with no task running:
/// [`LockGuard::valid_until`](crate::LockGuard::valid_until) does not move,
/// and [`LockGuard::is_lost`](crate::LockGuard::is_lost) turns true when it
/// passes. Blocking code should use [`blocking::LockClient`](crate::blocking::LockClient),
/// whose thread renews leases whatever the caller does; async code that
/// must block should do it in `spawn_blocking` or on a multi-thread runtime.
#[derive(Clone)]
pub struct LockClient {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for LockClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockClient")
            .field("id", &self.shared.id)
            .field("watchdog_timeout", &self.shared.config.watchdog_timeout)
            .finish_non_exhaustive()
    }
}

impl LockClient {
    /// Connects to the Redis server at `url` with default settings.
    ///
    /// Must be called within a tokio runtime (the client starts its
    /// background worker on it). Fails with [`Error::Connect`] when the
    /// server cannot be reached within the connect timeout (3 s).
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections; nothing is left
    /// behind.
    pub async fn connect(url: impl IntoConnectionInfo) -> Result<LockClient> {
        LockClient::builder(url).connect().await
    }

    /// A builder for a client with other settings.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// use std::time::Duration;
    /// let client = redlua::LockClient::builder("redis://127.0.0.1:6379/")
    ///     .watchdog_timeout(Duration::from_secs(10))
    ///     .connect_timeout(Duration::from_secs(1))
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(url: impl IntoConnectionInfo) -> LockClientBuilder {
        LockClientBuilder::new(redis::Client::open(url))
    }

    /// Connects to a Redis Cluster, seeded with the URLs of some of its
    /// nodes, with default settings. See [`LockClient::cluster_builder`].
    ///
    /// Must be called within a tokio runtime. Fails with
    /// [`Error::Connect`] when the cluster cannot be reached in time (the
    /// connect timeout plus twice the response timeout, 9 s by default),
    /// [`Error::Config`] when `urls` is empty, and [`Error::Redis`] for a URL
    /// that cannot be parsed.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// let client = redlua::LockClient::cluster([
    ///     "redis://127.0.0.1:7000/",
    ///     "redis://127.0.0.1:7001/",
    /// ])
    /// .await?;
    /// let guard = client.lock("orders:42").lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections; nothing is left
    /// behind.
    pub async fn cluster<T: IntoConnectionInfo>(
        urls: impl IntoIterator<Item = T>,
    ) -> Result<LockClient> {
        LockClient::cluster_builder(urls).connect().await
    }

    /// A builder for a client of a Redis Cluster, seeded with the URLs of
    /// some of its nodes (the others are found through them).
    ///
    /// The client sends its scripts on a redis-rs cluster connection, which
    /// routes each by the lock's slot (every key and the channel of one lock
    /// share it) and follows `MOVED`/`ASK` and failovers. Waiters subscribe
    /// on the node that owns the lock's slot: with sharded pub/sub
    /// (`SSUBSCRIBE`, and the releases `SPUBLISH`) when the cluster has it
    /// (Redis 7+; probed once, at connect), with plain pub/sub otherwise.
    /// The watchdog renews the locks of one slot together, 100 per call.
    /// The credentials (and TLS settings) of the first URL are used for
    /// every node. To send commands on a cluster connection of your own,
    /// give it with [`LockClientBuilder::connection`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// use std::time::Duration;
    /// let client = redlua::LockClient::cluster_builder(["redis://127.0.0.1:7000/"])
    ///     .watchdog_timeout(Duration::from_secs(10))
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn cluster_builder<T: IntoConnectionInfo>(
        urls: impl IntoIterator<Item = T>,
    ) -> LockClientBuilder {
        let nodes: Result<Vec<ConnectionInfo>> = urls
            .into_iter()
            .map(|url| url.into_connection_info().map_err(Error::from_url))
            .collect();
        let seeds = nodes.and_then(|nodes| {
            if nodes.is_empty() {
                Err(Error::Config(
                    "a cluster client needs the URL of at least one node".to_string(),
                ))
            } else {
                Ok(Seeds::Cluster(nodes))
            }
        });
        LockClientBuilder::with_seeds(seeds)
    }

    /// Connects through Redis Sentinel to the master of `service`, with
    /// default settings. See [`LockClient::sentinel_builder`].
    ///
    /// Must be called within a tokio runtime. Fails with [`Error::Connect`]
    /// when no sentinel names a master that answers as one within the
    /// connect timeout, [`Error::Config`] when `sentinels` or `service` is
    /// empty, and [`Error::Redis`] for a URL that cannot be parsed.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// let client = redlua::LockClient::sentinel(
    ///     ["redis://10.0.0.1:26379/", "redis://10.0.0.2:26379/", "redis://10.0.0.3:26379/"],
    ///     "mymaster",
    /// )
    /// .await?;
    /// let guard = client.lock("orders:42").lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections; nothing is left
    /// behind.
    pub async fn sentinel<T: IntoConnectionInfo>(
        sentinels: impl IntoIterator<Item = T>,
        service: &str,
    ) -> Result<LockClient> {
        LockClient::sentinel_builder(sentinels, service)
            .connect()
            .await
    }

    /// A builder for a client of the master of the Sentinel service
    /// `service`, found through the sentinels at `sentinels` (asked in
    /// this order).
    ///
    /// Each time the client opens its command connection or its pub/sub
    /// connection (at first, and again after a failure or a silence), it
    /// asks the sentinels which node is the master now, and refuses a node
    /// that does not answer `ROLE` as a master. An old master goes on
    /// taking writes for seconds after a failover (the sentinels demote it
    /// later), so the client also asks the sentinels every 500 ms, and
    /// replaces both connections as soon as they name another master: the
    /// watchdog renews on the new master, waiters subscribe there. A write
    /// refused with `READONLY` (a demoted master) drops the connection too,
    /// and an acquire retries it. Holds survive a failover as far as the
    /// replica had their writes (replication is asynchronous): a hold whose
    /// acquire the new master never saw is reported lost by the watchdog.
    /// That asking stops once the client and every clone of its
    /// [`connection`](LockClient::connection) are dropped.
    ///
    /// The master is reached with the TLS setting of the first sentinel
    /// URL (`rediss://` for both), without credentials, on database 0,
    /// unless [`LockClientBuilder::sentinel_master`] says otherwise. TLS
    /// certificates given to the builder apply to every TLS connection,
    /// sentinels' and masters'.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redlua::Error> {
    /// use std::time::Duration;
    /// let client = redlua::LockClient::sentinel_builder(
    ///     ["redis://10.0.0.1:26379/", "redis://10.0.0.2:26379/"],
    ///     "mymaster",
    /// )
    /// .sentinel_master("redis://locks:secret@master/0")
    /// .watchdog_timeout(Duration::from_secs(10))
    /// .connect()
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub fn sentinel_builder<T: IntoConnectionInfo>(
        sentinels: impl IntoIterator<Item = T>,
        service: &str,
    ) -> LockClientBuilder {
        let nodes: Result<Vec<ConnectionInfo>> = sentinels
            .into_iter()
            .map(|url| url.into_connection_info().map_err(Error::from_url))
            .collect();
        let seeds = nodes.and_then(|sentinels| {
            if sentinels.is_empty() {
                Err(Error::Config(
                    "a Sentinel client needs the URL of at least one sentinel".to_string(),
                ))
            } else if service.is_empty() {
                Err(Error::Config(
                    "a Sentinel client needs the name of the service (master)".to_string(),
                ))
            } else {
                Ok(Seeds::Sentinel {
                    sentinels,
                    service: service.to_string(),
                })
            }
        });
        LockClientBuilder::with_seeds(seeds)
    }

    /// A builder for a client on an existing redis-rs [`redis::Client`]
    /// (which opens the connections); give it an existing command
    /// connection with [`LockClientBuilder::connection`].
    pub fn from_client(client: redis::Client) -> LockClientBuilder {
        LockClientBuilder::new(Ok(client))
    }

    /// A handle to the reentrant lock `name`. Cheap: nothing is sent to
    /// Redis until it is used. An invalid name (empty, too long, or with
    /// braces that would split its keys across cluster slots) makes every
    /// operation of the handle fail with [`Error::InvalidName`].
    pub fn lock(&self, name: &str) -> Lock {
        Lock::new(self.shared.clone(), name, Kind::Reentrant)
    }

    /// A handle to the fair (first come, first served) lock `name`
    /// (Redisson's `RFairLock`): waiters get it in the order they asked,
    /// and a release wakes only the first of them. See [`FairLock`].
    pub fn fair_lock(&self, name: &str) -> FairLock {
        FairLock::new(self.shared.clone(), name)
    }

    /// A handle to the read/write lock `name` (Redisson's
    /// `RReadWriteLock`): many readers or one writer. See [`ReadWriteLock`].
    pub fn read_write_lock(&self, name: &str) -> ReadWriteLock {
        ReadWriteLock::new(self.shared.clone(), name)
    }

    /// Reads the lock `name`, of either kind, without touching it: its
    /// kind, holders, counts, TTL and fencing token (what `lockctl status`
    /// shows).
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn inspect(&self, name: &str) -> Result<LockInfo> {
        inspect(&self.shared, name).await
    }

    /// The client's command connection (a cheap clone of it), for your
    /// own commands and scripts: it heals as the client's does, and on a
    /// Sentinel client it follows the master through failovers.
    ///
    /// ```no_run
    /// # async fn demo(client: redlua::LockClient) -> redlua::redis::RedisResult<()> {
    /// let mut con = client.connection();
    /// let answer: String = redlua::redis::cmd("PING").query_async(&mut con).await?;
    /// # let _ = answer; Ok(()) }
    /// ```
    pub fn connection(&self) -> Connection {
        self.shared.con.clone()
    }

    /// This client's uuid, the first part of its owners' names.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The watchdog timeout: the lease of holds taken without one, renewed
    /// every third of it.
    pub fn watchdog_timeout(&self) -> Duration {
        self.shared.config.watchdog_timeout
    }
}

/// Builds a [`LockClient`]; see [`LockClient::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `connect` is called"]
pub struct LockClientBuilder {
    seeds: Result<Seeds>,
    connection: Option<Connection>,
    watchdog_timeout: Duration,
    fair_wait: Duration,
    connect_timeout: Duration,
    response_timeout: Duration,
    sync_replicas: SyncReplicas,
    /// `None`: the default, cut to half the response timeout.
    sync_timeout: Option<Duration>,
    tls: TlsSettings,
    /// How to reach a Sentinel service's master, if not the default.
    master: Option<Result<ConnectionInfo>>,
}

/// Where a client connects.
#[derive(Debug)]
enum Seeds {
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
    fn new(client: redis::RedisResult<redis::Client>) -> LockClientBuilder {
        LockClientBuilder::with_seeds(client.map(Seeds::Server).map_err(Error::from_url))
    }

    fn with_seeds(seeds: Result<Seeds>) -> LockClientBuilder {
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

    /// Trusts the certificate authority (or authorities) in `pem` for
    /// `rediss://` connections, *instead of* the platform's root
    /// certificates: for a server whose certificate a private CA signed.
    /// The server's certificate and name are verified against it, on every
    /// connection of the client (command, pub/sub, cluster nodes, sentinels
    /// and the master they name). With the `tls-rustls` feature.
    ///
    /// A PEM that cannot be parsed fails [`connect`](Self::connect) with
    /// [`Error::Config`]; giving certificates for a `redis://` URL does too.
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
    /// `fairLockWaitTimeout`, whose default is 5 minutes): how long a
    /// waiter that stopped asking (its process died) keeps its place in a
    /// [`FairLock`]'s queue, counted from the deadline of the waiter
    /// before it. Live waiters keep their place whatever it is: they ask
    /// again at least every half of it. At least 1 ms.
    pub fn fair_lock_wait_timeout(mut self, wait: Duration) -> Self {
        self.fair_wait = wait;
        self
    }

    /// Sets how long opening a connection may take (default 3 s); a dead
    /// address fails with [`Error::Connect`] after that. On a cluster it
    /// bounds each node's connection; making the cluster connection (which
    /// also reads the slots from a node, and may first meet a silent one)
    /// may take it plus twice the response timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets how long Redis may take to answer (default 3 s). A connection
    /// that lets it pass is replaced; the pub/sub connection's pings use it
    /// too. Keep it well above your slowest command (the lock scripts take
    /// microseconds). In replica-synced mode a lock script and its `WAIT`
    /// may take this plus the [sync timeout](Self::sync_timeout) on the
    /// client's own connection (on its own cluster connection, every
    /// request may: redis-rs has one response timeout per cluster client);
    /// a connection given with [`connection`](Self::connection) keeps its
    /// own timeout.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Sets how many replicas must acknowledge every acquire, release and
    /// renewal (replica-synced mode; see [`SyncReplicas`]). The default,
    /// [`SyncReplicas::Connected`], waits for the replicas the primary
    /// reports connected, as Redisson's `checkLockSyncedSlaves` does — but
    /// fails an acquire when *any* of them did not acknowledge in time, not
    /// only when none did. Where there is no replica, nothing is waited for.
    ///
    /// The cost: the `WAIT` goes in the same pipeline as the script, so a
    /// lock operation takes the replicas' acknowledgement (about one more
    /// round trip between primary and replica) and, while a replica is slow,
    /// up to the sync timeout. `WAIT` holds up the commands sent after it on
    /// the same connection: while a replica does not answer, every lock
    /// operation of the client waits for the `WAIT`s queued before it, each
    /// up to the sync timeout. A synced operation may take the response
    /// timeout plus the sync timeout, so one queued behind one whole `WAIT`
    /// still gets its answer; one queued behind more fails as a reply that
    /// did not come (an acquire undone, a release retried), never as a
    /// success. Renewals are not in that queue: the watchdog has a
    /// connection of its own (except on a connection you gave the
    /// client). A server that
    /// refuses `WAIT` makes [`connect`](Self::connect) fail with
    /// [`Error::SyncUnavailable`]. [`SyncReplicas::Off`] turns it off: the
    /// lock is then as safe as Redis's asynchronous replication, and fencing
    /// tokens are what protect the resource across a failover.
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
    /// (default 1 s, as Redisson's `slavesSyncTimeout`); an acquire not
    /// acknowledged by then is undone and fails with
    /// [`Error::NotReplicated`]. Longer than zero and shorter than the
    /// response timeout; left at its default, it is cut to half a shorter
    /// response timeout. A lock script and its `WAIT` may take the response
    /// timeout plus this on the client's own connection.
    pub fn sync_timeout(mut self, timeout: Duration) -> Self {
        self.sync_timeout = Some(timeout);
        self
    }

    /// Sends commands on this existing connection instead of the client's
    /// own healing one (see [`Connection`]).
    ///
    /// A redis-rs cluster connection makes the client a cluster client (see
    /// [`LockClient::cluster_builder`]), whichever builder it is given to:
    /// the builder's URLs then only tell how to reach the nodes for pub/sub
    /// (credentials, TLS). A cluster builder refuses a single-node
    /// connection ([`Error::Config`]).
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

    /// Checks the settings, connects and starts the client's background
    /// worker on the current tokio runtime.
    ///
    /// Errors: [`Error::Config`] for a bad setting (nothing is sent),
    /// [`Error::Connect`] when Redis cannot be reached in time, and in
    /// replica-synced mode (the default) [`Error::SyncUnavailable`] when the
    /// server refuses `WAIT` (probed once, here).
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections; nothing is left
    /// behind.
    pub async fn connect(self) -> Result<LockClient> {
        let (client, _worker) = self.connect_with_worker().await?;
        Ok(client)
    }

    /// [`LockClientBuilder::connect`], also returning the background
    /// worker's task, which ends once the client, every handle and guard
    /// made from it, and their last background job are gone (what the
    /// blocking client's thread waits for).
    pub(crate) async fn connect_with_worker(
        self,
    ) -> Result<(LockClient, tokio::task::JoinHandle<()>)> {
        check_lease("the watchdog timeout", self.watchdog_timeout)?;
        check_lease("the fair lock wait timeout", self.fair_wait)?;
        if self.watchdog_timeout < MIN_WATCHDOG_TIMEOUT {
            return Err(Error::Config(format!(
                "the watchdog timeout must be at least 30 ms, not {:?}",
                self.watchdog_timeout
            )));
        }
        for (what, timeout) in [
            ("the connect timeout", self.connect_timeout),
            ("the response timeout", self.response_timeout),
        ] {
            if timeout.is_zero() {
                return Err(Error::Config(format!("{what} must be longer than zero")));
            }
        }
        let sync_timeout = self
            .sync_timeout
            .unwrap_or(DEFAULT_SYNC_TIMEOUT.min(self.response_timeout / 2));
        if self.sync_replicas != SyncReplicas::Off {
            if sync_timeout.is_zero() || sync_timeout >= self.response_timeout {
                return Err(Error::Config(format!(
                    "the sync timeout ({sync_timeout:?}) must be longer than zero and shorter than the response timeout ({:?})",
                    self.response_timeout
                )));
            }
            if self.sync_replicas == SyncReplicas::AtLeast(0) {
                return Err(Error::Config(
                    "SyncReplicas::AtLeast needs at least 1 replica (SyncReplicas::Off waits for none)"
                        .to_string(),
                ));
            }
        }
        let (connect_timeout, response_timeout) = (self.connect_timeout, self.response_timeout);
        // A synced pipeline's WAIT may block its connection this long.
        let synced_extra = if self.sync_replicas == SyncReplicas::Off {
            Duration::ZERO
        } else {
            sync_timeout
        };
        let tls = &self.tls;
        let seeds = self.seeds?;
        if self.master.is_some() && !matches!(seeds, Seeds::Sentinel { .. }) {
            return Err(Error::Config(
                "sentinel_master is for a Sentinel client (LockClient::sentinel_builder)"
                    .to_string(),
            ));
        }
        let (con, hub, publish, watch) = match (seeds, self.connection) {
            (Seeds::Server(client), Some(con)) if con.is_cluster() => {
                let template = tls.apply(client.get_connection_info().clone())?;
                cluster_parts(template, con, connect_timeout, response_timeout).await?
            }
            (Seeds::Server(client), con) => {
                let client = redis::Client::open(tls.apply(client.get_connection_info().clone())?)
                    .map_err(Error::Redis)?;
                let con = match con {
                    Some(con) => con,
                    None => Connection::healing(
                        Source::Server(Box::new(client.clone())),
                        connect_timeout,
                        response_timeout,
                        synced_extra,
                    )
                    .await
                    .map_err(|e| Error::connect(masked(client.get_connection_info()), e))?,
                };
                let watch = WatchTarget::Server(client.clone());
                let hub = PubSubHub::new(client, connect_timeout, response_timeout);
                (con, hub, Publish::Plain, watch)
            }
            (Seeds::Cluster(nodes), Some(con)) => {
                if !con.is_cluster() {
                    return Err(Error::Config(
                        "a cluster client needs a cluster connection \
                         (redis::cluster_async::ClusterConnection)"
                            .to_string(),
                    ));
                }
                let template = tls.apply(nodes[0].clone())?;
                cluster_parts(template, con, connect_timeout, response_timeout).await?
            }
            (Seeds::Cluster(nodes), None) => {
                let nodes = nodes
                    .into_iter()
                    .map(|node| tls.apply(node))
                    .collect::<Result<Vec<_>>>()?;
                let connect_error = |error| Error::connect(masked(&nodes[0]), error);
                let cluster = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(connect_timeout)
                    // Synced pipelines may take this long (one response
                    // timeout for every request of a cluster client).
                    .response_timeout(response_timeout.saturating_add(synced_extra));
                #[cfg(feature = "tls-rustls")]
                let cluster = match tls.certificates() {
                    Some(certificates) => cluster.certs(certificates),
                    None => cluster,
                };
                let cluster = cluster.build().map_err(connect_error)?;
                let con = Connection::healing_cluster(
                    cluster,
                    connect_timeout,
                    response_timeout.saturating_add(synced_extra),
                )
                .await
                .map_err(connect_error)?;
                let template = nodes[0].clone();
                cluster_parts(template, con, connect_timeout, response_timeout).await?
            }
            (Seeds::Sentinel { sentinels, service }, con) => {
                // Sentinels and masters may differ: plain sentinels of
                // masters that speak TLS, say.
                let sentinels = sentinels
                    .into_iter()
                    .map(|sentinel| tls.apply_where_tls(sentinel))
                    .collect::<Result<Vec<_>>>()?;
                let master = match self.master {
                    Some(master) => master?,
                    None => sentinels[0]
                        .clone()
                        .set_redis_settings(RedisConnectionInfo::default()),
                };
                let master = tls.apply_where_tls(master)?;
                tls.check_used(
                    crate::transport::tls::uses_tls(&master)
                        || sentinels.iter().any(crate::transport::tls::uses_tls),
                )?;
                let addr = format!(
                    "the master of `{service}` (sentinels {})",
                    sentinels.iter().map(masked).collect::<Vec<_>>().join(", ")
                );
                let sentinels = Arc::new(Sentinels::new(
                    sentinels,
                    service,
                    master,
                    connect_timeout,
                    response_timeout,
                ));
                let con = match con {
                    Some(con) if con.is_cluster() => {
                        return Err(Error::Config(
                            "a Sentinel client cannot send on a cluster connection".to_string(),
                        ));
                    }
                    Some(con) => con,
                    None => Connection::healing(
                        Source::Sentinel(sentinels.clone()),
                        connect_timeout,
                        response_timeout,
                        synced_extra,
                    )
                    .await
                    .map_err(|e| Error::connect(addr, e))?,
                };
                sentinels.watch();
                let watch = WatchTarget::Sentinel(sentinels.clone());
                let hub = PubSubHub::sentinel(sentinels, connect_timeout, response_timeout);
                (con, hub, Publish::Plain, watch)
            }
        };
        let mut probe_con = con.clone();
        let sync = Replication::probe(&mut probe_con, self.sync_replicas, sync_timeout).await?;
        let config = Config {
            watchdog_timeout: self.watchdog_timeout,
            fair_wait: self.fair_wait,
            latch_ttl: LATCH_TTL,
            publish,
        };
        let (jobs, queue) = mpsc::unbounded_channel();
        let by_slot = con.is_cluster();
        let renewal_con = con.sibling();
        let shared = Arc::new(Shared {
            id: uuid::Uuid::new_v4().to_string().into(),
            con,
            hub,
            losses: LossWatch::new(watch, connect_timeout, response_timeout),
            config,
            sync,
            holds: Arc::new(Mutex::new(Holds::new(by_slot))),
            ids: Ids::default(),
            renewal_con,
            jobs,
            latches: Latches::default(),
        });
        let worker = background::start(queue);
        crate::observability::telemetry::client_started();
        Ok((LockClient { shared }, worker))
    }
}

/// A cluster client's command connection, pub/sub hub, way of
/// announcing releases (sharded pub/sub if the cluster has it: probed once,
/// with `PUBSUB SHARDNUMSUB`, as Redisson does) and loss watch target.
async fn cluster_parts(
    template: ConnectionInfo,
    mut con: Connection,
    connect_timeout: Duration,
    response_timeout: Duration,
) -> Result<(Connection, PubSubHub, Publish, WatchTarget)> {
    let probe = redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .query_async::<redis::Value>(&mut con)
        .await;
    let sharded = match probe {
        Ok(_) => true,
        // Unknown subcommand: a cluster before Redis 7.
        Err(e) if classify(&e) == Failure::Refused => false,
        Err(e) => {
            return Err(Error::Connect {
                addr: masked(&template),
                reason: e.to_string(),
            });
        }
    };
    let watch = WatchTarget::Cluster {
        template: template.clone(),
        con: con.clone(),
    };
    let hub = PubSubHub::cluster(
        template,
        con.clone(),
        sharded,
        connect_timeout,
        response_timeout,
    );
    let publish = if sharded {
        Publish::Sharded
    } else {
        Publish::Plain
    };
    Ok((con, hub, publish, watch))
}

/// A node's address for messages, without its password.
fn masked(info: &ConnectionInfo) -> String {
    match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => format!("redis://{host}:{port}"),
        redis::ConnectionAddr::TcpTls { host, port, .. } => format!("rediss://{host}:{port}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both builds are checked: `cargo test -p redlua-runtime --lib` (no
    /// TLS) and with `--features tls-rustls` (tools/test runs both).
    #[tokio::test]
    async fn a_rediss_url_needs_the_tls_feature() {
        let connected = LockClient::connect("rediss://127.0.0.1:1/").await;
        if cfg!(feature = "tls-rustls") {
            // TLS is there: the URL is fine, nothing listens on port 1.
            assert!(
                matches!(&connected, Err(Error::Connect { addr, .. }) if addr == "rediss://127.0.0.1:1"),
                "{connected:?}"
            );
        } else {
            assert!(
                matches!(&connected, Err(Error::TlsNotEnabled)),
                "{connected:?}"
            );
            let message = Error::TlsNotEnabled.to_string();
            assert!(message.contains("`tls-rustls` feature"), "{message}");
        }
    }
}
