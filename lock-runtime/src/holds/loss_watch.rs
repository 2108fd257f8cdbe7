//! Holds taken away, noticed at once: a hold removed or replaced while held
//! (force unlocked by anyone, the key deleted or overwritten; a leased
//! permit given back by someone else) makes its guards lost within a round
//! trip of the change, not at the next renewal (while the reads stay within
//! their budget, below).
//!
//! How: Redis's key tracking (client-side caching, default mode). One task
//! per client keeps a RESP3 connection per node (the server, the Sentinel
//! master, or each cluster primary that owns a held lock's slot) with
//! `CLIENT TRACKING ON`: Redis pushes an `invalidate` for a key that
//! connection read as soon as anyone modifies it. Each held lock is read
//! there (`HMGET` of this client's fields; for leased permits, the `ZSCORE`
//! of each id), which arms its tracking; each invalidation makes the task
//! read it again, which checks the holds and arms the next one. A field
//! gone (or the key holding something else) marks that hold's guards lost;
//! a field present is a hold still there, so the holder's own re-entries,
//! releases and renewals are never losses. (They are read again all the
//! same: Redis forgets a key's tracking once it invalidates it. An expiry
//! is the lease clock's to tell.)
//!
//! Invariants:
//! - Nothing on the caller's path: an acquire only puts its hold in the
//!   task's inbox (no round trip, no lock held across an await), and wakes
//!   the task only if the inbox was empty; the task gathers new holds
//!   [`GATHER`] after the first. A hold is first read [`WATCH_DELAY`] after
//!   it was gathered: one released sooner costs no command.
//! - Never a false loss: a check marks a hold lost only if the hold read
//!   is the registry's entry of the same generation, and no release of it
//!   is under way ([`Holds::renewal_failed`](crate::holds::registry::Holds::renewal_failed)).
//!   An invalidation only triggers a check.
//! - Bounded work: at most
//!   [`READS_PER_SECOND`](crate::holds::read_budget::READS_PER_SECOND)
//!   locks looked at (read, or found released) a second per client, in
//!   bursts (see `read_budget.rs`), each batch one pipeline on its node and
//!   one look at the registry; a read arms at most one invalidation. The
//!   watch is an early notice, never taking the runtime from the watchdog's
//!   renewals (with the lease clock, the guarantee): beyond that rate a
//!   changed lock waits its turn, earliest first, and a hold taken away
//!   meanwhile is found by the next renewal.
//! - No missed change the lease clock would not catch: a lost or replaced
//!   connection (closed, silent past its ping, a Sentinel switch, a
//!   `MOVED`) makes every lock armed on it be read again on a new one.
//! - A server that refuses tracking (before Redis 6, an ACL user without
//!   `+client|tracking`) leaves the watch off, with a warning: the lease
//!   clock and the watchdog find losses, as the guard's documentation says.
//!
//! Cost: one idle connection per node once a hold outlived
//! [`WATCH_DELAY`]; one read per such hold and per change of its key,
//! within the budget; a tracking-table entry on the server per held key
//! (one evicted there arrives as an invalidation); one `PING` a second per
//! connection that watches anything.

use crate::base::config::{PUBSUB_PING_INTERVAL, PUBSUB_PING_TIMEOUT, Timeouts};
use crate::base::error::{Failure, classify};
use crate::base::hold_key::{HoldKey, HoldShape};
use crate::base::mutex::locked;
use crate::holds::read_budget::ReadBudget;
use crate::holds::registry::Holds;
use crate::observability::telemetry;
use crate::transport::cluster_nodes::Nodes;
use crate::transport::tracking::{BatchDone, BatchError, NodeConn, Reading, Via, open, read_batch};
use futures_util::StreamExt;
use futures_util::future::{BoxFuture, OptionFuture};
use futures_util::stream::FuturesUnordered;
use redis::{PushInfo, PushKind, RedisError, RedisResult, Value};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// How long after it was taken a hold is first read (and its key tracked).
pub(crate) const WATCH_DELAY: Duration = Duration::from_millis(50);

/// How long a lock whose every hold is being released waits to be looked
/// at again.
const RELEASE_SETTLE: Duration = Duration::from_millis(10);

