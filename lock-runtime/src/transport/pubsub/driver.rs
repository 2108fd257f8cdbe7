//! [`Driver`]: the task that owns one pub/sub connection — runs the
//! queued commands one at a time, dispatches messages to the channels'
//! signals, pings a quiet connection, and sweeps idle patterns.
//!
//! Invariants:
//! - commands run in the order they were queued, one at a time;
//! - a connection that closes, goes silent past the ping timeout, or whose
//!   Sentinel master changed, is marked dead and every channel subscribed
//!   through it is woken *before* its queued commands are dropped (its
//!   `Drop` does it too), so that waiters subscribe again on a new one;
//! - an unsubscribe the driver did not send (a slot left the node) ends
//!   the connection as a loss.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use futures_util::StreamExt;
use futures_util::future::OptionFuture;
use redis::{ErrorKind, Msg, RedisError, RedisResult};
use tokio::sync::{mpsc, watch};

use super::PATTERN_LINGER;
use super::link::{Incoming, Link, open};
use super::state::{Command, RunningCommand, Shared, Signals, Status};
use crate::base::config::{PUBSUB_PING_INTERVAL, PUBSUB_PING_TIMEOUT, Timeouts};
use crate::base::mutex::locked;
use crate::observability::targets;
use crate::protocol::counted_scripts::permits_message;
use crate::protocol::handoff::{self};
use crate::protocol::replies::WakeMessage;
use crate::transport::cluster_nodes::Nodes;

/// The most waiters of one client a semaphore's message wakes at once (the
/// permits it announces, up to this; each that takes permits and leaves
/// some wakes one more).
const PERMITS_WOKEN_AT_MOST: i64 = 64;

/// The task that owns one pub/sub connection; its `Drop` (the task ending,
/// or dropped with its runtime) marks it dead first (see the invariants).
pub(super) struct Driver {
    /// The hub's state; weak, so that dropping the hub ends the driver.
    pub(super) shared: Weak<Shared>,
    /// The node it is connected to (its key in [`State::conns`](super::state::State::conns)).
    pub(super) node: String,
    /// This connection's id.
    pub(super) id: u64,
    /// Commands queued by the hub.
    pub(super) queue: mpsc::UnboundedReceiver<Command>,
    /// The command being run, if any.
    pub(super) running: Option<RunningCommand>,
    /// Whether [`Driver::mark_dead`] already ran.
    pub(super) dead: bool,
    /// A Sentinel master's changes (the connection then ends, as lost).
    pub(super) moved: Option<watch::Receiver<u64>>,
    /// Unsubscribes sent and not yet confirmed, per channel: one pushed
    /// beyond them was the server's own (a slot left the node).
    pub(super) unsubscribing: HashMap<String, usize>,
}

/// A ping being sent on the connection.
pub(super) type RunningPing = Pin<Box<dyn Future<Output = RedisResult<()>> + Send>>;

/// What woke the driver.
pub(super) enum Event {
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
    pub(super) async fn run(mut self, nodes: Nodes, timeouts: Timeouts) {
        // The `node` of the events: a single server's key is empty.
        let shown = match &nodes {
            Nodes::Server(client) => client.get_connection_info().addr().to_string(),
            Nodes::Sentinel(_) => "master".to_owned(),
            Nodes::Cluster(_) => self.node.clone(),
        };
        let connect = tokio::time::timeout(timeouts.connect, open(&nodes, &self.node, timeouts));
        // A pub/sub link answers a ping at once unless it is dead (or the
        // server is stuck in a long script): waiting the full response
        // timeout for it would delay the waiters it wakes.
        let ping_timeout = timeouts.response.min(PUBSUB_PING_TIMEOUT);
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
                let moved = OptionFuture::from(self.moved.as_mut().map(|moved| moved.changed()));
                let pinging = ping.is_some();
                let ping_deadline = ping.as_ref().map(|(_, deadline)| *deadline);
                // A branch whose future is `None` is off (its pattern fails).
                tokio::select! {
                    _ = ticker.tick() => Event::Sweep,
                    () = &mut ping_timer, if !pinging => Event::Tick,
                    Some(answer) = OptionFuture::from(ping.as_mut().map(|(pong, _)| pong)) => Event::Pong(answer),
                    Some(()) = OptionFuture::from(ping_deadline.map(tokio::time::sleep_until)) => Event::Silent,
                    message = stream.next() => Event::Message(message),
                    Some(done) = OptionFuture::from(running.as_mut()) => Event::Done(done),
                    command = queue.recv(), if running.is_none() => Event::Command(command),
                    Some(Ok(())) = moved => Event::Moved,
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
                    // Run on the connection; the outcome carries the
                    // command's outcome sender back here.
                    let mut link = link.clone();
                    self.running = Some(Box::pin(async move {
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
                    }));
                }
                Event::Done((result, done)) => {
                    self.running = None;
                    if let Err(err) = &result
                        && (err.is_connection_dropped() || err.is_unrecoverable_error())
                    {
                        // Dead before `done` is dropped: its waiter then
                        // subscribes on a new connection, not this one.
                        self.mark_dead();
                        break;
                    }
                    if let Some(done) = done {
                        done.send_replace(
                            result.map_or_else(Status::Failed, |()| Status::Subscribed),
                        );
                    }
                }
            }
        }
        self.mark_dead();
    }

    /// Wakes waiters of the message's channel: one for `0`, all for `1`,
    /// and as many as a semaphore's message announces permits (up to
    /// [`PERMITS_WOKEN_AT_MOST`]).
    pub(super) fn dispatch(&self, message: &Msg) {
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
                    *locked(&signals.handoff) = Some(handoff);
                    signals.notify.notify_one();
                }
            }
        }
    }

    /// Forgets this connection in the hub and wakes every waiter of the
    /// channels subscribed through it. Runs once.
    pub(super) fn mark_dead(&mut self) {
        if std::mem::replace(&mut self.dead, true) {
            return;
        }
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let woken: Vec<Arc<Signals>> = {
            shared.nodes.forget_slots();
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
            state
                .channels
                .retain(|_, entry| entry.waiters > 0 || !entry.subscribed_on(id));
            state
                .channels
                .values()
                .filter(|entry| entry.subscribed_on(id))
                .flat_map(|entry| entry.all_signals().cloned())
                .collect()
        };
        for signals in woken {
            signals.broadcast();
        }
    }

    /// Unsubscribes the patterns of this connection that have had no
    /// member for [`PATTERN_LINGER`].
    pub(super) fn sweep_idle_patterns(&self) {
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
                    && entry.subscribed_on(id)
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
