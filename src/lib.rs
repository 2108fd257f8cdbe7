//! Compile-time checked Redis Lua scripts, and Redisson-compatible
//! distributed locks, for Rust.
//!
//! redlua has two halves:
//!
//! - **Scripts.** [`#[redis_script]`](redis_script) turns a Lua script file
//!   into a typed Rust struct. At compile time the script is parsed as Lua
//!   5.1 (the dialect Redis embeds) and checked against what the struct
//!   declares: every `KEYS[n]` / `ARGV[n]` the script reads must be a field,
//!   every field must be read, globals must exist in Redis's sandbox, Redis
//!   commands must exist and get a valid number of arguments, read-only
//!   scripts must not write, and so on. A mistake is a compile error that
//!   points at the `.lua` file, line and column. At run time the script is
//!   sent with `EVALSHA` using a SHA1 computed at compile time, and loaded
//!   again transparently if the server answers `NOSCRIPT`.
//!   [`#[redis_function]`](redis_function) does the same for one function of
//!   a Redis 7 Functions library: the library is checked as `FUNCTION LOAD`
//!   checks it, the function's body like a script, and the call is sent with
//!   `FCALL` (`FCALL_RO` for `no-writes` functions), loading the library again
//!   if the server answers that the function is missing (see
//!   [`function`]).
//! - **Locks** (the `locks` feature, on by default). A [`LockClient`] hands
//!   out [`Lock`]s and [`ReadWriteLock`]s stored exactly as Redisson (the
//!   Java client) stores them, so Rust and Java services can share one lock.
//!   Acquiring gives a [`LockGuard`]: kept alive by a watchdog, knowing how
//!   long it is surely valid (its lease clock), carrying a fencing token,
//!   released by [`LockGuard::unlock`] or in the background when dropped.
//!   The [`guide`] explains the lock model: ownership, leases, fencing, what
//!   Redis locks can and cannot promise, and Redisson interop.
//!
//! The [`guide`]'s pages are the reference: [scripts](guide::scripts) (every
//! check and lint, the Redis targets, Redis Functions), and, with the
//! `locks` feature, the lock API, deployments (Cluster, replicas,
//! Sentinel), TLS and operations (ACL, managed services).
//!
//! # A script
//!
//! `scripts/counter.lua`, next to the crate's `Cargo.toml`:
//!
//! ```lua
//! -- Adds ARGV[1] to the counter KEYS[1], which expires after ARGV[2] seconds.
//! local value = redis.call('INCRBY', KEYS[1], ARGV[1])
//! redis.call('EXPIRE', KEYS[1], ARGV[2])
//! return value
//! ```
//!
//! ```no_run
//! use redlua::redis_script;
//!
//! /// Adds to a counter that expires.
//! #[redis_script("scripts/counter.lua", returns = i64)]
//! pub struct Count<'a> {
//!     /// The counter.
//!     #[key]
//!     pub counter: &'a str,
//!     /// How much to add.
//!     #[arg]
//!     pub by: i64,
//!     /// Lifetime of the counter, in seconds.
//!     #[arg]
//!     pub ttl_secs: u64,
//! }
//!
//! # async fn demo() -> redlua::redis::RedisResult<()> {
//! let client = redlua::redis::Client::open("redis://127.0.0.1:6379")?;
//! let mut con = client.get_multiplexed_async_connection().await?;
//! let now = Count { counter: "visits", by: 1, ttl_secs: 60 }.invoke(&mut con).await?;
//! println!("{now} visits in the last minute");
//! // Blocking connections work too:
//! let mut sync_con = client.get_connection()?;
//! let again = Count { counter: "visits", by: 1, ttl_secs: 60 }.invoke_blocking(&mut sync_con)?;
//! # let _ = again;
//! # Ok(()) }
//! ```
//!
//! Had the script read `ARGV[3]`, or called `redis.call('INCRBYY', ...)`,
//! the crate would not compile. The attribute's documentation,
//! [`redis_script`], lists its options, the generated items and the lints.
//! Scripts need no lock runtime: with `default-features = false` only this
//! half is compiled.
//!
//! # A lock
//!
//! ```no_run
//! use redlua::LockClient;
//! use std::time::Duration;
//!
//! # async fn demo() -> Result<(), redlua::Error> {
//! let client = LockClient::connect("redis://127.0.0.1:6379/").await?;
//! let lock = client.lock("orders:42");
//!
//! // Wait for it; the watchdog renews the lease while the guard lives.
//! let guard = lock.lock().await?;
//! let token = guard.token(); // hand it to the resource the lock protects
//! // ... exclusive work, while !guard.is_lost() ...
//! guard.unlock().await?;
//!
//! // Or give up after a while, with a fixed lease (no watchdog).
//! if let Some(guard) = lock.try_lock_for(Duration::from_secs(5), Some(Duration::from_secs(60))).await? {
//!     let again = guard.reenter().await?; // explicit re-entry: hold count 2
//!     again.unlock().await?;
//!     guard.unlock().await?;
//! }
//! # let _ = token;
//! # Ok(()) }
//! ```
//!
//! Sync programs, with no runtime of their own, use [`blocking`]: the same
//! locks as blocking calls, kept alive by a thread of the client's own.
//!
//! ```no_run
//! # fn demo() -> Result<(), redlua::Error> {
//! let client = redlua::blocking::LockClient::connect("redis://127.0.0.1:6379/")?;
//! let guard = client.lock("orders:42").lock()?;
//! std::thread::sleep(std::time::Duration::from_secs(60)); // still held
//! guard.unlock()?; // or drop it: released before the drop returns
//! # Ok(()) }
//! ```
//!
//! A holder that may outlive its lease (a pause, a lost connection) should
//! stop when [`LockGuard::lost`] fires, and let the resource refuse its
//! stale token; [`fencing::FencedSet`] is that check as a typed script:
//!
//! ```no_run
//! use redlua::{LockClient, fencing::FencedSet};
//!
//! # async fn demo(client: LockClient, mut con: redlua::redis::aio::MultiplexedConnection)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! let guard = client.lock("report:7").lock().await?;
//! let work = FencedSet {
//!     resource: "report:7:body",
//!     fence: "report:7:fence",
//!     token: guard.token(),
//!     value: "the new body",
//! };
//! tokio::select! {
//!     written = work.invoke(&mut con) => {
//!         if written? == 0 {
//!             eprintln!("refused: a later holder wrote first");
//!         }
//!         guard.unlock().await?;
//!     }
//!     () = guard.lost() => eprintln!("lost the lock; the resource refuses our token"),
//! }
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! - `locks` (default): the distributed locks ([`LockClient`] and the rest),
//!   on tokio; turns on `aio`, `cluster` and `cluster-async`. A scripts-only
//!   build turns the default features off:
//!   `redlua = { version = "0.1", default-features = false }`. Its calls are
//!   blocking (`invoke_blocking`), and it compiles no async runtime.
//! - `aio` (default): the async script calls (`invoke`, `load`) on
//!   redis-rs' tokio connections (`redis::aio`).
//! - `cluster` (default): redis-rs' blocking Cluster connections
//!   (`redis::cluster`); `cluster-async` (default) its async ones too.
//! - `metrics`: the locks' metrics through the `metrics` crate's facade
//!   (acquire wait time, holds held, renewals and their failures, locks
//!   lost, wake-ups); see [`observability`], which also lists the `tracing`
//!   events the locks always emit.
//! - `tls-rustls`: `rediss://` URLs, with rustls, trusting the platform's
//!   root certificates, or a private CA given to the builder
//!   (`LockClientBuilder::tls_root_certificate`). Without it a `rediss://`
//!   URL fails with `Error::TlsNotEnabled`.
//! - `tls-rustls-webpki-roots`: as `tls-rustls`, trusting Mozilla's root
//!   certificates (compiled in) instead of the platform's.
//!
//! The locks' Redis Cluster ([`LockClient::cluster`]) and Sentinel
//! ([`LockClient::sentinel`]) support need no feature beyond `locks`.
//!
//! The minimum supported Rust version is 1.88.
//!
//! # Crates
//!
//! - [`redis_script`] comes from `redlua-macros`;
//! - the runtime it calls, [`script`], comes from `redlua-runtime`;
//! - the locks come from `redlua-runtime` too, re-exported here;
//! - [`redis`] is the redis-rs version redlua is built on, re-exported so that
//!   your connections and its types match.
#![warn(missing_docs)]
// On docs.rs (`--cfg docsrs`, see Cargo.toml), items that need a feature
// are marked with it.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use redis;
pub use redlua_macros::{redis_function, redis_script};
pub use redlua_runtime::function;
pub use redlua_runtime::script;
#[cfg(feature = "locks")]
pub use redlua_runtime::{
    BATCH_PERMITS, Connection, CountDownLatch, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FAIR_LOCK_WAIT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT, DEFAULT_SYNC_TIMEOUT,
    DEFAULT_WATCHDOG_TIMEOUT, Error, FairLock, Holder, LeasedSemaphore, Lock, LockClient,
    LockClientBuilder, LockGuard, LockInfo, LockKind, MAX_LEASE, MAX_NAME_LEN, MAX_PERMITS,
    MIN_LEASE, Mode, Owner, PermitGuard, PermitInfo, ReadLock, ReadWriteLock, Result, Semaphore,
    Side, SyncReplicas, WriteLock, flavor,
};