/// The first pause before reading again after a failure; it doubles while
/// failures go on, up to [`RETRY_MAX`].
const RETRY_MIN: Duration = Duration::from_millis(50);
/// The longest pause between two tries after failures.
const RETRY_MAX: Duration = Duration::from_secs(1);

/// How long the task lets new holds gather before it takes them (waking it
/// on another worker at every acquire would cost more than the watch saves).
const GATHER: Duration = Duration::from_millis(20);

/// The loss watch of one client: its inbox, and what starts its task.
pub(crate) struct LossWatch {
    nodes: Nodes,
    timeouts: Timeouts,
    inbox: Arc<Mutex<Inbox>>,
}

/// New holds on their way to the task.
#[derive(Default)]
struct Inbox {
    holds: Vec<HoldKey>,
    /// Wakes the running task (`None` before the first hold), only when
    /// `holds` was empty: the task takes everything at once.
    wake: Option<mpsc::UnboundedSender<()>>,
    /// Wake-ups sent.
    woken: u64,
}

impl LossWatch {
    pub(crate) fn new(nodes: Nodes, timeouts: Timeouts) -> LossWatch {
        LossWatch {
            nodes,
            timeouts,
            inbox: Arc::default(),
        }
    }

    /// Watches the hold `key` from [`WATCH_DELAY`] on (at most [`GATHER`]
    /// later), for as long as the registry `holds` has it. Never blocks and
    /// sends nothing itself; wakes the task only if no hold waits for it
    /// already, and starts it (on the current Tokio runtime) if none runs.
    pub(crate) fn watch(&self, holds: &Arc<Mutex<Holds>>, key: HoldKey) {
        let mut inbox = locked(&self.inbox);
        let first = inbox.holds.is_empty();
        inbox.holds.push(key);
        if let Some(wake) = &inbox.wake {
            // A hold waiting already means a wake-up is on its way; the
            // task is gone (its runtime shut down) if the channel closed.
            if !first && !wake.is_closed() {
                return;
            }
            if wake.send(()).is_ok() {
                inbox.woken += 1;
                return;
            }
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            inbox.holds.clear();
            inbox.wake = None;
            return;
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        let _ = sender.send(());
        inbox.woken += 1;
        inbox.wake = Some(sender);
        let task = Watcher::new(
            holds,
            self.nodes.clone(),
            self.timeouts,
            &self.inbox,
            receiver,
        );
        runtime.spawn(task.run());
    }
}

/// One held lock as the task watches it.
#[derive(Default)]
struct Watched {
    /// This client's holds of it (lock and field).
    holds: Vec<HoldKey>,
    /// When to read it next; `None` while armed or being read.
    due: Option<Instant>,
    /// A read of it is under way.
    checking: bool,
    /// The connection whose tracking covers it.
    armed_on: Option<u64>,
}

/// When each lock is due, earliest first; an entry that no longer matches
/// its lock's `due` is stale and skipped.
type Queue = BinaryHeap<Reverse<(Instant, Arc<str>)>>;

impl Watched {
    /// Reads it at `at`.
    fn due_at(&mut self, queue: &mut Queue, lock: Arc<str>, at: Instant) {
        self.due = Some(at);
        queue.push(Reverse((at, lock)));
    }
}

/// What a background step of the task ended with.
enum Done {
    /// `CLUSTER SLOTS` was read (into the cluster's slot map).
    Slots(RedisResult<()>),
    /// A batch of reads on one node.
    Batch(BatchDone),
    /// A keep-alive ping of one connection.
    Ping { node: String, conn: u64, ok: bool },
}

/// The task.
struct Watcher {
    /// The client's registry of holds: the task ends with it.
    registry: Weak<Mutex<Holds>>,
    nodes: Nodes,
    timeouts: Timeouts,
    /// New holds, and the wake-ups that say some are there (the task ends
    /// with the client).
    inbox: Weak<Mutex<Inbox>>,
    wakes: mpsc::UnboundedReceiver<()>,
    /// When the new holds are taken from the inbox (set by a wake-up).
    gathered_at: Option<Instant>,
    locks: HashMap<Arc<str>, Watched>,
    queue: Queue,
    /// Due locks whose node was busy (or a cluster's slots unknown): queued
    /// again when a step of the task ends.
    blocked: Vec<Arc<str>>,
    conns: HashMap<String, NodeConn>,
    next_conn: u64,
    /// Pushes of every node connection, tagged with its id.
    pushes_to: mpsc::UnboundedSender<(u64, PushInfo)>,
    pushes: mpsc::UnboundedReceiver<(u64, PushInfo)>,
    /// A `CLUSTER SLOTS` is under way (the map is shared with the hub).
    reading_slots: bool,
    /// Nodes with a batch or ping under way (one at a time per node).
    busy: HashSet<String>,
    /// The pause before the next try after a failure.
    pause: Duration,
    /// A Sentinel client's master changes.
    switches: Option<watch::Receiver<u64>>,
    /// How many reads may start, and when.
    budget: ReadBudget,
    /// The server refused tracking: nothing is watched.
    off: bool,
    tasks: FuturesUnordered<BoxFuture<'static, Done>>,
}

impl Watcher {
    /// A task for the registry `holds`, woken through `wakes`.
    fn new(
        holds: &Arc<Mutex<Holds>>,
        nodes: Nodes,
        timeouts: Timeouts,
        inbox: &Arc<Mutex<Inbox>>,
        wakes: mpsc::UnboundedReceiver<()>,
    ) -> Watcher {
        let (pushes_to, pushes) = mpsc::unbounded_channel();
        Watcher {
            registry: Arc::downgrade(holds),
            switches: nodes.switches(),
            nodes,
            timeouts,
            inbox: Arc::downgrade(inbox),
            wakes,
            gathered_at: None,
            locks: HashMap::new(),
            queue: BinaryHeap::new(),
            blocked: Vec::new(),
            conns: HashMap::new(),
            next_conn: 0,
            pushes_to,
            pushes,
            reading_slots: false,
            busy: HashSet::new(),
            pause: RETRY_MIN,
            budget: ReadBudget::new(Instant::now()),
            off: false,
            tasks: FuturesUnordered::new(),
        }
    }

