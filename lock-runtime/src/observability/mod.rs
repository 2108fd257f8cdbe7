//! What the locks report: [`tracing`](https://docs.rs/tracing) events,
//! always, and [`metrics`](https://docs.rs/metrics) through the `metrics`
//! crate's facade, with the `metrics` feature.
//!
//! The names below are the constants of [`targets`], [`metric_names`] and
//! [`labels`]: filter and query by them rather than by copies of the
//! strings.
//!
//! # Tracing
//!
//! Install any `tracing` subscriber to see the events; filter them by
//! target, e.g. `RUST_LOG=redlua::acquire=debug,redlua=info` with
//! `tracing-subscriber`'s `EnvFilter`. Lock names, owners and tokens are
//! fields, never part of the message.
//!
//! Spans (level debug) give the events inside them their context:
//!
//! | target | span | fields | around |
//! |---|---|---|---|
//! | `redlua::acquire` | `acquire` | `lock`, `kind`, `reentry` | an acquire or re-entry call: its tries, its wake-ups, the connection's events while it runs, its outcome |
//! | `redlua::acquire` | `acquire_permits` | `semaphore`, `kind`, `permits` | an acquire call of a semaphore's permits (plain or leased): its tries, its wake-ups, its outcome |
//! | `redlua::acquire` | `latch_wait` | `latch` | a wait for a count-down latch to open: its looks at the count, its wake-ups |
//! | `redlua::release` | `release` | `lock`, `owner` | an `unlock`, or a release or undo done in the background |
//! | `redlua::release` | `release_permits` | `semaphore`, `kind`, `permits` | a semaphore's `release`, a leased permit guard's release (by `release`, or in the background when dropped), or the undo of an abandoned leased acquire |
//! | `redlua::watchdog` | `renewal_round` | | one renewal round of a client |
//!
//! The events:
//!
//! | target | level | message | fields |
//! |---|---|---|---|
//! | `redlua::acquire` | debug | `lock acquired` | `lock`, `kind`, `reentry`, `owner`, `token`, `waited_ms`, `attempts`, `wakeups`, `handed_over` (a fair lock's release handed it the lock: no attempt after the wake-up) |
//! | `redlua::acquire` | debug | `lock not acquired` | `lock`, `kind`, `reentry`, `outcome` (`busy`, `timed_out`, `failed`, `cancelled`), `waited_ms`, `attempts`, `wakeups`, `error` (for `failed`) |
//! | `redlua::acquire` | debug | `permits acquired` | `semaphore`, `kind`, `permits`, `waited_ms`, `attempts`, `wakeups` |
//! | `redlua::acquire` | debug | `permits not acquired` | `semaphore`, `kind`, `permits`, `outcome` (as for a lock), `waited_ms`, `attempts`, `wakeups`, `error` (for `failed`) |
//! | `redlua::acquire` | debug | `acquire failed; trying again` | `lock`, `error` (a reply was lost; the waiter retries) |
//! | `redlua::acquire` | warn | `cannot subscribe; polling for the lock instead` | `lock`, `channel`, `error` |
//! | `redlua::acquire` | debug | `pattern subscription refused; subscribing to the waiter's channel` | `lock`, `error` (a fair lock's waiter, once per client) |
//! | `redlua::acquire` | warn | `too few replicas acknowledged the acquire; undone` | `lock`, `acked`, `wanted` (replica-synced mode: the acquire fails with `Error::NotReplicated`) |
//! | `redlua::acquire` | trace | `woken by a release` | `lock` (a waiter's pub/sub wake-up) |
//! | `redlua::release` | debug | `lock released` | `lock`, `kind`, `owner`, `outcome` (`freed`, `still_held`), `background` |
//! | `redlua::release` | debug | `nothing released: the owner held nothing of the lock` | `lock`, `kind`, `owner`, `outcome` (`not_held`), `background` |
//! | `redlua::release` | debug | `release outcome unknown; the lease frees the lock if it was held` | `lock`, `kind`, `owner`, `outcome` (`unknown`), `background` |
//! | `redlua::release` | debug | `release failed; retrying` | `lock`, `error` |
//! | `redlua::release` | warn | `released, but too few replicas acknowledged the release` | `lock`, `acked`, `wanted` |
//! | `redlua::release` | debug | `undid an abandoned acquire` | `lock` |
//! | `redlua::release` | warn | `release failed; the lock will be freed by its lease` | `lock`, `error` |
//! | `redlua::release` | warn | `the lock's key now holds something else; nothing released` | `lock` |
//! | `redlua::release` | warn | `could not clear a waiting writer's mark; it expires by itself` | `lock`, `error` |
//! | `redlua::release` | warn | `could not leave a fair lock's queue; the waiter's deadline ends its place` | `lock`, `error` |
//! | `redlua::release` | warn | `the background worker is gone ...` | (the tokio runtime shut down) |
//! | `redlua::acquire` | warn | `cannot subscribe; polling instead` | `channel`, `error` (a semaphore's or count-down latch's waiter) |
//! | `redlua::release` | debug | `permits released` | `semaphore`, `kind` (`leased_semaphore`), `permits`, `outcome` (`freed`; `not_held`: one had expired or been given back by someone else; `unknown`), `background` |
//! | `redlua::release` | debug | `permits given back in the background` | `semaphore`, `gave_back` (how many: an abandoned plain acquire undone) |
//! | `redlua::release` | error | `could not give permits back in the background` | `semaphore`, `error` (Redis refused, or did not answer for 30 s: an abandoned plain acquire's permits may stay taken) |
//! | `redlua::watchdog` | debug | `renewal round` | `locks`, `renewed`, `lost`, `failed_batches`, `elapsed_ms` |
//! | `redlua::watchdog` | warn | `lease renewal failed; retrying soon` | `locks`, `error` |
//! | `redlua::watchdog` | warn | `too few replicas acknowledged a renewal; the lease clocks stay, retrying soon` | `locks`, `acked`, `wanted` |
//! | `redlua::watchdog` | warn | `lock lost: the watchdog found it gone ...` | `lock`, `owner` (for a leased permit guard: `{semaphore}:timeout` and its first permit's id) |
//! | `redlua::watchdog` | warn | `lock lost: it was taken away (force unlocked, deleted or overwritten)` | `lock`, `owner` (found by the loss watch, at once; a permit guard's as above) |
//! | `redlua::watchdog` | warn | `the server refuses key tracking; ...` | `error` (the loss watch is off for this client) |
//! | `redlua::watchdog` | debug | `watching held locks failed; trying again` | `error` |
//! | `redlua::connection` | info | `command connection failed; the next command opens a new one` | `error` |
//! | `redlua::connection` | info | `command connection opened again` | `connection` (how many were opened before) |
//! | `redlua::connection` | warn | `waiting for the replicas failed` | `error` (the `WAIT` after a state change) |
//! | `redlua::connection` | warn | `the sentinels name a new master; moving the connections to it` | `master` (`host:port`) |
//! | `redlua::connection` | debug | `asking the sentinels for the master failed` | `error` |
//! | `redlua::connection` | debug | `the master changed; replacing the connection` | |
//! | `redlua::connection` | debug | `a replica answered for the primary; reading the topology again` | `slot` (a failover the client had not seen) |
//! | `redlua::connection` | warn | `a lock script ran on another node than the replicas were counted on (a failover); taken as not replicated` | `slot`, `acked` |
//! | `redlua::pubsub` | info | `pub/sub connection opened` | `node` (`host:port`; `master` for a Sentinel service's master) |
//! | `redlua::pubsub` | warn | `the pub/sub connection failed its ping; replacing it` | `error` |
//! | `redlua::pubsub` | warn | `the pub/sub connection went silent; replacing it` | `timeout` |
//! | `redlua::pubsub` | warn | `the node dropped a subscription; ...` | `channel`, `node` |
//! | `redlua::pubsub` | warn | `the sentinels name a new master; subscribing there` | |
//!
//! Field values: `kind` is `reentrant`, `fair`, `read` or `write` for a
//! lock, `semaphore` or `leased_semaphore` for permits; `reentry` is
//! `true` for a re-entry (one more hold of an owner); `waited_ms` is the
//! time from the call to its outcome; `attempts` counts the acquire scripts
//! sent; `wakeups` the pub/sub wake-ups while waiting. In the
//! `redlua::release` events of a leased permit guard's release or of a
//! leased acquire's undo, `lock` is the semaphore's name.
//!
//! # Metrics
//!
//! With the `metrics` feature (`redlua = { features = ["metrics"] }`), the
//! locks record through the `metrics` facade into whatever recorder the
//! program installed (`metrics-exporter-prometheus`, for one: see the
//! `prometheus` example of the `redlua` crate). Labels are few and bounded:
//! never a lock name.
//!
//! | name | type | labels | what |
//! |---|---|---|---|
//! | `redlua_acquire_wait_seconds` | histogram | `kind`, `outcome` | how long each acquire call took, to its outcome (as the `redlua::acquire` events; `outcome` is `acquired`, `busy`, `timed_out`, `failed` or `cancelled`), a semaphore's permits' too |
//! | `redlua_holds` | gauge | | holds held now by this process's clients (re-entries count one each; a leased permit guard counts one) |
//! | `redlua_releases_total` | counter | `kind`, `outcome` | releases of holds, by what Redis said (`freed`, `still_held`, `not_held`, `unknown`); a leased permit guard's release is one (`kind` `leased_semaphore`) |
//! | `redlua_renewals_total` | counter | | holds' leases renewed by the watchdog (a permit guard's: one) |
//! | `redlua_renewal_failures_total` | counter | | renewal calls that failed (Redis error; the round is retried) |
//! | `redlua_locks_lost_total` | counter | | holds found gone while held (expired, deleted, taken over; a leased permit taken away), by the watchdog or the loss watch |
//! | `redlua_wakeups_total` | counter | | waiters woken by a release message |
//! | `redlua_reconnects_total` | counter | `connection` (`command`, `pubsub`) | connections opened again after a failure (`pubsub`: every pub/sub connection after the client's first) |
//!
//! Every counter and gauge series (each label value of `kind`, `outcome`
//! and `connection` above) is registered at zero, and every metric is
//! described (help text, unit), when a client connects: a dashboard or an
//! alert on `redlua_renewal_failures_total` finds the series before the
//! first failure.
//!
//! ## The acquire-wait histogram
//!
//! `redlua_acquire_wait_seconds` is recorded as a histogram; its buckets
//! are [`ACQUIRE_WAIT_BUCKETS`], from 1 ms (an acquire that did not wait)
//! to a minute. The `metrics` facade carries no buckets: a Prometheus
//! exporter is given them, else it exports a summary (quantiles that cannot
//! be aggregated across processes). With `metrics-exporter-prometheus`, as
//! the `prometheus` example of the `redlua` crate does:
//!
//! ```ignore
//! use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
//! use redlua::observability::{ACQUIRE_WAIT_BUCKETS, metric_names};
//!
//! PrometheusBuilder::new()
//!     .set_buckets_for_metric(
//!         Matcher::Full(metric_names::ACQUIRE_WAIT_SECONDS.to_string()),
//!         ACQUIRE_WAIT_BUCKETS,
//!     )?
//!     .install()?;
//! ```
//!
//! A Grafana dashboard of these metrics, for Prometheus, is
//! [`docs/grafana/redlua.json`](https://github.com/redlua/redlua/blob/main/docs/grafana/redlua.json).

