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
    pub kind: Kind,
    pub names: Arc<LockNames>,
    pub owner: Owner,
    /// The hold's key in the client's registry.
    pub key: HoldKey,
    /// `None` for the hold that made the owner a holder; `Some(n)` for its
    /// re-entry number `n`.
    pub reentry: Option<u64>,
    /// The lease left to the owner's other holds.
    pub lease: Duration,
    /// Whether the hold is one the watchdog renews.
    pub watched: bool,
    /// The release's latch: named once, before the first try, by a request
    /// id of its own, so that a retry returns the first result.
    pub latch: String,
    pub mode: ReleaseMode,
    /// Some copy of the acquire may still be on its way to Redis (its reply
    /// was lost once): close the attempt keys so that it does nothing.
    pub close_attempts: bool,
    /// A copy of this release was sent before and its reply lost: it may
    /// still reach Redis, so the latch must stay until it expires.
    pub resent: bool,
}

/// Background work of a semaphore's permits, retried until Redis answers.
#[derive(Debug)]
pub(crate) enum PermitJob {
    /// Give back the permits of an abandoned acquire of a semaphore, if it
    /// took them, and close the attempt.
    Undo {
        names: Arc<CountedNames>,
        /// The attempt's key.
        attempt: String,
        /// The permits it asked for.
        permits: u64,
    },
    /// The same for an abandoned acquire of leased permits.
    UndoLeased {
        names: Arc<CountedNames>,
        attempt: String,
        ids: Vec<[u8; 16]>,
    },
    /// Give back leased permits (a guard dropped, a release whose reply
    /// was lost), then record the release of their hold `key` in the
    /// registry (counted as releasing until then).
    ReleaseLeased {
        names: Arc<CountedNames>,
        ids: Arc<[[u8; 16]]>,
        /// The release's request latch, the same for every retry.
        latch: String,
        key: HoldKey,
        watched: bool,
    },
}

/// Work for the background worker.
#[derive(Debug)]
pub(crate) enum Job {
    /// Release a hold (a guard dropped, an `unlock` whose reply was lost),
    /// or undo an abandoned acquire; retried until Redis answers.
    Release(ReleaseRequest),
    /// Delete, a little later and all at once, the latches of answered
    /// releases collected in the client's state (a latch only serves
    /// retries of its release).
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
    /// Undo an abandoned acquire of a semaphore's permits, or give back
    /// leased permits.
    Permits(PermitJob),
}
