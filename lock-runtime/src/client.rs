//! [`LockClient`]: one identity (a uuid), one command connection, one pub/sub
//! connection, one watchdog and one background worker, shared by every lock
//! made from it.

use crate::background::{self, Job};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::holds::Holds;
use crate::kind::Kind;
use crate::lock::Lock;
use crate::pubsub::PubSubHub;
use crate::rwlock::ReadWriteLock;
use redis::IntoConnectionInfo;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The default watchdog timeout, which is also the lease of a lock taken
/// without an explicit one: 30 seconds, as in Redisson.
pub const DEFAULT_WATCHDOG_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a release's latch is kept, so that a retried release finds the
/// first one's result.
const LATCH_TTL: Duration = Duration::from_secs(30);

/// A handle to Redis for locks. Cheap to clone; clones share everything.
///
/// Each client has a random uuid (v4): the owners of its holds are
/// `<uuid>:<owner-id>`, as Redisson writes them. It keeps one multiplexed,
/// reconnecting command connection, one pub/sub connection shared by every
/// waiter, and one watchdog task that renews all of its holds.
///
/// ```no_run
/// # async fn demo() -> Result<(), redlua_runtime::Error> {
/// let client = redlua_runtime::LockClient::connect("redis://127.0.0.1:6379/").await?;
/// let guard = client.lock("orders:42").lock().await?;
/// // ... the lock is held, its lease renewed by the watchdog ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LockClient {
    pub(crate) inner: Arc<ClientInner>,
}

impl std::fmt::Debug for LockClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockClient")
            .field("id", &self.inner.id)
            .field("watchdog_timeout", &self.inner.config.watchdog_timeout)
            .finish_non_exhaustive()
    }
}

/// Settings of a client.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub watchdog_timeout: Duration,
    pub latch_ttl: Duration,
    /// `PUBLISH`, or `SPUBLISH` for sharded pub/sub.
    pub publish: &'static str,
}

/// What the clones of a client share.
pub(crate) struct ClientInner {
    pub id: String,
    pub con: Connection,
    pub hub: PubSubHub,
    pub config: Config,
    pub holds: Mutex<Holds>,
    pub jobs: mpsc::UnboundedSender<Job>,
}

impl ClientInner {
    /// The registry of holds (a poisoned lock is still usable: its data is
    /// kept consistent at every step).
    pub(crate) fn holds(&self) -> std::sync::MutexGuard<'_, Holds> {
        self.holds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands `job` to the background worker; never blocks.
    pub(crate) fn submit(&self, job: Job) {
        if self.jobs.send(job).is_err() {
            tracing::warn!(
                "redlua: the background worker is gone (tokio runtime shut down?); a lock will be freed by its lease"
            );
        }
    }
}

impl LockClient {
    /// Connects to the Redis server at `url` with default settings.
    ///
    /// Must be called within a tokio runtime (the client starts its
    /// background worker on it).
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
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(url: impl IntoConnectionInfo) -> LockClientBuilder {
        LockClientBuilder {
            client: redis::Client::open(url),
            connection: None,
            watchdog_timeout: DEFAULT_WATCHDOG_TIMEOUT,
        }
    }

    /// A builder for a client on an existing redis-rs [`redis::Client`]
    /// (which opens the pub/sub connection); give it an existing command
    /// connection with [`LockClientBuilder::connection`].
    pub fn from_client(client: redis::Client) -> LockClientBuilder {
        LockClientBuilder {
            client: Ok(client),
            connection: None,
            watchdog_timeout: DEFAULT_WATCHDOG_TIMEOUT,
        }
    }

    /// A handle to the reentrant lock `name`. Cheap: nothing is sent to
    /// Redis until it is used. An invalid name (empty, too long, or with
    /// braces that would split its keys across cluster slots) makes every
    /// operation of the handle fail with [`Error::InvalidName`].
    pub fn lock(&self, name: &str) -> Lock {
        Lock::new(self.inner.clone(), name, Kind::Reentrant)
    }

    /// A handle to the read/write lock `name` (Redisson's
    /// `RReadWriteLock`): many readers or one writer. See [`ReadWriteLock`].
    pub fn read_write_lock(&self, name: &str) -> ReadWriteLock {
        ReadWriteLock::new(self.inner.clone(), name)
    }

    /// This client's uuid, the first part of its owners' names.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The watchdog timeout: the lease of holds taken without one, renewed
    /// every third of it.
    pub fn watchdog_timeout(&self) -> Duration {
        self.inner.config.watchdog_timeout
    }
}

/// Builds a [`LockClient`]; see [`LockClient::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `connect` is called"]
pub struct LockClientBuilder {
    client: redis::RedisResult<redis::Client>,
    connection: Option<Connection>,
    watchdog_timeout: Duration,
}

impl LockClientBuilder {
    /// Sets the watchdog timeout (default 30 s): the lease of holds taken
    /// without an explicit lease. The watchdog renews them every third of it
    /// while they are held. At least 30 ms.
    pub fn watchdog_timeout(mut self, timeout: Duration) -> Self {
        self.watchdog_timeout = timeout;
        self
    }

    /// Sends commands on this existing connection instead of opening a
    /// [`redis::aio::ConnectionManager`].
    pub fn connection(mut self, connection: impl Into<Connection>) -> Self {
        self.connection = Some(connection.into());
        self
    }

    /// Connects and starts the client's background worker on the current
    /// tokio runtime.
    ///
    /// # Cancellation
    ///
    /// Dropping the future drops the half-made connections; nothing is left
    /// behind.
    pub async fn connect(self) -> Result<LockClient> {
        if self.watchdog_timeout < Duration::from_millis(30) {
            return Err(Error::Config(format!(
                "the watchdog timeout must be at least 30 ms, not {:?}",
                self.watchdog_timeout
            )));
        }
        let client = self.client?;
        let con = match self.connection {
            Some(con) => con,
            None => Connection::from(client.get_connection_manager().await?),
        };
        let config = Config {
            watchdog_timeout: self.watchdog_timeout,
            latch_ttl: LATCH_TTL,
            publish: "PUBLISH",
        };
        let (jobs, queue) = mpsc::unbounded_channel();
        let inner = Arc::new(ClientInner {
            id: uuid::Uuid::new_v4().to_string(),
            con,
            hub: PubSubHub::new(client),
            config,
            holds: Mutex::new(Holds::default()),
            jobs,
        });
        background::start(&inner, queue);
        Ok(LockClient { inner })
    }
}
