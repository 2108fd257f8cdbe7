//! Pub/sub wake-ups of lock waiters: the waiting side of Redisson's release
//! messages.
//!
//! A lock waiter subscribes to the lock's channel, tries the lock again, and
//! then sleeps until a release message arrives (or until the lock's TTL runs
//! out, which the caller handles). Redisson publishes `0` when a lock is
//! released (one waiter may take it) and `1` when every waiter should retry
//! (e.g. a write lock released to readers).
//!
//! One [`PubSubHub`] per client owns a single pub/sub connection shared by all
//! of that client's waiters. Each waiter holds a [`Subscription`]; the hub
//! sends one `SUBSCRIBE` per channel however many waiters it has, and one
//! `UNSUBSCRIBE` once the last of them is gone.
//!
//! # How it works
//!
//! - The connection is opened lazily by a background *driver* task, spawned on
//!   the current Tokio runtime by the first [`PubSubHub::subscribe`] (and again
//!   after a connection was lost). The driver reads incoming messages and
//!   dispatches them, and runs `SUBSCRIBE`/`UNSUBSCRIBE` commands one at a time
//!   in the order they were queued.
//! - Commands are queued synchronously, under the hub's state lock, on an
//!   unbounded channel. So the order in which the hub *decides* to subscribe or
//!   unsubscribe a channel is the order in which the server sees the commands:
//!   a channel re-subscribed while its `UNSUBSCRIBE` is still in flight ends up
//!   subscribed. Queueing never blocks and needs no runtime, which is what lets
//!   [`Subscription`]'s `Drop` send `UNSUBSCRIBE` from any thread.
//! - Each channel has a [`Notify`](tokio::sync::Notify) and a broadcast counter (`epoch`). A `0`
//!   calls `notify_one`: it wakes one pending [`Subscription::wake`], or, when
//!   none is pending, stores a permit that the next `wake()` of that channel
//!   consumes, so a message that arrives between `subscribe()` and `wake()` is
//!   not lost. A `1` bumps the epoch and calls `notify_waiters`: pending
//!   `wake()` calls return, and every other subscription of the channel notices
//!   the new epoch on its next `wake()`. A fair lock's direct handoff
//!   (`redlua:handoff:<token>:<try>`, see `handoff.rs`) is kept on the
//!   channel for [`Subscription::take_handoff`] and wakes as a `0` does. A
//!   semaphore's message (`redisson_sc:{name}`: the permits available, see
//!   `counted_scripts.rs`) calls `notify_one` once per permit announced.
//! - When the connection is lost, the driver marks it dead and broadcasts on
//!   every channel subscribed through it. Re-subscribing is left to the
//!   waiters: a `wake()` that finds its channel not subscribed on a live
//!   connection opens a new one (through the shared, counted subscription),
//!   waits for the `SUBSCRIBE` to be confirmed, and returns, so that the caller
//!   retries the lock after any message it may have missed. Channels without
//!   waiters are simply not re-subscribed.
//!
//! - A connection that goes silent is found out: the driver pings it when
//!   nothing came on it (no message, no reply) for a second — under steady
//!   traffic it sends no ping at all — and a ping that gets no answer within
//!   [`PUBSUB_PING_TIMEOUT`](crate::base::config::PUBSUB_PING_TIMEOUT) (or the response timeout, if shorter), or a
//!   connect that takes longer than the connect timeout, ends the
//!   connection, exactly as a closed one. A silent link is thus found within
//!   two seconds of its last sign of life, however long the response
//!   timeout. Its
//!   waiters are woken at once (they try the lock), and their next `wake()`
//!   subscribes again on a new connection.
//!
//! Callers bound their waits (the lock's TTL, `try_lock_for`'s wait time),
//! and poll while [`Subscription::is_live`] is false.
//!
//! # Pattern subscriptions (fair locks)
//!
//! A fair lock wakes one waiter on a channel of its own. On one server (or
//! a Sentinel master) the hub serves all of one client's waiters of one
//! lock with a single `PSUBSCRIBE` ([`PubSubHub::member`]): each waiter is
//! a *member* of the pattern, with signals of its own, and a message that
//! matches the pattern wakes the member whose channel it came on. The
//! pattern stays subscribed for [`PATTERN_LINGER`] (and up to one ping
//! interval more) after its last member left, so that a steady stream of
//! waiters sends no `PSUBSCRIBE`/`PUNSUBSCRIBE` at all. A cluster has no
//! sharded pattern subscriptions: there each waiter subscribes to its own
//! channel.
//!
//! # Redis Cluster
//!
//! On a cluster the hub keeps one connection per node instead of one in
//! all: a channel is subscribed on the primary that owns its slot (the
//! lock's hash tag puts it in the lock's slot), with `SSUBSCRIBE` when the
//! cluster has sharded pub/sub (Redis 7+; the release scripts then
//! `SPUBLISH`) and `SUBSCRIBE` otherwise. Node connections speak RESP3, so
//! that a node can tell its subscribers that a slot left it (a `sunsubscribe`
//! they did not ask for). The owner of a slot comes from `CLUSTER SLOTS`,
//! read through the command connection, remembered, and read again after
//! any failure (a `MOVED` reply to a subscribe names the new owner at once).
//! A node connection that is lost, goes silent, or is told that a slot left
//! ends exactly as a single server's connection does: its waiters are woken
//! and their next `wake()` subscribes again, on the node that owns the slot
//! now.
//!
//! # Files
//!
//! - `mod.rs`: the hub, what the rest of the crate calls (subscribe, a
//!   pattern's member, a release's turn for its own waiters);
//! - `subscription.rs`: one waiter's registration and its `wake()`;
//! - `state.rs`: the shared state, channel entries and their signals, and
//!   the commands queued for a driver;
//! - `driver.rs`: the task that owns one connection;
//! - `link.rs`: opening a connection, sending on it, what arrives on it;
//! - `tests.rs`: against real `redis-server` processes.

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

