//! The locks for synchronous code, with no runtime of the caller's: the same
//! operations as the async API, as blocking calls (in the manner of
//! `reqwest::blocking`).
//!
//! ```no_run
//! use redlua::blocking::LockClient;
//! use std::time::Duration;
//!
//! # fn demo() -> Result<(), redlua::Error> {
//! let client = LockClient::connect("redis://127.0.0.1:6379/")?;
//! let lock = client.lock("orders:42");
//!
//! let guard = lock.lock()?; // waits; the client's thread renews the lease
//! let token = guard.token(); // hand it to the resource the lock protects
//! std::thread::sleep(Duration::from_secs(120)); // blocking work: still held
//! assert!(!guard.is_lost());
//! guard.unlock()?;
//!
//! if let Some(guard) = lock.try_lock_for(Duration::from_secs(5), None)? {
//!     // ... exclusive work ...
//!     drop(guard); // released at once (see `LockGuard`)
//! }
//! # let _ = token;
//! # Ok(()) }
//! ```
//!
//! # The client's thread
//!
//! [`LockClient::connect`] starts a thread of the client's own
//! (`redlua-locks`) running a single-threaded tokio runtime, which runs
//! everything the async client does in the background (renewals, pub/sub,
//! releases of dropped guards, undoing abandoned acquires), so a lease is
//! renewed whatever the caller does between calls, and every blocking call
//! (handed to it; the lock logic is the async API's, which [`Lock`],
//! [`LockGuard`] and the rest wrap). Unlike the async client on a blocked
//! current-thread runtime (see
//! [`LockClient`](crate::LockClient#on-a-blocked-runtime)), nothing the
//! caller does stops it.
//!
//! Every handle made from a client keeps the thread alive: guards outlive
//! a dropped client, renewed, and release normally. The thread ends once
//! the last handle is gone and the last background release answered.
//!
//! # Timeouts instead of cancellation
//!
//! A blocking call cannot be dropped half-way, so an interrupted call
//! leaves nothing behind; calls are bounded instead:
//!
//! - waiting for a lock: [`Lock::lock`] waits as long as it takes,
//!   [`Lock::try_lock_for`] at most the time it is given (then `None`,
//!   nothing held), [`Lock::try_lock`] not at all;
//! - waiting for Redis: each command is bounded by the response timeout
//!   (3 s by default, [`LockClientBuilder::response_timeout`]); a failed
//!   one returns [`Error::Redis`](crate::Error::Redis) with the async API's
//!   guarantees (an acquire leaves nothing held, a release goes on in the
//!   background), and an acquire keeps trying while it may wait;
//! - connecting: the connect timeout (3 s by default).
//!
//! # In an async program
//!
//! A blocking call may come from any thread, a tokio runtime's included
//! (it does not panic there, unlike `Runtime::block_on`), and blocks it:
//! in async code, prefer the async API, or `spawn_blocking`.

mod client;
mod counted;
mod guard;
mod leased;
mod lock;
mod thread;

pub use client::{LockClient, LockClientBuilder};
pub use counted::{CountDownLatch, Semaphore};
pub use guard::LockGuard;
pub use leased::{LeasedSemaphore, PermitGuard};
pub use lock::{FairLock, Lock, ReadLock, ReadWriteLock, WriteLock};