    async fn run(mut self) {
        let mut pings = tokio::time::interval(PUBSUB_PING_INTERVAL);
        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.registry.strong_count() == 0 {
                return;
            }
            self.start_due();
            // While locks wait for a busy node (or a cluster's slots), the
            // step under way wakes the task when it ends: a lock due now
            // would only wake it to wait again.
            let next = if self.blocked.is_empty() {
                self.next_due().map(|due| self.budget.ready_at(due))
            } else {
                None
            };
            let switched = OptionFuture::from(self.switches.as_mut().map(|s| s.changed()));
            // A branch whose future is `None` is off (its pattern fails).
            tokio::select! {
                wake = self.wakes.recv() => match wake {
                    Some(()) => {
                        self.gathered_at.get_or_insert_with(|| Instant::now() + GATHER);
                    }
                    // The client is gone.
                    None => return,
                },
                Some(()) = OptionFuture::from(self.gathered_at.map(tokio::time::sleep_until)) => {
                    self.gathered_at = None;
                    self.gather();
                }
                Some((conn, push)) = self.pushes.recv() => self.pushed(conn, push),
                Some(done) = self.tasks.next(), if !self.tasks.is_empty() => self.finished(done),
                Some(()) = OptionFuture::from(next.map(tokio::time::sleep_until)) => {}
                _ = pings.tick() => self.ping(),
                Some(Ok(())) = switched => self.reconnect_all(),
            }
        }
    }

    /// Takes the new holds from the inbox.
    fn gather(&mut self) {
        let Some(inbox) = self.inbox.upgrade() else {
            return;
        };
        let new = std::mem::take(&mut locked(&inbox).holds);
        for key in new {
            self.add(key);
        }
    }

    /// A new hold: read its lock [`WATCH_DELAY`] from now if the lock is
    /// new to the task. A lock watched already is read again at once if its
    /// key is armed (the hold waited in the inbox: a change of the key since
    /// it was taken may have been read without it), after the read under
    /// way if there is one (that read started without it), and otherwise
    /// by the read that is due anyway.
    fn add(&mut self, key: HoldKey) {
        if self.off {
            return;
        }
        let now = Instant::now();
        let lock = key.lock.clone();
        let watched = self.locks.entry(lock.clone()).or_default();
        if watched.holds.contains(&key) {
            return;
        }
        if watched.holds.is_empty() {
            watched.due_at(&mut self.queue, lock, now + WATCH_DELAY);
        } else if watched.checking {
            if watched.due.is_none() {
                watched.due = Some(now);
            }
        } else if watched.armed_on.is_some() || watched.due.is_none() {
            watched.armed_on = None;
            watched.due_at(&mut self.queue, lock, now);
        }
        watched.holds.push(key);
    }

