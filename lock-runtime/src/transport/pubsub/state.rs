//! The hub's shared state: where connections go (`Nodes`), the live
//! connection per node (`ConnHandle`), each channel's entry, its `SUBSCRIBE`
//! attempt and wake-up signals, and the commands queued for a driver.
//!
//! Invariants:
//! - the state's mutex is never held across an `.await`;
//! - commands are queued under that mutex, so the order the hub decides
//!   to subscribe or unsubscribe a channel is the order the server sees;
//! - a channel's `Signals` are shared with its subscriptions: its epoch is
//!   bumped before `notify_waiters`, and a handoff is stored before the
//!   `notify_one` that wakes its waiter;
//! - one driver per node at a time: `live_conn` starts a new one only when
//!   the last is gone.

use crate::base::config::Timeouts;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use redis::{ErrorKind, RedisError, RedisResult};
use tokio::sync::{Notify, mpsc, watch};

use super::SUBSCRIBE_ATTEMPTS;
use super::driver::Driver;
use crate::base::mutex::locked;
use crate::protocol::handoff::Handoff;
use crate::transport::cluster_nodes::Nodes;

/// State shared by the hub, its subscriptions and (weakly) its driver task.
pub(super) struct Shared {
    /// Where connections go.
    pub(super) nodes: Nodes,
    /// How long opening a connection may take, and a ping may go
    /// unanswered before the connection counts as dead.
    pub(super) timeouts: Timeouts,
    /// Everything mutable; never held across an `.await`.
    pub(super) state: Mutex<State>,
    /// The server refused a `PSUBSCRIBE` (an ACL that lists channels
    /// allows no pattern of them): waiters subscribe to their channels.
    pub(super) patterns_refused: AtomicBool,
}

/// The mutable part of [`Shared`].
#[derive(Default)]
pub(super) struct State {
    /// Per node (`host:port`, or
    /// [`SERVER`](crate::transport::cluster_nodes::SERVER)): the current
    /// connection's driver, if one was started and not found dead.
    pub(super) conns: HashMap<String, ConnHandle>,
    /// Id of the next driver (ids tell connections apart).
    pub(super) next_conn_id: u64,
    /// Channels that have at least one [`Subscription`](super::Subscription).
    pub(super) channels: HashMap<String, ChannelEntry>,
}

/// The hub's handle on a driver task.
pub(super) struct ConnHandle {
    /// The driver's id.
    pub(super) id: u64,
    /// Queue of commands the driver runs in order.
    pub(super) commands: mpsc::UnboundedSender<Command>,
}

/// A subscribed (or being subscribed) channel, or pattern.
#[derive(Default)]
pub(super) struct ChannelEntry {
    /// Number of live [`Subscription`](super::Subscription)s of the channel.
    pub(super) waiters: usize,
    /// A pattern (`PSUBSCRIBE`) rather than a channel.
    pub(super) pattern: bool,
    /// A pattern's members: each channel's own signals.
    pub(super) members: HashMap<String, Arc<Signals>>,
    /// A pattern without members, kept subscribed since then.
    pub(super) idle_since: Option<tokio::time::Instant>,
    /// Wake-up signals, shared with the subscriptions.
    pub(super) signals: Arc<Signals>,
    /// The latest `SUBSCRIBE` sent for the channel, if any.
    pub(super) attempt: Option<Attempt>,
    /// A release by this client is expected to wake one of its waiters
    /// of the channel, until then ([`PubSubHub::expect_turn`](super::PubSubHub::expect_turn)); cleared
    /// when a woken waiter has tried the lock.
    pub(super) turn_until: Option<tokio::time::Instant>,
}

/// One `SUBSCRIBE` of a channel on one connection.
pub(super) struct Attempt {
    /// The node of that connection.
    pub(super) node: String,
    /// Id of the connection it was queued on.
    pub(super) conn: u64,
    /// Its outcome; the sender is closed without a value if the connection
    /// died first.
    pub(super) status: watch::Receiver<Status>,
}

