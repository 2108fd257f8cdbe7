//! Which script each operation of each kind of lock runs (acquire,
//! release or undo, leaving a fair lock's queue, force-release), and how
//! it is sent: through the replica sync where the lock's state changes.
//! What the kinds are is in `base/kind.rs`; everything else (waiting,
//! guards, the watchdog) is the same for all of them. The renewal script
//! of each shape of hold ([`renewal`]: locks, leased permits) is the one
//! thing the watchdog's rounds need to know about them.

use crate::base::config::{Config, token_ttl};
use crate::base::hold_key::HoldShape;
use crate::base::kind::Kind;
use crate::base::names::LockNames;
use crate::holds::job::{LockTarget, ReleaseRequest};
use crate::holds::latches::Latch;
use crate::holds::registry::Watched;
use crate::holds::shared::Shared;
use crate::protocol::counted_scripts::RenewLeased;
use crate::protocol::handoff::Offer;
use crate::protocol::lock_scripts::{
    Acquire, FairAcquire, FairForceRelease, FairLeave, FairRelease, ForceRelease, ReadAcquire,
    ReadRelease, Release, Renew, RwForceRelease, WriteAcquire, WriteRelease,
};
use crate::protocol::replies::{
    Acquired, Flag, Publish, ReleaseMode, Released, Side, WakeMessage, millis,
};
use crate::script::ScriptCall;
use crate::transport::connection::Connection;
use crate::transport::replication::{Synced, unsynced};
use redis::RedisResult;
use std::time::Duration;

/// How long a waiting writer's mark holds new readers back without being
/// renewed: a writer that died while waiting delays readers at most this.
pub(crate) const WRITER_MARK_TTL: Duration = Duration::from_secs(3);

/// How often a waiting writer that prefers writers tries again (and so
/// renews its mark), at the longest.
pub(crate) const WRITER_RETRY: Duration = Duration::from_secs(1);

/// One acquire attempt's arguments.
pub(crate) struct AcquireArgs<'a> {
    pub names: &'a LockNames,
    pub owner: &'a str,
    /// `Some(n)`: re-entry number `n` of an owner that holds the lock.
    pub reentry: Option<u64>,
    pub lease: Duration,
    /// Whether a release may hand a fair lock's waiter the lock directly
    /// (see `handoff.rs`).
    pub handoff: Offer,
}

/// The renewal call of one watchdog batch: holds of one shape (a batch of
/// leased permits: of one semaphore), each lease made to run at least
/// `lease` from now. Its reply has [`HoldShape::parts`] flags per hold, in
/// order: 1 renewed, 0 gone.
pub(crate) fn renewal(batch: &[Watched], lease: Duration, publish: Publish) -> ScriptCall {
    let lease_ms = millis(lease);
    if let Some(HoldShape::Permits { names, .. }) = batch.first().map(|w| &w.shape) {
        return RenewLeased {
            semaphore: &names.key,
            timeouts: &names.timeouts,
            channel: &names.channel,
            lease_ms,
            publish,
            ids: batch
                .iter()
                .flat_map(|w| match &w.shape {
                    HoldShape::Permits { ids, .. } => &ids[..],
                    HoldShape::Lock { .. } => &[],
                })
                .map(|id| &id[..])
                .collect(),
        }
        .call();
    }
    Renew {
        locks: batch.iter().map(|w| &*w.key.lock).collect(),
        lease_ms,
        fields: batch
            .iter()
            .flat_map(|w| {
                let timeouts = match &w.shape {
                    HoldShape::Lock { timeouts } => timeouts.as_str(),
                    HoldShape::Permits { .. } => "",
                };
                [&*w.key.field, timeouts]
            })
            .collect(),
    }
    .call()
}

impl Kind {
    /// Takes the fair lock waiter `owner` out of the queue (it stopped
    /// waiting); wakes the next one if it was first and the lock is free.
    pub(crate) async fn leave(
        con: &mut Connection,
        config: &Config,
        names: &LockNames,
        owner: &str,
    ) -> RedisResult<()> {
        let _: i64 = FairLeave {
            lock: &names.lock,
            channel: &names.channel,
            queue: &names.queue(),
            deadlines: &names.deadlines(),
            handoffs: &names.handoffs(),
            owner,
            wait_ms: millis(config.fair_wait),
            message: WakeMessage::One,
            publish: config.publish,
        }
        .invoke(con)
        .await?;
        Ok(())
    }

