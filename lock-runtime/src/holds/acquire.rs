//! How a hold is acquired: one attempt per call, tried until it succeeds,
//! waiting on pub/sub in between, and undone exactly if it is abandoned.
//!
//! Every plain acquire is a new owner (an id its client never used), and
//! that owner is the attempt's identity: the acquire script is idempotent
//! for it, so a try whose reply was lost and a later try give one hold. A
//! call dropped (or failed) while a try may have taken effect has the
//! background worker undo exactly that attempt: remove the owner's hold if
//! there is one (nobody else can have added to it) and close the attempt,
//! so that a copy still on its way to Redis does nothing. A re-entry is an
//! attempt of its own (`<owner>:<n>`), recorded in Redis when it takes
//! effect, so that its undo removes that hold and no other.
//!
//! Waiting follows Redisson: try; on failure subscribe to the lock's channel
//! and try again (a release between the two is not missed); then wait for a
//! release message, or for the holder's lease to end, and retry. A fair
//! lock's waiter joins the queue with its first try, is woken on a channel
//! of its own (only the head is), and leaves the queue when it stops
//! waiting without the lock: at once when its wait runs out, in the
//! background when dropped or failed (then the next waiter is woken if it
//! was first and the lock is free: an unused wake-up is passed on).
//! Waiters never rely on one message or one connection: they try again at
//! least every few seconds, at once when the pub/sub connection is
//! replaced, and every 100 ms while they have no working subscription.

use crate::base::config::MAX_WAIT_BETWEEN_TRIES;
use crate::base::error::{Error, Failure, Result, classify};
use crate::base::hold_key::{HoldKey, HoldShape};
use crate::base::kind::Kind;
use crate::base::names::LockNames;
use crate::base::owner::Owner;
use crate::holds::job::{Job, LockTarget, ReleaseRequest, Target};
use crate::holds::kind_scripts::{AcquireArgs, WRITER_RETRY};
use crate::holds::lease_clock::LeaseClock;
use crate::holds::permits::{Pacing, RESUBSCRIBE_EVERY, cap, subscribe, undo_once};
use crate::holds::registry::NewHold;
use crate::holds::release::release_once;
use crate::holds::shared::Shared;
use crate::holds::watchdog;
use crate::observability::targets;
use crate::observability::telemetry::{self, AcquireRecord, NotAcquired};
use crate::protocol::handoff::{self, Offer};
use crate::protocol::replies::{Acquired, ReleaseMode};
use crate::transport::pubsub::Subscription;
use crate::transport::replication::Acked;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// How long an acquire may wait.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    No,
    Until(tokio::time::Instant),
    Forever,
}

/// A hold just acquired, before it becomes a guard.
#[derive(Debug)]
pub(crate) struct Hold {
    pub kind: Kind,
    pub names: Arc<LockNames>,
    pub owner: Owner,
    /// Its key in the client's registry.
    pub key: HoldKey,
    /// `None` for the first hold of the owner, `Some(n)` for re-entry `n`.
    pub reentry: Option<u64>,
    /// The lease it was taken with.
    pub lease: Duration,
    /// Renewed by the watchdog (no explicit lease).
    pub watched: bool,
    /// A copy of its acquire may still be on its way to Redis.
    pub close_attempts: bool,
    pub clock: Arc<LeaseClock>,
}

/// What an acquire needs to know.
pub(crate) struct Request<'a> {
    pub shared: &'a Arc<Shared>,
    pub kind: Kind,
    pub names: &'a Arc<LockNames>,
    /// `None`: the watchdog's lease, renewed.
    pub lease: Option<Duration>,
}

/// Records a new hold of any shape (a lock's, leased permits'): in the
/// registry, renewed by the watchdog if it is `watched` (starting it if
/// none runs), and read by the loss watch. Its lease clock.
pub(crate) fn enter(shared: &Arc<Shared>, new: NewHold) -> Arc<LeaseClock> {
    let key = new.key.clone();
    let (clock, start_watchdog) = shared.holds().acquired(new);
    if start_watchdog {
        watchdog::start(shared);
    }
    shared.losses.watch(&shared.holds, key);
    clock
}

