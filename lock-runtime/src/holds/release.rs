//! Where holds are released: the one release path, used by
//! [`LockGuard::unlock`](crate::LockGuard::unlock) and
//! [`PermitGuard::release`](crate::PermitGuard::release), by guards dropped
//! without them, by the background retries of all of these, and by the
//! undo of abandoned acquires. A request's [`Target`] says what it gives
//! back: a lock's hold (its kind's script, `kind_scripts.rs`) or leased
//! permits (`leased.rs`).
//!
//! A release is idempotent: its request id names a latch that keeps the
//! first result for a retry. An undo is exact: it removes the hold of its
//! own attempt if, and only if, that attempt took effect, and closes the
//! attempt so that a late copy of it does nothing.

use crate::base::error::{Error, Failure, classify};
use crate::holds::job::{Job, ReleaseRequest, Target};
use crate::holds::shared::Shared;
use crate::observability::targets;
use crate::observability::telemetry;
use crate::protocol::replies::{ReleaseMode, Released};
use crate::transport::replication::{Acked, Synced};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// First pause before retrying a release whose outcome is unknown; it
/// doubles up to [`MAX_PAUSE`].
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(50);
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Sends the release (or undo) once; in replica-synced mode, also says how
/// many replicas acknowledged it.
pub(crate) async fn release_once(
    shared: &Arc<Shared>,
    request: &ReleaseRequest,
) -> redis::RedisResult<Synced<Released>> {
    let mut con = shared.con.clone();
    let (reply, latched) = match &request.target {
        Target::Lock(lock) => {
            // Earlier releases' latches, deleted by this script.
            let carried = lock
                .kind
                .carries_latches()
                .then(|| shared.carry_latches(&lock.names.lock));
            let latches = carried.as_ref().map_or(&[][..], |c| &c.latches[..]);
            let reply = lock
                .kind
                .release(&mut con, shared, request, lock, latches)
                .await;
            if let (Ok(_), Some(carried)) = (&reply, carried) {
                carried.deleted();
            }
            // A release that found nothing to release wrote no latch.
            let latched = reply
                .as_ref()
                .is_ok_and(|synced| matches!(synced.reply, Released::Freed | Released::StillHeld));
            (reply, latched)
        }
        Target::Permits(permits) => {
            let reply = permits.release(&mut con, shared, request).await;
            // Every answered release of permits wrote its latch.
            let latched = reply.is_ok();
            (reply, latched)
        }
    };
    if latched && request.mode == ReleaseMode::Release && !request.resent {
        // The latch only serves copies of this release, and there is none.
        // (After a lost reply it stays until it expires, for a late copy.)
        shared.delete_latch(request.latch.clone());
    }
    reply
}

/// Sends the release (or undo) until Redis answers, with the same request
/// id: the last error when it kept failing until retrying was no longer
/// safe (a release's latch could have expired) or useful (the hold an undo
/// would remove has ended with its lease).
pub(crate) async fn retrying(
    shared: &Arc<Shared>,
    request: &ReleaseRequest,
) -> redis::RedisResult<Synced<Released>> {
    let give_up = match request.mode {
        ReleaseMode::Release => shared.config.latch_ttl / 2,
        ReleaseMode::Undo => shared.config.attempt_ttl(request.lease),
    };
    let name = request.target.name();
    let send = |resent: bool| {
        let request = request.clone().resent(resent);
        async move { release_once(shared, &request).await }
    };
    until_answered(give_up, send, |error| {
        tracing::debug!(target: targets::RELEASE, lock = %name, %error, "release failed; retrying");
    })
    .await
}

