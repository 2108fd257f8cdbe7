//! Pub/sub wake-ups of lock waiters: the waiting side of Redisson's release
//! messages.
//!
//! A waiter subscribes to the lock's channel, tries the lock again, then
//! sleeps until a release message (or the lock's TTL, which the caller
//! handles). Redisson publishes `0` when one waiter may take the lock, `1`
//! when every waiter should retry (a write lock released to readers).
//!
//! One [`PubSubHub`] per client shares one connection among all its
//! waiters (one per node on a cluster): one `SUBSCRIBE` per channel however
//! many [`Subscription`]s it has, one `UNSUBSCRIBE` when the last is gone.
//!
//! # How it works
//!
//! - A *driver* task owns each connection: spawned on the current Tokio
//!   runtime by the first [`PubSubHub::subscribe`] that needs it (again
//!   after a loss), it dispatches messages and runs `SUBSCRIBE` /
//!   `UNSUBSCRIBE` one at a time, in the order queued.
//! - Commands are queued under the hub's state lock on an unbounded
//!   channel, so the server sees them in the order the hub decided them (a
//!   channel re-subscribed while its `UNSUBSCRIBE` is in flight ends up
//!   subscribed), and [`Subscription`]'s `Drop` queues without blocking or
//!   a runtime, from any thread.
//! - Each channel has a [`Notify`](tokio::sync::Notify) and a broadcast
//!   `epoch`. A `0` calls `notify_one`: it wakes one pending
//!   [`Subscription::wake`], or leaves a permit for the next one, so a
//!   message between `subscribe()` and `wake()` is not lost. A `1` bumps the
//!   epoch and calls `notify_waiters`: pending `wake()`s return, the others
//!   see the new epoch on their next `wake()`. A fair lock's handoff
//!   (`handoff.rs`) is kept for [`Subscription::take_handoff`] and wakes as
//!   a `0`; a semaphore's message (`counted_scripts.rs`) calls `notify_one`
//!   once per permit announced.
//! - A lost connection is marked dead and every channel on it broadcast.
//!   Waiters re-subscribe: a `wake()` that finds its channel not subscribed
//!   on a live connection subscribes on a new one, waits for the
//!   confirmation and returns, so that the caller retries after any message
//!   it may have missed. Channels without waiters are not re-subscribed.
//! - A silent connection is found out: the driver pings one on which
//!   nothing came for a second (never under steady traffic), and a ping
//!   unanswered within
//!   [`PUBSUB_PING_TIMEOUT`](crate::base::config::PUBSUB_PING_TIMEOUT) (or
//!   the response timeout, if shorter), or a connect past the connect
//!   timeout, ends it as a closed one: within two seconds of its last sign
//!   of life, its waiters are woken and subscribe again.
//!
//! Callers bound their waits (the lock's TTL, `try_lock_for`'s wait time),
//! and poll while [`Subscription::is_live`] is false.
//!
//! # Pattern subscriptions (fair locks)
//!
//! A fair lock wakes one waiter on a channel of its own. On one server (or
//! Sentinel master) one `PSUBSCRIBE` serves all of a client's waiters of a
//! lock ([`PubSubHub::member`]): a message wakes the member whose channel
//! it came on. The pattern stays subscribed for [`PATTERN_LINGER`] (and up
//! to one ping interval more) after its last member left, so a steady
//! stream of waiters sends no `PSUBSCRIBE` at all. A cluster has no sharded
//! patterns: there each waiter subscribes to its own channel.
//!
//! # Redis Cluster
//!
//! A channel is subscribed on the primary that owns its slot (the lock's),
//! with `SSUBSCRIBE` where the cluster has sharded pub/sub (Redis 7+; the
//! release scripts then `SPUBLISH`), `SUBSCRIBE` otherwise. Node
//! connections speak RESP3, so that a node can say a slot left it (a
//! `sunsubscribe` nobody asked for). Slot owners come from
//! `cluster_nodes.rs`. A node connection that is lost, goes silent or
//! loses a slot ends as a single server's does: its waiters subscribe again
//! where the slot is now.

mod driver;
mod link;
mod state;
mod subscription;
#[cfg(test)]
mod tests;

use crate::base::config::Timeouts;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::RedisResult;

use crate::transport::cluster_nodes::Nodes;
use state::{ChannelEntry, Shared, Signals};

pub(crate) use subscription::Subscription;

/// How long a pattern stays subscribed after its last member left (at
/// most one ping interval more: idle patterns are swept once per interval).
pub(crate) const PATTERN_LINGER: Duration = Duration::from_secs(1);

/// How many connections a subscribe tries before it reports the loss.
const SUBSCRIBE_ATTEMPTS: usize = 3;

/// How long a release of this client holds its own new acquires of the
/// lock back for the waiter it woke ([`PubSubHub::expect_turn`]): the
/// release message's trip and the waiter's try, with room to spare.
pub(crate) const TURN_WAIT: Duration = Duration::from_millis(25);

/// How often [`PubSubHub::await_turn`] looks whether the woken waiter
/// has had its turn.
const TURN_POLL: Duration = Duration::from_millis(1);

