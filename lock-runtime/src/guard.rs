//! [`LockGuard`]: one hold of a lock, released by `unlock` or, if dropped,
//! in the background.

use crate::background::{self, Job, ReleaseJob};
use crate::client::ClientInner;
use crate::error::{Error, Result};
use crate::holds::HoldKey;
use crate::kind::Kind;
use crate::names::LockNames;
use crate::scripts::State;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// One hold of a lock. Owned (`Send + 'static`): it can move to another
/// task, and be released from there — the hold stays its owner's.
///
/// Release it with [`LockGuard::unlock`], which reports the outcome. A guard
/// dropped without `unlock` is released in the background by the client
/// (the dropping thread never blocks); if that cannot be done (the tokio
/// runtime is gone), Redis frees the lock when its lease ends.
///
/// A guard can find out that its lock was lost — its lease expired, or
/// someone deleted or broke it: [`LockGuard::is_lost`], [`LockGuard::lost`].
#[must_use = "dropping a guard releases the lock (in the background)"]
pub struct LockGuard {
    client: Arc<ClientInner>,
    kind: Kind,
    names: Arc<LockNames>,
    owner: Arc<str>,
    /// `Some(lease)` for a fixed lease, `None` when the watchdog renews it.
    lease: Option<Duration>,
    acquired_at: Instant,
    lost: watch::Receiver<bool>,
    /// The release under way, once `unlock` started: a drop repeats it with
    /// the same request id, so that it cannot release twice.
    release: Option<ReleaseJob>,
    done: bool,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("name", &self.names.lock)
            .field("kind", &self.kind)
            .field("owner", &self.owner)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl LockGuard {
    pub(crate) fn new(
        client: Arc<ClientInner>,
        kind: Kind,
        names: Arc<LockNames>,
        owner: Arc<str>,
        lease: Option<Duration>,
        lost: watch::Receiver<bool>,
    ) -> LockGuard {
        LockGuard {
            client,
            kind,
            names,
            owner,
            lease,
            acquired_at: Instant::now(),
            lost,
            release: None,
            done: false,
        }
    }

    /// The lock's name.
    pub fn name(&self) -> &str {
        &self.names.lock
    }

    /// The owner of this hold: `<client-uuid>:<owner-id>`.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The fixed lease this hold was taken with; `None` when the watchdog
    /// renews it.
    pub fn lease(&self) -> Option<Duration> {
        self.lease
    }

    /// Whether the lock is known to be lost: the watchdog found it gone, or
    /// (for a fixed lease) the lease has run out.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow() || self.lease_ended()
    }

    fn lease_ended(&self) -> bool {
        self.lease
            .is_some_and(|lease| self.acquired_at.elapsed() >= lease)
    }

    /// Completes when the lock is lost (see [`LockGuard::is_lost`]); pending
    /// for as long as the hold is kept. Use it to stop work that the lock
    /// protects:
    ///
    /// ```no_run
    /// # async fn demo(guard: redlua_runtime::LockGuard) {
    /// # async fn work() {}
    /// tokio::select! {
    ///     _ = work() => {}
    ///     _ = guard.lost() => eprintln!("lock lost; stopping"),
    /// }
    /// # }
    /// ```
    ///
    /// # Cancellation
    ///
    /// Only waits: dropping the future changes nothing.
    pub async fn lost(&self) {
        let mut lost = self.lost.clone();
        let flagged = async move {
            // An error means the hold is no longer tracked: lost as well.
            let _ = lost.wait_for(|lost| *lost).await;
        };
        match self.lease {
            Some(lease) => {
                tokio::select! {
                    _ = flagged => {}
                    _ = tokio::time::sleep_until(self.acquired_at + lease) => {}
                }
            }
            None => flagged.await,
        }
    }

    fn key(&self) -> HoldKey {
        (self.names.lock.clone(), self.kind.field(&self.owner))
    }

    fn release_job(&mut self) -> ReleaseJob {
        self.release
            .get_or_insert_with(|| ReleaseJob {
                kind: self.kind,
                names: self.names.clone(),
                owner: self.owner.clone(),
                request_id: uuid::Uuid::new_v4().simple().to_string(),
                lease: self.lease.unwrap_or(self.client.config.watchdog_timeout),
                watched: self.lease.is_none(),
            })
            .clone()
    }

    /// Releases this hold (the lock itself when it was the owner's last),
    /// waking a waiter when the lock becomes free.
    ///
    /// Errors: [`Error::LockLost`] when the hold had already ended (lease
    /// expired, lock deleted), [`Error::NotOwner`] when meanwhile another
    /// owner holds the lock (it is left untouched), [`Error::WrongType`] when
    /// the key now holds something else, [`Error::Redis`] when Redis could
    /// not be reached — the release then goes on in the background, with the
    /// same request id, so that it happens once.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the release is finished in the background
    /// with the same request id: it happens exactly once.
    pub async fn unlock(mut self) -> Result<()> {
        let job = self.release_job();
        let key = self.key();
        self.client.holds().releasing(&key);
        let config = &self.client.config;
        let mut con = self.client.con.clone();
        let reply =
            background::release_once(&mut con, &job, config.publish, config.latch_ttl).await;
        let watched = job.watched;
        match reply {
            Ok(Some(still_held)) => {
                self.done = true;
                self.client
                    .holds()
                    .released(&key, watched, Some(still_held == 0));
                Ok(())
            }
            Ok(None) => {
                self.done = true;
                self.client.holds().released(&key, watched, Some(false));
                let held_by_other = State {
                    lock: &self.names.lock,
                    owner: &self.kind.field(&self.owner),
                }
                .invoke::<_>(&mut con)
                .await
                .is_ok_and(|(exists, _, _)| exists == 1);
                if held_by_other {
                    Err(Error::NotOwner {
                        name: self.names.lock.clone(),
                        owner: self.owner.to_string(),
                    })
                } else {
                    Err(Error::LockLost {
                        name: self.names.lock.clone(),
                    })
                }
            }
            Err(error) => {
                let error = Error::from_redis(&self.names.lock, error);
                self.done = true;
                if let Error::WrongType { .. } = error {
                    self.client.holds().released(&key, watched, Some(false));
                } else {
                    // `releasing` stays counted until the worker is done.
                    self.client.submit(Job::Release(job));
                }
                Err(error)
            }
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let started = self.release.is_some();
        let job = self.release_job();
        if !started {
            self.client.holds().releasing(&self.key());
        }
        self.client.submit(Job::Release(job));
    }
}
