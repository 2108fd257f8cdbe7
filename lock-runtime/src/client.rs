//! [`LockClient`]: one identity (a uuid), one command connection, one
//! pub/sub connection (one per node on Redis Cluster), one watchdog and one
//! background worker, shared by every lock made from it.

use crate::background;
use crate::config::{
    Config, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT, DEFAULT_WATCHDOG_TIMEOUT, LATCH_TTL,
    MIN_WATCHDOG_TIMEOUT, check_lease,
};
use crate::connection::Connection;
use crate::error::{Error, Failure, Result, classify};
use crate::holds::Holds;
use crate::inspect::{LockInfo, inspect};
use crate::kind::Kind;
use crate::lock::Lock;
use crate::owner::Ids;
use crate::pubsub::PubSubHub;
use crate::replies::Publish;
use crate::rwlock::ReadWriteLock;
use crate::shared::Shared;
use redis::{ConnectionInfo, IntoConnectionInfo};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// A handle to Redis for locks. Cheap to clone; clones share everything.
///
/// Each client has a random uuid (v4): the owners of its holds are
/// `<uuid>:<owner-id>`, as Redisson writes them. It keeps one multiplexed
/// command connection (replaced when it fails or goes silent), one pub/sub
/// connection shared by every waiter (pinged every second, replaced when it
/// does not answer), and one watchdog task that renews all of its holds.
/// On Redis Cluster ([`LockClient::cluster`]) the command connection is
/// redis-rs's cluster connection, and there is one pub/sub connection per
/// node that owns the slot of a lock someone waits for.
///
/// ```no_run
/// # async fn demo() -> Result<(), redlua_runtime::Error> {
/// let client = redlua_runtime::LockClient::connect("redis://127.0.0.1:6379/").await?;
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
    /// # async fn demo() -> Result<(), redlua_runtime::Error> {
    /// use std::time::Duration;
    /// let client = redlua_runtime::LockClient::builder("redis://127.0.0.1:6379/")
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
    /// # async fn demo() -> Result<(), redlua_runtime::Error> {
    /// let client = redlua_runtime::LockClient::cluster([
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
    /// # async fn demo() -> Result<(), redlua_runtime::Error> {
    /// use std::time::Duration;
    /// let client = redlua_runtime::LockClient::cluster_builder(["redis://127.0.0.1:7000/"])
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
            .map(|url| url.into_connection_info().map_err(Error::Redis))
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
    connect_timeout: Duration,
    response_timeout: Duration,
}

/// Where a client connects.
#[derive(Debug)]
enum Seeds {
    /// One server (or, with a cluster connection given, a node of a
    /// cluster).
    Server(redis::Client),
    /// Some nodes of a cluster.
    Cluster(Vec<ConnectionInfo>),
}

impl LockClientBuilder {
    fn new(client: redis::RedisResult<redis::Client>) -> LockClientBuilder {
        LockClientBuilder::with_seeds(client.map(Seeds::Server).map_err(Error::Redis))
    }

    fn with_seeds(seeds: Result<Seeds>) -> LockClientBuilder {
        LockClientBuilder {
            seeds,
            connection: None,
            watchdog_timeout: DEFAULT_WATCHDOG_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
        }
    }

    /// Sets the watchdog timeout (default 30 s): the lease of holds taken
    /// without an explicit lease. The watchdog renews them every third of it
    /// while they are held. At least 30 ms.
    pub fn watchdog_timeout(mut self, timeout: Duration) -> Self {
        self.watchdog_timeout = timeout;
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
    /// microseconds).
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
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
    /// let cluster = redis::cluster::ClusterClient::new(urls.to_vec())?;
    /// let client = redlua_runtime::LockClient::cluster_builder(urls)
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
        let (connect_timeout, response_timeout) = (self.connect_timeout, self.response_timeout);
        let (con, hub, publish) = match (self.seeds?, self.connection) {
            (Seeds::Server(client), Some(con)) if con.is_cluster() => {
                let template = client.get_connection_info().clone();
                cluster_parts(template, con, connect_timeout, response_timeout).await?
            }
            (Seeds::Server(client), con) => {
                let con = match con {
                    Some(con) => con,
                    None => Connection::healing(client.clone(), connect_timeout, response_timeout)
                        .await
                        .map_err(|e| Error::Connect {
                            addr: masked(client.get_connection_info()),
                            reason: e.to_string(),
                        })?,
                };
                let hub = PubSubHub::new(client, connect_timeout, response_timeout);
                (con, hub, Publish::Plain)
            }
            (Seeds::Cluster(nodes), Some(con)) => {
                if !con.is_cluster() {
                    return Err(Error::Config(
                        "a cluster client needs a cluster connection \
                         (redis::cluster_async::ClusterConnection)"
                            .to_string(),
                    ));
                }
                cluster_parts(nodes[0].clone(), con, connect_timeout, response_timeout).await?
            }
            (Seeds::Cluster(nodes), None) => {
                let connect_error = |reason: String| Error::Connect {
                    addr: masked(&nodes[0]),
                    reason,
                };
                let cluster = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(connect_timeout)
                    .response_timeout(response_timeout)
                    .build()
                    .map_err(|e| connect_error(e.to_string()))?;
                let con = Connection::healing_cluster(cluster, connect_timeout, response_timeout)
                    .await
                    .map_err(|e| connect_error(e.to_string()))?;
                let template = nodes[0].clone();
                cluster_parts(template, con, connect_timeout, response_timeout).await?
            }
        };
        let config = Config {
            watchdog_timeout: self.watchdog_timeout,
            latch_ttl: LATCH_TTL,
            publish,
        };
        let (jobs, queue) = mpsc::unbounded_channel();
        let by_slot = con.is_cluster();
        let shared = Arc::new(Shared {
            id: uuid::Uuid::new_v4().to_string().into(),
            con,
            hub,
            config,
            holds: Mutex::new(Holds::new(by_slot)),
            ids: Ids::default(),
            jobs,
        });
        let worker = background::start(queue);
        Ok((LockClient { shared }, worker))
    }
}

/// A cluster client's command connection, pub/sub hub and way of
/// announcing releases: sharded pub/sub if the cluster has it (probed once,
/// with `PUBSUB SHARDNUMSUB`, as Redisson does).
async fn cluster_parts(
    template: ConnectionInfo,
    mut con: Connection,
    connect_timeout: Duration,
    response_timeout: Duration,
) -> Result<(Connection, PubSubHub, Publish)> {
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
    Ok((con, hub, publish))
}

/// A node's address for messages, without its password.
fn masked(info: &ConnectionInfo) -> String {
    match info.addr() {
        redis::ConnectionAddr::Tcp(host, port) => format!("redis://{host}:{port}"),
        other => other.to_string(),
    }
}