/// First pause of [`Subscription::wake`] after a failed re-subscription.
const RESUBSCRIBE_BACKOFF_MIN: Duration = Duration::from_millis(50);
/// Longest pause of [`Subscription::wake`] between re-subscription attempts.
const RESUBSCRIBE_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The pub/sub side of one lock client (see the module's documentation).
/// Dropping it (once no [`Subscription`] refers to its state) ends the
/// driver tasks, which close their connections.
pub(crate) struct PubSubHub {
    shared: Arc<Shared>,
}

impl PubSubHub {
    /// A hub whose connections go to `nodes`; each is opened by the first
    /// [`subscribe`](Self::subscribe) that needs it (again after a loss).
    pub(crate) fn new(nodes: Nodes, timeouts: Timeouts) -> PubSubHub {
        PubSubHub {
            shared: Arc::new(Shared {
                nodes,
                timeouts,
                state: Mutex::default(),
                patterns_refused: AtomicBool::new(false),
            }),
        }
    }

    /// Registers a waiter on `channel` (the first one's `SUBSCRIBE` is
    /// shared by the later ones), and returns once the server confirmed the
    /// subscription: a release published after that reaches it. Within a
    /// Tokio runtime (the driver is spawned on it).
    ///
    /// # Errors
    ///
    /// The connection could not be opened, the server refused, the
    /// connection was lost on every attempt (an I/O error), or there is no
    /// Tokio runtime.
    ///
    /// # Cancellation
    ///
    /// As dropping the [`Subscription`]: the last waiter's `UNSUBSCRIBE` is
    /// queued behind the `SUBSCRIBE`, so no count leaks; other waiters of
    /// the channel are not affected.
    pub(crate) async fn subscribe(&self, channel: &str) -> RedisResult<Subscription> {
        let mut subscription = self.register(channel, None);
        // Anything broadcast before it is confirmed is covered by the
        // caller's next try of the lock.
        subscription.confirm().await?;
        Ok(subscription)
    }

    /// This client released a lock whose message goes on `channel`: if it
    /// has waiters there, [`PubSubHub::await_turn`] holds its new acquires
    /// of the lock back until the woken one has tried (or `within` passed).
    /// Otherwise, on a current-thread runtime, a task that releases and at
    /// once acquires again would always try first and starve the waiter.
    pub(crate) fn expect_turn(&self, channel: &str, within: Duration) {
        let mut state = self.shared.lock();
        if let Some(entry) = state.channels.get_mut(channel)
            && entry.waiters > 0
        {
            entry.turn_until = Some(tokio::time::Instant::now() + within);
        }
    }

    /// Waits while a waiter of `channel` woken by this client's release is
    /// to have its turn ([`PubSubHub::expect_turn`]).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: it only waits.
    pub(crate) async fn await_turn(&self, channel: &str) {
        loop {
            let pending = {
                let state = self.shared.lock();
                state
                    .channels
                    .get(channel)
                    .and_then(|entry| entry.turn_until)
                    .filter(|until| tokio::time::Instant::now() < *until)
            };
            let Some(until) = pending else {
                return;
            };
            tokio::time::sleep_until(until.min(tokio::time::Instant::now() + TURN_POLL)).await;
        }
    }

    /// Counts one more waiter on `channel` and returns its registration;
    /// with `member`, `channel` is a pattern and the waiter is woken by
    /// messages on `member` only.
    fn register(&self, channel: &str, member: Option<&str>) -> Subscription {
        let mut state = self.shared.lock();
        let entry = state
            .channels
            .entry(channel.to_owned())
            .or_insert_with(|| ChannelEntry {
                pattern: member.is_some(),
                ..ChannelEntry::default()
            });
        entry.waiters += 1;
        let signals = match member {
            None => Arc::clone(&entry.signals),
            Some(member) => {
                entry.idle_since = None;
                let signals: Arc<Signals> = Arc::default();
                entry
                    .members
                    .insert(member.to_owned(), Arc::clone(&signals));
                signals
            }
        };
        let seen = signals.epoch();
        Subscription {
            shared: Arc::clone(&self.shared),
            channel: channel.to_owned(),
            member: member.map(str::to_owned),
            signals,
            seen,
            owes: false,
        }
    }

    /// Registers a waiter woken on `channel` through `pattern` (which
    /// matches it), shared by this client's waiters of one lock; nothing is
    /// sent yet ([`Subscription::confirm`] subscribes unless it
    /// [`is_live`](Subscription::is_live) already). `None` on a cluster, or
    /// once patterns were refused: subscribe to `channel` instead.
    pub(crate) fn member(&self, pattern: &str, channel: &str) -> Option<Subscription> {
        if matches!(self.shared.nodes, Nodes::Cluster(_))
            || self.shared.patterns_refused.load(Ordering::Relaxed)
        {
            return None;
        }
        Some(self.register(pattern, Some(channel)))
    }

    /// The server refused a pattern subscription: from now on
    /// [`member`](PubSubHub::member) declines, and waiters subscribe to
    /// their own channels.
    pub(crate) fn refuse_patterns(&self) {
        self.shared.patterns_refused.store(true, Ordering::Relaxed);
    }
}

impl fmt::Debug for PubSubHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("PubSubHub")
            .field("connections", &state.conns.len())
            .field("channels", &state.channels.len())
            .finish_non_exhaustive()
    }
}