/// Sends a request (made by `send`, told whether an earlier copy's reply
/// was lost) until Redis answers it, or fails otherwise than by a lost
/// reply, or `give_up` has passed, pausing [`FIRST_PAUSE`] and doubling
/// (`retried` hears of each lost reply).
pub(crate) async fn until_answered<T, F>(
    give_up: Duration,
    mut send: impl FnMut(bool) -> F,
    retried: impl Fn(&redis::RedisError),
) -> redis::RedisResult<T>
where
    F: std::future::Future<Output = redis::RedisResult<T>>,
{
    let deadline = Instant::now() + give_up;
    let mut pause = FIRST_PAUSE;
    let mut resent = false;
    loop {
        match send(resent).await {
            Err(error)
                if classify(&error) == Failure::Unknown && Instant::now() + pause < deadline =>
            {
                resent = true;
                retried(&error);
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            reply => return reply,
        }
    }
}

/// [`retrying`], for the background worker: a release is recorded with
/// what Redis said (nothing, when nothing could be learned), an undo only
/// reported.
pub(crate) async fn in_background(shared: &Arc<Shared>, request: &ReleaseRequest) {
    let name = request.target.name();
    let outcome = match retrying(shared, request).await {
        Ok(synced) => {
            if let (Acked::Short { acked, wanted }, ReleaseMode::Release) =
                (synced.acked, request.mode)
            {
                tracing::warn!(target: targets::RELEASE, lock = %name, acked, wanted, "released, but too few replicas acknowledged the release");
            }
            Some(synced.reply)
        }
        Err(error) if classify(&error) == Failure::WrongType => {
            tracing::warn!(target: targets::RELEASE, lock = %name, "the lock's key now holds something else; nothing released");
            Some(Released::NotHeld)
        }
        Err(error) => {
            tracing::warn!(target: targets::RELEASE, lock = %name, %error, "release failed; the lock will be freed by its lease");
            None
        }
    };
    if request.mode == ReleaseMode::Release {
        record(shared, request, outcome, true);
    } else if let Some(Released::Freed | Released::StillHeld) = outcome {
        tracing::debug!(target: targets::RELEASE, lock = %name, "undid an abandoned acquire");
    }
}

/// Ends a guard's release with Redis's `reply`: recorded in the registry;
/// a release whose outcome is unknown goes on in the background, with the
/// same request id (and is recorded there). A release that found nothing
/// held says [`Released::NotHeld`].
pub(crate) fn settle(
    shared: &Arc<Shared>,
    request: ReleaseRequest,
    reply: redis::RedisResult<Synced<Released>>,
) -> redis::RedisResult<(Released, Acked)> {
    let reply = reply.map(|synced| match synced.reply {
        Released::NeverTook => (Released::NotHeld, synced.acked),
        released => (released, synced.acked),
    });
    match &reply {
        Ok((released, _)) => record(shared, &request, Some(*released), false),
        Err(error) if classify(error) == Failure::WrongType => {
            record(shared, &request, Some(Released::NotHeld), false);
        }
        // `releasing` stays counted until the worker is done.
        Err(_) => shared.submit(Job::Release(request.resent(true))),
    }
    reply
}

/// A guard dropped before its release ended: the background worker
/// releases it (`started`: a release of it was under way, whose copy may
/// still arrive; it was counted as releasing then).
pub(crate) fn dropped(shared: &Arc<Shared>, request: ReleaseRequest, started: bool) {
    if !started {
        shared.holds().releasing(&request.key);
    }
    shared.submit(Job::Release(request.resent(started)));
}

/// A release that took effect: an error when too few replicas acknowledged
/// it (replica-synced mode).
pub(crate) fn replicated(name: &str, acked: Acked) -> crate::base::error::Result<()> {
    match acked {
        Acked::Short { acked, wanted } => Err(Error::ReleaseNotReplicated {
            name: name.to_string(),
            acked,
            wanted,
        }),
        Acked::Enough | Acked::NotAsked => Ok(()),
    }
}

/// The span of one release of `target` (by its guard, or in the background).
pub(crate) fn span(target: &Target) -> tracing::Span {
    match target {
        Target::Lock(lock) => telemetry::release_span(&lock.names.lock, &lock.owner),
        Target::Permits(permits) => telemetry::release_permits_span(
            &permits.names.key,
            telemetry::LEASED_SEMAPHORE,
            permits.ids.len() as u64,
        ),
    }
}

/// Updates the registry after a release of a hold ended, and reports it:
/// `outcome` is what Redis said, `None` when nothing could be learned;
/// `background` whether the worker did it (a guard dropped, a retry).
pub(crate) fn record(
    shared: &Shared,
    request: &ReleaseRequest,
    outcome: Option<Released>,
    background: bool,
) {
    if request.mode != ReleaseMode::Release {
        return;
    }
    match &request.target {
        Target::Lock(lock) => {
            telemetry::released(
                lock.kind,
                &lock.names.lock,
                &lock.owner,
                outcome,
                background,
            );
        }
        Target::Permits(permits) => {
            telemetry::permits_released(&permits.names.key, permits.ids.len(), outcome, background);
        }
    }
    let still_held = outcome.map(|released| released == Released::StillHeld);
    shared
        .holds()
        .released(&request.key, request.watched, still_held);
}
