//! [`LockClient`] and its builder for blocking code: the async client, run
//! on a thread of its own.

use super::lock::{FairLock, Lock, ReadWriteLock};
use super::thread::{ClientThread, debug_as_blocking};
use crate::api::inspect::LockInfo;
use crate::base::error::Result;
use redis::IntoConnectionInfo;
use std::time::Duration;

debug_as_blocking!(LockClient);

/// A handle to Redis for locks, for blocking code. Cheap to clone; clones
/// share everything.
///
/// It is the async [`LockClient`](crate::LockClient) on a thread of its own
/// (see the [module documentation](super)).
///
/// ```no_run
/// # fn demo() -> Result<(), redlua::Error> {
/// let client = redlua::blocking::LockClient::connect("redis://127.0.0.1:6379/")?;
/// let guard = client.lock("orders:42").lock()?;
/// // ... the lock is held, its lease renewed on the client's thread ...
/// guard.unlock()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LockClient {
    inner: crate::LockClient,
    thread: ClientThread,
}

impl LockClient {
    /// Starts the client's thread and connects to the Redis server at `url`
    /// with default settings. Fails as
    /// [`LockClient::connect`](crate::LockClient::connect) does, or with
    /// [`Error::ClientThread`](crate::Error::ClientThread) when the thread
    /// cannot be started; on failure the thread has ended.
    pub fn connect(url: impl IntoConnectionInfo) -> Result<LockClient> {
        LockClient::builder(url).connect()
    }

    /// A builder for a client with other settings.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), redlua::Error> {
    /// use std::time::Duration;
    /// let client = redlua::blocking::LockClient::builder("redis://127.0.0.1:6379/")
    ///     .watchdog_timeout(Duration::from_secs(10))
    ///     .connect_timeout(Duration::from_secs(1))
    ///     .connect()?;
    /// # Ok(()) }
    /// ```
    pub fn builder(url: impl IntoConnectionInfo) -> LockClientBuilder {
        LockClientBuilder(crate::LockClient::builder(url))
    }

    /// [`LockClient::cluster`](crate::LockClient::cluster), on the client's
    /// thread.
    pub fn cluster<T: IntoConnectionInfo>(urls: impl IntoIterator<Item = T>) -> Result<LockClient> {
        LockClient::cluster_builder(urls).connect()
    }

    /// A builder for a client of a Redis Cluster; see
    /// [`LockClient::cluster_builder`](crate::LockClient::cluster_builder).
    pub fn cluster_builder<T: IntoConnectionInfo>(
        urls: impl IntoIterator<Item = T>,
    ) -> LockClientBuilder {
        LockClientBuilder(crate::LockClient::cluster_builder(urls))
    }

    /// A builder for a client on an existing redis-rs [`redis::Client`]
    /// (which opens the connections, on the client's thread).
    pub fn from_client(client: redis::Client) -> LockClientBuilder {
        LockClientBuilder(crate::LockClient::from_client(client))
    }

    /// A handle to the reentrant lock `name`
    /// ([`LockClient::lock`](crate::LockClient::lock)).
    pub fn lock(&self, name: &str) -> Lock {
        Lock::new(self.inner.lock(name), self.thread.clone())
    }

    /// A handle to the fair (first come, first served) lock `name`: a
    /// blocking [`FairLock`](crate::FairLock).
    ///
    /// ```no_run
    /// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
    /// let guard = client.fair_lock("payments:settle").lock()?;
    /// guard.unlock()?;
    /// # Ok(()) }
    /// ```
    pub fn fair_lock(&self, name: &str) -> FairLock {
        Lock::new(self.inner.fair_lock(name), self.thread.clone())
    }

    /// A handle to the semaphore `name` (Redisson's `RSemaphore`): permits
    /// owned by no one. See [`Semaphore`](crate::Semaphore).
    pub fn semaphore(&self, name: &str) -> super::Semaphore {
        super::Semaphore::new(self.inner.semaphore(name), self.thread.clone())
    }