impl Request<'_> {
    fn lease(&self) -> Duration {
        self.lease.unwrap_or(self.shared.config.watchdog_timeout)
    }

    /// Records the hold, whose lease clock starts when the script that made
    /// it a holder was `sent`, with the lease that script set (the lease, or
    /// a direct handoff's shorter expiry: see `handoff.rs`).
    fn hold(
        &self,
        kind: Kind,
        owner: Owner,
        reentry: Option<u64>,
        sent: Instant,
        lease: Duration,
        close_attempts: bool,
    ) -> Hold {
        let watched = self.lease.is_none();
        let key = kind.hold_key(self.names, owner.field());
        let clock = enter(
            self.shared,
            NewHold {
                key: key.clone(),
                watched,
                shape: HoldShape::Lock {
                    timeouts: kind.renewed_timeouts(self.names, owner.field()),
                },
                sent,
                lease,
            },
        );
        Hold {
            kind,
            names: self.names.clone(),
            owner,
            key,
            reentry,
            lease: self.lease(),
            watched,
            close_attempts,
            clock,
        }
    }

    /// Acquires as a new owner, waiting as `wait` allows: `None` when the
    /// lock could not be had in time. Reported when it ends (see
    /// [`observability`](crate::observability)).
    pub(crate) async fn acquire(&self, wait: Wait) -> Result<Option<Hold>> {
        let span = telemetry::acquire_span(&self.names.lock, self.kind, false);
        async {
            let mut record = AcquireRecord::new(&self.names.lock, self.kind, false);
            let result = self.try_until(wait, &mut record).await;
            match &result {
                Ok(Some(hold)) => record.acquired(&hold.owner),
                Ok(None) if matches!(wait, Wait::No) => {
                    record.not_acquired(NotAcquired::Busy, None);
                }
                Ok(None) => record.not_acquired(NotAcquired::TimedOut, None),
                Err(error) => record.not_acquired(NotAcquired::Failed, Some(error)),
            }
            result
        }
        .instrument(span)
        .await
    }

    /// Tries until the lock is had or `wait` runs out.
    async fn try_until(&self, wait: Wait, record: &mut AcquireRecord<'_>) -> Result<Option<Hold>> {
        // An attempt that will not wait leaves no writer's mark behind.
        let kind = match wait {
            Wait::No => self.kind.not_waiting(),
            Wait::Until(_) | Wait::Forever => self.kind,
        };
        let id = self.shared.ids.next();
        // The token is known once the acquire succeeds.
        let owner = Owner::new(&self.shared.id, id, 0);
        let owner_name = owner.field().clone();
        let mut undo = self.undo(kind, &owner, None);
        let mut mark = kind.marks_while_waiting().then(|| WriterMark {
            shared: self.shared,
            names: self.names,
            field: kind.field(&owner_name),
            armed: true,
        });
        let mut args = AcquireArgs {
            names: self.names,
            owner: &owner_name,
            reentry: None,
            lease: self.lease(),
            handoff: Offer::No,
        };
        // A fair lock's waiter may be handed the lock by a release: the
        // expiry that gives it, if it takes handoffs at all.
        let handoff_expiry = match kind {
            Kind::Fair { enqueue: true } => {
                handoff::expiry(self.lease(), self.shared.config.fair_wait)
            }
            _ => None,
        };
        let channel = kind.wake_channel(self.names, &owner_name);
        // A fair waiter on one server is woken through its client's pattern
        // subscription, registered before the first try: if that is live, no
        // release after the try can be missed, nor needs a second try.
        let mut early = self.member(kind, &channel).map(|sub| (sub.is_live(), sub));
        let mut subscription: Option<Subscription> = None;
        let mut pacing = Pacing::new(wait);
        // A handoff message names the try it answers.
        let mut tries: u64 = 0;
        if !matches!(wait, Wait::No) && kind.gives_own_waiters_a_turn() {
            // A waiter this client's release just woke tries first.
            self.shared.hub.await_turn(&channel).await;
        }
        loop {
            let con = &self.shared.con;
            tries += 1;
            args.handoff = match handoff_expiry {
                Some(expiry) if self.shared.sync.waits_for_nobody(con, &self.names.lock) => {
                    Offer::Take {
                        expiry,
                        try_number: tries,
                    }
                }
                _ => Offer::No,
            };
            let sent = Instant::now();
            undo.in_flight = true;
            record.attempt();
            let reply = kind.acquire(self.shared, &args).await;
            undo.in_flight = false;
            if let (Ok(_), Some(sub)) = (&reply, &mut subscription) {
                // This try used the last wake-up (a cancelled try passes it
                // on to another waiter when the subscription drops).
                sub.settled();
            }
            let ttl = match reply.map(|synced| (synced.reply, synced.acked)) {
                Ok((Acquired::Held { .. }, Acked::Short { acked, wanted })) => {
                    // Fail closed: a failover now could lose it.
                    undo.now().await;
                    return Err(not_replicated(&self.names.lock, acked, wanted));
                }
                Ok((Acquired::Held { token }, _)) => {
                    undo.done();
                    if let Some(mark) = &mut mark {
                        mark.armed = false;
                    }
                    let owner = owner.with_token(token);
                    let hold = self.hold(kind, owner, None, sent, self.lease(), undo.uncertain);
                    return Ok(Some(hold));
                }
                Ok((Acquired::Busy { ttl }, _)) => ttl,
                Ok((Acquired::NotHeld | Acquired::Abandoned, _)) => {
                    // Not answers to a new owner's live attempt.
                    return Err(Error::Redis(redis::RedisError::from((
                        redis::ErrorKind::UnexpectedReturnType,
                        "redlua: the acquire script refused a live attempt",
                    ))));
                }
                Err(error) => {
                    // It may have taken effect: the next try or the undo finds out.
                    undo.uncertain |= classify(&error) == Failure::Unknown;
                    pacing.failed(&self.names.lock, error).await?;
                    continue;
                }
            };
            pacing.answered();
            if pacing.over() {
                undo.leave_queue().await;
                return Ok(None);
            }
            if subscription.is_none()
                && let Some((live, sub)) = early.take()
            {
                if live {
                    subscription = Some(sub);
                } else {
                    pacing.subscribing();
                    subscription = self.confirm(sub, &channel, wait).await;
                    continue;
                }
            }
            // Wait for a release message, or for the holder's lease to end.
            let Some(sub) = &mut subscription else {
                if pacing.may_subscribe().await {
                    subscription = match self.member(kind, &channel) {
                        Some(sub) => self.confirm(sub, &channel, wait).await,
                        None => {
                            subscribe(self.shared, &channel, wait, Some(&self.names.lock)).await
                        }
                    };
                }
                continue;
            };
            let mut pause = ttl.unwrap_or(MAX_WAIT_BETWEEN_TRIES);
            if mark.is_some() {
                // Come back (renewing the mark) before it expires.
                pause = pause.min((self.lease() / 3).min(WRITER_RETRY));
            }
            if kind.queues() {
                // Come back (pushing the deadline forward) well before it
                // passes: a live waiter keeps its place.
                pause = pause.min(self.shared.config.fair_wait / 2);
            }
            pacing.sleep(sub, pause, record).await;
            if let Some(handoff) = sub.take_handoff()
                && let Offer::Take { expiry, try_number } = args.handoff
                && handoff.try_number == try_number
                && handoff::usable(sent, expiry)
            {
                // A release handed this waiter the lock after this try.
                sub.settled();
                undo.done();
                record.handed_over();
                let owner = owner.with_token(handoff.token);
                let hold = self.hold(kind, owner, None, sent, expiry, undo.uncertain);
                if self.lease() > expiry {
                    watchdog::extend(self.shared, hold.key.clone(), self.lease());
                }
                return Ok(Some(hold));
            }
        }
    }

    /// Re-enters: one more hold for `owner`, which must hold the lock (of
    /// this kind, or the write side for a read re-entry). Never waits.
    pub(crate) async fn reenter(&self, owner: &Owner) -> Result<Hold> {
        let span = telemetry::acquire_span(&self.names.lock, self.kind, true);
        async {
            let mut record = AcquireRecord::new(&self.names.lock, self.kind, true);
            record.attempt();
            let result = self.reenter_once(owner).await;
            match &result {
                Ok(hold) => record.acquired(&hold.owner),
                Err(error) => record.not_acquired(NotAcquired::Failed, Some(error)),
            }
            result
        }
        .instrument(span)
        .await
    }

    async fn reenter_once(&self, owner: &Owner) -> Result<Hold> {
        let kind = self.kind.not_waiting();
        let reentry = self.shared.ids.next();
        let owner_name = owner.field().clone();
        let mut undo = self.undo(kind, owner, Some(reentry));
        let args = AcquireArgs {
            names: self.names,
            owner: &owner_name,
            reentry: Some(reentry),
            lease: self.lease(),
            handoff: Offer::No,
        };
        let sent = Instant::now();
        undo.in_flight = true;
        let reply = kind.acquire(self.shared, &args).await;
        undo.in_flight = false;
        match reply.map(|synced| (synced.reply, synced.acked)) {
            Ok((Acquired::Held { .. }, Acked::Short { acked, wanted })) => {
                undo.now().await;
                Err(not_replicated(&self.names.lock, acked, wanted))
            }
            Ok((Acquired::Held { .. }, _)) => {
                undo.done();
                let owner = owner.clone();
                Ok(self.hold(kind, owner, Some(reentry), sent, self.lease(), false))
            }
            Ok((Acquired::NotHeld | Acquired::Busy { .. } | Acquired::Abandoned, _)) => {
                Err(Error::NotHeld {
                    name: self.names.lock.to_string(),
                    owner: owner_name.to_string(),
                })
            }
            Err(error) => {
                undo.uncertain = classify(&error) == Failure::Unknown;
                Err(Error::from_redis(&self.names.lock, error))
            }
        }
    }

    /// The undo of an attempt of `owner` (re-entry `reentry`), not armed
    /// yet; a fair lock's waiter's (`kind` queues) leaves the queue too.
    fn undo(&self, kind: Kind, owner: &Owner, reentry: Option<u64>) -> Undo<'_> {
        let target = Target::Lock(LockTarget {
            kind,
            names: self.names.clone(),
            owner: owner.clone(),
            reentry,
            close_attempts: true,
        });
        let request = ReleaseRequest {
            target,
            key: kind.hold_key(self.names, owner.field()),
            lease: self.lease(),
            watched: false,
            latch: self.names.latch(""),
            mode: ReleaseMode::Undo,
            resent: false,
        };
        let leave = kind.queues().then(|| Job::LeaveQueue {
            names: self.names.clone(),
            owner: owner.field().to_string(),
        });
        Undo::new(self.shared, Job::Release(request), leave)
    }

    /// A fair lock waiter's registration on its client's pattern for the
    /// lock (`None` on a cluster, or for other kinds: subscribe instead).
    fn member(&self, kind: Kind, channel: &str) -> Option<Subscription> {
        if !kind.queues() {
            return None;
        }
        let pattern = self.names.waiter_pattern(&self.shared.id);
        self.shared.hub.member(&pattern, channel)
    }

    /// Subscribes a registration, giving up at the deadline; `None` (poll
    /// instead) when pub/sub fails.
    async fn confirm(
        &self,
        mut sub: Subscription,
        channel: &str,
        wait: Wait,
    ) -> Option<Subscription> {
        let confirm = sub.confirm();
        let result = tokio::time::timeout(cap(RESUBSCRIBE_EVERY, wait), confirm)
            .await
            .ok()?;
        match result {
            Ok(()) => Some(sub),
            Err(error) if !(error.is_io_error() || error.is_connection_dropped()) => {
                // Refused (an ACL that lists channels allows no pattern):
                // this client's waiters subscribe to their own channels.
                tracing::debug!(target: targets::ACQUIRE, lock = %self.names.lock, %error, "pattern subscription refused; subscribing to the waiter's channel");
                self.shared.hub.refuse_patterns();
                drop(sub);
                subscribe(self.shared, channel, wait, Some(&self.names.lock)).await
            }
            Err(error) => {
                tracing::warn!(target: targets::ACQUIRE, lock = %self.names.lock, %error, %channel, "cannot subscribe; polling for the lock instead");
                None
            }
        }
    }
}