pub mod fencing;

/// The locks for synchronous code: a [`blocking::LockClient`] runs the
/// async client on a thread of its own (see the module's documentation).
#[cfg(feature = "locks")]
pub use redlua_runtime::blocking;

/// What the locks report: `tracing` targets, events and fields, and the
/// metrics of the `metrics` feature (see the module's documentation).
#[cfg(feature = "locks")]
pub use redlua_runtime::observability;

/// Holder identity (opt-in): a holder says who it is (host, process id,
/// program, since when) next to its lock, for `lockctl status` and
/// `lockctl ls`.
#[cfg(feature = "locks")]
pub use redlua_runtime::identity;

/// The guide: the lock model, and the reference pages of
/// [scripts](crate::guide::scripts), locks, deployments, TLS and operations.
///
/// Each page is a Markdown file of the repository's `docs/` directory, and
/// its examples are doctests.
#[cfg_attr(
    feature = "locks",
    doc = "The pages:\n\n\
           - [`scripts`](crate::guide::scripts): what `#[redis_script]` and \
           `#[redis_function]` check, every lint, the options and the Redis targets;\n\
           - [`locks`](crate::guide::locks): the lock API at a glance, blocking code, \
           read/write and fair locks;\n\
           - [`semaphores`](crate::guide::semaphores): semaphores (plain and with \
           leased permits) and count-down latches: what each promises, and what it \
           cannot;\n\
           - [`deployments`](crate::guide::deployments): Redis Cluster, replicas and \
           failover, Sentinel;\n\
           - [`tls`](crate::guide::tls): `rediss://` URLs;\n\
           - [`operations`](crate::guide::operations): the Redis user (ACL) the locks \
           need, managed services and proxies.\n"
)]
#[cfg_attr(feature = "locks", doc = include_str!("../docs/lock-model.md"))]
pub mod guide {
    #[doc = include_str!("../docs/scripts.md")]
    pub mod scripts {}

