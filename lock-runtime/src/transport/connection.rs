//! The command connection a [`LockClient`](crate::LockClient) sends its
//! scripts on, and how it heals.
//!
//! Invariants: the client's own connection (to one server, a Sentinel
//! master or a cluster) is dropped after a failure that leaves it in doubt
//! (an I/O error, a dropped connection, a reply past the response timeout),
//! and the next request opens a new one within the connect timeout; a
//! failure of one connection of a family (the client's and the watchdog's)
//! replaces its siblings too. redis-rs's cluster connection follows
//! `MOVED`/`ASK` and reconnects dropped nodes but keeps retrying a silent
//! one, so the client's own is replaced too, reading the topology afresh.

use crate::base::config::Timeouts;
use crate::base::error::{Failure, classify};
use crate::base::mutex::locked;
use crate::transport::sentinel::Sentinels;
use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use redis::{
    AsyncConnectionConfig, Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Value,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// A multiplexed redis-rs connection for the lock client's commands.
///
/// The client's own ([`LockClient::connect`](crate::LockClient::connect),
/// [`LockClient::cluster`](crate::LockClient::cluster)) heals: it is
/// replaced after an I/O error or a reply that did not come within the
/// response timeout (on a cluster, the new one reads the topology afresh,
/// past a primary that hangs until its replica takes over). A
/// [`ConnectionManager`], [`MultiplexedConnection`] or [`ClusterConnection`]
/// of your own
/// ([`LockClientBuilder::connection`](crate::LockClientBuilder::connection))
/// recovers only as redis-rs makes it: a `MultiplexedConnection` never
/// reconnects, a `ClusterConnection` keeps retrying a silent node.
///
/// ```no_run
/// # async fn demo() -> redlua::redis::RedisResult<()> {
/// let client = redlua::redis::Client::open("redis://127.0.0.1:6380/")?;
/// let manager = client.get_connection_manager().await?;
/// let connection = redlua::Connection::from(manager);
///
/// let cluster = redlua::redis::cluster::ClusterClient::new(vec!["redis://127.0.0.1:7000/"])?;
/// let connection = redlua::Connection::from(cluster.get_async_connection().await?);
/// assert!(connection.is_cluster());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Connection(Inner);

#[derive(Clone)]
enum Inner {
    Healing(Arc<Healing<Source>>),
    Manager(ConnectionManager),
    Multiplexed(MultiplexedConnection),
    Cluster(ClusterConnection),
    HealingCluster(Arc<Healing<ClusterClient>>),
}

/// The client's own connection, healing: to one server or Sentinel master
/// (a [`Source`]), or to a cluster (a [`ClusterClient`]), which `dial`
/// opens its connections to.
struct Healing<D: Dial> {
    dial: D,
    /// The generation of the master the current connection was opened
    /// under (a Sentinel source's; 0 elsewhere).
    generation: AtomicU64,
    /// How long making a connection may take (a cluster's: the seeds, each
    /// within the connect timeout, at once, then the slots, within the
    /// response timeout per node asked; a silent node costs one), and a
    /// server's connection's settings.
    timeouts: Timeouts,
    /// How long a pipeline that ends with a `WAIT` may take on a server:
    /// the response timeout plus the sync timeout.
    synced_timeout: Duration,
    /// The connection, its number, and the family's failures when it was
    /// opened (never held across an `.await`: every request reads it).
    slot: std::sync::Mutex<Option<Opened<D::Con>>>,
    /// Held while a connection is opened: one at a time.
    connecting: Mutex<()>,
    /// How many connections were opened (the next one's number).
    opened: AtomicU64,
    /// Failures seen by this connection and its siblings (the client's and
    /// the watchdog's to one place): a failure of one makes the others
    /// connect afresh before their next request, instead of each finding
    /// out with a timeout of its own (a hung primary, a failover).
    family: Arc<AtomicU64>,
}

/// Where a healing connection connects.
trait Dial: Clone {
    /// The connection it opens.
    type Con: Clone;
    /// What a connect that timed out says.
    const TIMED_OUT: &'static str;
    /// How many times the sentinels named another master (0 elsewhere).
    fn generation(&self) -> u64;
    /// Opens a connection (a server's made with `config`).
    async fn open(&self, config: &AsyncConnectionConfig) -> RedisResult<Self::Con>;
}

/// What a pipeline sent with
/// [`Connection::pipeline_on_primary`] waits for, and so how long its
/// replies may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// Plain commands: the response timeout.
    Response,
    /// A lock script and its `WAIT`: on the client's own connection, the
    /// response timeout plus the sync timeout (its cluster connection has
    /// that for every request; a connection of the user's keeps its own).
    Synced,
}

