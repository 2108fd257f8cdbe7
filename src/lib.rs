//! Compile-time checked Redis Lua scripts for Rust.
//!
//! redlua turns a Lua script file into a typed Rust struct with
//! [`#[redis_script]`](redis_script). At compile time the script is parsed
//! as Lua 5.1 (the dialect Redis embeds) and checked against what the struct
//! declares: every `KEYS[n]` / `ARGV[n]` the script reads must be a field,
//! every field must be read, globals must exist in Redis's sandbox, Redis
//! commands must exist and get a valid number of arguments, read-only scripts
//! must not write, and so on. A mistake is a compile error that points at the
//! `.lua` file, line and column. At run time the script is sent with
//! `EVALSHA` using a SHA1 computed at compile time, and loaded again
//! transparently if the server answers `NOSCRIPT`.
//!
//! # Example
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
//! # async fn demo() -> redis::RedisResult<()> {
//! let client = redis::Client::open("redis://127.0.0.1:6379")?;
//! let mut con = client.get_multiplexed_async_connection().await?;
//! let now = Count { counter: "visits", by: 1, ttl_secs: 60 }.invoke(&mut con).await?;
//! println!("{now} visits in the last minute");
//! # Ok(()) }
//! ```
//!
//! Had the script read `ARGV[3]`, or called `redis.call('INCRBYY', ...)`,
//! the crate would not compile. The attribute's documentation,
//! [`redis_script`], lists its options, the generated items and the lints.
//!
//! # Crates
//!
//! - [`redis_script`] comes from `redlua-macros`;
//! - the runtime it calls, [`script`], comes from `redlua-runtime`;
//! - [`redis`] is the redis-rs version redlua is built on, re-exported so that
//!   your connections and its types match.
#![warn(missing_docs)]

pub use redis;
pub use redlua_macros::redis_script;
pub use redlua_runtime::script;
pub use redlua_runtime::{
    Connection, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT, DEFAULT_WATCHDOG_TIMEOUT, Error,
    Holder, Lock, LockClient, LockClientBuilder, LockGuard, LockInfo, LockKind, MAX_LEASE,
    MIN_LEASE, Mode, Owner, ReadWriteLock, Result, Side,
};

pub mod fencing;

/// Paths used by code that `#[redis_script]` generates. Not a public API.
#[doc(hidden)]
pub use redlua_runtime::__private;

/// The README's code blocks, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