    /// Runs the acquire script once.
    pub(crate) async fn acquire(
        self,
        shared: &Shared,
        args: &AcquireArgs<'_>,
    ) -> RedisResult<Synced<Acquired>> {
        let config = &shared.config;
        let names = args.names;
        let lease_ms = millis(args.lease);
        let attempt = names.attempt(args.owner, args.reentry);
        let attempt_ttl_ms = millis(config.attempt_ttl(args.lease));
        let token_ttl_ms = millis(token_ttl(args.lease));
        let reenter = Flag(args.reentry.is_some());
        // The arguments every acquire script takes, and `$script`'s own.
        macro_rules! acquire {
            ($script:ident { $($own:tt)* }) => {
                $script {
                    lock: &names.lock,
                    token: names.token(),
                    attempt: &attempt,
                    lease_ms,
                    owner: args.owner,
                    reenter,
                    attempt_ttl_ms,
                    token_ttl_ms,
                    $($own)*
                }
                .call()
            };
        }
        let call = match self {
            Kind::Reentrant => acquire!(Acquire {}),
            Kind::Fair { enqueue } => acquire!(FairAcquire {
                queue: &names.queue(),
                deadlines: &names.deadlines(),
                channel: &names.channel,
                wait_ms: millis(config.fair_wait),
                enqueue: Flag(enqueue),
                message: self.message(),
                handoffs: &names.handoffs(),
                handoff: args.handoff,
                publish: config.publish,
            }),
            Kind::Read { prefer_writers } => acquire!(ReadAcquire {
                timeouts: &names.timeouts(args.owner),
                writer_mark: &names.writer_mark(),
                writer_field: &Kind::Write { prefer_writers }.field(args.owner),
                prefer_writers: Flag(prefer_writers),
            }),
            Kind::Write { prefer_writers } => acquire!(WriteAcquire {
                writer_mark: &names.writer_mark(),
                writer_field: &self.field(args.owner),
                prefer_writers: Flag(prefer_writers),
                mark_ttl_ms: millis(WRITER_MARK_TTL.min(args.lease)),
            }),
        };
        let mut con = shared.con.clone();
        shared.sync.run(&mut con, &call, &names.lock).await
    }

    /// Runs the release script once (a release, or an undo); it deletes
    /// the `carried` latches first (only where [`Kind::carries_latches`]).
    pub(crate) async fn release(
        self,
        con: &mut Connection,
        shared: &Shared,
        request: &ReleaseRequest,
        lock: &LockTarget,
        carried: &[Latch],
    ) -> RedisResult<Synced<Released>> {
        let config = &shared.config;
        let names = &*lock.names;
        let stale_latches: Vec<&str> = carried.iter().map(|latch| latch.key.as_str()).collect();
        let owner = lock.owner.field();
        let latch = &request.latch;
        let first_attempt = names.attempt(owner, None);
        let attempt = &names.attempt(owner, lock.reentry);
        let latch_ttl_ms = millis(config.latch_ttl);
        let attempt_ttl_ms = millis(config.attempt_ttl(request.lease));
        let reentry = Flag(lock.reentry.is_some());
        // An undo always closes its attempt: it may run before the acquire.
        let close_attempts = Flag(lock.close_attempts || request.mode == ReleaseMode::Undo);
        // The arguments every release script takes, and `$script`'s own.
        macro_rules! release {
            ($script:ident { $($own:tt)* }) => {
                $script {
                    lock: &names.lock,
                    channel: &names.channel,
                    latch,
                    first_attempt: &first_attempt,
                    attempt,
                    message: self.message(),
                    latch_ttl_ms,
                    mode: request.mode,
                    attempt_ttl_ms,
                    reentry,
                    close_attempts,
                    publish: config.publish,
                    $($own)*
                }
                .call()
            };
        }
        let call = match self {
            Kind::Reentrant => release!(Release {
                lease_ms: millis(request.lease),
                owner,
                stale_latches,
            }),
            Kind::Fair { .. } => release!(FairRelease {
                queue: &names.queue(),
                deadlines: &names.deadlines(),
                lease_ms: millis(request.lease),
                owner,
                wait_ms: millis(config.fair_wait),
                token: names.token(),
                handoffs: &names.handoffs(),
                token_ttl_ms: millis(token_ttl(request.lease)),
                stale_latches,
            }),
            Kind::Read { .. } => release!(ReadRelease {
                timeouts: &names.timeouts(owner),
                timeouts_prefix: &names.timeouts_prefix(),
                owner,
            }),
            Kind::Write { .. } => release!(WriteRelease {
                lease_ms: millis(request.lease),
                writer_field: &self.field(owner),
            }),
        };
        if request.mode == ReleaseMode::Undo {
            // Nothing relies on an undo: it need not wait for replicas.
            return unsynced(con, &call).await;
        }
        let mut synced = shared.sync.run(con, &call, &names.lock).await?;
        synced.acked = shared
            .sync
            .recount_release(con, &names.lock, synced.acked)
            .await;
        Ok(synced)
    }

    /// Runs the force-release script: whether something was broken.
    pub(crate) async fn force_release(
        self,
        shared: &Shared,
        names: &LockNames,
    ) -> RedisResult<bool> {
        let config = &shared.config;
        // The counter outlives the lease a new holder gets by default.
        let token_ttl_ms = millis(token_ttl(config.watchdog_timeout));
        // The arguments every force-release script takes, and `$script`'s own.
        macro_rules! force_release {
            ($script:ident { $($own:tt)* }) => {
                $script {
                    lock: &names.lock,
                    channel: &names.channel,
                    token: names.token(),
                    message: self.message(),
                    token_ttl_ms,
                    publish: config.publish,
                    $($own)*
                }
                .invoke(&mut shared.con.clone())
                .await
            };
        }
        match self {
            Kind::Reentrant => force_release!(ForceRelease {}),
            Kind::Fair { .. } => force_release!(FairForceRelease {
                queue: &names.queue(),
                deadlines: &names.deadlines(),
                wait_ms: millis(config.fair_wait),
            }),
            Kind::Read { .. } => force_release!(RwForceRelease { side: Side::Read }),
            Kind::Write { .. } => force_release!(RwForceRelease { side: Side::Write }),
        }
    }
}
