//! A hold's life, and the client state it lives in: acquiring (locks'
//! and permits'), the lease clock, renewal, the loss watch, release, and
//! the background work that finishes what a caller dropped. ARCHITECTURE.md
//! maps the files; each states its invariants at its top.

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
