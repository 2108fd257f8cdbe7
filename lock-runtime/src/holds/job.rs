//! Work handed to the client's background worker: plain data, so that the
//! shared state can hold the queue without knowing how jobs run.

use crate::base::counted_names::CountedNames;
use crate::base::hold_key::HoldKey;
use crate::base::kind::Kind;
use crate::base::names::LockNames;
use crate::base::owner::Owner;
use crate::protocol::replies::ReleaseMode;
use std::sync::Arc;
use std::time::Duration;

/// One release of one hold, or the undo of one acquire attempt.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseRequest {
    /// What is released: a lock's hold, or leased permits.
    pub target: Target,
    /// The hold's key in the client's registry.
    pub key: HoldKey,
    /// The lease left to the owner's other holds (a lock's), or the
    /// permits' lease; an undo is retried while its attempt may live.
    pub lease: Duration,
    /// Whether the hold is one the watchdog renews.
    pub watched: bool,
    /// The release's latch, named once by a request id of its own: a retry
    /// returns the first result. (An undo's attempt key serves instead.)
    pub latch: String,
    pub mode: ReleaseMode,
    /// A copy of this release was sent before and its reply lost: it may
    /// still reach Redis, so the latch must stay until it expires.
    pub resent: bool,
}

impl ReleaseRequest {
    /// This request sent again if `resent` (an earlier copy's reply was
    /// lost, or may be).
    pub(crate) fn resent(self, resent: bool) -> ReleaseRequest {
        ReleaseRequest {
            resent: self.resent || resent,
            ..self
        }
    }
}

/// What a release gives back.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Lock(LockTarget),
    Permits(PermitsTarget),
}

/// A lock's hold: one hold of `owner`, of the lock of `names`.
#[derive(Debug, Clone)]
pub(crate) struct LockTarget {
    pub kind: Kind,
    pub names: Arc<LockNames>,
    pub owner: Owner,
    /// `None` for the hold that made the owner a holder; `Some(n)` for its
    /// re-entry number `n`.
    pub reentry: Option<u64>,
    /// Some copy of the acquire may still be on its way to Redis (its reply
    /// was lost once): close the attempt keys so that it does nothing.
    pub close_attempts: bool,
}

/// Leased permits: the ids one acquire attempt (key `attempt`) took of the
/// semaphore of `names`.
#[derive(Debug, Clone)]
pub(crate) struct PermitsTarget {
    pub names: Arc<CountedNames>,
    pub ids: Arc<[[u8; 16]]>,
    pub attempt: Arc<str>,
}

impl Target {
    /// The lock's or the semaphore's name (its key), for events.
    pub(crate) fn name(&self) -> &str {
        match self {
            Target::Lock(lock) => &lock.names.lock,
            Target::Permits(permits) => &permits.names.key,
        }
    }
}

/// Gives back the permits of an abandoned acquire of a plain semaphore, if
/// it took them, and closes the attempt; retried until Redis answers.
#[derive(Debug)]
pub(crate) struct PermitUndo {
    pub names: Arc<CountedNames>,
    /// The attempt's key.
    pub attempt: String,
    /// The permits it asked for.
    pub permits: u64,
}

/// Work for the background worker.
#[derive(Debug)]
pub(crate) enum Job {
    /// Release a hold (a guard dropped, a release whose reply was lost),
    /// or undo an abandoned acquire; retried until Redis answers.
    Release(ReleaseRequest),
    /// Delete, a little later and all at once, the latches of answered
    /// releases (see `latches.rs`).
    SweepLatches,
    /// Take a fair lock's waiter that stopped waiting out of the queue
    /// (waking the next one if it was first and the lock is free).
    LeaveQueue {
        names: Arc<LockNames>,
        owner: String,
    },
    /// Take away the mark a writer left while waiting, if it is still its.
    ClearWriterMark {
        names: Arc<LockNames>,
        field: String,
    },
    /// Undo an abandoned acquire of a plain semaphore's permits.
    UndoPermits(PermitUndo),
}
