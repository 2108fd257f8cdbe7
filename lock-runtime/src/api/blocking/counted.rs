//! [`Semaphore`] and [`CountDownLatch`] for blocking code: the async
//! handles, each call run on the client's thread.

use super::thread::ClientThread;
use crate::base::error::Result;
use std::time::Duration;

/// A handle to a semaphore for blocking code, made by
/// [`LockClient::semaphore`](super::LockClient::semaphore). The async
/// [`Semaphore`](crate::Semaphore) documents it: Redisson's `RSemaphore`
/// layout, permits owned by no one, exact acquires and changes. Each method
/// here is the async method of the same name, run on the client's thread.
///
/// # Timeouts
///
/// A blocking call cannot be dropped half-way: [`acquire`](Self::acquire)
/// waits as long as it takes, [`try_acquire_for`](Self::try_acquire_for)
/// at most the time it is given (then `false`, nothing taken),
/// [`try_acquire`](Self::try_acquire) not at all. Each command is bounded by
/// the response timeout; an acquire that failed takes nothing.
///
/// ```no_run
/// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
/// let pool = client.semaphore("render-slots");
/// pool.try_set_permits(8)?;
/// pool.acquire(1)?;
/// // ... at most 8 renders at once ...
/// pool.release(1)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Semaphore {
    inner: crate::Semaphore,
    thread: ClientThread,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("blocking::Semaphore")
            .field(&self.inner)
            .finish()
    }
}

impl Semaphore {
    pub(crate) fn new(inner: crate::Semaphore, thread: ClientThread) -> Semaphore {
        Semaphore { inner, thread }
    }

    /// The semaphore's name (its Redis key).
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// [`Semaphore::try_acquire`](crate::Semaphore::try_acquire), blocking.
    pub fn try_acquire(&self, permits: u64) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.try_acquire(permits).await })
    }

    /// [`Semaphore::acquire`](crate::Semaphore::acquire), blocking as long
    /// as it takes.
    pub fn acquire(&self, permits: u64) -> Result<()> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.acquire(permits).await })
    }

    /// [`Semaphore::try_acquire_for`](crate::Semaphore::try_acquire_for),
    /// blocking at most `wait` (plus one round trip).
    pub fn try_acquire_for(&self, permits: u64, wait: Duration) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.try_acquire_for(permits, wait).await })
    }

    /// [`Semaphore::release`](crate::Semaphore::release), blocking.
    pub fn release(&self, permits: u64) -> Result<i64> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.release(permits).await })
    }

    /// [`Semaphore::add_permits`](crate::Semaphore::add_permits), blocking.
    pub fn add_permits(&self, permits: i64) -> Result<i64> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.add_permits(permits).await })
    }

    /// [`Semaphore::set_permits`](crate::Semaphore::set_permits), blocking.
    pub fn set_permits(&self, permits: u64) -> Result<()> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.set_permits(permits).await })
    }

    /// [`Semaphore::try_set_permits`](crate::Semaphore::try_set_permits),
    /// blocking.
    pub fn try_set_permits(&self, permits: u64) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.try_set_permits(permits).await })
    }

    /// [`Semaphore::available`](crate::Semaphore::available), blocking.
    pub fn available(&self) -> Result<i64> {
        let inner = self.inner.clone();
        self.thread.call(async move { inner.available().await })
    }
}

/// A handle to a count-down latch for blocking code, made by
/// [`LockClient::count_down_latch`](super::LockClient::count_down_latch).
/// The async [`CountDownLatch`](crate::CountDownLatch) documents it. Each
/// method here is the async method of the same name, run on the client's
/// thread; [`wait`](Self::wait) blocks as long as it takes,
/// [`wait_for`](Self::wait_for) at most the time it is given.
///
/// ```no_run
/// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
/// let started = client.count_down_latch("workers-ready");
/// started.try_set_count(4)?;
/// started.count_down()?; // each worker, once
/// started.wait()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CountDownLatch {
    inner: crate::CountDownLatch,
    thread: ClientThread,
}

impl std::fmt::Debug for CountDownLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("blocking::CountDownLatch")
            .field(&self.inner)
            .finish()
    }
}

impl CountDownLatch {
    pub(crate) fn new(inner: crate::CountDownLatch, thread: ClientThread) -> CountDownLatch {
        CountDownLatch { inner, thread }
    }

    /// The latch's name (its Redis key).
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// [`CountDownLatch::try_set_count`](crate::CountDownLatch::try_set_count),
    /// blocking.
    pub fn try_set_count(&self, count: u64) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.try_set_count(count).await })
    }

    /// [`CountDownLatch::count_down`](crate::CountDownLatch::count_down),
    /// blocking.
    pub fn count_down(&self) -> Result<u64> {
        let inner = self.inner.clone();
        self.thread.call(async move { inner.count_down().await })
    }

    /// [`CountDownLatch::count`](crate::CountDownLatch::count), blocking.
    pub fn count(&self) -> Result<u64> {
        let inner = self.inner.clone();
        self.thread.call(async move { inner.count().await })
    }

    /// [`CountDownLatch::delete`](crate::CountDownLatch::delete), blocking.
    pub fn delete(&self) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread.call(async move { inner.delete().await })
    }

    /// [`CountDownLatch::wait`](crate::CountDownLatch::wait), blocking as
    /// long as it takes.
    pub fn wait(&self) -> Result<()> {
        let inner = self.inner.clone();
        self.thread.call(async move { inner.wait().await })
    }

    /// [`CountDownLatch::wait_for`](crate::CountDownLatch::wait_for),
    /// blocking at most `timeout` (plus one round trip).
    pub fn wait_for(&self, timeout: Duration) -> Result<bool> {
        let inner = self.inner.clone();
        self.thread
            .call(async move { inner.wait_for(timeout).await })
    }
}
