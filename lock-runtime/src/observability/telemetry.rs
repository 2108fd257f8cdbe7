//! Where the locks' events and metrics are emitted: one function (or
//! recorder) per thing reported, so that the names, levels and fields
//! documented in [`observability`](crate::observability) are written once.
//! Metrics are recorded with the `metrics` feature only.

use crate::base::hold_key::HoldKey;
use crate::base::kind::Kind;
use crate::base::owner::Owner;
use crate::observability::targets;
use crate::protocol::replies::Released;
use std::fmt::Display;
use std::time::{Duration, Instant};

#[cfg(feature = "metrics")]
use crate::observability::{labels, metric_names};

/// The `kind` field and label.
fn kind_label(kind: Kind) -> &'static str {
    match kind {
        Kind::Reentrant => "reentrant",
        Kind::Fair { .. } => "fair",
        Kind::Read { .. } => "read",
        Kind::Write { .. } => "write",
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The span of an acquire call (or a re-entry): the events of its tries,
/// and of the connection they use, happen in it.
pub(crate) fn acquire_span(lock: &str, kind: Kind, reentry: bool) -> tracing::Span {
    tracing::debug_span!(target: targets::ACQUIRE, "acquire", lock = %lock, kind = kind_label(kind), reentry)
}

/// The span of an acquire call of a semaphore's permits (`kind`:
/// [`SEMAPHORE`] or [`LEASED_SEMAPHORE`]).
pub(crate) fn permits_span(semaphore: &str, kind: &'static str, permits: u64) -> tracing::Span {
    tracing::debug_span!(target: targets::ACQUIRE, "acquire_permits", semaphore = %semaphore, kind, permits)
}

/// The `kind` of a plain semaphore's permits.
pub(crate) const SEMAPHORE: &str = "semaphore";
/// The `kind` of a leased semaphore's permits.
pub(crate) const LEASED_SEMAPHORE: &str = "leased_semaphore";

/// The span of one release (by `unlock`, or in the background).
pub(crate) fn release_span(lock: &str, owner: &Owner) -> tracing::Span {
    tracing::debug_span!(target: targets::RELEASE, "release", lock = %lock, owner = %owner)
}

/// The span of one release of a semaphore's permits (`kind`:
/// [`SEMAPHORE`] or [`LEASED_SEMAPHORE`]), in the background too.
pub(crate) fn release_permits_span(
    semaphore: &str,
    kind: &'static str,
    permits: u64,
) -> tracing::Span {
    tracing::debug_span!(target: targets::RELEASE, "release_permits", semaphore = %semaphore, kind, permits)
}

/// The span of a wait for a count-down latch to open.
pub(crate) fn latch_wait_span(latch: &str) -> tracing::Span {
    tracing::debug_span!(target: targets::ACQUIRE, "latch_wait", latch = %latch)
}

/// The span of one renewal round.
pub(crate) fn round_span() -> tracing::Span {
    tracing::debug_span!(target: targets::WATCHDOG, "renewal_round")
}

/// How an acquire call ended without a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotAcquired {
    /// `try_lock`: the lock was held.
    Busy,
    /// The wait allowed ran out.
    TimedOut,
    /// An error was returned.
    Failed,
    /// The call was dropped.
    Cancelled,
}

impl NotAcquired {
    fn label(self) -> &'static str {
        match self {
            NotAcquired::Busy => "busy",
            NotAcquired::TimedOut => "timed_out",
            NotAcquired::Failed => "failed",
            NotAcquired::Cancelled => "cancelled",
        }
    }
}

/// One acquire call, reported once when it ends (also when it is dropped).
pub(crate) struct AcquireRecord<'a> {
    lock: &'a str,
    /// The `kind` label.
    kind: &'static str,
    /// How many permits the call takes (`None`: a lock's acquire).
    permits: Option<u64>,
    reentry: bool,
    started: Instant,
    attempts: u32,
    wakeups: u32,
    /// A fair lock's release handed the lock over (see `handoff.rs`).
    handed_over: bool,
    done: bool,
}