    /// Starts the reads that are due, one batch per node, as many as the
    /// budget allows (the earliest due first; the others stay queued).
    fn start_due(&mut self) {
        let now = Instant::now();
        // The locks kept waiting for a busy node count too: however often
        // this runs while a batch is under way, no more than a budget's
        // worth of locks leave the queue.
        let allowed = self
            .budget
            .available(now)
            .saturating_sub(self.blocked.len());
        let mut due: Vec<Arc<str>> = Vec::new();
        let mut seen: HashSet<Arc<str>> = HashSet::new();
        while due.len() < allowed
            && let Some(Reverse((at, _))) = self.queue.peek()
            && *at <= now
        {
            let Some(Reverse((at, lock))) = self.queue.pop() else {
                break;
            };
            if self.is_queued(&lock, at) && seen.insert(lock.clone()) {
                due.push(lock);
            }
        }
        if due.is_empty() {
            return;
        }
        let Some(holds) = self.registry.upgrade() else {
            return;
        };
        let mut batches: HashMap<String, Vec<Reading>> = HashMap::new();
        // Each lock looked at costs a token, read or not (released, being
        // released): the work per second is bounded, not only the reads.
        let mut looked = due.len();
        let registry = locked(&holds);
        for lock in due {
            let node = self.nodes.known_node_of(&lock);
            if node.is_none() {
                self.read_slots();
            }
            let Some(node) = node.filter(|node| !self.busy.contains(node)) else {
                looked -= 1;
                self.blocked.push(lock);
                continue;
            };
            let Some(watched) = self.locks.get_mut(&lock) else {
                continue;
            };
            watched
                .holds
                .retain(|key| registry.generation(key).is_some());
            if !watched.holds.is_empty()
                && watched.holds.iter().all(|key| registry.all_releasing(key))
            {
                // Being released (most likely the change announced): no
                // loss can be told now; looked at again once it is done.
                watched.due_at(&mut self.queue, lock, now + RELEASE_SETTLE);
                continue;
            }
            let holds: Vec<(HoldKey, u64, HoldShape)> = watched
                .holds
                .iter()
                .filter_map(|key| registry.entry(key))
                .map(|entry| (entry.key, entry.generation, entry.shape))
                .collect();
            if holds.is_empty() {
                // Released (a late invalidation finds nothing).
                self.locks.remove(&lock);
                continue;
            }
            watched.checking = true;
            watched.due = None;
            batches.entry(node).or_default().push((lock, holds));
        }
        drop(registry);
        self.budget.spend(looked);
        drop(holds);
        for (node, batch) in batches {
            self.busy.insert(node.clone());
            let via = match self.conns.get(&node) {
                Some(conn) => Via::Open(conn.id, conn.con.clone()),
                None => {
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let pushes = self.pushes_to.clone();
                    let tagged = move |push: PushInfo| pushes.send((id, push));
                    let config = self.timeouts.config().set_push_sender(tagged);
                    Via::New(id, open(self.nodes.clone(), node.clone(), config))
                }
            };
            self.tasks.push(Box::pin(async move {
                Done::Batch(read_batch(node, via, batch).await)
            }));
        }
    }

    /// Reads a cluster's slot owners, unless a read is under way.
    fn read_slots(&mut self) {
        let Nodes::Cluster(cluster) = &self.nodes else {
            return;
        };
        if std::mem::replace(&mut self.reading_slots, true) {
            return;
        }
        let cluster = cluster.clone();
        self.tasks.push(Box::pin(async move {
            Done::Slots(cluster.read().await.map(drop))
        }));
    }

