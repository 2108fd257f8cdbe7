//! [`LockClient`]: one identity, connections, watchdog and background
//! worker, shared by every handle made from it; its entry points and
//! handles here, its settings in `builder.rs`, connecting in `connect.rs`.

mod builder;
mod connect;

pub use builder::LockClientBuilder;
use builder::Seeds;

use crate::api::inspect::{LockInfo, inspect};
use crate::api::lock::{FairLock, Lock};
use crate::api::rwlock::ReadWriteLock;
use crate::base::error::{Error, Result};
use crate::base::kind::Kind;
use crate::holds::shared::Shared;
use crate::transport::connection::Connection;
use redis::{ConnectionInfo, IntoConnectionInfo};
use std::sync::Arc;
use std::time::Duration;

/// A handle to Redis for locks. Cheap to clone; clones share everything.
///
/// Each client has a random uuid (v4): its holds' owners are
/// `<uuid>:<owner-id>`, as Redisson writes them. It keeps one multiplexed
/// command connection (replaced when it fails or goes silent), one pub/sub
/// connection shared by every waiter (one per node on Redis Cluster), and
/// one watchdog task that renews all of its holds. Through Redis Sentinel
/// ([`LockClient::sentinel`]) the connections go to the master the
/// sentinels name, and move when they name another.
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
/// of the client's runtime. On a current-thread runtime
/// (`#[tokio::main(flavor = "current_thread")]`, `#[tokio::test]`), code
/// that blocks the thread while holding a lock (`std::thread::sleep`, a
/// long computation) stops them all: the lease is not renewed, and another
/// client may take the lock once it ends. The guard shows it even so:
/// [`LockGuard::is_lost`](crate::LockGuard::is_lost) turns true. Blocking
/// code should use [`blocking::LockClient`](crate::blocking::LockClient),
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
    /// Within a tokio runtime (the client's tasks run on it). Fails with
    /// [`Error::Connect`] when the server cannot be reached within the
    /// connect timeout (3 s).
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections (as for every
    /// `connect` of the client and its builders).
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
    /// Within a tokio runtime. Fails with [`Error::Connect`] when the
    /// cluster cannot be reached in time (the connect timeout plus twice
    /// the response timeout, 9 s by default), [`Error::Config`] when `urls`
    /// is empty, [`Error::Redis`] for a URL that cannot be parsed.
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
    /// As for [`LockClient::connect`].
    pub async fn cluster<T: IntoConnectionInfo>(
        urls: impl IntoIterator<Item = T>,
    ) -> Result<LockClient> {
        LockClient::cluster_builder(urls).connect().await
    }

    /// A builder for a client of a Redis Cluster, seeded with the URLs of
    /// some of its nodes (the others are found through them).
    ///
    /// Scripts go on a redis-rs cluster connection, routed by the lock's
    /// slot (all of one lock's keys and its channel share it), following
    /// `MOVED`/`ASK` and failovers. Waiters subscribe on the node of the
    /// slot, with sharded pub/sub where the cluster has it (Redis 7+,
    /// probed at connect). The watchdog renews one slot's locks together,
    /// 100 per call. The first URL's credentials and TLS settings serve
    /// every node. A cluster connection of your own is given with
    /// [`LockClientBuilder::connection`].
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
        let seeds = parse_urls(urls, "a cluster client needs the URL of at least one node");
        LockClientBuilder::with_seeds(seeds.map(Seeds::Cluster))
    }

    /// Connects through Redis Sentinel to the master of `service`, with
    /// default settings. See [`LockClient::sentinel_builder`].
    ///
    /// Within a tokio runtime. Fails with [`Error::Connect`] when no
    /// sentinel names a master that answers as one within the connect
    /// timeout, [`Error::Config`] when `sentinels` or `service` is empty,
    /// [`Error::Redis`] for a URL that cannot be parsed.
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
    /// As for [`LockClient::connect`].
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
    /// Each time the client opens a connection (at first, and after a
    /// failure or a silence), it asks the sentinels for the master, and
    /// refuses a node that does not answer `ROLE` as one. An old master
    /// takes writes for seconds after a failover, so the client also asks
    /// every 500 ms (until it and every clone of its
    /// [`connection`](LockClient::connection) are dropped), and moves its
    /// connections as soon as the sentinels name another; a write refused
    /// with `READONLY` drops the connection too, and an acquire retries it.
    /// Holds survive a failover as far as the replica had their writes: one
    /// the new master never saw is reported lost by the watchdog.
    ///
    /// The master is reached with the first sentinel URL's TLS setting,
    /// without credentials, on database 0, unless
    /// [`LockClientBuilder::sentinel_master`] says otherwise. TLS
    /// certificates given to the builder apply to sentinels and masters.
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
        let none = "a Sentinel client needs the URL of at least one sentinel";
        let seeds = parse_urls(sentinels, none).and_then(|sentinels| match service {
            "" => Err(Error::Config(
                "a Sentinel client needs the name of the service (master)".to_string(),
            )),
            _ => Ok(Seeds::Sentinel {
                sentinels,
                service: service.to_string(),
            }),
        });
        LockClientBuilder::with_seeds(seeds)
    }

    /// A builder for a client on an existing redis-rs [`redis::Client`]
    /// (which opens the connections); give it an existing command
    /// connection with [`LockClientBuilder::connection`].
    pub fn from_client(client: redis::Client) -> LockClientBuilder {
        LockClientBuilder::new(Ok(client))
    }

    /// A handle to the reentrant lock `name`; nothing is sent until it is
    /// used. An invalid name (empty, too long, or with braces that would
    /// split its keys across cluster slots) makes every operation of the
    /// handle fail with [`Error::InvalidName`] (as for every handle).
    pub fn lock(&self, name: &str) -> Lock {
        Lock::new(self.shared.clone(), name, Kind::Reentrant)
    }

    /// A handle to the fair (first come, first served) lock `name`
    /// (Redisson's `RFairLock`): waiters get it in the order they asked,
    /// and a release wakes only the first of them. See [`FairLock`].
    pub fn fair_lock(&self, name: &str) -> FairLock {
        FairLock::new(self.shared.clone(), name, Kind::Fair { enqueue: true })
    }

    /// A handle to the read/write lock `name` (Redisson's
    /// `RReadWriteLock`): many readers or one writer. See [`ReadWriteLock`].
    pub fn read_write_lock(&self, name: &str) -> ReadWriteLock {
        ReadWriteLock::new(self.shared.clone(), name)
    }

    /// Reads the lock `name`, of either kind, without touching it (what
    /// `lockctl status` shows): see [`Lock::inspect`].
    ///
    /// # Cancellation
    ///
    /// Only reads: dropping the future changes nothing.
    pub async fn inspect(&self, name: &str) -> Result<LockInfo> {
        inspect(&self.shared, name).await
    }

    /// The client's command connection (a cheap clone), for your own
    /// commands and scripts: it heals, and follows a Sentinel master.
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

/// The connection settings of `urls`; [`Error::Config`] saying `none` when
/// there is none.
fn parse_urls<T: IntoConnectionInfo>(
    urls: impl IntoIterator<Item = T>,
    none: &str,
) -> Result<Vec<ConnectionInfo>> {
    let infos = urls
        .into_iter()
        .map(|url| url.into_connection_info().map_err(Error::from_url))
        .collect::<Result<Vec<_>>>()?;
    if infos.is_empty() {
        return Err(Error::Config(none.to_string()));
    }
    Ok(infos)
}
