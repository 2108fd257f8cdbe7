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
use crate::names::slot;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
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
        let mut latches = LatchSweep::default();
        loop {
            tokio::select! {
                job = queue.recv() => match job {
                    Some((shared, Job::DeleteLatch(latch))) => latches.add(shared, latch),
                    Some((shared, job)) => {
                        tokio::spawn(run(shared, job));
                    }
                    None => break,
                },
                () = LatchSweep::due(latches.at) => latches.sweep(),
            }
        }
        latches.sweep();
    })
}

/// How long answered releases' latches are collected before one `DEL`
/// removes them all: a latch only serves a retry of its release, and a
/// release that was answered is never retried, so nothing waits for it.
const LATCH_SWEEP_DELAY: Duration = Duration::from_millis(50);

/// At most this many keys in one `DEL`.
const LATCHES_PER_DEL: usize = 256;

/// Latches of answered releases, waiting to be deleted together: one
/// command for every release of the last [`LATCH_SWEEP_DELAY`] instead of
/// one each (the latch expires by itself anyway; this only frees it early).
#[derive(Default)]
struct LatchSweep {
    shared: Option<Arc<Shared>>,
    latches: Vec<String>,
    at: Option<tokio::time::Instant>,
}

impl LatchSweep {
    fn add(&mut self, shared: Arc<Shared>, latch: String) {
        self.at
            .get_or_insert_with(|| tokio::time::Instant::now() + LATCH_SWEEP_DELAY);
        self.shared = Some(shared);
        self.latches.push(latch);
    }

    /// Ready when the first latch collected has waited long enough; never
    /// while there is none.
    async fn due(at: Option<tokio::time::Instant>) {
        match at {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// Deletes the latches collected, in a task of its own: one `DEL` per
    /// slot on a cluster (a command's keys must share one), one in all on a
    /// single server.
    fn sweep(&mut self) {
        self.at = None;
        let latches = std::mem::take(&mut self.latches);
        let Some(shared) = self.shared.take() else {
            return;
        };
        if latches.is_empty() {
            return;
        }
        let mut groups: HashMap<u16, Vec<String>> = HashMap::new();
        let cluster = shared.con.is_cluster();
        for latch in latches {
            let slot = if cluster { slot(&latch) } else { 0 };
            groups.entry(slot).or_default().push(latch);
        }
        tokio::spawn(async move {
            let mut con = shared.con.clone();
            for keys in groups.values().flat_map(|keys| keys.chunks(LATCHES_PER_DEL)) {
                let _: redis::RedisResult<i64> = con.del(keys).await;
            }
        });
    }
}

async fn run(shared: Arc<Shared>, job: Job) {
    match job {
        Job::Release(request) => {
            let span = telemetry::release_span(&request.names.lock, &request.owner);
            release(&shared, &request).instrument(span).await;
        }
        Job::DeleteLatch(latch) => {
            // Collected by the worker (`LatchSweep`); never runs alone.
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
