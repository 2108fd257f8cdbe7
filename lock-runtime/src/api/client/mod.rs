//! [`LockClient`]: one identity (a uuid), one command connection, one
//! pub/sub connection (one per node on Redis Cluster), one watchdog and one
//! background worker, shared by every lock made from it.
//!
//! - `mod.rs`: [`LockClient`], its entry points and the handles it makes;
//! - `builder.rs`: [`LockClientBuilder`], the settings and where it connects;
//! - `connect.rs`: connecting: checking the settings, then making the
//!   connections, the watchdog and the background worker a client shares.

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
        let seeds = parse_urls(urls, "a cluster client needs the URL of at least one node");
        LockClientBuilder::with_seeds(seeds.map(Seeds::Cluster))
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
        FairLock::new(self.shared.clone(), name, Kind::Fair { enqueue: true })
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
