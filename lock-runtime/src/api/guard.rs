//! [`LockGuard`]: one hold of a lock — its lease clock, its fencing token,
//! re-entry, and its release (by `unlock`, or in the background if dropped).

use crate::api::inspect::inspect;
use crate::base::error::{Error, Result, connection_was_closed};
use crate::base::owner::Owner;
use crate::holds::acquire::{Hold, Request};
use crate::holds::job::{LockTarget, ReleaseRequest, Target};
use crate::holds::release::{dropped, release_once, replicated, settle};
use crate::holds::shared::Shared;
use crate::protocol::replies::{ReleaseMode, Released};
use crate::transport::pubsub::TURN_WAIT;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tracing::Instrument;

/// One hold of a lock. Owned (`Send + 'static`): it can move to another
/// task, and be released from there.
///
/// Release it with [`LockGuard::unlock`], which reports the outcome. A guard
/// dropped without `unlock` is released in the background (the dropping
/// thread never blocks); failing that (the runtime is gone), Redis frees
/// the lock when its lease ends.
///
/// # The lease clock
///
/// [`LockGuard::valid_until`] is the latest instant at which Redis could
/// still count the guard as the holder: the lease from when the acquire
/// (or the last confirmed renewal) was *sent*, minus a drift margin of 1%
/// of the lease plus 2 ms. No other client can hold the lock before it,
/// unless Redis itself lost the write (a failover, a restart without
/// persistence). [`LockGuard::is_lost`] is worked out when asked, so it is
/// right even if no background task could run.
///
/// # A hold taken away
///
/// The guard says lost ([`LockGuard::is_lost`] true, [`LockGuard::lost`]
/// complete) when:
///
/// - its lease ran out (no renewal confirmed in time), at
///   [`LockGuard::valid_until`];
/// - it was removed, with a message
///   ([`Lock::force_unlock`](crate::Lock::force_unlock), `lockctl unlock
///   --force`, Redisson's `forceUnlock`) or without (the key deleted or
///   overwritten): within a round trip, well under 100 ms (50 to 70 ms
///   after the acquire for a hold taken away in its first 50 ms). The
///   client tracks the keys it holds (`CLIENT TRACKING`, a connection per
///   node, off the acquire and release paths) and reads a hold again when
///   its key changed, at most 5,000 reads a second per client: past that
///   (each renewal is a change: over 5,000 holds at a 3 s watchdog
///   timeout), a removal may wait for the next renewal.
///
/// Where the server refuses key tracking (before Redis 6, an ACL without
/// `+client|tracking`), a removal is found at the next renewal, or when a
/// fixed lease ends; a lost or silent tracking connection is replaced
/// within about 2 s, and every hold read again. The holder's own
/// re-entries and releases, readers and renewals are never taken for a
/// loss. The lock model's "A hold taken away" gives the costs.
///
/// # Fencing
///
/// [`LockGuard::token`] grows strictly with every new holder of the lock's
/// name, across clients and processes. Hand it to the resource the lock
/// protects, which refuses a token lower than one it has seen: a holder
/// paused past its lease cannot overwrite the next one's work.
#[must_use = "dropping a guard releases the lock (in the background)"]
pub struct LockGuard {
    shared: Arc<Shared>,
    hold: Hold,
    /// The latch of the release under way, once `unlock` started: a drop
    /// repeats it with the same request id, so that it cannot release
    /// twice.
    latch: Option<String>,
    done: bool,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("name", &self.hold.names.lock)
            .field("kind", &self.hold.kind)
            .field("owner", &self.hold.owner)
            .field("token", &self.token())
            .field("lease", &self.lease())
            .finish_non_exhaustive()
    }
}

impl LockGuard {
    pub(crate) fn new(shared: Arc<Shared>, hold: Hold) -> LockGuard {
        LockGuard {
            shared,
            hold,
            latch: None,
            done: false,
        }
    }

    /// The lock's name.
    pub fn name(&self) -> &str {
        &self.hold.names.lock
    }

    /// The owner of this hold. Pass it to [`Lock::reenter`](crate::Lock::reenter)
    /// (from any task) to add a hold to it.
    pub fn owner(&self) -> &Owner {
        &self.hold.owner
    }

    /// The fencing token of this hold: strictly greater than the token of
    /// every earlier holder of the lock's name. Re-entered holds keep their
    /// owner's token.
    pub fn token(&self) -> u64 {
        self.hold.owner.token()
    }

    /// The fixed lease this hold was taken with; `None` when the watchdog
    /// renews it.
    pub fn lease(&self) -> Option<Duration> {
        (!self.hold.watched).then_some(self.hold.lease)
    }

    /// The latest instant at which Redis could still count this hold (see
    /// the type's documentation); renewals move it forward, never back.
    pub fn valid_until(&self) -> Instant {
        self.hold.clock.valid_until()
    }

    /// Whether the hold may have ended: [`LockGuard::valid_until`] has
    /// passed, or the hold was found taken away (see above). It stays true.
    pub fn is_lost(&self) -> bool {
        self.hold.clock.is_lost()
    }

