//! Locking the runtime's mutexes.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`; a poisoned one is still usable: what the runtime's
/// mutexes guard is only ever replaced or updated whole, so a panic while
/// one was held leaves no half-made state behind.
pub(crate) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
