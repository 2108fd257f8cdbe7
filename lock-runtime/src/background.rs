//! The client's background worker: releases that must not block or fail the
//! caller (a guard dropped without `unlock`, an `unlock` whose reply was
//! lost, an acquire abandoned mid-flight), retried until they succeed or
//! their latch would have expired.
//!
//! Jobs go out on the client's command connection, after whatever the
//! caller sent before: an abandoned acquire is always undone after it ran.

use crate::client::ClientInner;
use crate::connection::Connection;
use crate::holds::HoldKey;
use crate::kind::{Kind, ReleaseArgs};
use crate::names::LockNames;
use crate::scripts::ClearWriterMark;
use redis::AsyncCommands;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Work for the background worker.
#[derive(Debug)]
pub(crate) enum Job {
    /// Release one hold, with the request id the release was (or will be)
    /// first tried with.
    Release(ReleaseJob),
    /// Undo an acquire whose reply was never read, if it took effect: the
    /// owner's hold count is `expected` exactly when it did.
    CancelAcquire {
        kind: Kind,
        names: Arc<LockNames>,
        owner: Arc<str>,
        expected: u64,
        lease: Duration,
    },
    /// Take away the mark a writer left while waiting, if it is still its.
    ClearWriterMark {
        names: Arc<LockNames>,
        field: String,
    },
}

/// One release.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseJob {
    pub kind: Kind,
    pub names: Arc<LockNames>,
    /// The owner (`<client-uuid>:<owner-id>`).
    pub owner: Arc<str>,
    pub request_id: String,
    pub lease: Duration,
    pub watched: bool,
}

impl ReleaseJob {
    /// The hold's key in the client's registry.
    pub(crate) fn key(&self) -> HoldKey {
        (self.names.lock.clone(), self.kind.field(&self.owner))
    }
}

/// Spawns the worker; it ends when the client (every clone and guard) is gone.
pub(crate) fn start(client: &Arc<ClientInner>, mut queue: mpsc::UnboundedReceiver<Job>) {
    let weak = Arc::downgrade(client);
    let con = client.con.clone();
    let publish = client.config.publish;
    let latch_ttl = client.config.latch_ttl;
    tokio::spawn(async move {
        while let Some(job) = queue.recv().await {
            let mut con = con.clone();
            match job {
                Job::Release(job) => {
                    let outcome = release(&mut con, &job, publish, latch_ttl).await;
                    record(&weak, &job, outcome);
                }
                Job::CancelAcquire {
                    kind,
                    names,
                    owner,
                    expected,
                    lease,
                } => {
                    let args = ReleaseArgs {
                        names: &names,
                        owner: &owner,
                        latch: &names.latch(&uuid::Uuid::new_v4().simple().to_string()),
                        lease,
                        publish,
                        latch_ttl,
                        expected: Some(expected),
                    };
                    match kind.release(&mut con, &args).await {
                        Ok(Some(0 | 1)) => {
                            tracing::debug!(lock = %names.lock, "redlua: undid an abandoned acquire");
                            let _: redis::RedisResult<i64> = con.del(args.latch).await;
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(lock = %names.lock, %error, "redlua: could not undo an abandoned acquire; the lock will be freed by its lease")
                        }
                    }
                }
                Job::ClearWriterMark { names, field } => {
                    let clear = ClearWriterMark {
                        mark: &names.writer_mark(),
                        writer_field: &field,
                    };
                    if let Err(error) = clear.invoke(&mut con).await {
                        tracing::warn!(lock = %names.lock, %error, "redlua: could not clear a waiting writer's mark; it expires by itself");
                    }
                }
            }
        }
    });
}

/// What a release found: `Some(true)` the owner still holds the lock,
/// `Some(false)` it no longer does (freed, or it was not held), `None` it
/// could not be told (Redis kept failing).
pub(crate) type Outcome = Option<bool>;

/// Runs the release script once, then deletes the latch. Returns the
/// script's answer (`Some(1)` released, `Some(0)` still held, `None` not
/// held), or the error.
pub(crate) async fn release_once(
    con: &mut Connection,
    job: &ReleaseJob,
    publish: &str,
    latch_ttl: Duration,
) -> redis::RedisResult<Option<i64>> {
    let latch = job.names.latch(&job.request_id);
    let args = ReleaseArgs {
        names: &job.names,
        owner: &job.owner,
        latch: &latch,
        lease: job.lease,
        publish,
        latch_ttl,
        expected: None,
    };
    let reply = job.kind.release(con, &args).await?;
    // The latch only serves retries of this release; it expires anyway.
    let _: redis::RedisResult<i64> = con.del(&latch).await;
    Ok(reply)
}

/// A release retried (with the same request id, so it happens once) until
/// it gets an answer or the latch would be gone.
async fn release(
    con: &mut Connection,
    job: &ReleaseJob,
    publish: &str,
    latch_ttl: Duration,
) -> Outcome {
    let deadline = Instant::now() + latch_ttl / 2;
    let mut pause = Duration::from_millis(50);
    loop {
        match release_once(con, job, publish, latch_ttl).await {
            Ok(reply) => return Some(reply == Some(0)),
            Err(error) if error.code() == Some("WRONGTYPE") => {
                tracing::warn!(lock = %job.names.lock, "redlua: the lock's key now holds something else; nothing released");
                return Some(false);
            }
            Err(error) => {
                if Instant::now() + pause > deadline {
                    tracing::warn!(lock = %job.names.lock, %error, "redlua: release failed; the lock will be freed by its lease");
                    return None;
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// Updates the client's registry after a background release.
fn record(weak: &Weak<ClientInner>, job: &ReleaseJob, outcome: Outcome) {
    if let Some(client) = weak.upgrade() {
        client.holds().released(&job.key(), job.watched, outcome);
    }
}