/// Outcome of a `SUBSCRIBE`.
#[derive(Clone, Debug)]
pub(super) enum Status {
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
pub(super) struct Signals {
    /// `notify_one` for each `0`; `notify_waiters` for each `1` and on loss.
    pub(super) notify: Notify,
    /// Bumped by each broadcast (`1`, connection lost), before `notify_waiters`.
    pub(super) epoch: AtomicU64,
    /// The latest direct handoff of a fair lock to the waiter of this
    /// channel (see `handoff.rs`), not yet taken; stored before the
    /// `notify_one` that wakes the waiter.
    pub(super) handoff: std::sync::Mutex<Option<Handoff>>,
}

/// A command for the driver task.
pub(super) enum Command {
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
pub(super) type RunningCommand =
    Pin<Box<dyn Future<Output = (RedisResult<()>, Option<watch::Sender<Status>>)> + Send>>;

impl Attempt {
    /// Whether the server confirmed it, on the live connection of its node.
    pub(super) fn confirmed_on(&self, conns: &HashMap<String, ConnHandle>) -> bool {
        matches!(*self.status.borrow(), Status::Subscribed)
            && conns
                .get(&self.node)
                .is_some_and(|conn| conn.is_alive() && conn.id == self.conn)
    }
}

impl ChannelEntry {
    /// Whether its last `SUBSCRIBE` went on connection `conn`.
    pub(super) fn subscribed_on(&self, conn: u64) -> bool {
        self.attempt
            .as_ref()
            .is_some_and(|attempt| attempt.conn == conn)
    }

    /// Every signal of the entry: its own, and its members'.
    pub(super) fn all_signals(&self) -> impl Iterator<Item = &Arc<Signals>> {
        std::iter::once(&self.signals).chain(self.members.values())
    }
}

impl Shared {
    /// Locks the state, ignoring poisoning (no code panics while holding it).
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        locked(&self.state)
    }

    /// Whether `channel`'s last `SUBSCRIBE` was confirmed on the live
    /// connection.
    pub(super) fn is_subscribed(&self, channel: &str) -> bool {
        let state = self.lock();
        let entry = state.channels.get(channel);
        let attempt = entry.and_then(|entry| entry.attempt.as_ref());
        attempt.is_some_and(|attempt| attempt.confirmed_on(&state.conns))
    }

    /// Subscribes `channel` (which has a registered waiter) on the live
    /// connection, opening one if needed, and waits for the confirmation; a
    /// connection lost first is replaced, up to [`SUBSCRIBE_ATTEMPTS`].
    /// Cancel-safe: the attempt stays in the channel's entry, shared.
    pub(super) async fn ensure_subscribed(self: &Arc<Self>, channel: &str) -> RedisResult<()> {
        let mut last_error = None;
        for _ in 0..SUBSCRIBE_ATTEMPTS {
            let node = self.nodes.node_of(channel).await?;
            let mut status = self.start_subscribe(channel, &node)?;
            let outcome = status
                .wait_for(|status| !matches!(status, Status::Pending))
                .await
                .map(|status| status.clone());
            match outcome {
                Ok(Status::Subscribed) => return Ok(()),
                Ok(Status::Failed(err)) => match &self.nodes {
                    Nodes::Server(_) | Nodes::Sentinel(_) => return Err(err),
                    // The slot may have moved, the node may be down: ask
                    // the cluster again.
                    Nodes::Cluster(cluster) => {
                        cluster.failed(&err);
                        last_error = Some(err);
                    }
                },
                // The connection died before it confirmed: try a new one.
                Ok(Status::Pending) | Err(_) => self.nodes.forget_slots(),
            }
        }
        Err(last_error.unwrap_or_else(|| {
            RedisError::from(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "redlua: the pub/sub connection was lost while subscribing",
            ))
        }))
    }

    /// The outcome of `channel`'s `SUBSCRIBE` on the live connection to
    /// `node`: the pending or confirmed one, else one queued now.
    pub(super) fn start_subscribe(
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
pub(super) fn live_conn<'a>(
    conns: &'a mut HashMap<String, ConnHandle>,
    node: &str,
    next_conn_id: &mut u64,
    shared: &Arc<Shared>,
) -> RedisResult<&'a ConnHandle> {
    if let Some(current) = conns.remove(node).filter(ConnHandle::is_alive) {
        return Ok(conns.entry(node.to_owned()).or_insert(current));
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        RedisError::from((
            ErrorKind::Client,
            "redlua: lock waiting needs a Tokio runtime (for its pub/sub connection)",
        ))
    })?;
    let id = *next_conn_id;
    *next_conn_id += 1;
    let (commands, queue) = mpsc::unbounded_channel();
    let driver = Driver {
        moved: shared.nodes.switches(),
        shared: Arc::downgrade(shared),
        node: node.to_owned(),
        id,
        queue,
        running: None,
        dead: false,
        unsubscribing: HashMap::new(),
    };
    runtime.spawn(driver.run(shared.nodes.clone(), shared.timeouts));
    Ok(conns
        .entry(node.to_owned())
        .or_insert(ConnHandle { id, commands }))
}

impl ConnHandle {
    /// Whether the driver task still runs (it may not have noticed a dead
    /// connection yet).
    pub(super) fn is_alive(&self) -> bool {
        !self.commands.is_closed()
    }
}

impl Signals {
    /// The current broadcast epoch.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Wakes every waiter of the channel, pending or not.
    pub(super) fn broadcast(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}
