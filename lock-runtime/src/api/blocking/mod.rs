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
//! [`LockClient::connect`] starts a thread of the client's own (named
//! `redlua-locks`) running a single-threaded tokio runtime. Everything the
//! async client does in the background runs there: the watchdog that renews
//! leases, the pub/sub connection that wakes waiters, the releases of
//! dropped guards and the undo of abandoned acquires. So a lease is renewed
//! whatever the caller does between calls: sleep, compute, block on I/O.
//! Each blocking call hands its operation to that thread and waits for the
//! result. The lock logic is the async API's, unchanged: [`Lock`],
//! [`LockGuard`] and the rest wrap their async counterparts.
//!
//! Every handle made from a client (its clones, [`Lock`]s,
//! [`ReadWriteLock`]s, [`LockGuard`]s) keeps the thread alive. Dropping the
//! client while guards are out is fine: they go on being renewed, and
//! release normally. The thread ends by itself once the last handle is gone
//! and the last background release has been answered; its connections are
//! then closed.
//!
//! # Timeouts instead of cancellation
//!
//! A blocking call cannot be dropped half-way, so nothing is ever left
//! behind by an interrupted call; calls are bounded instead:
//!
//! - waiting for a lock: [`Lock::lock`] waits as long as it takes,
//!   [`Lock::try_lock_for`] at most the time it is given (then `None`,
//!   nothing held), [`Lock::try_lock`] not at all;
//! - waiting for Redis: each command is bounded by the response timeout
//!   (3 s by default, [`LockClientBuilder::response_timeout`]); a call whose
//!   command fails returns [`Error::Redis`](crate::Error::Redis) with the
//!   same guarantees as the async API (an acquire leaves nothing held, a
//!   release goes on in the background), except that an acquire keeps
//!   trying while it may wait;
//! - connecting: the connect timeout (3 s by default).
//!
//! A call never depends on the handle it was made from staying alive
//! elsewhere: dropping another clone of the client while a call runs
//! changes nothing for it.
//!
//! # In an async program
//!
//! The blocking API may be called from any thread, including a thread of
//! some other tokio runtime (it does not panic there, unlike
//! `Runtime::block_on`): the call blocks that thread until it completes,
//! so, in async code, prefer the async API, or call the blocking one through
//! `spawn_blocking`.
//!
//! # Compared with the async API on a blocked runtime
//!
//! The async [`LockClient`](crate::LockClient) runs its watchdog on the
//! runtime it was made on. If that is a current-thread runtime (e.g.
//! `#[tokio::main(flavor = "current_thread")]`) and the code holding a lock
//! blocks its thread (`std::thread::sleep`, a blocking read), no task runs
//! meanwhile: the lease is not renewed and ends after the watchdog timeout,
//! and another client may take the lock. The guard tells:
//! [`valid_until`](crate::LockGuard::valid_until) does not move and
//! [`is_lost`](crate::LockGuard::is_lost) turns true when it passes, even
//! with no task running. Sync code should use this module; async code that
//! must block should do so in `spawn_blocking` or on a multi-thread runtime.

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
