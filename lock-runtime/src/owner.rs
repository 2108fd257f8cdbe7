//! Who holds a lock: `<client-uuid>:<owner-id>`, Redisson's format.
//!
//! The owner id is, by default, the id of the current tokio task, so that two
//! tasks exclude each other like two Java threads do. Outside a task it is an
//! id of the current thread (counted from 2^62, so it never meets a task id).
//! An explicit id ([`Lock::with_owner`](crate::Lock::with_owner)) lets
//! several tasks act as one owner.

use std::sync::atomic::{AtomicU64, Ordering};

/// The first id given to threads.
const FIRST_THREAD_ID: u64 = 1 << 62;

static NEXT_THREAD_ID: AtomicU64 = AtomicU64::new(FIRST_THREAD_ID);

thread_local! {
    static THREAD_ID: u64 = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
}

/// The owner id of the caller: its tokio task, or its thread.
pub(crate) fn current_owner_id() -> u64 {
    if let Some(task) = tokio::task::try_id()
        && let Ok(id) = task.to_string().parse()
    {
        return id;
    }
    THREAD_ID.with(|id| *id)
}

/// The owner string stored in Redis.
pub(crate) fn owner_name(client_id: &str, owner_id: u64) -> String {
    format!("{client_id}:{owner_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_get_distinct_stable_ids() {
        let here = current_owner_id();
        assert_eq!(here, current_owner_id());
        assert!(here >= FIRST_THREAD_ID);
        let there = std::thread::spawn(current_owner_id).join().unwrap();
        assert_ne!(here, there);
    }

    #[tokio::test]
    async fn tasks_get_their_task_id() {
        let a = tokio::spawn(async { current_owner_id() }).await.unwrap();
        let b = tokio::spawn(async { current_owner_id() }).await.unwrap();
        assert_ne!(a, b);
        assert!(a < FIRST_THREAD_ID);
        assert_eq!(owner_name("u", 7), "u:7");
    }
}
