//! Which of redlua's locks a contended scenario takes: the reentrant lock
//! (Redisson's `RLock`: a release wakes one waiter per client) or the fair
//! lock (Redisson's `RFairLock`: a release wakes the queue's head only).

use redlua::{Lock, LockClient};

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
pub type AnyLock = Lock<redlua::flavor::Any>;

impl Flavor {
    /// The lock `name` of `client`, of this flavor.
    pub fn lock(self, client: &LockClient, name: &str) -> AnyLock {
        match self {
            Flavor::Reentrant => client.lock(name).into_any(),
            Flavor::Fair => client.fair_lock(name).into_any(),
        }
    }
}
