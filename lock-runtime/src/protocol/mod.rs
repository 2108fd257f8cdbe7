//! The lock scripts' side of the wire: the typed calls of
//! `lock-runtime/scripts/*.lua` and what their arguments and replies mean.
//! The bottom layer of the locks: it uses nothing of the crate but
//! [`script`](crate::script).
//!
//! - `lock_scripts.rs`: one typed call per script (`#[redis_script]`), and
//!   the list of them all;
//! - `replies.rs`: the scripts' arguments (flags, modes, durations in
//!   milliseconds) and replies, decoded in one place;
//! - `handoff.rs`: a fair lock's direct handoff, as the scripts offer and
//!   announce it;
//! - `counted_scripts.rs`: the scripts of semaphores and count-down
//!   latches, with their arguments and replies.

pub(crate) mod counted_scripts;
pub(crate) mod handoff;
pub(crate) mod lock_scripts;
pub(crate) mod replies;
