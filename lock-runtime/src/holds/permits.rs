//! Taking a semaphore's permits, and changing a semaphore or a count-down
//! latch exactly once.
//!
//! Invariants:
//! - **One attempt per call**, with a key of its own
//!   (`{name}:redlua_permits:<client>:<n>`): the acquire script takes the
//!   permits and marks the attempt in one step, so a retry after a lost
//!   reply takes them once.
//! - **Exact undo**, as a lock's (see `acquire.rs`): the background worker
//!   gives the permits back if and only if the attempt took them, and
//!   closes the attempt; retried until Redis answers, while the attempt's
//!   key lives.
//! - **Waiters get in.** A waiter subscribes to the semaphore's channel and
//!   tries again; it then sleeps until a message, at most
//!   [`MAX_WAIT_BETWEEN_TRIES`], polling every [`POLL_WITHOUT_SUBSCRIPTION`]
//!   without a working subscription. A waiter woken by a message that took
//!   its permits and left some, or dropped before it tried, passes the
//!   wake-up on to another waiter of its client.
//! - **Changes happen once.** A release, a change of the permits or of a
//!   latch's count carries a request latch: a retry after a lost reply
//!   returns the first result and changes nothing more.

use crate::base::config::{MAX_WAIT_BETWEEN_TRIES, POLL_WITHOUT_SUBSCRIPTION};
use crate::base::counted_names::CountedNames;
use crate::base::error::{Error, Failure, Result, classify, connection_was_closed};
use crate::holds::acquire::{Undo, Wait, not_replicated};
use crate::holds::job::{Job, PermitUndo};
use crate::holds::release::{FIRST_PAUSE, MAX_PAUSE, replicated, until_answered};
use crate::holds::shared::Shared;
use crate::observability::targets;
use crate::observability::telemetry::{self, AcquireRecord, NotAcquired};
use crate::protocol::counted_scripts::{TakePermits, Taken, UndoPermits};
use crate::protocol::replies::millis;
use crate::script::ScriptCall;
use crate::transport::pubsub::Subscription;
use crate::transport::replication::{Acked, Synced};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// How long a subscribe may take before the waiter polls instead, and how
/// often a waiter without a subscription tries to subscribe again.
pub(crate) const RESUBSCRIBE_EVERY: Duration = Duration::from_secs(1);

/// One try of an acquire, as a kind of semaphore makes it.
pub(crate) enum Try<T> {
    /// The attempt holds its permits (`value`: what the kind hands on);
    /// `available` are left.
    Took { value: T, available: i64 },
    /// Too few permits; a permit taken may come back within `wait`.
    Busy { wait: Option<Duration> },
    /// The attempt was abandoned before this copy of it ran.
    Abandoned,
}

/// What an acquire of a kind of semaphore sends: its try, and the undo of
/// the attempt.
pub(crate) trait Attempt {
    /// The script's reply.
    type Reply: redis::FromRedisValue;
    /// What a try that took its permits hands on.
    type Value;
    /// The try (the same attempt every time).
    fn call(&self) -> ScriptCall;
    /// What the reply says.
    fn read(reply: Self::Reply) -> Try<Self::Value>;
    /// The undo of the attempt, for the background worker.
    fn undo(&self) -> Job;
    /// What it is in events and metrics (the `kind` label).
    const KIND: &'static str;
    /// How many permits it takes.
    fn permits(&self) -> u64;
}

/// An acquire of permits of a plain semaphore.
pub(crate) struct PermitRequest<'a> {
    pub names: &'a CountedNames,
    pub attempt: String,
    pub permits: u64,
    pub attempt_ttl_ms: u64,
}

impl Attempt for PermitRequest<'_> {
    type Reply = Taken;
    type Value = ();
    const KIND: &'static str = telemetry::SEMAPHORE;

    fn permits(&self) -> u64 {
        self.permits
    }

    fn call(&self) -> ScriptCall {
        TakePermits {
            semaphore: &self.names.key,
            attempt: &self.attempt,
            permits: self.permits,
            attempt_ttl_ms: self.attempt_ttl_ms,
        }
        .call()
    }

    fn read(reply: Taken) -> Try<()> {
        match reply {
            Taken::Yes { available } => Try::Took {
                value: (),
                available,
            },
            Taken::No { .. } => Try::Busy { wait: None },
            Taken::Abandoned => Try::Abandoned,
        }
    }

    fn undo(&self) -> Job {
        Job::UndoPermits(PermitUndo {
            names: Arc::new(self.names.clone()),
            attempt: self.attempt.clone(),
            permits: self.permits,
        })
    }
}

