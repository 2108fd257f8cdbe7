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
//! - Each channel has a [`Notify`] and a broadcast counter (`epoch`). A `0`
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
//!   [`PUBSUB_PING_TIMEOUT`] (or the response timeout, if shorter), or a
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

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use redis::aio::{MultiplexedConnection, PubSubSink};
use redis::{
    AsyncConnectionConfig, ConnectionInfo, ErrorKind, Msg, PushInfo, PushKind, RedisError,
    RedisResult, Value,
};
use tokio::sync::{Notify, mpsc, watch};

use crate::base::config::{PUBSUB_PING_INTERVAL, PUBSUB_PING_TIMEOUT};
use crate::base::names::slot;
use crate::observability::targets;
use crate::protocol::counted_scripts::permits_message;
use crate::protocol::handoff::{self, Handoff};
use crate::protocol::replies::WakeMessage;
use crate::transport::cluster_nodes::{SlotOwner, node_info, owner_of, read_slots};
use crate::transport::connection::Connection;
use crate::transport::sentinel::Sentinels;

/// How long a pattern stays subscribed after its last member left (at
/// most one ping interval more: idle patterns are swept once per interval).
pub(crate) const PATTERN_LINGER: Duration = Duration::from_secs(1);

/// The most waiters of one client a semaphore's message wakes at once (the
/// permits it announces, up to this; each that takes permits and leaves
/// some wakes one more).
const PERMITS_WOKEN_AT_MOST: i64 = 64;

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

/// A waiter's registration on one channel.
///
/// While it lives, the hub keeps the channel subscribed. Dropping it removes
/// the registration; dropping the last one of a channel queues an
/// `UNSUBSCRIBE` that the driver task sends in the background (the drop never
/// blocks and needs no runtime).
pub(crate) struct Subscription {
    /// The hub's state (kept alive by the subscription).
    shared: Arc<Shared>,
    /// The channel's name (a pattern's, for a member).
    channel: String,
    /// A pattern's member: the channel it is woken on.
    member: Option<String>,
    /// The channel's wake-up signals (the member's own, for a member).
    signals: Arc<Signals>,
    /// The channel's broadcast epoch this subscription has already reacted to.
    seen: u64,
    /// A `0` woke this subscription and its caller has not yet said it
    /// used it ([`Subscription::settled`]): dropped now, the subscription
    /// passes the wake-up on to another waiter.
    owes: bool,
}

/// Where a hub's connections go.
enum Target {
    /// One server: one RESP2 pub/sub connection, `SUBSCRIBE`.
    Server(redis::Client),
    /// The master of a Sentinel service, asked of the sentinels at each
    /// connect; otherwise as `Server`.
    Sentinel(Arc<Sentinels>),
    /// A cluster: a RESP3 connection to each node that owns the slot of a
    /// subscribed channel.
    Cluster(ClusterTarget),
}

/// How a hub finds and reaches the nodes of a cluster.
struct ClusterTarget {
    /// Settings of the node connections (each gets its node's address).
    template: ConnectionInfo,
    /// Reads `CLUSTER SLOTS` (the client's command connection).
    con: Connection,
    /// `SSUBSCRIBE` (sharded pub/sub) rather than `SUBSCRIBE`.
    sharded: bool,
    /// The slot ranges last read and their primaries (`host:port`), first
    /// match wins; `None` until read, and again after a failure.
    slots: Mutex<Option<Arc<Vec<SlotOwner>>>>,
}

/// The key of the single server's connection in [`State::conns`].
const SERVER: &str = "";

/// State shared by the hub, its subscriptions and (weakly) its driver task.
struct Shared {
    /// Where connections go.
    target: Target,
    /// How long opening a connection may take.
    connect_timeout: Duration,
    /// How long a ping may go unanswered before the connection counts as
    /// dead.
    response_timeout: Duration,
    /// Everything mutable; never held across an `.await`.
    state: Mutex<State>,
    /// The server refused a `PSUBSCRIBE` (an ACL that lists channels
    /// allows no pattern of them): waiters subscribe to their channels.
    patterns_refused: AtomicBool,
}

/// The mutable part of [`Shared`].
struct State {
    /// Per node (`host:port`, or [`SERVER`]): the current connection's
    /// driver, if one was started and not found dead.
    conns: HashMap<String, ConnHandle>,
    /// Id of the next driver (ids tell connections apart).
    next_conn_id: u64,
    /// Channels that have at least one [`Subscription`].
    channels: HashMap<String, ChannelEntry>,
}

/// The hub's handle on a driver task.
struct ConnHandle {
    /// The driver's id.
    id: u64,
    /// Queue of commands the driver runs in order.
    commands: mpsc::UnboundedSender<Command>,
}

/// A subscribed (or being subscribed) channel, or pattern.
struct ChannelEntry {
    /// Number of live [`Subscription`]s of the channel.
    waiters: usize,
    /// A pattern (`PSUBSCRIBE`) rather than a channel.
    pattern: bool,
    /// A pattern's members: each channel's own signals.
    members: HashMap<String, Arc<Signals>>,
    /// A pattern without members, kept subscribed since then.
    idle_since: Option<tokio::time::Instant>,
    /// Wake-up signals, shared with the subscriptions.
    signals: Arc<Signals>,
    /// The latest `SUBSCRIBE` sent for the channel, if any.
    attempt: Option<Attempt>,
    /// A release by this client is expected to wake one of its waiters
    /// of the channel, until then ([`PubSubHub::expect_turn`]); cleared
    /// when a woken waiter has tried the lock.
    turn_until: Option<tokio::time::Instant>,
}

/// One `SUBSCRIBE` of a channel on one connection.
struct Attempt {
    /// The node of that connection.
    node: String,
    /// Id of the connection it was queued on.
    conn: u64,
    /// Its outcome; the sender is closed without a value if the connection
    /// died first.
    status: watch::Receiver<Status>,
}

/// Outcome of a `SUBSCRIBE`.
#[derive(Clone, Debug)]
enum Status {
    /// Queued or sent; no reply yet.
    Pending,
    /// The server confirmed it.
    Subscribed,
    /// The server refused it (e.g. an ACL forbids the channel), or the
    /// connection could not be opened.
    Failed(RedisError),
}

/// Wake-up signals of one channel.
#[derive(Default)]
struct Signals {
    /// `notify_one` for each `0`; `notify_waiters` for each `1` and on loss.
    notify: Notify,
    /// Bumped by each broadcast (`1`, connection lost), before `notify_waiters`.
    epoch: AtomicU64,
    /// The latest direct handoff of a fair lock to the waiter of this
    /// channel (see `handoff.rs`), not yet taken; stored before the
    /// `notify_one` that wakes the waiter.
    handoff: std::sync::Mutex<Option<Handoff>>,
}

/// A command for the driver task.
enum Command {
    /// Send `SUBSCRIBE channel` (`PSUBSCRIBE` for a pattern), report the
    /// outcome through `done`.
    Subscribe {
        channel: String,
        pattern: bool,
        done: watch::Sender<Status>,
    },
    /// Send `UNSUBSCRIBE channel` (`PUNSUBSCRIBE` for a pattern).
    Unsubscribe { channel: String, pattern: bool },
}

/// A command being run by the driver, with the sender to report its outcome.
type RunningCommand =
    Pin<Box<dyn Future<Output = (RedisResult<()>, Option<watch::Sender<Status>>)> + Send>>;

