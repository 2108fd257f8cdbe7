//! What every handle (a lock, a semaphore, a latch) does alike: its names
//! are derived once, when it is made, and a name refused then is returned
//! by each of its operations; an operation waits forever, or at most a
//! time it is given.

use crate::base::error::{Error, Result};
use crate::holds::acquire::Wait;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A handle's name and its Redis names, or why the name was refused.
#[derive(Debug, Clone)]
pub(crate) struct Named<N> {
    /// The name (its Redis key; as the refusal quotes it, if refused).
    name: Arc<str>,
    names: std::result::Result<Arc<N>, String>,
}

impl<N> Named<N> {
    /// The names derived from `name`, or why they could not be.
    pub(crate) fn new(names: Result<N>, name: &str) -> Named<N> {
        let (name, names) = match names {
            Ok(names) => (name.into(), Ok(Arc::new(names))),
            Err(Error::InvalidName { name, reason }) => (name.into(), Err(reason)),
            Err(other) => (name.into(), Err(other.to_string())),
        };
        Named { name, names }
    }

    /// The handle's name (its Redis key).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The names, or [`Error::InvalidName`].
    pub(crate) fn get(&self) -> Result<&Arc<N>> {
        self.names.as_ref().map_err(|reason| Error::InvalidName {
            name: self.name.to_string(),
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
