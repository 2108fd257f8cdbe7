//! [`LeasedSemaphore`] and [`PermitGuard`] for blocking code: the async
//! handle and guard, each call run on the client's thread.

use super::thread::{Blocking, ClientThread, blocking, blocking_handles, debug_as_blocking};
use crate::base::error::Result;
use std::time::{Duration, Instant};

debug_as_blocking!(PermitGuard);

blocking_handles! {
    /// A handle to a leased semaphore for blocking code, made by
    /// [`LockClient::leased_semaphore`](super::LockClient::leased_semaphore);
    /// the async [`LeasedSemaphore`](crate::LeasedSemaphore) documents it. Each
    /// method here is the async method of the same name, run on the client's
    /// thread (which renews the permits' leases).
    ///
    /// ```no_run
    /// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
    /// let encoders = client.leased_semaphore("gpu-encoders");
    /// encoders.try_set_permits(4)?;
    /// let permit = encoders.acquire(1)?;
    /// // ... blocking work, while !permit.is_lost() ...
    /// permit.release()?;
    /// # Ok(()) }
    /// ```
    pub struct LeasedSemaphore(crate::LeasedSemaphore) {
        /// [`LeasedSemaphore::try_acquire`](crate::LeasedSemaphore::try_acquire),
        /// blocking.
        fn try_acquire(permits: u64) -> Option<PermitGuard>;

        /// [`LeasedSemaphore::acquire`](crate::LeasedSemaphore::acquire),
        /// blocking as long as it takes.
        fn acquire(permits: u64) -> PermitGuard;

        /// [`LeasedSemaphore::acquire_with_lease`](crate::LeasedSemaphore::acquire_with_lease),
        /// blocking as long as it takes.
        fn acquire_with_lease(permits: u64, lease: Duration) -> PermitGuard;

        /// [`LeasedSemaphore::try_acquire_for`](crate::LeasedSemaphore::try_acquire_for),
        /// blocking at most `wait` (plus one round trip).
        fn try_acquire_for(
            permits: u64,
            wait: Duration,
            lease: Option<Duration>
        ) -> Option<PermitGuard>;

        /// [`LeasedSemaphore::set_permits`](crate::LeasedSemaphore::set_permits),
        /// blocking.
        fn set_permits(permits: u64) -> ();

        /// [`LeasedSemaphore::try_set_permits`](crate::LeasedSemaphore::try_set_permits),
        /// blocking.
        fn try_set_permits(permits: u64) -> bool;

        /// [`LeasedSemaphore::add_permits`](crate::LeasedSemaphore::add_permits),
        /// blocking.
        fn add_permits(permits: i64) -> i64;

        /// [`LeasedSemaphore::available`](crate::LeasedSemaphore::available),
        /// blocking.
        fn available() -> i64;

        /// [`LeasedSemaphore::holders`](crate::LeasedSemaphore::holders),
        /// blocking.
        fn holders() -> Vec<crate::PermitInfo>;
    }
}

impl LeasedSemaphore {
    /// [`LeasedSemaphore::force_release`](crate::LeasedSemaphore::force_release),
    /// blocking.
    pub fn force_release(&self, id: &str) -> Result<bool> {
        let (inner, id) = (self.inner.clone(), id.to_string());
        self.thread
            .call(async move { inner.force_release(&id).await })
    }
}

/// Permits of a leased semaphore, for blocking code: the async
/// [`PermitGuard`](crate::PermitGuard), released by
/// [`release`](Self::release) or when dropped, as a blocking
/// [`LockGuard`](super::LockGuard) is.
#[must_use = "dropping the guard gives its permits back at once"]
pub struct PermitGuard {
    inner: Option<crate::PermitGuard>,
    thread: ClientThread,
}

impl Blocking for crate::PermitGuard {
    type Output = PermitGuard;
    fn blocking(self, thread: &ClientThread) -> PermitGuard {
        PermitGuard {
            inner: Some(self),
            thread: thread.clone(),
        }
    }
}

impl PermitGuard {
    fn inner(&self) -> &crate::PermitGuard {
        self.inner
            .as_ref()
            .expect("a guard holds its permits until release or drop")
    }

    /// The permits' ids, 32 hex digits each.
    pub fn ids(&self) -> Vec<String> {
        self.inner().ids()
    }

    /// How many permits the guard holds.
    pub fn permits(&self) -> usize {
        self.inner().permits()
    }

    /// The fencing token of this acquire.
    pub fn token(&self) -> u64 {
        self.inner().token()
    }

    /// The latest instant at which the permits are surely still held.
    pub fn valid_until(&self) -> Instant {
        self.inner().valid_until()
    }

    /// Whether the permits may be gone (see
    /// [`PermitGuard::is_lost`](crate::PermitGuard::is_lost)).
    pub fn is_lost(&self) -> bool {
        self.inner().is_lost()
    }

    /// [`PermitGuard::release`](crate::PermitGuard::release), blocking.
    pub fn release(mut self) -> Result<()> {
        let inner = self.inner.take().expect("not yet released");
        self.thread.call(async move { inner.release().await })
    }
}

impl Drop for PermitGuard {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            self.thread.run_for_drop(async move {
                let _ = inner.release().await;
            });
        }
    }
}