/// The pub/sub side of one lock client: a single pub/sub connection shared by
/// all waiters of the client.
///
/// Cheap to keep in an `Arc`; it is `Send + Sync`. Dropping the hub (once no
/// [`Subscription`] refers to its state any more) ends the driver task, which
/// closes the connection.
pub(crate) struct PubSubHub {
    shared: Arc<Shared>,
}

impl PubSubHub {
    /// Creates a hub whose connections go to `nodes`: one to the server
    /// (or the Sentinel master), or on a cluster one to each node that owns
    /// the slot of a subscribed channel (with `SSUBSCRIBE` where the
    /// cluster is sharded).
    ///
    /// Nothing is connected yet: a connection is opened by the first
    /// [`subscribe`](Self::subscribe) that needs it, and opened again by the
    /// next one after it was lost.
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

    /// Registers a waiter on `channel`.
    ///
    /// The first waiter of a channel makes the hub send `SUBSCRIBE`; later
    /// waiters share that subscription. Every call returns only once the
    /// server has confirmed the subscription, so a release published after
    /// this returns reaches the returned [`Subscription`]: the caller can try
    /// the lock again knowing that it will not miss the next release message.
    ///
    /// Must be called within a Tokio runtime (the connection's driver task is
    /// spawned on it).
    ///
    /// # Errors
    ///
    /// The connection could not be opened, the server refused the
    /// subscription, the connection was lost on every attempt (the error is
    /// then an I/O error, see [`RedisError::is_connection_dropped`](redis::RedisError::is_connection_dropped)), or there
    /// is no Tokio runtime.
    ///
    /// # Cancellation
    ///
    /// Dropping the future removes the registration, exactly like dropping the
    /// [`Subscription`]: if it was the channel's last waiter, an `UNSUBSCRIBE`
    /// is queued behind the `SUBSCRIBE` that may have been sent, so the
    /// channel ends up unsubscribed and no count leaks. Other waiters that
    /// share the same `SUBSCRIBE` are not affected.
    pub(crate) async fn subscribe(&self, channel: &str) -> RedisResult<Subscription> {
        let mut subscription = self.register(channel, None);
        // Anything broadcast before it is confirmed is covered by the
        // caller's next try of the lock.
        subscription.confirm().await?;
        Ok(subscription)
    }

    /// This client released a lock whose release message goes on
    /// `channel`: if it has waiters there, one of them is about to be
    /// woken, and until it has tried the lock (or `within` has passed)
    /// [`PubSubHub::await_turn`] holds this client's new acquires of the
    /// lock back. On a current-thread runtime a task that releases and at
    /// once acquires again would otherwise always try before the woken
    /// waiter and starve it.
    pub(crate) fn expect_turn(&self, channel: &str, within: Duration) {
        let mut state = self.shared.lock();
        if let Some(entry) = state.channels.get_mut(channel)
            && entry.waiters > 0
        {
            entry.turn_until = Some(tokio::time::Instant::now() + within);
        }
    }

    /// Waits while one of this client's waiters of `channel`, woken by this
    /// client's release, is to have its turn ([`PubSubHub::expect_turn`]):
    /// until the woken waiter has tried the lock, or the expectation's
    /// time has passed.
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

    /// Registers a waiter woken on `channel`, through the pattern
    /// `pattern` (which must match `channel`) that all of this client's
    /// waiters of one lock share; nothing is sent yet. `None` on a cluster
    /// (no sharded pattern subscriptions): subscribe to `channel` instead.
    ///
    /// If the returned subscription [`is_live`](Subscription::is_live)
    /// already, a message published from now on reaches it; otherwise
    /// [`Subscription::confirm`] subscribes the pattern.
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
