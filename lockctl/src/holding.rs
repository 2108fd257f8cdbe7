//! What `run` holds while its command runs: a lock's hold, or one leased
//! permit of a semaphore (`run --permits N`). Both have a lease clock, a
//! fencing token and a release; the command is told about either in the
//! same variables ([`child`](crate::child)).

use redlua_runtime::{Error, LockGuard, PermitGuard};

/// A lock's hold or a leased permit.
#[derive(Debug)]
pub enum Holding {
    /// A hold of a lock.
    Lock(LockGuard),
    /// One leased permit of the semaphore `name`.
    Permit {
        /// The semaphore's name.
        name: String,
        /// The permit.
        guard: PermitGuard,
    },
}

impl Holding {
    /// The lock's (or semaphore's) name.
    pub fn name(&self) -> &str {
        match self {
            Holding::Lock(guard) => guard.name(),
            Holding::Permit { name, .. } => name,
        }
    }

    /// Who holds it, as Redis stores it: the lock owner
    /// (`<client-uuid>:<id>`), or the permit's id (32 hex digits).
    pub fn owner(&self) -> String {
        match self {
            Holding::Lock(guard) => guard.owner().to_string(),
            Holding::Permit { guard, .. } => guard.ids().join(","),
        }
    }

    /// The fencing token.
    pub fn token(&self) -> u64 {
        match self {
            Holding::Lock(guard) => guard.token(),
            Holding::Permit { guard, .. } => guard.token(),
        }
    }

    /// Completes once it may be gone (its lease clock passed, or it was
    /// found taken away).
    ///
    /// # Cancellation
    ///
    /// Only waits: dropping the future changes nothing.
    pub async fn lost(&self) {
        match self {
            Holding::Lock(guard) => guard.lost().await,
            Holding::Permit { guard, .. } => guard.lost().await,
        }
    }

    /// Releases it: [`Error::LockLost`] when it had been lost.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the release goes on in the background.
    pub async fn release(self) -> Result<(), Error> {
        match self {
            Holding::Lock(guard) => guard.unlock().await,
            Holding::Permit { guard, .. } => guard.release().await,
        }
    }

    /// What it is, in notes: `lock` or `permit`.
    pub fn what(&self) -> &'static str {
        match self {
            Holding::Lock(_) => "lock",
            Holding::Permit { .. } => "permit of semaphore",
        }
    }
}
