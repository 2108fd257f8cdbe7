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
/// dropped without `unlock` is released in the background by the client
/// (the dropping thread never blocks); if that cannot be done (the tokio
/// runtime is gone), Redis frees the lock when its lease ends.
///
/// # The lease clock
///
/// A guard knows the latest instant at which Redis could still count it as
/// the holder, [`LockGuard::valid_until`]: the lease measured from when the
/// acquire (or the last renewal Redis confirmed) was *sent*, minus a drift
/// margin of 1% of the lease plus 2 ms. [`LockGuard::is_lost`] is true once
/// that instant has passed (unless a renewal confirmed a later one) or once
/// the lock was seen gone. It is worked out when asked, so it is right even
/// if no background task could run. No other client can hold the lock
/// before that instant, unless Redis itself lost the write (a failover, a
/// restart without persistence).
///
/// # A hold taken away
///
/// A hold can end while its guard is kept; the guard says lost
/// ([`LockGuard::is_lost`] true, [`LockGuard::lost`] complete):
///
/// - its lease ran out (no renewal confirmed in time): at
///   [`LockGuard::valid_until`], from the lease clock alone;
/// - removed with a message ([`Lock::force_unlock`](crate::Lock::force_unlock),
///   `lockctl unlock --force`, a Java client's `forceUnlock`), or without
///   one (the key deleted or overwritten by any client): within a round
///   trip of the change, well under 100 ms. The client tracks the keys it
///   holds (Redis's `CLIENT TRACKING`, on a connection of its own per
///   node) and reads a hold again whenever Redis says its key changed; a
///   hold taken away in its first 50 ms is found 50 to 70 ms after the
///   acquire.
///   Nothing of this is on the acquire or release path. These reads are
///   bounded (5,000 a second per client): a client whose held keys change
///   more often than that (each renewal is a change: more than 5,000 holds
///   at a 3 s watchdog timeout) reads them in turn, and a removal can then
///   take until the next renewal to be found.
///
/// Where the server refuses key tracking (before Redis 6, an ACL user
/// without `+client|tracking`), a removal is found at the next renewal, or
/// when a fixed lease ends; a lost or silent tracking connection is
/// replaced within about 2 s, and every hold read again. The holder's own
/// re-entries and releases, other readers and renewals are never taken for
/// a loss. See the lock model's "A hold taken away" for the costs.
///
/// # Fencing
///
/// [`LockGuard::token`] is a fencing token: it grows strictly with every
/// new holder of the lock's name, across clients and processes. Hand it to
/// the resource the lock protects, and let the resource refuse a token lower
/// than one it has seen: a holder that was paused past its lease then cannot
/// overwrite the work of the next one.
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

    /// The latest instant at which Redis could still count this hold, as
    /// far as this client knows (see the type's documentation). Renewals
    /// move it forward; it never moves back.
    pub fn valid_until(&self) -> Instant {
        self.hold.clock.valid_until()
    }

    /// Whether the hold may have ended: its lease clock has passed (see
    /// [`LockGuard::valid_until`]), or the lock was found gone (deleted,
    /// broken, taken over: within a round trip, see "A hold taken away"
    /// above). Once true, it stays true.
    pub fn is_lost(&self) -> bool {
        self.hold.clock.is_lost()
    }

    /// Completes when the hold is lost (see [`LockGuard::is_lost`]); pending
    /// for as long as it is kept. Use it to stop work that the lock
    /// protects:
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

    /// Takes one more hold of the same lock for the same owner (re-entry),
    /// with the same kind of lease: the watchdog's, or the same fixed one.
    /// It never waits: the owner holds the lock. Each hold is released on
    /// its own; the lock is free once all are.
    ///
    /// Errors: [`Error::NotHeld`] when the owner no longer holds the lock
    /// (its lease ended, it was broken), [`Error::WrongType`] when the key
    /// now holds something else (its hold count not a number, say); it is
    /// left untouched.
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
    /// Errors: [`Error::LockLost`] when the hold had already ended (lease
    /// expired, lock deleted), [`Error::NotOwner`] when meanwhile another
    /// owner holds the lock (it is left untouched), [`Error::WrongType`] when
    /// the key now holds something else (its hold count not a number, say;
    /// it is left untouched), [`Error::Redis`] when Redis could
    /// not be reached — the release then goes on in the background, with the
    /// same request id, so that it happens once. (A connection found closed,
    /// as a server's idle timeout or a proxy leaves it, is no error: the
    /// release is sent once more at once, on a new connection.) In replica-synced mode,
    /// [`Error::ReleaseNotReplicated`] when the release was done on the
    /// primary but fewer replicas than wanted acknowledged it in time: the
    /// client holds and renews nothing, but a failover to a replica that
    /// missed it would keep the lock there until its lease ends.
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
            // A connection that had been closed (while idle, say): once
            // more at once, on the new one. The same request id: if the
            // first copy ran after all, this one returns its result.
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