/// The buckets of the `redlua_acquire_wait_seconds` histogram, in seconds:
/// what an exporter that needs buckets (Prometheus's) is given for it.
///
/// 1 ms to 100 ms tell an acquire that did not wait (a round trip) from one
/// that waited for a release; 250 ms to 60 s cover waits for other holders'
/// work, up to the usual `try_lock_for` limits.
pub const ACQUIRE_WAIT_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The `tracing` targets of the locks' events.
pub mod targets {
    /// Acquiring: outcomes of acquire calls, retries, wake-ups.
    pub const ACQUIRE: &str = "redlua::acquire";
    /// Releasing: outcomes of releases, background retries, undos.
    pub const RELEASE: &str = "redlua::release";
    /// Lease renewal: rounds, failures, lost locks.
    pub const WATCHDOG: &str = "redlua::watchdog";
    /// The command connection: failures and reconnects.
    pub const CONNECTION: &str = "redlua::connection";
    /// The pub/sub connections that wake waiters.
    pub const PUBSUB: &str = "redlua::pubsub";
}

/// The names of the metrics (feature `metrics`).
pub mod metric_names {
    /// Histogram, seconds: how long each acquire call took. Labels
    /// [`KIND`](super::labels::KIND), [`OUTCOME`](super::labels::OUTCOME).
    pub const ACQUIRE_WAIT_SECONDS: &str = "redlua_acquire_wait_seconds";
    /// Gauge: holds held now by this process's clients.
    pub const HOLDS: &str = "redlua_holds";
    /// Counter: releases of holds. Labels [`KIND`](super::labels::KIND),
    /// [`OUTCOME`](super::labels::OUTCOME).
    pub const RELEASES: &str = "redlua_releases_total";
    /// Counter: holds' leases renewed by the watchdog.
    pub const RENEWALS: &str = "redlua_renewals_total";
    /// Counter: renewal calls that failed with a Redis error.
    pub const RENEWAL_FAILURES: &str = "redlua_renewal_failures_total";
    /// Counter: holds the watchdog found gone.
    pub const LOCKS_LOST: &str = "redlua_locks_lost_total";
    /// Counter: waiters woken by a release message.
    pub const WAKEUPS: &str = "redlua_wakeups_total";
    /// Counter: connections opened again after a failure. Label
    /// [`CONNECTION`](super::labels::CONNECTION).
    pub const RECONNECTS: &str = "redlua_reconnects_total";
}

/// The labels of the metrics, and the fields of the events that share them.
pub mod labels {
    /// The kind of lock: `reentrant`, `fair`, `read` or `write`; for the
    /// acquire-wait histogram also `semaphore` or `leased_semaphore` (a
    /// semaphore's permits).
    pub const KIND: &str = "kind";
    /// How an operation ended (see the module's tables).
    pub const OUTCOME: &str = "outcome";
    /// Which connection: `command` or `pubsub`.
    pub const CONNECTION: &str = "connection";
}

/// Where the events and metrics above are emitted.
pub(crate) mod telemetry;
