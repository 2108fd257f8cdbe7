//! Which of redlua's locks a contended scenario takes: the reentrant lock
//! (Redisson's `RLock`: a release wakes one waiter per client) or the fair
//! lock (Redisson's `RFairLock`: a release wakes the queue's head only).

use redlua::{FairLock, Lock, LockClient, LockGuard};

/// A lock flavor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Reentrant,
    Fair,
}

impl Flavor {
    /// Both, in the order the report shows them.
    pub const ALL: [Flavor; 2] = [Flavor::Reentrant, Flavor::Fair];

    /// The library column of the report.
    pub fn library(self) -> &'static str {
        match self {
            Flavor::Reentrant => "redlua",
            Flavor::Fair => "redlua fair lock",
        }
    }

    /// How the other process of the two-process scenario is told.
    pub fn arg(self) -> &'static str {
        match self {
            Flavor::Reentrant => "reentrant",
            Flavor::Fair => "fair",
        }
    }

    /// The inverse of [`Flavor::arg`].
    pub fn parse(arg: &str) -> Result<Flavor, String> {
        Flavor::ALL
            .into_iter()
            .find(|flavor| flavor.arg() == arg)
            .ok_or_else(|| format!("unknown lock flavor `{arg}`"))
    }
}

/// A lock of either flavor.
pub enum AnyLock {
    Reentrant(Lock),
    Fair(FairLock),
}

impl AnyLock {
    /// The lock `name` of `client`, of `flavor`.
    pub fn new(client: &LockClient, name: &str, flavor: Flavor) -> AnyLock {
        match flavor {
            Flavor::Reentrant => AnyLock::Reentrant(client.lock(name)),
            Flavor::Fair => AnyLock::Fair(client.fair_lock(name)),
        }
    }

    /// Waits for the lock.
    pub async fn lock(&self) -> redlua::Result<LockGuard> {
        match self {
            AnyLock::Reentrant(lock) => lock.lock().await,
            AnyLock::Fair(lock) => lock.lock().await,
        }
    }
}
