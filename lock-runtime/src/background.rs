//! The client's background worker: work that must not block or fail the
//! caller (a guard dropped without `unlock`, an `unlock` whose reply was
//! lost, an acquire abandoned mid-flight, a waiting writer's mark), each
//! job in a task of its own, retried until Redis answers.

use crate::job::{Job, ReleaseRequest};
use crate::observability::targets;
use crate::release::{record, release_retrying};
use crate::replies::{ReleaseMode, Released};
use crate::scripts::ClearWriterMark;
use crate::shared::Shared;
use crate::telemetry;
use redis::AsyncCommands;
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::Instrument;

/// Spawns the worker; it ends when the client (every clone, handle and
/// guard) is gone and its last job is done (each job's task holds the
/// client's state, so the queue stays open until it ends).
pub(crate) fn start(
    queue: mpsc::UnboundedReceiver<(Arc<Shared>, Job)>,
) -> tokio::task::JoinHandle<()> {
    let mut queue = queue;
    tokio::spawn(async move {
        while let Some((shared, job)) = queue.recv().await {
            tokio::spawn(run(shared, job));
        }
    })
}

async fn run(shared: Arc<Shared>, job: Job) {
    match job {
        Job::Release(request) => {
            let span = telemetry::release_span(&request.names.lock, &request.owner);
            release(&shared, &request).instrument(span).await;
        }
        Job::DeleteLatch(latch) => {
            let mut con = shared.con.clone();
            let _: redis::RedisResult<i64> = con.del(latch).await;
        }
        Job::ClearWriterMark { names, field } => {
            let mut con = shared.con.clone();
            let clear = ClearWriterMark {
                mark: &names.writer_mark(),
                writer_field: &field,
            };
            if let Err(error) = clear.invoke(&mut con).await {
                tracing::warn!(target: targets::RELEASE, lock = %names.lock, %error, "could not clear a waiting writer's mark; it expires by itself");
            }
        }
    }
}

/// A release or undo in the background, until Redis answers.
async fn release(shared: &Arc<Shared>, request: &ReleaseRequest) {
    let outcome = release_retrying(shared, request).await;
    if request.mode == ReleaseMode::Undo {
        if let Some(Released::Freed | Released::StillHeld) = outcome {
            tracing::debug!(target: targets::RELEASE, lock = %request.names.lock, "undid an abandoned acquire");
        }
    } else {
        record(shared, request, outcome, true);
    }
}