/// Takes the permits of `attempt`, waiting as `wait` allows: `None` when
/// they could not be had in time; else what the kind hands on, and when
/// the try that reported them held was sent (a lease counts from then: an
/// earlier copy that took them had their lease renewed by this one).
/// `attempt_key` is deleted once the call has its permits, unless a try's
/// reply was lost (until it expires, it makes a late copy do nothing).
pub(crate) async fn take<A: Attempt>(
    shared: &Arc<Shared>,
    names: &CountedNames,
    attempt: &A,
    attempt_key: &str,
    wait: Wait,
) -> Result<Option<(A::Value, Instant)>> {
    // Reported as a lock's acquire is, in its span (dropped: `cancelled`).
    let span = telemetry::permits_span(&names.key, A::KIND, attempt.permits());
    async {
        let mut record = AcquireRecord::permits(&names.key, A::KIND, attempt.permits());
        let taken = trying(shared, names, attempt, attempt_key, wait, &mut record).await;
        match &taken {
            Ok(Some(_)) => record.permits_acquired(),
            Ok(None) if matches!(wait, Wait::No) => record.not_acquired(NotAcquired::Busy, None),
            Ok(None) => record.not_acquired(NotAcquired::TimedOut, None),
            Err(error) => record.not_acquired(NotAcquired::Failed, Some(error)),
        }
        taken
    }
    .instrument(span)
    .await
}

/// [`take`]'s tries, counted in `record`.
async fn trying<A: Attempt>(
    shared: &Arc<Shared>,
    names: &CountedNames,
    attempt: &A,
    attempt_key: &str,
    wait: Wait,
    record: &mut AcquireRecord<'_>,
) -> Result<Option<(A::Value, Instant)>> {
    let mut undo = Undo::new(shared, attempt.undo(), None);
    let call = attempt.call();
    let mut subscription: Option<Subscription> = None;
    let mut pacing = Pacing::new(wait);
    loop {
        let mut con = shared.con.clone();
        undo.in_flight = true;
        record.attempt();
        let sent = Instant::now();
        let reply: redis::RedisResult<Synced<A::Reply>> =
            shared.sync.run(&mut con, &call, &names.key).await;
        undo.in_flight = false;
        let busy_wait = match reply {
            Ok(Synced { reply, acked }) => match (A::read(reply), acked) {
                (Try::Took { .. }, Acked::Short { acked, wanted }) => {
                    // Fail closed: a failover now could lose the acquire.
                    undo.now().await;
                    return Err(not_replicated(&names.key, acked, wanted));
                }
                (Try::Took { value, available }, _) => {
                    undo.done();
                    if !undo.uncertain {
                        // Every try was answered: no copy of one is still
                        // on its way, and the attempt key has served.
                        shared.delete_latch(attempt_key.to_string());
                    }
                    if let Some(sub) = &mut subscription
                        && available <= 0
                    {
                        // Nothing left for the others: the wake-up is used.
                        sub.settled();
                    }
                    // Dropped with a wake-up it did not need (permits are
                    // left), the subscription passes it on.
                    return Ok(Some((value, sent)));
                }
                (Try::Busy { wait }, _) => {
                    if let Some(sub) = &mut subscription {
                        sub.settled();
                    }
                    wait
                }
                (Try::Abandoned, _) => {
                    return Err(Error::Redis(redis::RedisError::from((
                        redis::ErrorKind::UnexpectedReturnType,
                        "redlua: the acquire found its attempt closed, or the permits an earlier try of it took gone (they expired while Redis could not be reached)",
                    ))));
                }
            },
            Err(error) => {
                // It may have taken effect: the next try or the undo finds out.
                undo.uncertain |= classify(&error) == Failure::Unknown;
                pacing.failed(&names.key, error).await?;
                continue;
            }
        };
        pacing.answered();
        if pacing.over() {
            return Ok(None);
        }
        let Some(sub) = &mut subscription else {
            if pacing.may_subscribe().await {
                subscription = subscribe(shared, &names.channel, wait, None).await;
            }
            continue;
        };
        // Until a message, a permit taken expires, or the next poll.
        let pause = busy_wait.unwrap_or(MAX_WAIT_BETWEEN_TRIES);
        pacing.sleep(sub, pause, record).await;
    }
}