/// Which connection a reply came on, as far as the client can tell: it
/// changes when the client's own connection is replaced (a failure, a
/// Sentinel failover).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Epoch {
    /// Changes of master seen by the sentinels' watcher (0 elsewhere).
    master: u64,
    /// Failures that replaced a connection of the family, so far.
    failures: u64,
}

/// Where a healing connection connects.
#[derive(Clone)]
pub(crate) enum Source {
    /// One server.
    Server(Box<redis::Client>),
    /// The master the sentinels name at the time (asked at each connect).
    Sentinel(Arc<Sentinels>),
}

impl Dial for Source {
    type Con = MultiplexedConnection;
    const TIMED_OUT: &'static str = "redlua: connecting to Redis timed out";

    fn generation(&self) -> u64 {
        match self {
            Source::Sentinel(sentinels) => sentinels.generation(),
            Source::Server(_) => 0,
        }
    }

    async fn open(&self, config: &AsyncConnectionConfig) -> RedisResult<MultiplexedConnection> {
        match self {
            Source::Server(client) => {
                client
                    .get_multiplexed_async_connection_with_config(config)
                    .await
            }
            Source::Sentinel(sentinels) => Ok(sentinels.connect_master(config).await?.1),
        }
    }
}

impl Dial for ClusterClient {
    type Con = ClusterConnection;
    const TIMED_OUT: &'static str = "redlua: connecting to the Redis Cluster timed out";

    fn generation(&self) -> u64 {
        0
    }

    async fn open(&self, _: &AsyncConnectionConfig) -> RedisResult<ClusterConnection> {
        self.get_async_connection().await
    }
}

/// A connection of a [`Healing`], and what was true when it was opened.
struct Opened<C> {
    number: u64,
    con: C,
    /// The family's failures when it was opened.
    failures: u64,
    /// When it was opened.
    at: Instant,
}

impl<D: Dial> Healing<D> {
    /// A healing connection through `dial`, in a family of its own;
    /// connects once now, so that a dead address fails here.
    async fn start(
        dial: D,
        timeouts: Timeouts,
        synced_timeout: Duration,
    ) -> RedisResult<Arc<Self>> {
        let healing = Healing::in_family(dial, timeouts, synced_timeout, Arc::default());
        healing.get().await?;
        Ok(healing)
    }

    /// Another one like it, in its family (opened when first used).
    fn sibling(&self) -> Arc<Self> {
        let family = self.family.clone();
        let sibling = Healing::in_family(
            self.dial.clone(),
            self.timeouts,
            self.synced_timeout,
            family,
        );
        let generation = self.generation.load(Ordering::SeqCst);
        sibling.generation.store(generation, Ordering::SeqCst);
        sibling
    }

    fn in_family(
        dial: D,
        timeouts: Timeouts,
        synced_timeout: Duration,
        family: Arc<AtomicU64>,
    ) -> Arc<Self> {
        Arc::new(Healing {
            generation: AtomicU64::new(dial.generation()),
            dial,
            timeouts,
            synced_timeout,
            slot: std::sync::Mutex::new(None),
            connecting: Mutex::new(()),
            opened: AtomicU64::new(0),
            family,
        })
    }

    fn epoch(&self) -> Epoch {
        Epoch {
            master: self.dial.generation(),
            failures: self.family.load(Ordering::SeqCst),
        }
    }

