//! [`LockGuard`] for blocking code: one hold, released by `unlock` or when
//! dropped.

use super::thread::{Blocking, ClientThread, debug_as_blocking};
use crate::base::error::Result;
use crate::base::owner::Owner;
use std::time::{Duration, Instant};

debug_as_blocking!(LockGuard);

/// One hold of a lock, for blocking code. Owned (`Send + 'static`): it can
/// move to another thread and be released there.
///
/// It is the async [`LockGuard`](crate::LockGuard) (lease clock, fencing
/// token), renewed on the client's thread whatever the holding thread does.
///
/// # Release
///
/// [`LockGuard::unlock`] releases it and reports the outcome. Dropping it
/// releases it too, waiting for Redis's answer at most the response
/// timeout (3 s by default), so the lock is normally free when the drop
/// returns; past that the release goes on in the background, once, and
/// failing that Redis frees the lock when its lease ends. A guard outlives
/// its [`LockClient`](super::LockClient).
///
/// ```no_run
/// # fn demo(client: redlua::blocking::LockClient) -> Result<(), redlua::Error> {
/// # fn step(_: u32) {}
/// let guard = client.lock("import").lock()?;
/// for n in 0..100 {
///     if guard.is_lost() {
///         eprintln!("lock lost at step {n}: stopping");
///         return Ok(()); // `unlock()` would return Err(LockLost)
///     }
///     step(n); // blocking work: the lease is renewed meanwhile
/// }
/// guard.unlock()
/// # }
/// ```
#[must_use = "dropping a guard releases the lock"]
pub struct LockGuard {
    /// Taken by `unlock` and by the drop.
    inner: Option<crate::LockGuard>,
    thread: ClientThread,
}

impl Blocking for crate::LockGuard {
    type Output = LockGuard;
    fn blocking(self, thread: &ClientThread) -> LockGuard {
        LockGuard {
            inner: Some(self),
            thread: thread.clone(),
        }
    }
}

impl LockGuard {
    fn inner(&self) -> &crate::LockGuard {
        self.inner
            .as_ref()
            .expect("a guard is only emptied by `unlock` and `drop`, which consume it")
    }

    /// The lock's name.
    pub fn name(&self) -> &str {
        self.inner().name()
    }

    /// The owner of this hold, for [`Lock::reenter`](super::Lock::reenter)
    /// from any thread.
    pub fn owner(&self) -> &Owner {
        self.inner().owner()
    }

    /// The fencing token of this hold
    /// ([`LockGuard::token`](crate::LockGuard::token)).
    pub fn token(&self) -> u64 {
        self.inner().token()
    }

    /// The fixed lease this hold was taken with; `None` when the watchdog
    /// renews it.
    pub fn lease(&self) -> Option<Duration> {
        self.inner().lease()
    }

    /// The latest instant at which Redis could still count this hold
    /// ([`LockGuard::valid_until`](crate::LockGuard::valid_until)).
    pub fn valid_until(&self) -> Instant {
        self.inner().valid_until()
    }

    /// Whether the hold may have ended
    /// ([`LockGuard::is_lost`](crate::LockGuard::is_lost)); check it between
    /// steps of the work the lock protects.
    pub fn is_lost(&self) -> bool {
        self.inner().is_lost()
    }

    /// [`LockGuard::reenter`](crate::LockGuard::reenter): one more hold for
    /// the same owner, in one round trip (past the response timeout, one
    /// that may have taken effect is undone in the background).
    pub fn reenter(&self) -> Result<LockGuard> {
        self.thread.call(self.inner().reenter_owned())
    }

    /// [`LockGuard::unlock`](crate::LockGuard::unlock): releases this hold
    /// and reports the outcome (past the response timeout,
    /// [`Error::Redis`](crate::Error::Redis), and the release goes on in the
    /// background, once).
    pub fn unlock(mut self) -> Result<()> {
        let Some(inner) = self.inner.take() else {
            return Ok(());
        };
        self.thread.call(inner.unlock())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            // The result is the caller's only through `unlock`; a failure
            // leaves the release to the background, or to the lease.
            self.thread.run_for_drop(async move {
                let _ = inner.unlock().await;
            });
        }
    }
}
