//! [`Semaphore`] and [`CountDownLatch`] for blocking code: the async
//! handles, each call run on the client's thread.

use super::thread::{ClientThread, blocking, blocking_handles, debug_as_blocking};
use crate::base::error::Result;
use std::time::Duration;

blocking_handles! {
    /// A handle to a semaphore for blocking code, made by
    /// [`LockClient::semaphore`](super::LockClient::semaphore); the async
    /// [`Semaphore`](crate::Semaphore) documents it. Each method here is the
    /// async method of the same name, run on the client's thread, bounded as
    /// the [module](super#timeouts-instead-of-cancellation) says (an acquire
    /// that failed or gave up takes nothing).
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
    pub struct Semaphore(crate::Semaphore) {
        /// [`Semaphore::try_acquire`](crate::Semaphore::try_acquire), blocking.
        fn try_acquire(permits: u64) -> bool;

        /// [`Semaphore::acquire`](crate::Semaphore::acquire), blocking as long
        /// as it takes.
        fn acquire(permits: u64) -> ();

        /// [`Semaphore::try_acquire_for`](crate::Semaphore::try_acquire_for),
        /// blocking at most `wait` (plus one round trip).
        fn try_acquire_for(permits: u64, wait: Duration) -> bool;

        /// [`Semaphore::release`](crate::Semaphore::release), blocking.
        fn release(permits: u64) -> i64;

        /// [`Semaphore::add_permits`](crate::Semaphore::add_permits), blocking.
        fn add_permits(permits: i64) -> i64;

        /// [`Semaphore::set_permits`](crate::Semaphore::set_permits), blocking.
        fn set_permits(permits: u64) -> ();

        /// [`Semaphore::try_set_permits`](crate::Semaphore::try_set_permits),
        /// blocking.
        fn try_set_permits(permits: u64) -> bool;

        /// [`Semaphore::available`](crate::Semaphore::available), blocking.
        fn available() -> i64;
    }
}

blocking_handles! {
    /// A handle to a count-down latch for blocking code, made by
    /// [`LockClient::count_down_latch`](super::LockClient::count_down_latch);
    /// the async [`CountDownLatch`](crate::CountDownLatch) documents it. Each
    /// method here is the async method of the same name, run on the client's
    /// thread.
    ///
    /// ```no_run
    /// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
    /// let started = client.count_down_latch("workers-ready");
    /// started.try_set_count(4)?;
    /// started.count_down()?; // each worker, once
    /// started.wait()?;
    /// # Ok(()) }
    /// ```
    pub struct CountDownLatch(crate::CountDownLatch) {
        /// [`CountDownLatch::try_set_count`](crate::CountDownLatch::try_set_count),
        /// blocking.
        fn try_set_count(count: u64) -> bool;

        /// [`CountDownLatch::count_down`](crate::CountDownLatch::count_down),
        /// blocking.
        fn count_down() -> u64;

        /// [`CountDownLatch::count`](crate::CountDownLatch::count), blocking.
        fn count() -> u64;

        /// [`CountDownLatch::delete`](crate::CountDownLatch::delete), blocking.
        fn delete() -> bool;

        /// [`CountDownLatch::wait`](crate::CountDownLatch::wait), blocking as
        /// long as it takes.
        fn wait() -> ();

        /// [`CountDownLatch::wait_for`](crate::CountDownLatch::wait_for),
        /// blocking at most `timeout` (plus one round trip).
        fn wait_for(timeout: Duration) -> bool;
    }
}