impl<'a> AcquireRecord<'a> {
    pub(crate) fn new(lock: &'a str, kind: Kind, reentry: bool) -> Self {
        AcquireRecord::start(lock, kind_label(kind), None, reentry)
    }

    /// An acquire call of `permits` permits of `semaphore` (`kind`:
    /// [`SEMAPHORE`] or [`LEASED_SEMAPHORE`]).
    pub(crate) fn permits(semaphore: &'a str, kind: &'static str, permits: u64) -> Self {
        AcquireRecord::start(semaphore, kind, Some(permits), false)
    }

    fn start(lock: &'a str, kind: &'static str, permits: Option<u64>, reentry: bool) -> Self {
        AcquireRecord {
            lock,
            kind,
            permits,
            reentry,
            started: Instant::now(),
            attempts: 0,
            wakeups: 0,
            handed_over: false,
            done: false,
        }
    }

    /// The call got its permits.
    pub(crate) fn permits_acquired(&mut self) {
        self.done = true;
        let waited = self.wait_time("acquired");
        tracing::debug!(
            target: targets::ACQUIRE,
            semaphore = %self.lock,
            kind = self.kind,
            permits = self.permits,
            waited_ms = millis(waited),
            attempts = self.attempts,
            wakeups = self.wakeups,
            "permits acquired"
        );
    }

    /// An acquire script is sent.
    pub(crate) fn attempt(&mut self) {
        self.attempts += 1;
    }

    /// A release message woke the waiter.
    pub(crate) fn woken(&mut self) {
        self.wakeups += 1;
        tracing::trace!(target: targets::ACQUIRE, lock = %self.lock, "woken by a release");
        #[cfg(feature = "metrics")]
        metrics::counter!(metric_names::WAKEUPS).increment(1);
    }

    /// A release handed the lock to this waiter (a fair lock's direct
    /// handoff): no further attempt was sent.
    pub(crate) fn handed_over(&mut self) {
        self.handed_over = true;
    }

    fn wait_time(&self, outcome: &'static str) -> Duration {
        let waited = self.started.elapsed();
        #[cfg(feature = "metrics")]
        metrics::histogram!(
            metric_names::ACQUIRE_WAIT_SECONDS,
            labels::KIND => self.kind,
            labels::OUTCOME => outcome,
        )
        .record(waited.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = outcome;
        waited
    }

    /// The call got its hold.
    pub(crate) fn acquired(&mut self, owner: &Owner) {
        self.done = true;
        let waited = self.wait_time("acquired");
        tracing::debug!(
            target: targets::ACQUIRE,
            lock = %self.lock,
            kind = self.kind,
            reentry = self.reentry,
            owner = %owner,
            token = owner.token(),
            waited_ms = millis(waited),
            attempts = self.attempts,
            wakeups = self.wakeups,
            handed_over = self.handed_over,
            "lock acquired"
        );
    }

    /// The call ended without a hold.
    pub(crate) fn not_acquired(&mut self, outcome: NotAcquired, error: Option<&dyn Display>) {
        self.done = true;
        let waited = self.wait_time(outcome.label());
        if let Some(permits) = self.permits {
            tracing::debug!(
                target: targets::ACQUIRE,
                semaphore = %self.lock,
                kind = self.kind,
                permits,
                outcome = outcome.label(),
                waited_ms = millis(waited),
                attempts = self.attempts,
                wakeups = self.wakeups,
                error = error.map(tracing::field::display),
                "permits not acquired"
            );
            return;
        }
        tracing::debug!(
            target: targets::ACQUIRE,
            lock = %self.lock,
            kind = self.kind,
            reentry = self.reentry,
            outcome = outcome.label(),
            waited_ms = millis(waited),
            attempts = self.attempts,
            wakeups = self.wakeups,
            error = error.map(tracing::field::display),
            "lock not acquired"
        );
    }
}

impl Drop for AcquireRecord<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.not_acquired(NotAcquired::Cancelled, None);
        }
    }
}

