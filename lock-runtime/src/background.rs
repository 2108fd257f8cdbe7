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
use crate::names::LockNames;
use crate::scripts::{CancelAcquire, Release};
use crate::watchdog::duration_ms;
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
        names: Arc<LockNames>,
        owner: Arc<str>,
        expected: u64,
        lease: Duration,
    },
}

/// One release.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseJob {
    pub names: Arc<LockNames>,
    pub owner: Arc<str>,
    pub request_id: String,
    pub lease: Duration,
    pub watched: bool,
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
                    let outcome = release(&mut con, &job, publish, latch_ttl, true).await;
                    record(&weak, &job, outcome);
                }
                Job::CancelAcquire {
                    names,
                    owner,
                    expected,
                    lease,
                } => {
                    let cancel = CancelAcquire {
                        lock: &names.lock,
                        channel: &names.channel,
                        owner: &owner,
                        expected_count: expected,
                        lease_ms: duration_ms(lease),
                        message: "0",
                        publish,
                    };
                    match cancel.invoke(&mut con).await {
                        Ok(1) => {
                            tracing::debug!(lock = %names.lock, "redlua: undid an abandoned acquire")
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(lock = %names.lock, %error, "redlua: could not undo an abandoned acquire; the lock will be freed by its lease")
                        }
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

/// Runs the release script (retrying transport errors with the same request
/// id while `retry`), then deletes the latch. Returns the script's answer
/// (`Some(1)`, `Some(0)`, `None` = not held), or the last error.
pub(crate) async fn release_once(
    con: &mut Connection,
    job: &ReleaseJob,
    publish: &str,
    latch_ttl: Duration,
) -> redis::RedisResult<Option<i64>> {
    let latch = job.names.latch(&job.request_id);
    let reply = Release {
        lock: &job.names.lock,
        channel: &job.names.channel,
        latch: &latch,
        message: "0",
        lease_ms: duration_ms(job.lease),
        owner: &job.owner,
        publish,
        latch_ttl_ms: duration_ms(latch_ttl),
    }
    .invoke(con)
    .await?;
    // The latch only serves retries of this release; it expires anyway.
    let _: redis::RedisResult<i64> = con.del(&latch).await;
    Ok(reply)
}

/// A release retried until it gets an answer or the latch would be gone.
async fn release(
    con: &mut Connection,
    job: &ReleaseJob,
    publish: &str,
    latch_ttl: Duration,
    retry: bool,
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
                if !retry || Instant::now() + pause > deadline {
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
        let key: HoldKey = (job.names.lock.clone(), job.owner.to_string());
        client.holds().released(&key, job.watched, outcome);
    }
}
