//! The three kinds of lock — reentrant, read, write — and which script each
//! operation of each kind runs. Everything else (waiting, guards, the
//! watchdog) is the same for all three.

use crate::connection::Connection;
use crate::names::LockNames;
use crate::scripts::{
    Acquire, ForceRelease, ReadAcquire, ReadRelease, Release, RwForceRelease, WriteAcquire,
    WriteRelease,
};
use crate::watchdog::duration_ms;
use redis::RedisResult;
use std::time::Duration;

/// How long a waiting writer's mark holds new readers back without being
/// renewed: a writer that died while waiting delays readers at most this.
pub(crate) const WRITER_MARK_TTL: Duration = Duration::from_secs(3);

/// How often a waiting writer that prefers writers tries again (and so
/// renews its mark), at the longest.
pub(crate) const WRITER_RETRY: Duration = Duration::from_secs(1);

/// What a lock handle locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A reentrant lock (Redisson's `RLock`).
    Reentrant,
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

/// What one release of one hold needs.
pub(crate) struct ReleaseArgs<'a> {
    pub names: &'a LockNames,
    pub owner: &'a str,
    pub latch: &'a str,
    pub lease: Duration,
    pub publish: &'a str,
    pub latch_ttl: Duration,
    /// `Some(n)`: release only if the owner's hold count is `n` (undoing an
    /// acquire whose reply was lost).
    pub expected: Option<u64>,
}

impl Kind {
    /// The hash field that counts `owner`'s holds of this kind.
    pub(crate) fn field(self, owner: &str) -> String {
        match self {
            Kind::Write { .. } => format!("{owner}:write"),
            Kind::Reentrant | Kind::Read { .. } => owner.to_string(),
        }
    }

    /// The message a release publishes: `0` wakes one waiter per client
    /// (Redisson's reentrant lock), `1` wakes them all (read/write locks:
    /// every release of those may let several in).
    pub(crate) fn message(self) -> &'static str {
        match self {
            Kind::Reentrant => "0",
            Kind::Read { .. } | Kind::Write { .. } => "1",
        }
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

    /// The same kind, without leaving a mark (for an attempt that will not
    /// wait).
    pub(crate) fn not_waiting(self) -> Kind {
        match self {
            Kind::Write { .. } => Kind::Write {
                prefer_writers: false,
            },
            other => other,
        }
    }

    /// What the watchdog renews besides the lock: the owner's read hold
    /// timeouts, or nothing ("").
    pub(crate) fn renewed_timeouts(self, names: &LockNames, owner: &str) -> String {
        match self {
            Kind::Read { .. } => names.timeouts(owner),
            Kind::Reentrant | Kind::Write { .. } => String::new(),
        }
    }

    /// Runs the acquire script: `None` when held, else the wait in ms.
    pub(crate) async fn acquire(
        self,
        con: &mut Connection,
        names: &LockNames,
        owner: &str,
        lease: Duration,
    ) -> RedisResult<Option<i64>> {
        let lease_ms = duration_ms(lease);
        let prefer = |p: bool| if p { "1" } else { "0" };
        match self {
            Kind::Reentrant => {
                Acquire {
                    lock: &names.lock,
                    lease_ms,
                    owner,
                }
                .invoke(con)
                .await
            }
            Kind::Read { prefer_writers } => {
                ReadAcquire {
                    lock: &names.lock,
                    timeouts: &names.timeouts(owner),
                    writer_mark: &names.writer_mark(),
                    lease_ms,
                    owner,
                    writer_field: &Kind::Write { prefer_writers }.field(owner),
                    prefer_writers: prefer(prefer_writers),
                }
                .invoke(con)
                .await
            }
            Kind::Write { prefer_writers } => {
                WriteAcquire {
                    lock: &names.lock,
                    writer_mark: &names.writer_mark(),
                    lease_ms,
                    writer_field: &self.field(owner),
                    owner,
                    prefer_writers: prefer(prefer_writers),
                    mark_ttl_ms: duration_ms(WRITER_MARK_TTL.min(lease)),
                }
                .invoke(con)
                .await
            }
        }
    }

    /// Runs the release script: `Some(1)` released (the lock, or the write
    /// side, is free), `Some(0)` still held, `None` not held, `Some(-1)` the
    /// expected count did not match.
    pub(crate) async fn release(
        self,
        con: &mut Connection,
        args: &ReleaseArgs<'_>,
    ) -> RedisResult<Option<i64>> {
        let lease_ms = duration_ms(args.lease);
        let latch_ttl_ms = duration_ms(args.latch_ttl);
        let expected = args.expected.map(|n| n.to_string()).unwrap_or_default();
        let names = args.names;
        match self {
            Kind::Reentrant => {
                Release {
                    lock: &names.lock,
                    channel: &names.channel,
                    latch: args.latch,
                    message: self.message(),
                    lease_ms,
                    owner: args.owner,
                    publish: args.publish,
                    latch_ttl_ms,
                    expected: &expected,
                }
                .invoke(con)
                .await
            }
            Kind::Read { .. } => {
                ReadRelease {
                    lock: &names.lock,
                    channel: &names.channel,
                    timeouts: &names.timeouts(args.owner),
                    timeouts_prefix: &names.timeouts_prefix(),
                    latch: args.latch,
                    message: self.message(),
                    owner: args.owner,
                    publish: args.publish,
                    latch_ttl_ms,
                    expected: &expected,
                }
                .invoke(con)
                .await
            }
            Kind::Write { .. } => {
                WriteRelease {
                    lock: &names.lock,
                    channel: &names.channel,
                    latch: args.latch,
                    message: self.message(),
                    lease_ms,
                    writer_field: &self.field(args.owner),
                    publish: args.publish,
                    latch_ttl_ms,
                    expected: &expected,
                }
                .invoke(con)
                .await
            }
        }
    }

    /// Runs the force-release script: whether something was broken.
    pub(crate) async fn force_release(
        self,
        con: &mut Connection,
        names: &LockNames,
        publish: &str,
    ) -> RedisResult<bool> {
        let broken: i64 = match self {
            Kind::Reentrant => {
                ForceRelease {
                    lock: &names.lock,
                    channel: &names.channel,
                    message: self.message(),
                    publish,
                }
                .invoke(con)
                .await?
            }
            Kind::Read { .. } | Kind::Write { .. } => {
                RwForceRelease {
                    lock: &names.lock,
                    channel: &names.channel,
                    message: self.message(),
                    publish,
                    mode: if matches!(self, Kind::Read { .. }) {
                        "read"
                    } else {
                        "write"
                    },
                }
                .invoke(con)
                .await?
            }
        };
        Ok(broken == 1)
    }
}