    /// The current connection, opening one (within the connect timeout,
    /// else an I/O error saying [`Dial::TIMED_OUT`]) if there is none, or
    /// if the master changed since it was opened (a Sentinel source).
    async fn get(&self) -> RedisResult<(u64, D::Con)> {
        let generation = self.dial.generation();
        if self.generation.swap(generation, Ordering::SeqCst) != generation {
            tracing::debug!(target: crate::observability::targets::CONNECTION, "the master changed; replacing the connection");
            *self.slot() = None;
        }
        if let Some(current) = self.valid() {
            return Ok(current);
        }
        let _connecting = self.connecting.lock().await;
        // Opened by another request meanwhile?
        if let Some(current) = self.valid() {
            return Ok(current);
        }
        let failures = self.family.load(Ordering::SeqCst);
        let timeout = self.timeouts.connect;
        let con = tokio::time::timeout(timeout, self.dial.open(&self.timeouts.config()))
            .await
            .map_err(|_| {
                let within = format!("no connection within {timeout:?}");
                RedisError::from((ErrorKind::Io, D::TIMED_OUT, within))
            })??;
        let number = self.opened.fetch_add(1, Ordering::Relaxed);
        crate::observability::telemetry::connection_opened(number);
        *self.slot() = Some(Opened {
            number,
            con: con.clone(),
            failures,
            at: Instant::now(),
        });
        Ok((number, con))
    }

    /// The current connection, unless there is none or a failure of the
    /// family came after it was opened (as [`Healing::with_valid`]).
    fn valid(&self) -> Option<(u64, D::Con)> {
        self.with_valid(|opened| (opened.number, opened.con.clone()))
    }

    /// `read` of the current connection, unless there is none or a failure
    /// of the family came after it was opened.
    fn with_valid<T>(&self, read: impl FnOnce(&Opened<D::Con>) -> T) -> Option<T> {
        let failures = self.family.load(Ordering::SeqCst);
        match &*self.slot() {
            Some(opened) if opened.failures == failures => Some(read(opened)),
            _ => None,
        }
    }

    /// The slot (a poisoned lock is still usable: it is only ever
    /// replaced whole).
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Opened<D::Con>>> {
        locked(&self.slot)
    }