    /// Completes when the hold is lost ([`LockGuard::is_lost`]); use it to
    /// stop the work the lock protects:
    ///
    /// ```no_run
    /// # async fn demo(guard: redlua::LockGuard) {
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
        self.hold.clock.lost().await
    }

    /// Takes one more hold for the same owner (re-entry), with the same
    /// kind of lease, without waiting. Each hold is released on its own;
    /// the lock is free once all are.
    ///
    /// Errors: [`Error::NotHeld`] when the owner no longer holds the lock,
    /// [`Error::WrongType`] when the key now holds something else (left
    /// untouched).
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the re-entry is undone in the background if
    /// it took effect: exactly that hold, no other.
    pub async fn reenter(&self) -> Result<LockGuard> {
        self.reenter_owned().await
    }

    /// [`LockGuard::reenter`] as a future that borrows nothing (for the
    /// blocking API, which runs it on the client's thread).
    pub(crate) fn reenter_owned(
        &self,
    ) -> impl std::future::Future<Output = Result<LockGuard>> + Send + 'static {
        let shared = self.shared.clone();
        let names = self.hold.names.clone();
        let (kind, lease, owner) = (self.hold.kind, self.lease(), self.hold.owner.clone());
        async move {
            let request = Request {
                shared: &shared,
                kind,
                names: &names,
                lease,
            };
            let hold = request.reenter(&owner).await?;
            Ok(LockGuard::new(shared.clone(), hold))
        }
    }

    fn release_request(&mut self) -> ReleaseRequest {
        let hold = &self.hold;
        let latch = self.latch.get_or_insert_with(|| {
            hold.names
                .latch(request_id().encode_lower(&mut uuid::Uuid::encode_buffer()))
        });
        ReleaseRequest {
            target: Target::Lock(LockTarget {
                kind: hold.kind,
                names: hold.names.clone(),
                owner: hold.owner.clone(),
                reentry: hold.reentry,
                close_attempts: hold.close_attempts,
            }),
            key: hold.key.clone(),
            // The watchdog's timeout for a watched hold.
            lease: hold.lease,
            watched: hold.watched,
            latch: latch.clone(),
            mode: ReleaseMode::Release,
            resent: false,
        }
    }

    /// Releases this hold (the lock itself when it was the owner's last),
    /// waking a waiter when the lock becomes free.
    ///
    /// Errors: [`Error::LockLost`] when the hold had already ended,
    /// [`Error::NotOwner`] when another owner holds the lock now,
    /// [`Error::WrongType`] when the key holds something else (both left
    /// untouched), [`Error::Redis`] when Redis could not be reached: the
    /// release goes on in the background with the same request id, so it
    /// happens once (a connection found closed is no error: the release is
    /// sent again at once on a new one). In replica-synced mode,
    /// [`Error::ReleaseNotReplicated`] when too few replicas acknowledged a
    /// release done on the primary: a failover to one that missed it would
    /// keep the lock there until its lease ends.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the release is finished in the background
    /// with the same request id: it happens exactly once.
    pub async fn unlock(self) -> Result<()> {
        let span =
            crate::observability::telemetry::release_span(&self.hold.names.lock, &self.hold.owner);
        self.unlock_once().instrument(span).await
    }

    async fn unlock_once(mut self) -> Result<()> {
        let mut request = self.release_request();
        self.shared.holds().releasing(&request.key);
        let mut reply = release_once(&self.shared, &request).await;
        if let Err(error) = &reply
            && connection_was_closed(error)
        {
            // Closed while idle, say: once more on the new connection, with
            // the same request id (if the first copy ran, this one says so).
            request.resent = true;
            reply = release_once(&self.shared, &request).await;
        }
        self.done = true;
        let name = self.hold.names.lock.to_string();
        match settle(&self.shared, request, reply) {
            Ok((released @ (Released::Freed | Released::StillHeld), acked)) => {
                if released == Released::Freed && self.hold.kind.gives_own_waiters_a_turn() {
                    self.shared
                        .hub
                        .expect_turn(&self.hold.names.channel, TURN_WAIT);
                }
                replicated(&name, acked)
            }
            Ok(_) => {
                let held_by_other = inspect(&self.shared, &name)
                    .await
                    .is_ok_and(|info| !info.holders.is_empty());
                Err(if held_by_other {
                    Error::NotOwner {
                        name,
                        owner: self.hold.owner.to_string(),
                    }
                } else {
                    Error::LockLost { name }
                })
            }
            Err(error) => Err(Error::from_redis(&name, error)),
        }
    }
}

/// A new release's request id: unique in this process (a counter from a
/// random start) and, as a random one would be, among processes — without
/// asking the operating system for randomness at every release.
fn request_id() -> uuid::fmt::Simple {
    static START: OnceLock<u128> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let start = *START.get_or_init(|| uuid::Uuid::new_v4().as_u128());
    let next = u128::from(NEXT.fetch_add(1, Ordering::Relaxed));
    uuid::Uuid::from_u128(start.wrapping_add(next)).simple()
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let started = self.latch.is_some();
        let request = self.release_request();
        dropped(&self.shared, request, started);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_never_repeated() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| request_id().to_string()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
}