/// A hold's release ended: `outcome` is what Redis said, `None` when
/// nothing could be learned.
pub(crate) fn released(
    kind: Kind,
    lock: &str,
    owner: &Owner,
    outcome: Option<Released>,
    background: bool,
) {
    let label = match outcome {
        Some(Released::Freed) => "freed",
        Some(Released::StillHeld) => "still_held",
        Some(Released::NotHeld | Released::NeverTook) => "not_held",
        None => "unknown",
    };
    // One literal message per outcome (the events table is checked against them).
    match outcome {
        Some(Released::Freed | Released::StillHeld) => tracing::debug!(
            target: targets::RELEASE,
            lock = %lock,
            kind = kind_label(kind),
            owner = %owner,
            outcome = label,
            background,
            "lock released"
        ),
        Some(Released::NotHeld | Released::NeverTook) => tracing::debug!(
            target: targets::RELEASE,
            lock = %lock,
            kind = kind_label(kind),
            owner = %owner,
            outcome = label,
            background,
            "nothing released: the owner held nothing of the lock"
        ),
        None => tracing::debug!(
            target: targets::RELEASE,
            lock = %lock,
            kind = kind_label(kind),
            owner = %owner,
            outcome = label,
            background,
            "release outcome unknown; the lease frees the lock if it was held"
        ),
    }
    #[cfg(feature = "metrics")]
    metrics::counter!(
        metric_names::RELEASES,
        labels::KIND => kind_label(kind),
        labels::OUTCOME => label,
    )
    .increment(1);
}

/// A leased permits' release ended (`permits` of them): `outcome` as for
/// [`released`].
pub(crate) fn permits_released(
    semaphore: &str,
    permits: usize,
    outcome: Option<Released>,
    background: bool,
) {
    let outcome = match outcome {
        Some(Released::Freed | Released::StillHeld) => "freed",
        Some(Released::NotHeld | Released::NeverTook) => "not_held",
        None => "unknown",
    };
    tracing::debug!(target: targets::RELEASE, semaphore = %semaphore, kind = LEASED_SEMAPHORE, permits, outcome, background, "permits released");
    #[cfg(feature = "metrics")]
    metrics::counter!(
        metric_names::RELEASES,
        labels::KIND => LEASED_SEMAPHORE,
        labels::OUTCOME => outcome,
    )
    .increment(1);
}

/// A client started: every metric is described and every counter and gauge
/// series registered at zero (see [`observability`](crate::observability));
/// registering adds nothing to a series other clients already count in.
pub(crate) fn client_started() {
    #[cfg(feature = "metrics")]
    {
        use crate::observability::metric_names as names;
        use metrics::Unit;
        metrics::describe_histogram!(
            names::ACQUIRE_WAIT_SECONDS,
            Unit::Seconds,
            "How long each acquire call took, to its outcome"
        );
        metrics::describe_gauge!(names::HOLDS, "Holds held now by this process's clients");
        let counters = [
            (names::RELEASES, "Releases of holds, by what Redis said"),
            (names::RENEWALS, "Holds' leases renewed by the watchdog"),
            (
                names::RENEWAL_FAILURES,
                "Renewal calls that failed with a Redis error",
            ),
            (names::LOCKS_LOST, "Holds the watchdog found gone"),
            (names::WAKEUPS, "Waiters woken by a release message"),
            (
                names::RECONNECTS,
                "Connections opened again after a failure",
            ),
        ];
        for (name, help) in counters {
            metrics::describe_counter!(name, Unit::Count, help);
        }
        metrics::gauge!(names::HOLDS).increment(0.0);
        for name in [
            names::RENEWALS,
            names::RENEWAL_FAILURES,
            names::LOCKS_LOST,
            names::WAKEUPS,
        ] {
            metrics::counter!(name).increment(0);
        }
        for connection in ["command", "pubsub"] {
            metrics::counter!(names::RECONNECTS, labels::CONNECTION => connection).increment(0);
        }
        for kind in ["reentrant", "fair", "read", "write", LEASED_SEMAPHORE] {
            for outcome in ["freed", "still_held", "not_held", "unknown"] {
                metrics::counter!(
                    names::RELEASES,
                    labels::KIND => kind,
                    labels::OUTCOME => outcome,
                )
                .increment(0);
            }
        }
    }
}

