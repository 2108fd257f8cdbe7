//! Where holds are released: the one release path, used by
//! [`LockGuard::unlock`](crate::LockGuard::unlock), by guards dropped
//! without it, by the background retries of both, and by the undo of
//! abandoned acquires.
//!
//! A release is idempotent: its request id names a latch that keeps the
//! first result for a retry. An undo is exact: it removes the hold of its
//! own attempt if, and only if, that attempt took effect, and closes the
//! attempt so that a late copy of it does nothing.

use crate::base::error::{Failure, classify};
use crate::holds::job::ReleaseRequest;
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
    // Earlier releases' latches, deleted by this script (see `latches.rs`).
    let carried = request
        .kind
        .carries_latches()
        .then(|| shared.carry_latches(&request.names.lock));
    let latches = carried.as_ref().map_or(&[][..], |c| &c.latches[..]);
    let reply = request
        .kind
        .release(&mut con, shared, request, latches)
        .await;
    if let (Ok(_), Some(carried)) = (&reply, carried) {
        carried.deleted();
    }
    let latched = matches!(
        &reply,
        Ok(Synced {
            reply: Released::Freed | Released::StillHeld,
            ..
        })
    );
    if latched && request.mode == ReleaseMode::Release && !request.resent {
        // The latch only serves copies of this release, and there is none:
        // this was the first, and it was answered. (After a lost reply the
        // latch stays until it expires: a late copy must find it. A release
        // that found nothing to release wrote none.)
        shared.delete_latch(request.latch.clone());
    }
    reply
}

/// Sends the release (or undo) until Redis answers, with the same request
/// id: `None` when it kept failing until retrying was no longer safe (a
/// release's latch could have expired) or useful (the hold an undo would
/// remove has ended with its lease).
pub(crate) async fn release_retrying(
    shared: &Arc<Shared>,
    request: &ReleaseRequest,
) -> Option<Released> {
    let give_up = match request.mode {
        ReleaseMode::Release => shared.config.latch_ttl / 2,
        ReleaseMode::Undo => shared.config.attempt_ttl(request.lease),
    };
    let deadline = Instant::now() + give_up;
    let mut pause = FIRST_PAUSE;
    let mut request = request.clone();
    loop {
        match release_once(shared, &request).await {
            Ok(synced) => {
                if let (Acked::Short { acked, wanted }, ReleaseMode::Release) =
                    (synced.acked, request.mode)
                {
                    tracing::warn!(target: targets::RELEASE, lock = %request.names.lock, acked, wanted, "released, but too few replicas acknowledged the release");
                }
                return Some(synced.reply);
            }
            Err(error) => match classify(&error) {
                Failure::Unknown if Instant::now() + pause < deadline => {
                    request.resent = true;
                    tracing::debug!(target: targets::RELEASE, lock = %request.names.lock, %error, "release failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_PAUSE);
                }
                Failure::WrongType => {
                    tracing::warn!(target: targets::RELEASE, lock = %request.names.lock, "the lock's key now holds something else; nothing released");
                    return Some(Released::NotHeld);
                }
                _ => {
                    tracing::warn!(target: targets::RELEASE, lock = %request.names.lock, %error, "release failed; the lock will be freed by its lease");
                    return None;
                }
            },
        }
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
    telemetry::released(
        request.kind,
        &request.names.lock,
        &request.owner,
        outcome,
        background,
    );
    let still_held = outcome.map(|released| released == Released::StillHeld);
    shared
        .holds()
        .released(&request.key, request.watched, still_held);
}
