//! [`Subscription`]: one waiter's registration on a channel (or its
//! membership of a pattern), and its wait for a wake-up.
//!
//! Invariants:
//! - while a subscription lives, its channel (or pattern) counts it in
//!   `State::channels` and stays subscribed; its `Drop` takes it away and
//!   queues the `UNSUBSCRIBE` of the last one, from any thread, never
//!   blocking;
//! - a `0` that woke it and was not used ([`Subscription::settled`]) is
//!   passed on to another waiter when it is dropped, so no wake-up is lost;
//! - `wake()` returns at the latest when the channel is found subscribed
//!   again after a loss: the caller then retries the lock.

use std::collections::hash_map::Entry;
use std::fmt;
use std::pin::pin;
use std::sync::Arc;

use redis::RedisResult;

use super::state::{Command, Shared, Signals, Status};
use super::{RESUBSCRIBE_BACKOFF_MAX, RESUBSCRIBE_BACKOFF_MIN};
use crate::base::mutex::locked;
use crate::protocol::handoff::Handoff;

/// A waiter's registration on one channel, which stays subscribed while
/// it lives (see the invariants above).
pub(crate) struct Subscription {
    /// The hub's state (kept alive by the subscription).
    pub(super) shared: Arc<Shared>,
    /// The channel's name (a pattern's, for a member).
    pub(super) channel: String,
    /// A pattern's member: the channel it is woken on.
    pub(super) member: Option<String>,
    /// The channel's wake-up signals (the member's own, for a member).
    pub(super) signals: Arc<Signals>,
    /// The channel's broadcast epoch this subscription has already reacted to.
    pub(super) seen: u64,
    /// A `0` woke this subscription and its caller has not yet said it
    /// used it ([`Subscription::settled`]): dropped now, the subscription
    /// passes the wake-up on to another waiter.
    pub(super) owes: bool,
}

impl Subscription {
    /// Whether the channel is subscribed on a live connection, so that a
    /// release message would reach this subscription.
    pub(crate) fn is_live(&self) -> bool {
        self.shared.is_subscribed(&self.channel)
    }

    /// Waits for a wake-up (a hint: the caller tries the lock, and waits
    /// again if it is still taken). Returns when:
    /// - a `0` chose this subscription (one pending `wake()` per `0`, in
    ///   order; a `0` with none pending is kept for the next `wake()`);
    /// - a `1` arrived, now or since this subscription's last `wake()`;
    /// - the connection was lost (closed, or silent): a message may have
    ///   been missed;
    /// - called while the channel is not subscribed on a live connection:
    ///   once it is subscribed again, so that the caller's next try misses
    ///   nothing; a failed re-subscription is retried with a growing pause
    ///   (50 ms up to 1 s), and callers bound the wait with their own timer.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a `0` that chose the dropped future passes to another
    /// `wake()` of the channel (or the next one), and a `1` is seen by the
    /// next `wake()`. A wake-up that was returned is owed to the other
    /// waiters until [`Subscription::settled`]: dropped before that, the
    /// subscription passes it on.
    pub(crate) async fn wake(&mut self) {
        let mut backoff = RESUBSCRIBE_BACKOFF_MIN;
        loop {
            if !self.shared.is_subscribed(&self.channel) {
                match self.shared.ensure_subscribed(&self.channel).await {
                    Ok(()) => {
                        self.seen = self.signals.epoch();
                        return;
                    }
                    Err(_) => {
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(RESUBSCRIBE_BACKOFF_MAX);
                        continue;
                    }
                }
            }
            let mut notified = pin!(self.signals.notify.notified());
            // From here on a `notify_one` can choose this future, and a
            // `notify_waiters` wakes it; the epoch is read after, so a
            // broadcast is either seen now or wakes the future.
            notified.as_mut().enable();
            let epoch = self.signals.epoch();
            if epoch != self.seen {
                // A permit consumed by `enable` counts as this wake-up; one
                // chosen but not consumed is passed on when `notified` drops.
                self.seen = epoch;
                return;
            }
            notified.await;
            // Woken by a message, or because the connection was lost (the
            // next call subscribes again). A `0` that chose this waiter is
            // owed to the others until the caller used it.
            let epoch = self.signals.epoch();
            self.owes = epoch == self.seen;
            self.seen = epoch;
            return;
        }
    }

    /// The direct handoff of a fair lock to this waiter (`handoff.rs`) that
    /// came since the last call, if any.
    pub(crate) fn take_handoff(&self) -> Option<Handoff> {
        locked(&self.signals.handoff).take()
    }

    /// The caller tried the lock after the last wake-up: it owes nobody,
    /// and the turn expected on the channel (`PubSubHub::expect_turn`) was had.
    pub(crate) fn settled(&mut self) {
        if std::mem::take(&mut self.owes)
            && let Some(entry) = self.shared.lock().channels.get_mut(&self.channel)
        {
            entry.turn_until = None;
        }
    }

    /// Subscribes the channel (or a member's pattern) on a live connection
    /// if it is not, and waits for the server's confirmation.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the `SUBSCRIBE` stays recorded, and the registration
    /// lives until the subscription is dropped.
    pub(crate) async fn confirm(&mut self) -> RedisResult<()> {
        self.shared.ensure_subscribed(&self.channel).await?;
        self.seen = self.signals.epoch();
        Ok(())
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.owes {
            // Chosen by a `0` and dropped before trying the lock (a
            // cancelled waiter): another waiter of this client tries.
            self.signals.notify.notify_one();
        }
        let mut state = self.shared.lock();
        let state = &mut *state;
        let Entry::Occupied(mut entry) = state.channels.entry(std::mem::take(&mut self.channel))
        else {
            return;
        };
        if let Some(member) = &self.member {
            entry.get_mut().members.remove(member);
        }
        entry.get_mut().waiters -= 1;
        if entry.get().waiters > 0 {
            return;
        }
        if entry.get().pattern
            && let Some(attempt) = &entry.get().attempt
            && attempt.confirmed_on(&state.conns)
        {
            // Kept subscribed for the next waiter; the driver sweeps it.
            entry.get_mut().idle_since = Some(tokio::time::Instant::now());
            return;
        }
        let (channel, removed) = entry.remove_entry();
        let pattern = removed.pattern;
        // The channel is subscribed (or being subscribed) only if its last
        // attempt went to the live connection. An UNSUBSCRIBE queued now runs
        // after that SUBSCRIBE and before any later one.
        // (One the server refused left nothing to unsubscribe.)
        if let Some(attempt) = removed.attempt
            && !matches!(*attempt.status.borrow(), Status::Failed(_))
            && let Some(conn) = state.conns.get(&attempt.node)
            && attempt.conn == conn.id
        {
            // If the driver is gone, so is the subscription.
            let _ = conn
                .commands
                .send(Command::Unsubscribe { channel, pattern });
        }
    }
}