    /// Drops the current connection (it goes to a node that is no longer
    /// the one meant), and makes its siblings connect afresh too.
    fn discard(&self) {
        let mut current = self.slot();
        if current.take().is_some() {
            self.family.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Drops connection `number` after a failure that leaves it in doubt.
    fn failed(&self, number: u64, error: &RedisError) {
        if classify(error) == Failure::Unknown {
            let mut current = self.slot();
            if current
                .as_ref()
                .is_some_and(|opened| opened.number == number)
            {
                crate::observability::telemetry::connection_failed(error);
                *current = None;
                self.family.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// One request on a healing connection: on its current connection, which
/// is dropped if the request fails in a way that leaves it in doubt.
macro_rules! healed {
    ($healing:expr, |$con:ident| $request:expr) => {{
        let healing = $healing.clone();
        Box::pin(async move {
            let (number, mut $con) = healing.get().await?;
            let reply = $request.await;
            if let Err(error) = &reply {
                healing.failed(number, error);
            }
            reply
        })
    }};
}

/// One request on whichever connection `inner` is: a healing one's current
/// connection ([`healed!`]), or the connection given by the user.
macro_rules! on_connection {
    ($inner:expr, |$con:ident| $request:expr) => {
        match $inner {
            Inner::Healing(healing) => healed!(healing, |$con| $request),
            Inner::HealingCluster(healing) => healed!(healing, |$con| $request),
            Inner::Manager($con) => $request,
            Inner::Multiplexed($con) => $request,
            Inner::Cluster($con) => $request,
        }
    };
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Inner::Healing(_) => f.write_str("Connection::Healing"),
            Inner::Manager(_) => f.write_str("Connection::Manager"),
            Inner::Multiplexed(_) => f.write_str("Connection::Multiplexed"),
            Inner::Cluster(_) => f.write_str("Connection::Cluster"),
            Inner::HealingCluster(_) => f.write_str("Connection::HealingCluster"),
        }
    }
}

impl From<ConnectionManager> for Connection {
    fn from(con: ConnectionManager) -> Self {
        Connection(Inner::Manager(con))
    }
}

impl From<MultiplexedConnection> for Connection {
    fn from(con: MultiplexedConnection) -> Self {
        Connection(Inner::Multiplexed(con))
    }
}

impl From<ClusterConnection> for Connection {
    fn from(con: ClusterConnection) -> Self {
        Connection(Inner::Cluster(con))
    }
}

impl Connection {
    /// Whether this is a Redis Cluster connection.
    ///
    /// ```
    /// # async fn demo(manager: redlua::redis::aio::ConnectionManager) {
    /// assert!(!redlua::Connection::from(manager).is_cluster());
    /// # }
    /// ```
    pub fn is_cluster(&self) -> bool {
        matches!(self.0, Inner::Cluster(_) | Inner::HealingCluster(_))
    }

    /// The client's own healing connection to the cluster of `client`
    /// (built with `response_timeout`, for every request); connects once
    /// now, so that a cluster out of reach fails here.
    pub(crate) async fn healing_cluster(
        client: ClusterClient,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> RedisResult<Connection> {
        let timeouts = Timeouts {
            connect: connect_timeout.saturating_add(response_timeout.saturating_mul(2)),
            response: response_timeout,
        };
        let healing = Healing::start(client, timeouts, response_timeout).await?;
        Ok(Connection(Inner::HealingCluster(healing)))
    }

    /// The client's own healing connection to the server of `source`;
    /// connects once now, so that a dead address fails here. A pipeline
    /// sent with [`Deadline::Synced`] may take `response_timeout` plus
    /// `sync_timeout` (zero when replica-synced mode is off).
    pub(crate) async fn healing(
        source: Source,
        timeouts: Timeouts,
        sync_timeout: Duration,
    ) -> RedisResult<Connection> {
        let synced_timeout = timeouts.response.saturating_add(sync_timeout);
        let healing = Healing::start(source, timeouts, synced_timeout).await?;
        Ok(Connection(Inner::Healing(healing)))
    }

    /// Another connection like this one, healing on its own (opened when
    /// first used): the watchdog's, so that renewals never queue behind
    /// the client's other commands (a flood of acquires, a slow `WAIT`, a
    /// blocking command of the user's). A connection of the user's cannot
    /// be copied: its sibling is itself.
    pub(crate) fn sibling(&self) -> Connection {
        match &self.0 {
            Inner::Healing(healing) => Connection(Inner::Healing(healing.sibling())),
            Inner::HealingCluster(healing) => Connection(Inner::HealingCluster(healing.sibling())),
            Inner::Manager(_) | Inner::Multiplexed(_) | Inner::Cluster(_) => self.clone(),
        }
    }

    /// Sends `pipeline` as one batch on one connection: on a cluster, to the
    /// primary that owns `slot` (whatever its commands are: a lone `WAIT`
    /// would go to every primary), elsewhere to the one server. Replies to
    /// the commands that failed are `Value::ServerError`s in the result.
    /// `deadline` says how long the replies may take.
    pub(crate) async fn pipeline_on_primary(
        &mut self,
        pipeline: &Pipeline,
        slot: u16,
        deadline: Deadline,
    ) -> RedisResult<Vec<Value>> {
        let count = pipeline.len();
        let primary = || SingleNodeRoutingInfo::SpecificNode(Route::new(slot, SlotAddr::Master));
        match &mut self.0 {
            Inner::Cluster(con) => {
                con.route_pipeline(pipeline.clone(), 0, count, primary())
                    .await
            }
            Inner::HealingCluster(healing) => {
                healed!(healing, |con| con.route_pipeline(
                    pipeline.clone(),
                    0,
                    count,
                    primary()
                ))
                .await
            }
            Inner::Healing(healing) if deadline == Deadline::Synced => {
                let synced_timeout = healing.synced_timeout;
                healed!(healing, |con| {
                    // This handle only: the connection's other requests
                    // keep the response timeout.
                    con.set_response_timeout(synced_timeout);
                    con.req_packed_commands(pipeline, 0, count)
                })
                .await
            }
            Inner::Healing(_) | Inner::Manager(_) | Inner::Multiplexed(_) => {
                self.req_packed_commands(pipeline, 0, count).await
            }
        }
    }

    /// Which connection the next request goes on, as far as the client can
    /// tell (see [`Epoch`]).
    pub(crate) fn epoch(&self) -> Epoch {
        match &self.0 {
            Inner::Healing(healing) => healing.epoch(),
            Inner::HealingCluster(healing) => healing.epoch(),
            Inner::Manager(_) | Inner::Multiplexed(_) | Inner::Cluster(_) => Epoch::default(),
        }
    }

    /// The address of the one server the client's own connection goes to:
    /// `None` for a Sentinel master, a cluster, or a connection given by
    /// the user (its address is not known).
    pub(crate) fn server_addr(&self) -> Option<&redis::ConnectionAddr> {
        match &self.0 {
            Inner::Healing(healing) => match &healing.dial {
                Source::Server(client) => Some(client.get_connection_info().addr()),
                Source::Sentinel(_) => None,
            },
            _ => None,
        }
    }

    /// When the connection the next request goes on was opened: `None` if
    /// it is still to be opened, or for a connection given by the user or
    /// a cluster connection (not known).
    pub(crate) fn opened_at(&self) -> Option<Instant> {
        let Inner::Healing(healing) = &self.0 else {
            return None;
        };
        // A master changed since: replaced before the next request.
        if healing.generation.load(Ordering::SeqCst) != healing.dial.generation() {
            return None;
        }
        healing.with_valid(|opened| opened.at)
    }

    /// Makes the next request to the primary of `key`'s slot find it afresh,
    /// after a replica answered for it (a failover not caught up with): the
    /// client's own connection is replaced (the new one reads the slots, or
    /// asks the sentinels, or resolves the host name again); a cluster
    /// connection of the user's is sent a keyed command that the replica
    /// redirects (redis-rs then reads the slots). `false` where nothing can
    /// be found afresh: a connection to one server.
    pub(crate) async fn refresh_topology(&mut self, key: &str) -> bool {
        match &mut self.0 {
            Inner::HealingCluster(healing) => {
                healing.discard();
                true
            }
            Inner::Cluster(_) => {
                let _ = redis::cmd("PTTL").arg(key).query_async::<Value>(self).await;
                true
            }
            Inner::Healing(healing) => {
                // A managed service's host name may have moved.
                healing.discard();
                matches!(healing.dial, Source::Sentinel(_))
            }
            Inner::Manager(_) | Inner::Multiplexed(_) => false,
        }
    }

    /// Drops the client's own connection after a reply inside a pipeline
    /// that puts it in doubt (`READONLY` from a demoted primary).
    pub(crate) fn discard(&self) {
        match &self.0 {
            Inner::Healing(healing) => healing.discard(),
            Inner::HealingCluster(healing) => healing.discard(),
            Inner::Manager(_) | Inner::Multiplexed(_) | Inner::Cluster(_) => {}
        }
    }

    /// Whether the node the next request goes to is still its service's
    /// primary: for the client's own connection to a Sentinel master, the
    /// sentinels are asked now (a replaced master takes writes until they
    /// demote it, seconds later), failing when none answers; `true` for
    /// every other connection (a cluster node answers for itself).
    pub(crate) async fn confirm_primary(&self) -> RedisResult<bool> {
        match &self.0 {
            Inner::Healing(healing) => match &healing.dial {
                Source::Sentinel(sentinels) => {
                    sentinels.master_addr().await?;
                    Ok(healing.generation.load(Ordering::SeqCst) == sentinels.generation())
                }
                Source::Server(_) => Ok(true),
            },
            _ => Ok(true),
        }
    }

    /// Opens the client's own connection to one server (or Sentinel
    /// master) now if the next request would (its failure is the
    /// request's); nothing for other connections.
    pub(crate) async fn open(&self) -> RedisResult<()> {
        match &self.0 {
            Inner::Healing(healing) => healing.get().await.map(drop),
            _ => Ok(()),
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        on_connection!(&mut self.0, |con| con.req_packed_command(cmd))
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        on_connection!(&mut self.0, |con| con
            .req_packed_commands(pipeline, offset, count))
    }

    fn get_db(&self) -> i64 {
        match &self.0 {
            Inner::Healing(healing) => match &healing.dial {
                Source::Server(client) => client.get_connection_info().redis_settings().db(),
                Source::Sentinel(sentinels) => sentinels.master_template().redis_settings().db(),
            },
            Inner::Manager(con) => con.get_db(),
            Inner::Multiplexed(con) => con.get_db(),
            Inner::Cluster(con) => con.get_db(),
            Inner::HealingCluster(_) => 0,
        }
    }
}