impl PubSubHub {
    /// Creates a hub that opens its pub/sub connection with `client`.
    ///
    /// Nothing is connected yet: the connection is opened by the first
    /// [`subscribe`](Self::subscribe), and opened again by the next one after
    /// it was lost.
    pub(crate) fn new(
        client: redis::Client,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> PubSubHub {
        PubSubHub::with_target(Target::Server(client), connect_timeout, response_timeout)
    }

    /// Creates a hub for a cluster: it subscribes each channel on the node
    /// that owns its slot (asking `con` which one), connecting as
    /// `template` says (its address is replaced by the node's), with
    /// `SSUBSCRIBE` if `sharded`, else `SUBSCRIBE`. Nothing is connected
    /// yet.
    pub(crate) fn cluster(
        template: ConnectionInfo,
        con: Connection,
        sharded: bool,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> PubSubHub {
        let target = Target::Cluster(ClusterTarget {
            template,
            con,
            sharded,
            slots: Mutex::new(None),
        });
        PubSubHub::with_target(target, connect_timeout, response_timeout)
    }

    /// Creates a hub for the master of a Sentinel service: each connection
    /// goes to the master the sentinels name when it is opened. Nothing is
    /// connected yet.
    pub(crate) fn sentinel(
        sentinels: Arc<Sentinels>,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> PubSubHub {
        PubSubHub::with_target(
            Target::Sentinel(sentinels),
            connect_timeout,
            response_timeout,
        )
    }

    fn with_target(
        target: Target,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> PubSubHub {
        PubSubHub {
            shared: Arc::new(Shared {
                target,
                connect_timeout,
                response_timeout,
                state: Mutex::new(State {
                    conns: HashMap::new(),
                    next_conn_id: 0,
                    channels: HashMap::new(),
                }),
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
    /// then an I/O error, see [`RedisError::is_connection_dropped`]), or there
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
        let mut subscription = self.register(channel);
        self.shared.ensure_subscribed(channel).await?;
        // Anything broadcast before this point is covered by the caller's
        // next try of the lock.
        subscription.seen = subscription.signals.epoch();
        Ok(subscription)
    }

    /// Number of channels that currently have at least one [`Subscription`]
    /// (including subscriptions still waiting for their `SUBSCRIBE` to be
    /// confirmed). Meant for tests: it is 0 again once every waiter is gone.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn subscribed_channels(&self) -> usize {
        self.shared.lock().channels.len()
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

    /// Counts one more waiter on `channel` and returns its registration.
    fn register(&self, channel: &str) -> Subscription {
        let mut state = self.shared.lock();
        let entry = state
            .channels
            .entry(channel.to_owned())
            .or_insert_with(|| ChannelEntry::new(false));
        entry.waiters += 1;
        let signals = Arc::clone(&entry.signals);
        let seen = signals.epoch();
        Subscription {
            shared: Arc::clone(&self.shared),
            channel: channel.to_owned(),
            member: None,
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
        if matches!(self.shared.target, Target::Cluster(_))
            || self.shared.patterns_refused.load(Ordering::Relaxed)
        {
            return None;
        }
        let mut state = self.shared.lock();
        let entry = state
            .channels
            .entry(pattern.to_owned())
            .or_insert_with(|| ChannelEntry::new(true));
        entry.waiters += 1;
        entry.idle_since = None;
        let signals: Arc<Signals> = Arc::default();
        entry
            .members
            .insert(channel.to_owned(), Arc::clone(&signals));
        let seen = signals.epoch();
        Some(Subscription {
            shared: Arc::clone(&self.shared),
            channel: pattern.to_owned(),
            member: Some(channel.to_owned()),
            signals,
            seen,
            owes: false,
        })
    }

    /// The server refused a pattern subscription: from now on
    /// [`member`](PubSubHub::member) declines, and waiters subscribe to
    /// their own channels.
    pub(crate) fn refuse_patterns(&self) {
        self.shared.patterns_refused.store(true, Ordering::Relaxed);
    }
}

impl ChannelEntry {
    fn new(pattern: bool) -> ChannelEntry {
        ChannelEntry {
            waiters: 0,
            pattern,
            members: HashMap::new(),
            idle_since: None,
            signals: Arc::default(),
            attempt: None,
            turn_until: None,
        }
    }

    /// Every signal of the entry: its own, and its members'.
    fn all_signals(&self) -> impl Iterator<Item = &Arc<Signals>> {
        std::iter::once(&self.signals).chain(self.members.values())
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

impl Subscription {
    /// Whether the channel is subscribed on a live connection, so that a
    /// release message would reach this subscription.
    pub(crate) fn is_live(&self) -> bool {
        self.shared.is_subscribed(&self.channel)
    }

    /// Waits for a wake-up on the channel.
    ///
    /// Returns when:
    /// - a `0` arrives and this subscription is the one chosen to wake (one
    ///   pending `wake()` of this client per `0`, in the order they started
    ///   waiting). A `0` that arrived while no `wake()` of the channel was
    ///   pending is kept for the next `wake()` of the channel, which then
    ///   returns at once;
    /// - a `1` arrives (every waiter of the channel wakes), or arrived since
    ///   the previous `wake()` of this subscription (or since `subscribe()`
    ///   returned);
    /// - the pub/sub connection was lost (closed, or silent): at once, so
    ///   that the caller tries the lock (a message may have been missed);
    /// - called while the channel is not subscribed on a live connection: once
    ///   it is subscribed again, on a new connection, so that the caller's
    ///   next try happens after no message can be missed any more. If that
    ///   re-subscription fails (the server is unreachable), it is retried
    ///   with a growing pause (50 ms up to 1 s) until it succeeds; callers
    ///   bound the whole wait with their own timer, and poll meanwhile.
    ///
    /// A wake-up is a hint, not a promise: the caller tries the lock again and
    /// calls `wake()` again if it is still taken.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe. If the future is dropped after a `0` chose it but before
    /// it returned, the wake-up passes to another pending `wake()` of the
    /// channel, or is kept for the next one. A `1` is never lost either: the
    /// next `wake()` of this subscription sees it. The subscription itself
    /// stays registered. A wake-up that *was* returned is owed to the other
    /// waiters until the caller calls [`Subscription::settled`] (having
    /// tried the lock): a subscription dropped before that passes it on.
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

    /// The latest direct handoff to this subscription's waiter (a fair
    /// lock's release handed it the lock: see `handoff.rs`), if one came
    /// since the last call.
    pub(crate) fn take_handoff(&self) -> Option<Handoff> {
        self.signals
            .handoff
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
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

    /// Makes sure the channel (or a member's pattern) is subscribed on a
    /// live connection, and waits for the server's confirmation (see
    /// [`PubSubHub::subscribe`]).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the `SUBSCRIBE` stays recorded, and the registration
    /// is removed only when the subscription is dropped.
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
            && matches!(*attempt.status.borrow(), Status::Subscribed)
            && state
                .conns
                .get(&attempt.node)
                .is_some_and(|conn| conn.is_alive() && conn.id == attempt.conn)
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

impl Shared {
    /// Locks the state, ignoring poisoning (no code panics while holding it).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `channel`'s last `SUBSCRIBE` was confirmed on the live
    /// connection.
    fn is_subscribed(&self, channel: &str) -> bool {
        let state = self.lock();
        let Some(attempt) = state
            .channels
            .get(channel)
            .and_then(|entry| entry.attempt.as_ref())
        else {
            return false;
        };
        state
            .conns
            .get(&attempt.node)
            .is_some_and(|conn| conn.is_alive() && conn.id == attempt.conn)
            && matches!(*attempt.status.borrow(), Status::Subscribed)
    }

    /// Makes sure `channel` (which has a registered waiter) is subscribed on
    /// the live connection, opening one if needed, and waits for the server's
    /// confirmation. A connection lost before confirming is replaced, up to
    /// [`SUBSCRIBE_ATTEMPTS`] connections.
    ///
    /// Cancel-safe: the attempt stays recorded in the channel's entry, where
    /// other waiters share it.
    async fn ensure_subscribed(self: &Arc<Self>, channel: &str) -> RedisResult<()> {
        let mut last_error = None;
        for _ in 0..SUBSCRIBE_ATTEMPTS {
            let node = self.node_of(channel).await?;
            let mut status = self.start_subscribe(channel, &node)?;
            let outcome = status
                .wait_for(|status| !matches!(status, Status::Pending))
                .await
                .map(|status| status.clone());
            match outcome {
                Ok(Status::Subscribed) => return Ok(()),
                Ok(Status::Failed(err)) => match &self.target {
                    Target::Server(_) | Target::Sentinel(_) => return Err(err),
                    // The slot may have moved, the node may be down: ask
                    // the cluster again.
                    Target::Cluster(cluster) => {
                        cluster.failed(&err);
                        last_error = Some(err);
                    }
                },
                // The connection died before it confirmed: try a new one.
                Ok(Status::Pending) | Err(_) => {
                    if let Target::Cluster(cluster) = &self.target {
                        cluster.forget_slots();
                    }
                }
            }
        }
        Err(last_error.unwrap_or_else(|| {
            RedisError::from(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "redlua: the pub/sub connection was lost while subscribing",
            ))
        }))
    }

    /// The node to subscribe `channel` on: the server, or the primary that
    /// owns the channel's slot.
    async fn node_of(&self, channel: &str) -> RedisResult<String> {
        match &self.target {
            Target::Server(_) | Target::Sentinel(_) => Ok(SERVER.to_owned()),
            Target::Cluster(cluster) => cluster.owner(slot(channel)).await,
        }
    }

    /// Returns the outcome to wait for of `channel`'s `SUBSCRIBE` on the live
    /// connection: the pending or confirmed one, or else a new one queued now
    /// (starting a connection first if there is none).
    fn start_subscribe(
        self: &Arc<Self>,
        channel: &str,
        node: &str,
    ) -> RedisResult<watch::Receiver<Status>> {
        let mut state = self.lock();
        let state = &mut *state;
        let conn = live_conn(&mut state.conns, node, &mut state.next_conn_id, self)?;
        let Some(entry) = state.channels.get_mut(channel) else {
            // Callers hold a registration, so this does not happen.
            return Err(RedisError::from((
                ErrorKind::Client,
                "redlua: subscribing a channel that has no waiter",
            )));
        };
        if let Some(attempt) = &entry.attempt
            && attempt.conn == conn.id
            && attempt.node == node
            && !matches!(*attempt.status.borrow(), Status::Failed(_))
        {
            return Ok(attempt.status.clone());
        }
        let (done, status) = watch::channel(Status::Pending);
        conn.commands
            .send(Command::Subscribe {
                channel: channel.to_owned(),
                pattern: entry.pattern,
                done,
            })
            // The driver ended meanwhile: the caller's wait sees the closed
            // status and tries the next connection.
            .ok();
        entry.attempt = Some(Attempt {
            node: node.to_owned(),
            conn: conn.id,
            status: status.clone(),
        });
        Ok(status)
    }
}

/// The live connection's handle to `node`, starting a new driver (and
/// connection) if there is none or the last one is gone.
fn live_conn<'a>(
    conns: &'a mut HashMap<String, ConnHandle>,
    node: &str,
    next_conn_id: &mut u64,
    shared: &Arc<Shared>,
) -> RedisResult<&'a ConnHandle> {
    if let Some(current) = conns.remove(node).filter(ConnHandle::is_alive) {
        return Ok(conns.entry(node.to_owned()).or_insert(current));
    }
    let connect = match &shared.target {
        Target::Server(client) => Connect::Server(client.clone()),
        Target::Sentinel(sentinels) => Connect::Sentinel(sentinels.clone()),
        Target::Cluster(cluster) => Connect::Node {
            info: node_info(&cluster.template, node)?,
            sharded: cluster.sharded,
        },
    };
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        RedisError::from((
            ErrorKind::Client,
            "redlua: lock waiting needs a Tokio runtime (for its pub/sub connection)",
        ))
    })?;
    let id = *next_conn_id;
    *next_conn_id += 1;
    let (commands, queue) = mpsc::unbounded_channel();
    let moved = match &shared.target {
        Target::Sentinel(sentinels) => Some(sentinels.switches()),
        Target::Server(_) | Target::Cluster(_) => None,
    };
    let driver = Driver {
        moved,
        shared: Arc::downgrade(shared),
        node: node.to_owned(),
        id,
        queue,
        running: None,
        dead: false,
        unsubscribing: HashMap::new(),
    };
    runtime.spawn(driver.run(connect, shared.connect_timeout, shared.response_timeout));
    Ok(conns
        .entry(node.to_owned())
        .or_insert(ConnHandle { id, commands }))
}

impl ClusterTarget {
    /// The `host:port` of the primary that owns `slot`, reading the slot
    /// map if it is not known.
    async fn owner(&self, slot: u16) -> RedisResult<String> {
        let known = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let map = match known {
            Some(map) => map,
            None => {
                let map = Arc::new(read_slots(&self.con, &self.template).await?);
                *self.slots.lock().unwrap_or_else(PoisonError::into_inner) = Some(map.clone());
                map
            }
        };
        owner_of(&map, slot).map(str::to_owned).ok_or_else(|| {
            RedisError::from((
                ErrorKind::Server(redis::ServerErrorKind::ClusterDown),
                "redlua: no node serves the slot of a lock's channel",
                format!("slot {slot}"),
            ))
        })
    }

    /// Forgets the slot map: it is read again before the next subscribe.
    fn forget_slots(&self) {
        *self.slots.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Learns from a failed subscribe: a `MOVED` names the slot's new
    /// owner; anything else makes the map be read again.
    fn failed(&self, error: &RedisError) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        match (error.redirect_node(), slots.as_ref()) {
            (Some((addr, slot)), Some(map)) if error.code() == Some("MOVED") => {
                let mut moved = vec![SlotOwner {
                    first: slot,
                    last: slot,
                    addr: addr.to_owned(),
                }];
                moved.extend(map.iter().map(|owner| SlotOwner {
                    first: owner.first,
                    last: owner.last,
                    addr: owner.addr.clone(),
                }));
                *slots = Some(Arc::new(moved));
            }
            _ => *slots = None,
        }
    }
}

/// How a driver connects.
enum Connect {
    /// A RESP2 pub/sub connection to the server.
    Server(redis::Client),
    /// A RESP2 pub/sub connection to the master the sentinels name.
    Sentinel(Arc<Sentinels>),
    /// A RESP3 connection to a cluster node.
    Node { info: ConnectionInfo, sharded: bool },
}

/// The sending half of a driver's connection.
#[derive(Clone)]
enum Link {
    /// A RESP2 pub/sub connection.
    Server(PubSubSink),
    /// A RESP3 connection to a cluster node; `sharded`: `SSUBSCRIBE`.
    Node {
        con: MultiplexedConnection,
        sharded: bool,
    },
}

/// What arrives on a driver's connection.
enum Incoming {
    /// A message on a subscribed channel.
    Message(Msg),
    /// The server unsubscribed a channel (asked for, or because its slot
    /// left the node).
    Unsubscribed(String),
    /// The connection is gone.
    Closed,
}

impl Connect {
    /// Opens the connection: its sending half and what it receives.
    async fn open(
        self,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> RedisResult<(Link, BoxStream<'static, Incoming>)> {
        match self {
            Connect::Server(client) => {
                let (sink, stream) = client.get_async_pubsub().await?.split();
                Ok((Link::Server(sink), stream.map(Incoming::Message).boxed()))
            }
            Connect::Sentinel(sentinels) => {
                let client = sentinels.master_client().await?;
                let (sink, stream) = client.get_async_pubsub().await?.split();
                Ok((Link::Server(sink), stream.map(Incoming::Message).boxed()))
            }
            Connect::Node { info, sharded } => {
                let (pushes, received) = mpsc::unbounded_channel::<PushInfo>();
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(connect_timeout))
                    .set_response_timeout(Some(response_timeout))
                    .set_push_sender(pushes);
                let con = redis::Client::open(info)?
                    .get_multiplexed_async_connection_with_config(&config)
                    .await?;
                let stream = futures_util::stream::unfold(received, |mut received| async move {
                    let push = received.recv().await?;
                    Some((incoming(push), received))
                })
                .filter_map(std::future::ready)
                .boxed();
                Ok((Link::Node { con, sharded }, stream))
            }
        }
    }
}

/// What a RESP3 push means to a driver, if anything.
fn incoming(push: PushInfo) -> Option<Incoming> {
    match push.kind {
        PushKind::Message | PushKind::SMessage | PushKind::PMessage => {
            Msg::from_push_info(push).map(Incoming::Message)
        }
        PushKind::Unsubscribe | PushKind::SUnsubscribe => match push.data.first() {
            Some(Value::BulkString(channel)) => Some(Incoming::Unsubscribed(
                String::from_utf8_lossy(channel).into_owned(),
            )),
            _ => None,
        },
        PushKind::Disconnection => Some(Incoming::Closed),
        _ => None,
    }
}

impl Link {
    /// A ping; its answer does not matter, only that it came.
    fn ping(&self) -> RunningPing {
        match self.clone() {
            Link::Server(mut sink) => Box::pin(async move { sink.ping::<Value>().await.map(drop) }),
            Link::Node { mut con, .. } => Box::pin(async move {
                redis::cmd("PING")
                    .query_async::<Value>(&mut con)
                    .await
                    .map(drop)
            }),
        }
    }

    /// Subscribes (or unsubscribes) `channel`, or the pattern `channel`.
    async fn send(&mut self, subscribe: bool, pattern: bool, channel: &str) -> RedisResult<()> {
        match self {
            Link::Server(sink) => match (subscribe, pattern) {
                (true, false) => sink.subscribe(channel).await,
                (false, false) => sink.unsubscribe(channel).await,
                (true, true) => sink.psubscribe(channel).await,
                (false, true) => sink.punsubscribe(channel).await,
            },
            Link::Node { con, sharded } => {
                let command = match (subscribe, pattern, *sharded) {
                    (true, true, _) => "PSUBSCRIBE",
                    (false, true, _) => "PUNSUBSCRIBE",
                    (true, false, true) => "SSUBSCRIBE",
                    (true, false, false) => "SUBSCRIBE",
                    (false, false, true) => "SUNSUBSCRIBE",
                    (false, false, false) => "UNSUBSCRIBE",
                };
                redis::cmd(command)
                    .arg(channel)
                    .query_async::<Value>(con)
                    .await
                    .map(drop)
            }
        }
    }
}

impl ConnHandle {
    /// Whether the driver task still runs (it may not have noticed a dead
    /// connection yet).
    fn is_alive(&self) -> bool {
        !self.commands.is_closed()
    }
}

impl Signals {
    /// The current broadcast epoch.
    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Wakes every waiter of the channel, pending or not.
    fn broadcast(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

/// The task that owns one pub/sub connection.
///
/// Its `Drop` (the task ending, or being dropped with its runtime) marks the
/// connection dead and wakes the waiters of its channels *before* the queued
/// and running commands are dropped, so that waiters retrying a `SUBSCRIBE`
/// start a new connection instead of queueing on this one.
struct Driver {
    /// The hub's state; weak, so that dropping the hub ends the driver.
    shared: Weak<Shared>,
    /// The node it is connected to (its key in [`State::conns`]).
    node: String,
    /// This connection's id.
    id: u64,
    /// Commands queued by the hub.
    queue: mpsc::UnboundedReceiver<Command>,
    /// The command being run, if any.
    running: Option<RunningCommand>,
    /// Whether [`Driver::mark_dead`] already ran.
    dead: bool,
    /// For the master of a Sentinel service: tells when the master
    /// changed (the connection then ends, as a lost one).
    moved: Option<watch::Receiver<u64>>,
    /// Unsubscribes sent and not yet seen confirmed, per channel: an
    /// unsubscribe push beyond them was the server's own (a slot left the
    /// node).
    unsubscribing: HashMap<String, usize>,
}

/// A ping being sent on the connection.
type RunningPing = Pin<Box<dyn Future<Output = RedisResult<()>> + Send>>;

/// What woke the driver.
enum Event {
    /// Time to sweep the idle patterns.
    Sweep,
    /// Time to ping: nothing came for one ping interval.
    Tick,
    /// The ping was answered (or failed).
    Pong(RedisResult<()>),
    /// The ping was not answered in time: the connection is dead.
    Silent,
    /// A pushed message, or `None` when the connection is closed.
    Message(Option<Incoming>),
    /// The running command completed.
    Done((RedisResult<()>, Option<watch::Sender<Status>>)),
    /// A queued command, or `None` when the hub is gone.
    Command(Option<Command>),
    /// The sentinels name another master.
    Moved,
}

impl Driver {
    /// Connects, then runs commands and dispatches messages until the
    /// connection is closed or the hub is dropped.
    async fn run(
        mut self,
        connect: Connect,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) {
        // The `node` of the events: a single server's key is empty.
        let shown = match &connect {
            Connect::Server(client) => client.get_connection_info().addr().to_string(),
            Connect::Sentinel(_) => "master".to_owned(),
            Connect::Node { .. } => self.node.clone(),
        };
        let connect = tokio::time::timeout(
            connect_timeout,
            connect.open(connect_timeout, response_timeout),
        );
        // A pub/sub link answers a ping at once unless it is dead (or the
        // server is stuck in a long script): waiting the full response
        // timeout for it would delay the waiters it wakes.
        let ping_timeout = response_timeout.min(PUBSUB_PING_TIMEOUT);
        let connected = connect.await.unwrap_or_else(|_| {
            Err(RedisError::from((
                ErrorKind::Io,
                "redlua: opening the pub/sub connection timed out",
            )))
        });
        let (link, mut stream) = match connected {
            Ok(connected) => {
                crate::observability::telemetry::pubsub_opened(&shown, self.id);
                connected
            }
            Err(err) => {
                self.mark_dead();
                // Nothing can be queued any more: report the error to every
                // SUBSCRIBE that was waiting for this connection.
                self.queue.close();
                while let Ok(command) = self.queue.try_recv() {
                    if let Command::Subscribe { done, .. } = command {
                        done.send_replace(Status::Failed(err.clone()));
                    }
                }
                return;
            }
        };
        // Idle patterns are swept on this ticker.
        let mut ticker = tokio::time::interval(PUBSUB_PING_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The last sign of life (the connect, a reply, a message): the next
        // ping goes one interval after it, so traffic makes pings needless
        // while a silent connection is found out as soon as before.
        let mut alive_at = tokio::time::Instant::now();
        // Fires one interval after the sign of life it was set from; it is
        // set again (not reset on each message) when a later one came.
        let ping_timer = tokio::time::sleep_until(alive_at + PUBSUB_PING_INTERVAL);
        tokio::pin!(ping_timer);
        // The ping under way, and when it must have been answered.
        let mut ping: Option<(RunningPing, tokio::time::Instant)> = None;
        loop {
            let event = {
                let running = &mut self.running;
                let queue = &mut self.queue;
                let moved = &mut self.moved;
                let pinging = ping.is_some();
                let ping_deadline = ping.as_ref().map(|(_, deadline)| *deadline);
                tokio::select! {
                    _ = ticker.tick() => Event::Sweep,
                    () = &mut ping_timer, if !pinging => Event::Tick,
                    answer = async {
                        match ping.as_mut() {
                            Some((pong, _)) => pong.await,
                            None => std::future::pending().await,
                        }
                    }, if pinging => Event::Pong(answer),
                    _ = async {
                        match ping_deadline {
                            Some(deadline) => tokio::time::sleep_until(deadline).await,
                            None => std::future::pending().await,
                        }
                    }, if pinging => Event::Silent,
                    message = stream.next() => Event::Message(message),
                    done = async {
                        match running.as_mut() {
                            Some(command) => command.await,
                            None => std::future::pending().await,
                        }
                    }, if running.is_some() => Event::Done(done),
                    command = queue.recv(), if running.is_none() => Event::Command(command),
                    () = async {
                        let changed = match moved.as_mut() {
                            Some(moved) => moved.changed().await.is_ok(),
                            None => false,
                        };
                        if !changed {
                            std::future::pending::<()>().await;
                        }
                    } => Event::Moved,
                }
            };
            if matches!(
                event,
                Event::Pong(Ok(()))
                    | Event::Message(Some(Incoming::Message(_) | Incoming::Unsubscribed(_)))
                    | Event::Done((Ok(()), _))
            ) {
                alive_at = tokio::time::Instant::now();
            }
            match event {
                Event::Sweep => self.sweep_idle_patterns(),
                Event::Tick => {
                    let due = alive_at + PUBSUB_PING_INTERVAL;
                    if due > tokio::time::Instant::now() {
                        // Something came since the timer was set.
                        ping_timer.as_mut().reset(due);
                    } else {
                        ping = Some((link.ping(), tokio::time::Instant::now() + ping_timeout));
                    }
                }
                Event::Pong(Ok(())) => {
                    ping = None;
                    ping_timer.as_mut().reset(alive_at + PUBSUB_PING_INTERVAL);
                }
                Event::Pong(Err(error)) => {
                    tracing::warn!(target: targets::PUBSUB, %error, "the pub/sub connection failed its ping; replacing it");
                    break;
                }
                Event::Silent => {
                    tracing::warn!(target: targets::PUBSUB, timeout = ?ping_timeout, "the pub/sub connection went silent; replacing it");
                    break;
                }
                Event::Message(Some(Incoming::Message(message))) => self.dispatch(&message),
                Event::Message(Some(Incoming::Unsubscribed(channel))) => {
                    match self.unsubscribing.get_mut(&channel) {
                        Some(count) if *count > 1 => *count -= 1,
                        Some(_) => {
                            self.unsubscribing.remove(&channel);
                        }
                        None => {
                            // Its slot left the node (migrated, failed
                            // over): every channel here is in doubt.
                            tracing::warn!(target: targets::PUBSUB, %channel, node = %self.node, "the node dropped a subscription; subscribing again where the slot is now");
                            break;
                        }
                    }
                }
                Event::Message(Some(Incoming::Closed) | None) | Event::Command(None) => break,
                Event::Moved => {
                    tracing::warn!(target: crate::observability::targets::PUBSUB, "the sentinels name a new master; subscribing there");
                    break;
                }
                Event::Command(Some(command)) => {
                    if let (
                        Command::Unsubscribe {
                            channel,
                            pattern: false,
                        },
                        Link::Node { .. },
                    ) = (&command, &link)
                    {
                        *self.unsubscribing.entry(channel.clone()).or_default() += 1;
                    }
                    self.running = Some(start_command(link.clone(), command));
                }
                Event::Done((result, done)) => {
                    self.running = None;
                    match result {
                        Ok(()) => {
                            if let Some(done) = done {
                                done.send_replace(Status::Subscribed);
                            }
                        }
                        Err(err) if err.is_connection_dropped() || err.is_unrecoverable_error() => {
                            self.mark_dead();
                            break;
                        }
                        Err(err) => {
                            if let Some(done) = done {
                                done.send_replace(Status::Failed(err));
                            }
                        }
                    }
                }
            }
        }
        self.mark_dead();
    }

    /// Wakes waiters of the message's channel: one for `0`, all for `1`,
    /// and as many as a semaphore's message announces permits (up to
    /// [`PERMITS_WOKEN_AT_MOST`]).
    fn dispatch(&self, message: &Msg) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let signals = {
            let state = shared.lock();
            match message.get_pattern::<Option<String>>() {
                // A member's channel, through its pattern.
                Ok(Some(pattern)) => match state
                    .channels
                    .get(&pattern)
                    .and_then(|entry| entry.members.get(message.get_channel_name()))
                {
                    Some(signals) => Arc::clone(signals),
                    None => return,
                },
                _ => match state.channels.get(message.get_channel_name()) {
                    Some(entry) => Arc::clone(&entry.signals),
                    None => return,
                },
            }
        };
        let payload = message.get_payload_bytes();
        if let Some(available) = permits_message(message.get_channel_name(), payload) {
            // A semaphore's permits available: up to that many waiters try
            // (as Redisson's waiters do); a waiter that takes permits and
            // leaves some passes its wake-up on.
            for _ in 0..available.clamp(0, PERMITS_WOKEN_AT_MOST) {
                signals.notify.notify_one();
            }
            return;
        }
        match WakeMessage::parse(payload) {
            Some(WakeMessage::One) => signals.notify.notify_one(),
            Some(WakeMessage::All) => signals.broadcast(),
            None => {
                if let Some(handoff) = handoff::parse(payload) {
                    *signals.handoff.lock().unwrap_or_else(|e| e.into_inner()) = Some(handoff);
                    signals.notify.notify_one();
                }
            }
        }
    }

    /// Forgets this connection in the hub and wakes every waiter of the
    /// channels subscribed through it. Runs once.
    fn mark_dead(&mut self) {
        if std::mem::replace(&mut self.dead, true) {
            return;
        }
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let woken: Vec<Arc<Signals>> = {
            if let Target::Cluster(cluster) = &shared.target {
                cluster.forget_slots();
            }
            let mut state = shared.lock();
            if state
                .conns
                .get(&self.node)
                .is_some_and(|conn| conn.id == self.id)
            {
                state.conns.remove(&self.node);
            }
            // Idle patterns of this connection are gone with it.
            let id = self.id;
            state.channels.retain(|_, entry| {
                entry.waiters > 0
                    || entry
                        .attempt
                        .as_ref()
                        .is_none_or(|attempt| attempt.conn != id)
            });
            state
                .channels
                .values()
                .filter(|entry| {
                    entry
                        .attempt
                        .as_ref()
                        .is_some_and(|attempt| attempt.conn == self.id)
                })
                .flat_map(|entry| entry.all_signals().cloned())
                .collect()
        };
        for signals in woken {
            signals.broadcast();
        }
    }
}

impl Driver {
    /// Unsubscribes the patterns of this connection that have had no
    /// member for [`PATTERN_LINGER`].
    fn sweep_idle_patterns(&self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut state = shared.lock();
        let state = &mut *state;
        let now = tokio::time::Instant::now();
        let id = self.id;
        let idle: Vec<String> = state
            .channels
            .iter()
            .filter(|(_, entry)| {
                entry.waiters == 0
                    && entry
                        .idle_since
                        .is_some_and(|since| now.duration_since(since) >= PATTERN_LINGER)
                    && entry
                        .attempt
                        .as_ref()
                        .is_some_and(|attempt| attempt.conn == id)
            })
            .map(|(pattern, _)| pattern.clone())
            .collect();
        for pattern in idle {
            state.channels.remove(&pattern);
            if let Some(conn) = state.conns.get(&self.node)
                && conn.id == id
            {
                let _ = conn.commands.send(Command::Unsubscribe {
                    channel: pattern,
                    pattern: true,
                });
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.mark_dead();
    }
}

/// Runs one command on the connection; the output carries the command's
/// outcome sender back to the driver.
fn start_command(mut link: Link, command: Command) -> RunningCommand {
    Box::pin(async move {
        match command {
            Command::Subscribe {
                channel,
                pattern,
                done,
            } => (link.send(true, pattern, &channel).await, Some(done)),
            Command::Unsubscribe { channel, pattern } => {
                (link.send(false, pattern, &channel).await, None)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    //! Against real `redis-server` processes (one per test).

    use std::task::Poll;

    use redis::aio::MultiplexedConnection;
    use redlua_test_support::{RedisCluster, RedisServer};
    use tokio::sync::mpsc::UnboundedReceiver;
    use tokio::time::{Instant, sleep, timeout};

    use super::*;

    /// How long a waiter that must not wake is watched.
    const QUIET: Duration = Duration::from_millis(200);
    /// Upper bound for things that must happen (they take a few ms).
    const SOON: Duration = Duration::from_secs(5);

    /// A server, a hub on it, and a command connection to observe and publish.
    struct Env {
        server: RedisServer,
        hub: PubSubHub,
        conn: MultiplexedConnection,
    }

    async fn env() -> Env {
        let server = RedisServer::start();
        let hub = PubSubHub::new(
            server.client(),
            Duration::from_secs(3),
            Duration::from_secs(3),
        );
        let conn = server
            .client()
            .get_multiplexed_async_connection()
            .await
            .expect("command connection");
        Env { server, hub, conn }
    }

    impl Env {
        async fn publish(&mut self, channel: &str, payload: &str) -> i64 {
            redis::cmd("PUBLISH")
                .arg(channel)
                .arg(payload)
                .query_async(&mut self.conn)
                .await
                .expect("PUBLISH")
        }

        /// The server's `PUBSUB NUMSUB` for one channel.
        async fn numsub(&mut self, channel: &str) -> i64 {
            let (_, count): (String, i64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(channel)
                .query_async(&mut self.conn)
                .await
                .expect("PUBSUB NUMSUB");
            count
        }

        /// How many times the server ran `command` (from INFO commandstats).
        async fn calls(&mut self, command: &str) -> u64 {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(&mut self.conn)
                .await
                .expect("INFO commandstats");
            let prefix = format!("cmdstat_{command}:calls=");
            info.lines()
                .find_map(|line| line.strip_prefix(&prefix))
                .map(|rest| {
                    rest.split(',')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .expect("a call count")
                })
                .unwrap_or(0)
        }

        /// Number of pub/sub client connections on the server.
        async fn pubsub_clients(&mut self) -> usize {
            let list: String = redis::cmd("CLIENT")
                .arg("LIST")
                .arg("TYPE")
                .arg("pubsub")
                .query_async(&mut self.conn)
                .await
                .expect("CLIENT LIST");
            list.lines().filter(|line| !line.trim().is_empty()).count()
        }

        /// Number of client connections other than `self.conn` (a connection
        /// whose subscriptions were all dropped is no longer of type pubsub).
        async fn other_clients(&mut self) -> usize {
            let list: String = redis::cmd("CLIENT")
                .arg("LIST")
                .query_async(&mut self.conn)
                .await
                .expect("CLIENT LIST");
            list.lines().filter(|line| !line.trim().is_empty()).count() - 1
        }

        /// Waits until `NUMSUB channel` is `expected`, failing after [`SOON`].
        async fn wait_numsub(&mut self, channel: &str, expected: i64) {
            let deadline = Instant::now() + SOON;
            loop {
                let now = self.numsub(channel).await;
                if now == expected {
                    return;
                }
                assert!(
                    Instant::now() < deadline,
                    "NUMSUB {channel} stayed {now}, expected {expected}"
                );
                sleep(Duration::from_millis(10)).await;
            }
        }
    }

    /// Polls `future` exactly once.
    async fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) -> Poll<F::Output> {
        std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
    }

    /// Spawns a task that reports `id` on `woken` after each wake-up.
    fn waiter(id: usize, mut subscription: Subscription, woken: mpsc::UnboundedSender<usize>) {
        tokio::spawn(async move {
            loop {
                subscription.wake().await;
                if woken.send(id).is_err() {
                    return;
                }
            }
        });
    }

    /// Asserts that nothing arrives on `woken` for [`QUIET`].
    async fn assert_quiet(woken: &mut UnboundedReceiver<usize>) {
        if let Ok(Some(id)) = timeout(QUIET, woken.recv()).await {
            panic!("waiter {id} woke up unexpectedly");
        }
    }

    async fn recv(woken: &mut UnboundedReceiver<usize>) -> usize {
        timeout(SOON, woken.recv())
            .await
            .expect("a waiter wakes up")
            .expect("waiters alive")
    }

    #[tokio::test]
    async fn pattern_members_are_woken_by_their_own_channel_and_the_pattern_lingers() {
        let mut env = env().await;
        let pattern = "fair:{l}:client:*";
        let mut a = env
            .hub
            .member(pattern, "fair:{l}:client:1")
            .expect("member");
        let b = env
            .hub
            .member(pattern, "fair:{l}:client:2")
            .expect("member");
        assert!(!a.is_live(), "nothing sent yet");
        a.confirm().await.expect("PSUBSCRIBE");
        assert!(a.is_live() && b.is_live(), "one pattern for both");
        assert_eq!(env.calls("psubscribe").await, 1);
        let (woken, mut rx) = mpsc::unbounded_channel();
        waiter(1, a, woken.clone());
        waiter(2, b, woken);
        // A message on one member's channel wakes that member only.
        assert_eq!(env.publish("fair:{l}:client:2", "0").await, 1);
        assert_eq!(recv(&mut rx).await, 2);
        assert_quiet(&mut rx).await;
        assert_eq!(env.publish("fair:{l}:client:1", "0").await, 1);
        assert_eq!(recv(&mut rx).await, 1);
        // A channel without a member wakes nobody.
        assert_eq!(env.publish("fair:{l}:client:3", "0").await, 1);
        assert_quiet(&mut rx).await;
        drop(rx); // the waiter tasks end (and drop their members) at the next wake-up
        env.publish("fair:{l}:client:1", "0").await;
        env.publish("fair:{l}:client:2", "0").await;
        timeout(SOON, async {
            while env
                .hub
                .shared
                .lock()
                .channels
                .get(pattern)
                .map(|e| e.waiters)
                != Some(0)
            {
                sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the members are gone");
        // Kept subscribed: a new member is live at once, with no command.
        let c = env
            .hub
            .member(pattern, "fair:{l}:client:4")
            .expect("member");
        assert!(c.is_live());
        drop(c);
        assert_eq!(env.calls("psubscribe").await, 1);
        // Dropped after the linger (and at most one ping interval more).
        let idle = Instant::now();
        timeout(SOON, async {
            while env.calls("punsubscribe").await == 0 {
                sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("PUNSUBSCRIBE after the linger");
        assert!(idle.elapsed() >= PATTERN_LINGER / 2, "{:?}", idle.elapsed());
        assert_eq!(env.hub.subscribed_channels(), 0);
        let mut d = env
            .hub
            .member(pattern, "fair:{l}:client:5")
            .expect("member");
        assert!(!d.is_live());
        d.confirm().await.expect("PSUBSCRIBE again");
        assert_eq!(env.calls("psubscribe").await, 2);
    }

    #[test]
    fn types_are_send_and_sync() {
        fn send_sync<T: Send + Sync + 'static>() {}
        fn send_static<T: Send + 'static>() {}
        send_sync::<PubSubHub>();
        send_static::<Subscription>();
    }

    #[tokio::test]
    async fn futures_are_send() {
        fn send<T: Send>(_: &T) {}
        let hub = PubSubHub::new(
            redis::Client::open("redis://127.0.0.1:1/").unwrap(),
            Duration::from_secs(3),
            Duration::from_secs(3),
        );
        let subscribe = hub.subscribe("ch");
        send(&subscribe);
        drop(subscribe);
        let mut subscription = hub.register("ch");
        let wake = subscription.wake();
        send(&wake);
    }

    #[tokio::test]
    async fn one_subscribe_per_channel_and_unsubscribe_after_the_last_waiter() {
        let mut env = env().await;
        let a1 = env.hub.subscribe("ch:a").await.unwrap();
        let a2 = env.hub.subscribe("ch:a").await.unwrap();
        let a3 = env.hub.subscribe("ch:a").await.unwrap();
        let b1 = env.hub.subscribe("ch:b").await.unwrap();
        assert_eq!(env.hub.subscribed_channels(), 2);
        assert_eq!(env.numsub("ch:a").await, 1);
        assert_eq!(env.numsub("ch:b").await, 1);
        assert_eq!(env.calls("subscribe").await, 2);
        assert_eq!(env.pubsub_clients().await, 1, "one shared connection");

        drop(a1);
        drop(a2);
        assert_eq!(env.hub.subscribed_channels(), 2);
        sleep(Duration::from_millis(50)).await;
        assert_eq!(env.numsub("ch:a").await, 1, "a3 still waits");
        assert_eq!(env.calls("unsubscribe").await, 0);

        drop(a3);
        assert_eq!(env.hub.subscribed_channels(), 1);
        env.wait_numsub("ch:a", 0).await;
        assert_eq!(env.numsub("ch:b").await, 1);
        assert_eq!(env.calls("unsubscribe").await, 1);

        drop(b1);
        assert_eq!(env.hub.subscribed_channels(), 0);
        env.wait_numsub("ch:b", 0).await;
        assert_eq!(env.calls("unsubscribe").await, 2);
    }

    #[tokio::test]
    async fn unlock_message_wakes_exactly_one_waiter() {
        let mut env = env().await;
        let (tx, mut woken) = mpsc::unbounded_channel();
        for id in 0..3 {
            waiter(id, env.hub.subscribe("ch").await.unwrap(), tx.clone());
        }
        // Let the three waiters block in wake().
        sleep(Duration::from_millis(50)).await;
        assert_eq!(
            env.publish("ch", "0").await,
            1,
            "one connection receives it"
        );
        recv(&mut woken).await;
        assert_quiet(&mut woken).await;

        // Each further "0" wakes one more.
        assert_eq!(env.publish("ch", "0").await, 1);
        recv(&mut woken).await;
        assert_quiet(&mut woken).await;

        // Other payloads and other channels wake nobody.
        env.publish("ch", "hello").await;
        env.publish("other", "0").await;
        assert_quiet(&mut woken).await;
    }

    #[tokio::test]
    async fn wake_all_message_wakes_every_waiter() {
        let mut env = env().await;
        let (tx, mut woken) = mpsc::unbounded_channel();
        for id in 0..3 {
            waiter(id, env.hub.subscribe("ch").await.unwrap(), tx.clone());
        }
        sleep(Duration::from_millis(50)).await;
        assert_eq!(env.publish("ch", "1").await, 1);
        let mut ids = vec![
            recv(&mut woken).await,
            recv(&mut woken).await,
            recv(&mut woken).await,
        ];
        ids.sort_unstable();
        assert_eq!(ids, [0, 1, 2]);
        assert_quiet(&mut woken).await;
    }

    #[tokio::test]
    async fn messages_published_before_wake_are_not_lost() {
        let mut env = env().await;
        let mut a = env.hub.subscribe("ch").await.unwrap();
        let mut b = env.hub.subscribe("ch").await.unwrap();

        // A "0" while nobody waits is kept for exactly one later wake().
        assert_eq!(env.publish("ch", "0").await, 1);
        sleep(Duration::from_millis(100)).await;
        timeout(SOON, a.wake()).await.expect("the stored 0 wakes a");
        assert!(
            timeout(QUIET, b.wake()).await.is_err(),
            "one 0, one wake-up"
        );

        // A "1" while nobody waits reaches every subscription, once.
        assert_eq!(env.publish("ch", "1").await, 1);
        sleep(Duration::from_millis(100)).await;
        timeout(SOON, a.wake()).await.expect("the 1 wakes a");
        timeout(SOON, b.wake()).await.expect("the 1 wakes b");
        assert!(timeout(QUIET, a.wake()).await.is_err(), "the 1 was seen");
        assert!(timeout(QUIET, b.wake()).await.is_err(), "the 1 was seen");
    }

    #[tokio::test]
    async fn a_dropped_chosen_wake_passes_the_wake_up_on() {
        let mut env = env().await;
        let mut a = env.hub.subscribe("ch").await.unwrap();
        let mut b = env.hub.subscribe("ch").await.unwrap();
        let mut wake_a = Box::pin(a.wake());
        let mut wake_b = Box::pin(b.wake());
        assert!(poll_once(wake_a.as_mut()).await.is_pending());
        assert!(poll_once(wake_b.as_mut()).await.is_pending());

        assert_eq!(env.publish("ch", "0").await, 1);
        // The driver dispatches the 0 to the first waiter, `wake_a`, which is
        // not polled.
        sleep(Duration::from_millis(200)).await;
        assert!(
            poll_once(wake_b.as_mut()).await.is_pending(),
            "the 0 went to the first waiter"
        );
        drop(wake_a);
        timeout(SOON, wake_b)
            .await
            .expect("the dropped waiter's wake-up passes to b");
        assert!(
            timeout(QUIET, a.wake()).await.is_err(),
            "the single 0 woke only one waiter"
        );
    }

    #[tokio::test]
    async fn a_cancelled_subscribe_leaks_nothing() {
        let mut env = env().await;
        let mut first = Box::pin(env.hub.subscribe("ch"));
        assert!(poll_once(first.as_mut()).await.is_pending());
        assert_eq!(env.hub.subscribed_channels(), 1);
        drop(first);
        assert_eq!(env.hub.subscribed_channels(), 0);
        // The SUBSCRIBE queued before the cancellation is followed by an
        // UNSUBSCRIBE.
        let deadline = Instant::now() + SOON;
        while env.calls("unsubscribe").await == 0 {
            assert!(Instant::now() < deadline, "no UNSUBSCRIBE was sent");
            sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(env.calls("subscribe").await, 1);
        assert_eq!(env.numsub("ch").await, 0);

        // A waiter whose subscribe() shares a cancelled one's SUBSCRIBE keeps it.
        let mut cancelled = Box::pin(env.hub.subscribe("ch2"));
        assert!(poll_once(cancelled.as_mut()).await.is_pending());
        let kept = env.hub.subscribe("ch2");
        drop(cancelled);
        let _kept = kept.await.unwrap();
        assert_eq!(env.numsub("ch2").await, 1);
        assert_eq!(env.hub.subscribed_channels(), 1);
    }

    #[tokio::test]
    async fn subscribing_while_an_unsubscribe_is_in_flight_ends_subscribed() {
        let mut env = env().await;
        for round in 0..20 {
            let gone = env.hub.subscribe("ch").await.unwrap();
            drop(gone); // queues UNSUBSCRIBE
            let mut again = env.hub.subscribe("ch").await.unwrap();
            assert_eq!(env.numsub("ch").await, 1, "round {round}");
            assert_eq!(env.publish("ch", "0").await, 1, "round {round}");
            timeout(SOON, again.wake())
                .await
                .unwrap_or_else(|_| panic!("round {round}: the 0 is received"));
        }
        env.wait_numsub("ch", 0).await;
        assert_eq!(env.calls("subscribe").await, 40);
        assert_eq!(env.calls("unsubscribe").await, 40);
    }

    #[tokio::test]
    async fn a_lost_connection_wakes_waiters_and_is_replaced() {
        let mut env = env().await;
        let mut a = env.hub.subscribe("ch").await.unwrap();
        let mut b = env.hub.subscribe("ch").await.unwrap();
        let mut wake_a = Box::pin(a.wake());
        assert!(poll_once(wake_a.as_mut()).await.is_pending());

        let killed: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("pubsub")
            .query_async(&mut env.conn)
            .await
            .unwrap();
        assert_eq!(killed, 1);
        // The pending wake() returns at once (its caller tries the lock);
        // the next one subscribes again, on a new connection, and returns
        // once that is confirmed.
        timeout(SOON, wake_a).await.expect("the loss wakes a");
        timeout(SOON, a.wake()).await.expect("re-subscribed");
        assert!(a.is_live());
        assert_eq!(env.numsub("ch").await, 1);
        assert_eq!(env.calls("subscribe").await, 2);
        assert_eq!(env.pubsub_clients().await, 1);
        // b was not waiting: its next wake() returns at once, as it may have
        // missed a message.
        timeout(SOON, b.wake()).await.expect("the loss wakes b");

        // Messages reach the new connection.
        assert_eq!(env.publish("ch", "0").await, 1);
        timeout(SOON, a.wake())
            .await
            .expect("a 0 after the reconnect");
        assert!(timeout(QUIET, b.wake()).await.is_err());

        // New channels use the new connection.
        let _c = env.hub.subscribe("other").await.unwrap();
        assert_eq!(env.numsub("other").await, 1);
        assert_eq!(env.pubsub_clients().await, 1);
        assert_eq!(env.hub.subscribed_channels(), 2);
    }

    #[tokio::test]
    async fn a_new_subscribe_reconnects_after_a_loss_without_waiters() {
        let mut env = env().await;
        drop(env.hub.subscribe("ch").await.unwrap());
        env.wait_numsub("ch", 0).await;
        // Without subscriptions, the hub's connection is of type normal.
        let killed: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("normal")
            .arg("SKIPME")
            .arg("yes")
            .query_async(&mut env.conn)
            .await
            .unwrap();
        assert_eq!(killed, 1);
        sleep(Duration::from_millis(50)).await;
        let mut a = env.hub.subscribe("ch").await.unwrap();
        assert_eq!(env.numsub("ch").await, 1);
        assert_eq!(env.publish("ch", "0").await, 1);
        timeout(SOON, a.wake())
            .await
            .expect("a 0 on the new connection");
    }

    #[tokio::test]
    async fn dropping_the_hub_closes_its_connection() {
        let mut env = env().await;
        drop(env.hub.subscribe("ch").await.unwrap());
        assert_eq!(env.other_clients().await, 1);
        let Env {
            server,
            hub,
            mut conn,
        } = env;
        drop(hub);
        let mut env = Env {
            hub: PubSubHub::new(
                server.client(),
                Duration::from_secs(3),
                Duration::from_secs(3),
            ),
            server,
            conn: conn.clone(),
        };
        let deadline = Instant::now() + SOON;
        while env.other_clients().await != 0 {
            assert!(Instant::now() < deadline, "the connection stays open");
            sleep(Duration::from_millis(10)).await;
        }
        let _: () = redis::cmd("PING").query_async(&mut conn).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_a_cluster_each_channel_is_subscribed_on_the_node_of_its_slot() {
        let cluster = tokio::task::spawn_blocking(|| RedisCluster::start(3))
            .await
            .expect("starting a cluster");
        let con = Connection::from(cluster.client().get_async_connection().await.unwrap());
        let template = cluster.nodes()[0].client().get_connection_info().clone();
        for sharded in [true, false] {
            let (subscribe, publish) = if sharded {
                ("SHARDNUMSUB", "SPUBLISH")
            } else {
                ("NUMSUB", "PUBLISH")
            };
            let hub = PubSubHub::cluster(
                template.clone(),
                con.clone(),
                sharded,
                Duration::from_secs(3),
                Duration::from_secs(3),
            );
            // Slots: "b" 3300 (node 0), "c" 7365 (node 1), "a" 15495 (node 2).
            for (channel, node) in [("ch{b}", 0), ("ch{c}", 1), ("ch{a}", 2)] {
                let mut subscription = hub.subscribe(channel).await.unwrap();
                assert!(subscription.is_live());
                let mut direct = cluster.nodes()[node]
                    .client()
                    .get_multiplexed_async_connection()
                    .await
                    .unwrap();
                let (_, count): (String, i64) = redis::cmd("PUBSUB")
                    .arg(subscribe)
                    .arg(channel)
                    .query_async(&mut direct)
                    .await
                    .unwrap();
                assert_eq!(count, 1, "{channel} ({subscribe}) on node {node}");
                let received: i64 = redis::cmd(publish)
                    .arg(channel)
                    .arg("0")
                    .query_async(&mut direct)
                    .await
                    .unwrap();
                assert_eq!(received, 1, "{channel}: {publish} reaches the hub");
                timeout(SOON, subscription.wake())
                    .await
                    .expect("the message wakes the waiter");
            }
            assert_eq!(hub.shared.lock().conns.len(), 3, "one connection per node");
        }
    }

    #[tokio::test]
    async fn an_unreachable_server_is_an_error() {
        let server = RedisServer::start();
        let client = server.client();
        drop(server);
        let hub = PubSubHub::new(client, Duration::from_secs(3), Duration::from_secs(3));
        let err = timeout(SOON, hub.subscribe("ch"))
            .await
            .expect("fails fast")
            .expect_err("nothing to connect to");
        assert!(
            err.is_connection_refusal() || err.is_connection_dropped(),
            "{err}"
        );
        assert_eq!(hub.subscribed_channels(), 0);
    }
}