    /// Pings each connection that watches something (and is not busy): a
    /// silent one is replaced, and what it watched read again.
    fn ping(&mut self) {
        for (node, conn) in &self.conns {
            if self.busy.contains(node) || !self.locks.values().any(|w| w.armed_on == Some(conn.id))
            {
                continue;
            }
            self.busy.insert(node.clone());
            let (node, id, mut con) = (node.clone(), conn.id, conn.con.clone());
            let timeout = self.timeouts.response.min(PUBSUB_PING_TIMEOUT);
            self.tasks.push(Box::pin(async move {
                let ping = redis::cmd("PING");
                let pong = ping.query_async::<Value>(&mut con);
                let ok = matches!(tokio::time::timeout(timeout, pong).await, Ok(Ok(_)));
                Done::Ping { node, conn: id, ok }
            }));
        }
    }

    /// What a connection pushed: an invalidation reads the locks it names
    /// at once; a disconnection reads everything it watched on a new one.
    fn pushed(&mut self, conn: u64, push: PushInfo) {
        match push.kind {
            PushKind::Invalidate => match push.data.first() {
                Some(Value::Array(keys)) => {
                    let now = Instant::now();
                    for key in keys {
                        let name = match key {
                            Value::BulkString(bytes) => String::from_utf8_lossy(bytes),
                            Value::SimpleString(text) => text.as_str().into(),
                            _ => continue,
                        };
                        if let Some(watched) = self.locks.get_mut(&*name) {
                            watched.armed_on = None;
                            watched.due_at(&mut self.queue, Arc::from(&*name), now);
                        }
                    }
                }
                // A flush (or anything else): read everything.
                _ => self.all_due(|watched| watched.armed_on == Some(conn)),
            },
            PushKind::Disconnection => self.drop_conn(conn),
            _ => {}
        }
    }

    /// Forgets connection `conn`; what it watched is read again at once.
    fn drop_conn(&mut self, conn: u64) {
        self.conns.retain(|_, c| c.id != conn);
        self.all_due(|watched| watched.armed_on == Some(conn));
    }

    /// The Sentinel master changed: every connection goes, everything is
    /// read again on the new master.
    fn reconnect_all(&mut self) {
        self.conns.clear();
        self.all_due(|_| true);
    }

    /// Makes the locks `which` selects due at once.
    fn all_due(&mut self, which: impl Fn(&Watched) -> bool) {
        let now = Instant::now();
        for (lock, watched) in self.locks.iter_mut().filter(|(_, w)| which(w)) {
            watched.armed_on = None;
            watched.due_at(&mut self.queue, lock.clone(), now);
        }
    }

    /// Whether the queue entry `(at, lock)` is current: the lock is due
    /// then, and not being read.
    fn is_queued(&self, lock: &str, at: Instant) -> bool {
        self.locks
            .get(lock)
            .is_some_and(|watched| !watched.checking && watched.due == Some(at))
    }

    /// When the next lock is due (dropping stale entries on the way).
    fn next_due(&mut self) -> Option<Instant> {
        while let Some(Reverse((at, lock))) = self.queue.peek() {
            if self.is_queued(lock, *at) {
                return Some(*at);
            }
            self.queue.pop();
        }
        None
    }

    /// A step ended: the locks it kept waiting are queued again.
    fn unblock(&mut self) {
        for lock in std::mem::take(&mut self.blocked) {
            if let Some(due) = self.locks.get(&lock).and_then(|watched| watched.due) {
                self.queue.push(Reverse((due, lock)));
            }
        }
    }

    /// A step of the task ended; the locks it kept waiting are queued
    /// again (after the failures' pause if the slots could not be read).
    fn finished(&mut self, done: Done) {
        match done {
            Done::Slots(result) => {
                self.reading_slots = false;
                if let Err(error) = result {
                    telemetry::loss_watch_failed(&error);
                    let blocked = std::mem::take(&mut self.blocked);
                    self.retry_later(blocked);
                }
            }
            Done::Ping { node, conn, ok } => {
                self.busy.remove(&node);
                if !ok {
                    self.drop_conn(conn);
                }
            }
            Done::Batch(BatchDone {
                node,
                opened,
                conn,
                replies,
            }) => {
                self.busy.remove(&node);
                if let Some(opened) = opened {
                    self.conns.insert(node.clone(), opened);
                }
                match replies {
                    Ok(replies) => {
                        for ((lock, holds), reply) in replies {
                            self.read(&lock, &holds, conn, reply);
                        }
                    }
                    Err((BatchError::Refused(error), _)) => {
                        telemetry::loss_watch_refused(&error);
                        self.off = true;
                        self.locks.clear();
                        self.queue.clear();
                        self.blocked.clear();
                        self.conns.clear();
                    }
                    Err((BatchError::Failed(error), batch)) => {
                        self.failed(&error, conn, batch.into_iter().map(|(lock, _)| lock));
                    }
                    Err((BatchError::Unopened(error), batch)) => {
                        telemetry::loss_watch_failed(&error);
                        // The node may be gone: ask the cluster again.
                        self.nodes.forget_slots();
                        self.retry_later(batch.into_iter().map(|(lock, _)| lock));
                    }
                }
            }
        }
        self.unblock();
    }

