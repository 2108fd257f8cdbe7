//! The kinds of lock — reentrant, fair, read, write — and what differs
//! between them in storage and messages: the hash field of a holder, the
//! message a release publishes, the channel a waiter listens on. Which
//! script each operation of each kind runs is in `holds/kind_scripts.rs`.

use crate::base::hold_key::HoldKey;
use crate::base::names::LockNames;
use crate::protocol::replies::WakeMessage;
use std::borrow::Cow;
use std::sync::Arc;

/// What a lock handle locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A reentrant lock (Redisson's `RLock`).
    Reentrant,
    /// A fair reentrant lock (Redisson's `RFairLock`): waiters queue, and
    /// get it in order.
    Fair {
        /// A try that fails joins the queue (an acquire that will wait).
        enqueue: bool,
    },
    /// The read side of a read/write lock (Redisson's `RReadWriteLock`).
    Read {
        /// New readers wait behind a waiting writer.
        prefer_writers: bool,
    },
    /// The write side of a read/write lock.
    Write {
        /// Leave a mark while waiting, so that new readers wait behind.
        prefer_writers: bool,
    },
}

impl Kind {
    /// The hash field that counts `owner`'s holds of this kind.
    pub(crate) fn field(self, owner: &str) -> String {
        match self {
            Kind::Write { .. } => format!("{owner}:write"),
            Kind::Reentrant | Kind::Fair { .. } | Kind::Read { .. } => owner.to_string(),
        }
    }

    /// The message a release publishes: one waiter per client (a fair
    /// lock's head, on its own channel), or all of them for read/write
    /// locks, whose releases may let several in.
    pub(crate) fn message(self) -> WakeMessage {
        match self {
            Kind::Reentrant | Kind::Fair { .. } => WakeMessage::One,
            Kind::Read { .. } | Kind::Write { .. } => WakeMessage::All,
        }
    }

    /// The registry key of `owner`'s holds of this kind.
    pub(crate) fn hold_key(self, names: &LockNames, owner: &Arc<str>) -> HoldKey {
        HoldKey::new(
            names.lock.clone(),
            match self {
                Kind::Write { .. } => self.field(owner).into(),
                Kind::Reentrant | Kind::Fair { .. } | Kind::Read { .. } => owner.clone(),
            },
        )
    }

    /// A writer that leaves a mark while it waits (writer-preferring).
    pub(crate) fn marks_while_waiting(self) -> bool {
        matches!(
            self,
            Kind::Write {
                prefer_writers: true
            }
        )
    }

    /// The same kind, without leaving a mark or joining a queue (for an
    /// attempt that will not wait).
    pub(crate) fn not_waiting(self) -> Kind {
        match self {
            Kind::Write { .. } => Kind::Write {
                prefer_writers: false,
            },
            Kind::Fair { .. } => Kind::Fair { enqueue: false },
            other => other,
        }
    }

    /// A fair lock's waiter: it has a place in the queue (to leave when it
    /// stops waiting) and a channel of its own.
    pub(crate) fn queues(self) -> bool {
        matches!(self, Kind::Fair { enqueue: true })
    }

    /// Whether a release by a client with waiters of its own for the lock
    /// holds its next acquires back until one of them has tried (see
    /// `PubSubHub::expect_turn`): a reentrant lock on a current-thread
    /// runtime, where the releasing task would always be polled first.
    pub(crate) fn gives_own_waiters_a_turn(self) -> bool {
        matches!(self, Kind::Reentrant)
            && tokio::runtime::Handle::try_current().is_ok_and(|handle| {
                handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
            })
    }

    /// The channel a waiter of this kind, `owner`, is woken on.
    pub(crate) fn wake_channel<'n>(self, names: &'n LockNames, owner: &str) -> Cow<'n, str> {
        match self {
            Kind::Fair { .. } => Cow::Owned(names.waiter_channel(owner)),
            Kind::Reentrant | Kind::Read { .. } | Kind::Write { .. } => {
                Cow::Borrowed(&names.channel)
            }
        }
    }

    /// What the watchdog renews besides the lock: the owner's read hold
    /// timeouts, or nothing ("").
    pub(crate) fn renewed_timeouts(self, names: &LockNames, owner: &str) -> String {
        match self {
            Kind::Read { .. } => names.timeouts(owner),
            Kind::Reentrant | Kind::Fair { .. } | Kind::Write { .. } => String::new(),
        }
    }

    /// Whether its release script deletes earlier releases' latches given
    /// to it (see `latches.rs`): the locks that see steady contention.
    pub(crate) fn carries_latches(self) -> bool {
        matches!(self, Kind::Reentrant | Kind::Fair { .. })
    }
}
