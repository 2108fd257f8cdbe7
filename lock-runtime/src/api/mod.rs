//! The public API: the client (`client/`), the one lock handle (`lock.rs`,
//! its flavors in `flavor.rs`), `rwlock.rs`, the guard, reading a lock
//! (`inspect.rs`), holder identity, what every handle does alike
//! (`handle.rs`), semaphores and latches, and `blocking/`, the same for
//! sync code, run on a thread of the client's.

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