/// Subscribes to `channel` (of a waiter for the lock `lock`, or of a
/// semaphore or latch), giving up at the deadline: trying goes on
/// meanwhile. `None` (poll instead) when pub/sub fails.
pub(crate) async fn subscribe(
    shared: &Shared,
    channel: &str,
    wait: Wait,
    lock: Option<&str>,
) -> Option<Subscription> {
    let subscribe = shared.hub.subscribe(channel);
    let error = match tokio::time::timeout(cap(RESUBSCRIBE_EVERY, wait), subscribe).await {
        Ok(Ok(subscription)) => return Some(subscription),
        Ok(Err(error)) => error,
        Err(_) => return None,
    };
    match lock {
        Some(lock) => {
            tracing::warn!(target: targets::ACQUIRE, %lock, %error, %channel, "cannot subscribe; polling for the lock instead")
        }
        None => {
            tracing::warn!(target: targets::ACQUIRE, %error, %channel, "cannot subscribe; polling instead")
        }
    }
    None
}

/// Whether the deadline has passed.
pub(crate) fn past(wait: Wait) -> bool {
    matches!(wait, Wait::Until(deadline) if tokio::time::Instant::now() >= deadline)
}

/// `pause`, cut to what is left before the deadline.
pub(crate) fn cap(pause: Duration, wait: Wait) -> Duration {
    match wait {
        Wait::Until(deadline) => {
            pause.min(deadline.saturating_duration_since(tokio::time::Instant::now()))
        }
        Wait::No | Wait::Forever => pause,
    }
}

/// The pace of an acquire's tries (a lock's or permits'): the pause after
/// a try whose reply was lost, and how often a waiter without a
/// subscription tries to subscribe.
pub(crate) struct Pacing {
    wait: Wait,
    /// The pause after the next failed try: [`FIRST_PAUSE`], doubling up
    /// to [`MAX_PAUSE`] while failures go on.
    error_pause: Duration,
    /// A try that will not wait still gets a second send when the first
    /// met a connection that had been closed.
    resent: bool,
    /// When a waiter without a subscription may subscribe again.
    next_subscribe: Option<tokio::time::Instant>,
}

impl Pacing {
    pub(crate) fn new(wait: Wait) -> Pacing {
        Pacing {
            wait,
            error_pause: FIRST_PAUSE,
            resent: false,
            next_subscribe: None,
        }
    }

    /// Whether the call stops trying: it does not wait, or its deadline
    /// passed.
    pub(crate) fn over(&self) -> bool {
        matches!(self.wait, Wait::No) || past(self.wait)
    }

    /// A try was answered: the next failure pauses [`FIRST_PAUSE`].
    pub(crate) fn answered(&mut self) {
        self.error_pause = FIRST_PAUSE;
    }

    /// A try of the acquire of `key` failed with `error`: `Ok` to try
    /// again (after a pause, for a call that waits), else the error the
    /// call ends with.
    pub(crate) async fn failed(&mut self, key: &str, error: redis::RedisError) -> Result<()> {
        if classify(&error) != Failure::Unknown {
            return Err(Error::from_redis(key, error));
        }
        if matches!(self.wait, Wait::No) && !self.resent && connection_was_closed(&error) {
            // Found closed (while idle, say): the healing connection has
            // been replaced; once more now.
            self.resent = true;
            return Ok(());
        }
        if self.over() {
            return Err(Error::Redis(error));
        }
        tracing::debug!(target: targets::ACQUIRE, lock = %key, %error, "acquire failed; trying again");
        let pause = cap(self.error_pause, self.wait);
        self.error_pause = (self.error_pause * 2).min(MAX_PAUSE);
        tokio::time::sleep(pause).await;
        Ok(())
    }