    /// A handle to the leased semaphore `name` (Redisson's
    /// `RPermitExpirableSemaphore`): permits with an id and a lease each.
    /// See [`LeasedSemaphore`](crate::LeasedSemaphore).
    pub fn leased_semaphore(&self, name: &str) -> super::LeasedSemaphore {
        super::LeasedSemaphore::new(self.inner.leased_semaphore(name), self.thread.clone())
    }

    /// A handle to the count-down latch `name` (Redisson's
    /// `RCountDownLatch`). See [`CountDownLatch`](crate::CountDownLatch).
    pub fn count_down_latch(&self, name: &str) -> super::CountDownLatch {
        super::CountDownLatch::new(self.inner.count_down_latch(name), self.thread.clone())
    }

    /// A handle to the read/write lock `name`: many readers or one writer.
    /// See [`ReadWriteLock`](crate::ReadWriteLock).
    pub fn read_write_lock(&self, name: &str) -> ReadWriteLock {
        ReadWriteLock::new(self.inner.read_write_lock(name), self.thread.clone())
    }

    /// [`LockClient::inspect`](crate::LockClient::inspect): reads the lock
    /// `name` in one round trip.
    pub fn inspect(&self, name: &str) -> Result<LockInfo> {
        let (client, name) = (self.inner.clone(), name.to_string());
        self.thread.call(async move { client.inspect(&name).await })
    }

    /// This client's uuid, the first part of its owners' names.
    pub fn id(&self) -> &str {
        self.inner.id()
    }

    /// The watchdog timeout: the lease of holds taken without one, renewed
    /// every third of it on the client's thread.
    pub fn watchdog_timeout(&self) -> Duration {
        self.inner.watchdog_timeout()
    }
}

/// Builds a blocking [`LockClient`]; see [`LockClient::builder`]. The
/// settings are those of the async
/// [`LockClientBuilder`](crate::LockClientBuilder).
#[derive(Debug)]
#[must_use = "a builder does nothing until `connect` is called"]
pub struct LockClientBuilder(crate::LockClientBuilder);

impl LockClientBuilder {
    /// Sets the watchdog timeout (default 30 s; see
    /// [`LockClientBuilder::watchdog_timeout`](crate::LockClientBuilder::watchdog_timeout)).
    pub fn watchdog_timeout(self, timeout: Duration) -> Self {
        LockClientBuilder(self.0.watchdog_timeout(timeout))
    }

    /// Sets the wait time of a fair lock's waiter (default 10 s); see
    /// [`LockClientBuilder::fair_lock_wait_timeout`](crate::LockClientBuilder::fair_lock_wait_timeout).
    pub fn fair_lock_wait_timeout(self, wait: Duration) -> Self {
        LockClientBuilder(self.0.fair_lock_wait_timeout(wait))
    }

    /// Sets how long opening a connection may take (default 3 s).
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        LockClientBuilder(self.0.connect_timeout(timeout))
    }

    /// Sets how long Redis may take to answer (default 3 s); a connection
    /// that lets it pass is replaced. It also bounds how long dropping a
    /// [`LockGuard`](super::LockGuard) waits for its release.
    pub fn response_timeout(self, timeout: Duration) -> Self {
        LockClientBuilder(self.0.response_timeout(timeout))
    }

    /// Checks the settings, starts the client's thread and connects on it.
    /// Errors as for
    /// [`LockClientBuilder::connect`](crate::LockClientBuilder::connect), or
    /// [`Error::ClientThread`](crate::Error::ClientThread); on failure the
    /// thread has ended.
    pub fn connect(self) -> Result<LockClient> {
        let drop_wait = self.0.response_timeout;
        let (inner, thread) = ClientThread::connect(self.0, drop_wait)?;
        Ok(LockClient { inner, thread })
    }
}