    #[cfg(feature = "locks")]
    #[doc = include_str!("../docs/locks.md")]
    pub mod locks {}

    #[cfg(feature = "locks")]
    #[doc = include_str!("../docs/semaphores.md")]
    pub mod semaphores {}

    #[cfg(feature = "locks")]
    #[doc = include_str!("../docs/deployments.md")]
    pub mod deployments {}

    // Its example needs the feature: without it the page is rendered, not
    // doctested.
    #[cfg(feature = "locks")]
    #[cfg_attr(
        any(not(doctest), feature = "tls-rustls"),
        doc = include_str!("../docs/tls.md")
    )]
    pub mod tls {}

    #[cfg(feature = "locks")]
    #[doc = include_str!("../docs/operations.md")]
    pub mod operations {}
}

/// Paths used by code that `#[redis_script]` generates. Not a public API.
#[doc(hidden)]
pub use redlua_runtime::__private;

/// The README's code blocks, compiled as doctests so that they stay true.
#[cfg(all(doctest, feature = "locks"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The macros crate's README: a procedural-macro crate cannot use its own
/// attribute in its doctests, so its example compiles here, where the
/// attribute and the runtime it calls are, with its script
/// (`scripts/counter.lua`). Only `cargo test --doc` in the workspace reads
/// the file; the published package has no `lock-macros/`, and never builds
/// with `doctest` set.
#[cfg(doctest)]
#[doc = include_str!("../lock-macros/README.md")]
pub struct MacrosReadmeDoctests;