    /// Whether a waiter without a subscription subscribes now (the first
    /// time at once, later at most every [`RESUBSCRIBE_EVERY`]); if not, it
    /// polls: this sleeps until its next try.
    pub(crate) async fn may_subscribe(&mut self) -> bool {
        if let Some(at) = self.next_subscribe {
            let now = tokio::time::Instant::now();
            if now < at {
                tokio::time::sleep(cap(POLL_WITHOUT_SUBSCRIPTION.min(at - now), self.wait)).await;
                return false;
            }
        }
        self.subscribing();
        true
    }

    /// Waits for the next try: a wake-up on `sub`, or `pause` (at most
    /// [`MAX_WAIT_BETWEEN_TRIES`]; [`POLL_WITHOUT_SUBSCRIPTION`] while `sub`
    /// is not live), cut to the deadline.
    pub(crate) async fn sleep(
        &self,
        sub: &mut Subscription,
        pause: Duration,
        record: &mut AcquireRecord<'_>,
    ) {
        let mut pause = pause.min(MAX_WAIT_BETWEEN_TRIES);
        if !sub.is_live() {
            pause = pause.min(POLL_WITHOUT_SUBSCRIPTION);
        }
        tokio::select! {
            _ = sub.wake() => record.woken(),
            _ = tokio::time::sleep(cap(pause, self.wait)) => {}
        }
    }

    /// A subscribe starts: the next one not before [`RESUBSCRIBE_EVERY`].
    pub(crate) fn subscribing(&mut self) {
        self.next_subscribe = Some(tokio::time::Instant::now() + RESUBSCRIBE_EVERY);
    }
}

/// Runs a plain acquire's undo once: how many permits came back.
pub(crate) async fn undo_once(shared: &Shared, undo: &PermitUndo) -> redis::RedisResult<i64> {
    let mut con = shared.con.clone();
    let gave_back: i64 = UndoPermits {
        semaphore: &undo.names.key,
        channel: &undo.names.channel,
        attempt: &undo.attempt,
        permits: undo.permits,
        attempt_ttl_ms: millis(shared.config.latch_ttl),
        publish: shared.config.publish,
    }
    .invoke(&mut con)
    .await?;
    Ok(gave_back * i64::try_from(undo.permits).unwrap_or(i64::MAX))
}

/// A plain acquire's undo in the background: retried until Redis answers,
/// while the attempt's key can still tell what the attempt did.
pub(crate) async fn in_background(shared: &Arc<Shared>, undo: &PermitUndo) {
    let give_up = shared.config.latch_ttl;
    match until_answered(give_up, |_| undo_once(shared, undo), |_| {}).await {
        Ok(gave_back) => {
            tracing::debug!(target: targets::RELEASE, semaphore = %undo.names.key, gave_back, "permits given back in the background");
        }
        Err(error) => {
            tracing::error!(target: targets::RELEASE, semaphore = %undo.names.key, %error, "could not give permits back in the background");
        }
    }
}

/// Runs a change script (made by `call` for a request latch) once: a reply
/// lost is retried with the same latch while it lives, so that the change
/// happens exactly once; the latch is deleted once answered, unless a
/// reply was lost (then it stays until it expires, so that a late copy of
/// that send finds the change done).
pub(crate) async fn change_once<T: redis::FromRedisValue>(
    shared: &Arc<Shared>,
    names: &CountedNames,
    call: impl Fn(&str) -> ScriptCall,
) -> Result<T> {
    let latch = names.request_latch(&shared.id, shared.ids.next());
    let call = call(&latch);
    // A send whose reply was lost: a copy of it may still reach Redis.
    let mut uncertain = false;
    let send = |resent: bool| {
        uncertain |= resent;
        let (mut con, call) = (shared.con.clone(), &call);
        async move { shared.sync.run(&mut con, call, &names.key).await }
    };
    let give_up = shared.config.latch_ttl / 2;
    let reply: redis::RedisResult<Synced<T>> = until_answered(give_up, send, |_| {}).await;
    let Synced { reply, acked } = reply.map_err(|error| Error::from_redis(&names.key, error))?;
    if !uncertain {
        shared.delete_latch(latch);
    }
    replicated(&names.key, acked)?;
    Ok(reply)
}