/// The error for an acquire of `name` (a lock's, or permits') that too few
/// replicas acknowledged, and was undone.
pub(crate) fn not_replicated(name: &str, acked: u32, wanted: u32) -> Error {
    tracing::warn!(target: targets::ACQUIRE, lock = %name, acked, wanted, "too few replicas acknowledged the acquire; undone");
    Error::NotReplicated {
        name: name.to_string(),
        acked,
        wanted,
    }
}

/// An acquire call's undo (a lock's, or permits', `permits.rs`): the
/// attempt's undo job, handed to the background worker if the call ends
/// without its hold while a try is in flight or after one whose reply was
/// lost; otherwise, what is left to do all the same (a fair lock's waiter
/// leaves the queue).
pub(crate) struct Undo<'a> {
    shared: &'a Arc<Shared>,
    /// `None` once the call got its hold, or the undo was done.
    job: Option<Job>,
    /// A try is under way: dropped now, the call may leave a hold.
    pub in_flight: bool,
    /// A try's reply was lost: it may have taken effect, and a copy of it
    /// may still reach Redis later.
    pub uncertain: bool,
    /// The job when no try may have taken effect.
    otherwise: Option<Job>,
}

impl<'a> Undo<'a> {
    /// The undo `job` of an attempt not sent yet.
    pub(crate) fn new(shared: &'a Arc<Shared>, job: Job, otherwise: Option<Job>) -> Undo<'a> {
        Undo {
            shared,
            job: Some(job),
            in_flight: false,
            uncertain: false,
            otherwise,
        }
    }

    /// The call got its hold, or the undo was done: nothing is left to do.
    pub(crate) fn done(&mut self) {
        self.job = None;
        self.otherwise = None;
    }

    /// Undoes the attempt, which took effect, now; in the background if
    /// Redis does not answer (or the call is dropped meanwhile).
    pub(crate) async fn now(&mut self) {
        self.in_flight = true;
        let done = match &self.job {
            Some(Job::UndoPermits(undo)) => undo_once(self.shared, undo).await.is_ok(),
            Some(Job::Release(request)) => release_once(self.shared, request).await.is_ok(),
            _ => false,
        };
        if done {
            self.done();
        }
    }

    /// A fair lock's waiter whose wait ran out leaves the queue now (in the
    /// background if Redis does not answer), unless a copy of a try may
    /// still be on its way: then the undo, in the background, leaves it.
    async fn leave_queue(&mut self) {
        let Some(Job::LeaveQueue { names, owner }) = &self.otherwise else {
            return;
        };
        if self.uncertain || self.job.is_none() {
            return;
        }
        let mut con = self.shared.con.clone();
        if Kind::leave(&mut con, &self.shared.config, names, owner)
            .await
            .is_ok()
        {
            self.done();
        }
    }
}

impl Drop for Undo<'_> {
    fn drop(&mut self) {
        if let Some(job) = self.job.take()
            && (self.in_flight || self.uncertain)
        {
            self.shared.submit(job);
        } else if let Some(job) = self.otherwise.take() {
            self.shared.submit(job);
        }
    }
}

/// A waiting writer's mark, taken away by the background worker when the
/// writer stops waiting without the lock (gives up, fails, is dropped);
/// disarmed once it got the lock (the acquire script removed the mark).
struct WriterMark<'a> {
    shared: &'a Arc<Shared>,
    names: &'a Arc<LockNames>,
    field: String,
    armed: bool,
}

impl Drop for WriterMark<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.submit(Job::ClearWriterMark {
                names: self.names.clone(),
                field: std::mem::take(&mut self.field),
            });
        }
    }
}