    /// Reads that failed (`error`, on connection `conn`): their locks are
    /// read again after the failures' pause; on a new connection, on the
    /// node that owns the slot, when this one is in doubt.
    fn failed(&mut self, error: &RedisError, conn: u64, locks: impl IntoIterator<Item = Arc<str>>) {
        telemetry::loss_watch_failed(error);
        self.retry_later(locks);
        if classify(error) == Failure::Unknown {
            self.nodes.forget_slots();
            self.drop_conn(conn);
        }
    }

    /// Reads that failed: each of their locks is read again after the
    /// failures' pause, which grows.
    fn retry_later(&mut self, locks: impl IntoIterator<Item = Arc<str>>) {
        let at = Instant::now() + self.pause;
        self.pause = (self.pause * 2).min(RETRY_MAX);
        for lock in locks {
            if let Some(watched) = self.locks.get_mut(&lock) {
                watched.checking = false;
                // When it was due, but not before `at`.
                let due = watched.due.map_or(at, |due| due.max(at));
                watched.due_at(&mut self.queue, lock, due);
            }
        }
    }

    /// One lock's read: holds whose field is gone are lost.
    fn read(
        &mut self,
        lock: &Arc<str>,
        holds: &[(HoldKey, u64, HoldShape)],
        conn: u64,
        reply: RedisResult<Value>,
    ) {
        let Some(watched) = self.locks.get_mut(lock) else {
            return;
        };
        watched.checking = false;
        if let Some(due) = watched.due {
            // Changed again while it was read: read again.
            self.queue.push(Reverse((due, lock.clone())));
        }
        let gone: Vec<&(HoldKey, u64, HoldShape)> = match reply {
            Ok(Value::Array(fields)) => {
                self.pause = RETRY_MIN;
                watched.armed_on = Some(conn);
                // A hold's values (one per permit): gone if any is nil.
                let mut fields = fields.into_iter();
                let mut gone = Vec::new();
                for hold in holds {
                    let parts = hold.2.parts();
                    let own: Vec<Value> = fields.by_ref().take(parts).collect();
                    if own.len() == parts && own.iter().any(|v| matches!(v, Value::Nil)) {
                        gone.push(hold);
                    }
                }
                gone
            }
            // Not a hash any more: overwritten.
            Err(error) if classify(&error) == Failure::WrongType => holds.iter().collect(),
            Err(error) => {
                if error.redirect_node().is_some() && error.code() == Some("MOVED") {
                    // The slot moved: read the owners again. (An `ASK` is
                    // retried after the pause: the owner stays until the
                    // migration is done.)
                    self.nodes.forget_slots();
                    watched.due_at(&mut self.queue, lock.clone(), Instant::now());
                    return;
                }
                self.failed(&error, conn, [lock.clone()]);
                return;
            }
            Ok(_) => Vec::new(),
        };
        if gone.is_empty() {
            return;
        }
        let Some(holds) = self.registry.upgrade() else {
            return;
        };
        let mut registry = locked(&holds);
        for (hold, generation, _) in &gone {
            // Not a loss if released meanwhile, or under release.
            if registry.renewal_failed(hold, *generation) {
                telemetry::lock_taken_away(hold);
            }
        }
        watched
            .holds
            .retain(|key| registry.generation(key).is_some());
        if watched.holds.is_empty() {
            self.locks.remove(lock);
        }
    }
}

#[cfg(test)]
mod tests;
