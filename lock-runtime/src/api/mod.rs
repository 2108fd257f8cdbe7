//! The public API: the client, the handles of each kind of lock, the
//! guard, reading a lock, holder identity, and the same for blocking code.
//!
//! - `client/`: [`LockClient`](crate::LockClient) and the handles it makes,
//!   its builder (`builder.rs`) and connecting (`connect.rs`);
//! - `lock.rs`: the handle of every kind of lock, written once;
//! - `flavor.rs`: the flavors a handle's type names (reentrant, fair, read,
//!   write), each mapped to the protocol it runs;
//! - `rwlock.rs`: a read/write lock, which hands out its two sides;
//! - `guard.rs`: [`LockGuard`](crate::LockGuard), one hold;
//! - `handle.rs`: what every handle does alike (its names, its waits);
//! - `inspect.rs`: reading a lock without touching it;
//! - `identity.rs`: holder identity (opt-in);
//! - `semaphore.rs`, `leased.rs`, `count_down_latch.rs`: semaphores (plain and with
//!   leased permits) and count-down latches;
//! - `blocking/`: the API for sync code, run on a thread of the client's.

pub mod blocking;
pub(crate) mod client;
pub(crate) mod count_down_latch;
pub mod flavor;
pub(crate) mod guard;
pub(crate) mod handle;
pub mod identity;
pub(crate) mod inspect;
pub(crate) mod leased;
pub(crate) mod lock;
pub(crate) mod rwlock;
pub(crate) mod semaphore;
