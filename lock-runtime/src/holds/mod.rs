//! A hold's life, and the client state it lives in: acquiring, the lease
//! clock, renewal, release, and the background work that finishes what a
//! caller dropped.
//!
//! - `shared.rs`: what a client's handles, guards and tasks share;
//!   `registry.rs`: the holds of this client; `job.rs`: work for the
//!   background worker; `latches.rs`: answered releases' latches;
//! - `kind_scripts.rs`: which script each operation of each kind of lock
//!   runs;
//! - `acquire.rs`: acquiring, waiting, undoing abandoned acquires;
//! - `lease_clock.rs`: how long a hold is surely valid;
//! - `watchdog.rs`: lease renewal; `loss_watch.rs`: holds taken away while
//!   held, noticed at once;
//! - `release.rs`: where holds are released (a lock's, or leased
//!   permits: a request's `Target`); `background.rs`: the worker;
//! - `permits.rs`: a semaphore's permits taken and undone exactly, and the
//!   changes of semaphores and count-down latches made exactly once;
//!   `leased.rs`: leased permits, their acquire, and a guard's permits as
//!   a hold of the registry.

pub(crate) mod acquire;
pub(crate) mod background;
pub(crate) mod job;
pub(crate) mod kind_scripts;
pub(crate) mod latches;
pub(crate) mod lease_clock;
pub(crate) mod leased;
pub(crate) mod loss_watch;
pub(crate) mod permits;
pub(crate) mod read_budget;
pub(crate) mod registry;
pub(crate) mod release;
pub(crate) mod shared;
pub(crate) mod watchdog;
