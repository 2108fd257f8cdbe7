//! What every handle (a lock, a semaphore, a latch) does alike: its names
//! are derived once, when it is made, and a name refused then is returned
//! by each of its operations; an operation waits forever, or at most a
//! time it is given.

use crate::base::counted_names::CountedNames;
use crate::base::error::{Error, Result};
use crate::base::names::LockNames;
use crate::holds::acquire::Wait;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A handle's Redis names, or its name and why it was refused.
#[derive(Debug, Clone)]
pub(crate) struct Named<N>(std::result::Result<Arc<N>, (String, String)>);

/// Names that know the key they were derived from.
pub(crate) trait Key {
    /// The handle's name (its Redis key).
    fn key(&self) -> &str;
}

impl Key for LockNames {
    fn key(&self) -> &str {
        &self.lock
    }
}

impl Key for CountedNames {
    fn key(&self) -> &str {
        &self.key
    }
}

impl<N: Key> Named<N> {
    /// The names derived from `name`, or why they could not be.
    pub(crate) fn new(names: Result<N>, name: &str) -> Named<N> {
        Named(names.map(Arc::new).map_err(|e| match e {
            Error::InvalidName { name, reason } => (name, reason),
            other => (name.to_string(), other.to_string()),
        }))
    }

    /// The handle's name (its Redis key).
    pub(crate) fn name(&self) -> &str {
        match &self.0 {
            Ok(names) => names.key(),
            Err((name, _)) => name,
        }
    }

    /// The names, or [`Error::InvalidName`].
    pub(crate) fn get(&self) -> Result<&Arc<N>> {
        self.0
            .as_ref()
            .map_err(|(name, reason)| Error::InvalidName {
                name: name.clone(),
                reason: reason.clone(),
            })
    }
}

/// Waiting at most `wait` from now (forever past the clock's range).
pub(crate) fn at_most(wait: Duration) -> Wait {
    tokio::time::Instant::now()
        .checked_add(wait)
        .map_or(Wait::Forever, Wait::Until)
}

/// What `taken`, an operation of the handle `name` that waits forever,
/// took; [`Error::Timeout`] if it came back with nothing.
pub(crate) async fn forever<T>(
    name: &str,
    taken: impl Future<Output = Result<Option<T>>>,
) -> Result<T> {
    let started = std::time::Instant::now();
    taken.await?.ok_or_else(|| Error::Timeout {
        name: name.to_string(),
        waited: started.elapsed(),
    })
}

/// `name()` and a `Debug` that shows it, for handles whose names are in a
/// `names: Named<_>` field.
macro_rules! named_handle {
    ($($ty:ident),*) => {$(
        impl $ty {
            /// The handle's name (its Redis key).
            pub fn name(&self) -> &str {
                self.names.name()
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let name = self.name();
                f.debug_struct(stringify!($ty)).field("name", &name).finish_non_exhaustive()
            }
        }
    )*};
}
pub(crate) use named_handle;
