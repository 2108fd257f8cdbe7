//! The lock scripts' side of the wire: the typed calls of
//! `lock-runtime/scripts/*.lua` (`lock_scripts.rs`; a semaphore's and a
//! latch's in `counted_scripts.rs`), what their arguments and replies mean
//! (`replies.rs`), and a fair lock's direct handoff (`handoff.rs`). The
//! bottom layer of the locks: it uses nothing of the crate but
//! [`script`](crate::script).

pub(crate) mod counted_scripts;
pub(crate) mod handoff;
pub(crate) mod lock_scripts;
pub(crate) mod replies;
