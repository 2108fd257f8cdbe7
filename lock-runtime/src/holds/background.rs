//! The client's background worker: work that must not block or fail the
//! caller (a guard dropped without `unlock`, an `unlock` whose reply was
//! lost, an acquire abandoned mid-flight, a waiting writer's mark, a fair
//! lock's waiter that stopped waiting), each job in a task of its own.

use crate::base::kind::Kind;
use crate::base::names::LockNames;
use crate::holds::job::Job;
use crate::holds::latches::LATCH_SWEEP_DELAY;
use crate::holds::permits;
use crate::holds::release::{in_background, span, until_answered};
use crate::holds::shared::Shared;
use crate::observability::targets;
use crate::protocol::lock_scripts::ClearWriterMark;
use redis::AsyncCommands;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;
use tracing::Instrument;

/// Spawns the worker; it ends when the client (every clone, handle and
/// guard) is gone and its last job is done (each job's task holds the
/// client's state, so the queue stays open until it ends).
pub(crate) fn start(
    mut queue: mpsc::UnboundedReceiver<(Arc<Shared>, Job)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some((shared, job)) = queue.recv().await {
            tokio::spawn(run(shared, job));
        }
    })
}

/// At most this many keys in one `DEL`.
const LATCHES_PER_DEL: usize = 256;

/// Deletes the latches that no release script carried within
/// [`LATCH_SWEEP_DELAY`] (see [`crate::holds::latches`]): one `DEL` per
/// slot on a cluster, one in all on a single server; ends when none waits.
async fn sweep_latches(shared: &Shared) {
    let mut swept: Option<Instant> = None;
    while let Some(due) = shared.latches.next_due() {
        // At most one sweep per delay: latches that no script carries
        // (a read/write lock's) are deleted in batches, not one by one.
        let due = swept.map_or(due, |swept| due.max(swept + LATCH_SWEEP_DELAY));
        tokio::time::sleep_until(due.into()).await;
        swept = Some(Instant::now());
        let mut groups: HashMap<u16, Vec<String>> = HashMap::new();
        for latch in shared.latches.take_due(Instant::now()) {
            groups.entry(latch.slot).or_default().push(latch.key);
        }
        let mut con = shared.con.clone();
        for keys in groups
            .values()
            .flat_map(|keys| keys.chunks(LATCHES_PER_DEL))
        {
            let _: redis::RedisResult<i64> = con.del(keys).await;
        }
    }
}

/// Takes a fair lock's waiter that stopped waiting out of the queue,
/// retried (as releases are) while it may help: past the wait time, the
/// deadline has taken the waiter out anyway.
async fn leave_queue(shared: &Shared, names: &LockNames, owner: &str) {
    let send = |_| {
        let mut con = shared.con.clone();
        async move { Kind::leave(&mut con, &shared.config, names, owner).await }
    };
    if let Err(error) = until_answered(shared.config.fair_wait, send, |_| {}).await {
        tracing::warn!(target: targets::RELEASE, lock = %names.lock, %error, "could not leave a fair lock's queue; the waiter's deadline ends its place");
    }
}

async fn run(shared: Arc<Shared>, job: Job) {
    match job {
        Job::Release(request) => {
            let span = span(&request.target);
            in_background(&shared, &request).instrument(span).await;
        }
        Job::SweepLatches => sweep_latches(&shared).await,
        Job::LeaveQueue { names, owner } => leave_queue(&shared, &names, &owner).await,
        Job::UndoPermits(undo) => permits::in_background(&shared, &undo).await,
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
