//! The public API: the client, the handles of each kind of lock, the
//! guard, reading a lock, holder identity, and the same for blocking code.
//!
//! - `client.rs`: [`LockClient`](crate::LockClient) and its builder;
//! - `lock.rs`, `fair.rs`, `rwlock.rs`: the handles;
//! - `guard.rs`: [`LockGuard`](crate::LockGuard), one hold;
//! - `inspect.rs`: reading a lock without touching it;
//! - `identity.rs`: holder identity (opt-in);
//! - `semaphore.rs`, `leased.rs`, `count_down_latch.rs`: semaphores (plain and with
//!   leased permits) and count-down latches;
//! - `blocking/`: the API for sync code, run on a thread of the client's.

pub mod blocking;
pub(crate) mod client;
pub(crate) mod count_down_latch;
pub(crate) mod fair;
pub(crate) mod guard;
pub mod identity;
pub(crate) mod inspect;
pub(crate) mod leased;
pub(crate) mod lock;
pub(crate) mod rwlock;
pub(crate) mod semaphore;