/// The number of holds changed by `delta` (the `redlua_holds` gauge).
pub(crate) fn holds_changed(delta: i64) {
    #[cfg(feature = "metrics")]
    {
        #[allow(clippy::cast_precision_loss)]
        let delta = delta as f64;
        metrics::gauge!(metric_names::HOLDS).increment(delta);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = delta;
}

/// What one renewal round did.
#[derive(Debug, Default)]
pub(crate) struct Round {
    pub locks: usize,
    pub renewed: usize,
    pub lost: usize,
    pub failed_batches: usize,
}

/// A renewal round ended.
pub(crate) fn renewal_round(round: &Round, elapsed: Duration) {
    tracing::debug!(
        target: targets::WATCHDOG,
        locks = round.locks,
        renewed = round.renewed,
        lost = round.lost,
        failed_batches = round.failed_batches,
        elapsed_ms = millis(elapsed),
        "renewal round"
    );
    #[cfg(feature = "metrics")]
    metrics::counter!(metric_names::RENEWALS).increment(round.renewed as u64);
}

/// A renewal call failed with a Redis error.
pub(crate) fn renewal_failed(locks: usize, error: &redis::RedisError) {
    tracing::warn!(target: targets::WATCHDOG, %error, locks, "lease renewal failed; retrying soon");
    #[cfg(feature = "metrics")]
    metrics::counter!(metric_names::RENEWAL_FAILURES).increment(1);
}

/// The watchdog found a hold gone.
pub(crate) fn lock_lost(key: &HoldKey) {
    tracing::warn!(
        target: targets::WATCHDOG,
        lock = %key.lock,
        owner = %key.field,
        "lock lost: the watchdog found it gone (expired, deleted or taken over)"
    );
    #[cfg(feature = "metrics")]
    metrics::counter!(metric_names::LOCKS_LOST).increment(1);
}

/// The loss watch found a hold taken away (deleted, overwritten, force
/// unlocked) while held.
pub(crate) fn lock_taken_away(key: &HoldKey) {
    tracing::warn!(
        target: targets::WATCHDOG,
        lock = %key.lock,
        owner = %key.field,
        "lock lost: it was taken away (force unlocked, deleted or overwritten)"
    );
    #[cfg(feature = "metrics")]
    metrics::counter!(metric_names::LOCKS_LOST).increment(1);
}

/// The server refused key tracking: the loss watch is off.
pub(crate) fn loss_watch_refused(error: &redis::RedisError) {
    tracing::warn!(
        target: targets::WATCHDOG,
        %error,
        "the server refuses key tracking; a hold taken away is found by its lease clock and the watchdog"
    );
}

/// A step of the loss watch failed; it is tried again.
pub(crate) fn loss_watch_failed(error: &redis::RedisError) {
    tracing::debug!(target: targets::WATCHDOG, %error, "watching held locks failed; trying again");
}

/// The command connection failed in a way that leaves it in doubt.
pub(crate) fn connection_failed(error: &redis::RedisError) {
    tracing::info!(
        target: targets::CONNECTION,
        %error,
        "command connection failed; the next command opens a new one"
    );
}

/// A command connection was opened; `number` were opened before it.
pub(crate) fn connection_opened(number: u64) {
    if number == 0 {
        return;
    }
    tracing::info!(target: targets::CONNECTION, connection = number, "command connection opened again");
    #[cfg(feature = "metrics")]
    metrics::counter!(metric_names::RECONNECTS, labels::CONNECTION => "command").increment(1);
}

/// A pub/sub connection was opened to `node`; `number` were opened before
/// it by the same client.
pub(crate) fn pubsub_opened(node: &str, number: u64) {
    tracing::info!(target: targets::PUBSUB, %node, "pub/sub connection opened");
    #[cfg(feature = "metrics")]
    if number > 0 {
        metrics::counter!(metric_names::RECONNECTS, labels::CONNECTION => "pubsub").increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = number;
}
