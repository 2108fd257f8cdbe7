//! The blocking client's thread: a current-thread tokio runtime that runs the
//! async client's background work and every blocking call, and ends once the
//! client and everything made from it is gone.

use crate::api::client::{LockClient, LockClientBuilder};
use crate::api::inspect::LockInfo;
use crate::api::leased::PermitInfo;
use crate::base::error::{Error, Result};
use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;
use tokio::runtime::Handle;

/// The name of the thread (what `top -H` and debuggers show).
pub(crate) const THREAD_NAME: &str = "redlua-locks";

/// A way into the client's thread, kept by every blocking handle.
#[derive(Debug, Clone)]
pub(crate) struct ClientThread {
    handle: Handle,
    /// How long a dropped guard waits for its release to be answered.
    drop_wait: Duration,
}

impl ClientThread {
    /// Starts the thread and connects `builder` on it. The thread then runs
    /// until the client's background worker ends: when the client, every
    /// handle and guard made from it, and its last background job are gone.
    pub(crate) fn connect(
        builder: LockClientBuilder,
        drop_wait: Duration,
    ) -> Result<(LockClient, ClientThread)> {
        let (sender, connected) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name(THREAD_NAME.to_string())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = sender.send(Err(Error::ClientThread(format!(
                            "could not start its tokio runtime: {error}"
                        ))));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match builder.connect_with_worker().await {
                        Ok((client, worker)) => {
                            if sender.send(Ok((client, Handle::current()))).is_ok() {
                                let _ = worker.await;
                            }
                        }
                        Err(error) => {
                            let _ = sender.send(Err(error));
                        }
                    }
                });
            })
            .map_err(|error| Error::ClientThread(format!("could not be started: {error}")))?;
        let (client, handle) = connected.recv().map_err(|_| gone())??;
        Ok((client, ClientThread { handle, drop_wait }))
    }

    /// Runs a fallible operation on the client's thread and waits for its
    /// output, handed out as a blocking call returns it (see [`Blocking`]).
    pub(crate) fn call<T, F>(&self, future: F) -> Result<T::Output>
    where
        F: Future<Output = Result<T>> + Send + 'static,
        T: Blocking,
    {
        Ok(self
            .spawn(future)
            .recv()
            .map_err(|_| gone())??
            .blocking(self))
    }

    /// Runs `future` on the client's thread, waiting for it at most the
    /// client's drop wait; past that it goes on there unwatched.
    pub(crate) fn run_for_drop<F>(&self, future: F)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _ = self.spawn(future).recv_timeout(self.drop_wait);
    }

    /// Starts `future` on the client's thread; its output comes on the
    /// receiver.
    fn spawn<F>(&self, future: F) -> mpsc::Receiver<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (sender, done) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = sender.send(future.await);
        });
        done
    }
}

/// The error of a call made after the thread ended (only a panic inside it
/// ends it while handles remain).
fn gone() -> Error {
    Error::ClientThread("has ended".to_string())
}

/// An output of the async API as a blocking call returns it: a value as it
/// is, a guard as the blocking guard that releases it on the client's
/// thread.
pub(crate) trait Blocking: Send + 'static {
    /// What the blocking call returns.
    type Output;
    /// `self`, handed out by a blocking call run on `thread`.
    fn blocking(self, thread: &ClientThread) -> Self::Output;
}

impl<T: Blocking> Blocking for Option<T> {
    type Output = Option<T::Output>;
    fn blocking(self, thread: &ClientThread) -> Self::Output {
        self.map(|value| value.blocking(thread))
    }
}

/// The outputs that blocking calls return as they are.
macro_rules! as_is {
    ($($ty:ty),*) => {$(
        impl Blocking for $ty {
            type Output = $ty;
            fn blocking(self, _: &ClientThread) -> $ty {
                self
            }
        }
    )*};
}
as_is!((), bool, u64, i64, Duration, LockInfo, Vec<PermitInfo>);

/// Methods of a blocking handle (with fields `inner`, the async handle,
/// and `thread`, the client's thread), each the async method of the same
/// name, its arguments taken by value, run on the client's thread.
macro_rules! blocking {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
            let inner = self.inner.clone();
            self.thread.call(async move { inner.$name($($arg),*).await })
        }
    )*};
}
pub(super) use blocking;

/// `Debug` of a blocking type (with the field `inner`): the async value's,
/// named `blocking::<type>`.
macro_rules! debug_as_blocking {
    ($($ty:ident $(<$flavor:ident: $bound:path>)?),*) => {$(
        impl$(<$flavor: $bound>)? std::fmt::Debug for $ty$(<$flavor>)? {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let name = concat!("blocking::", stringify!($ty));
                f.debug_tuple(name).field(&self.inner).finish()
            }
        }
    )*};
}
pub(super) use debug_as_blocking;

/// Blocking handles, each the async handle `inner` and the client's
/// thread: the struct, `new`, `name()`, its `Debug`, and the methods
/// listed in braces ([`blocking!`]).
macro_rules! blocking_handles {
    ($($(#[$doc:meta])* pub struct $ty:ident($inner:ty) { $($methods:tt)* })*) => {$(
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $ty {
            inner: $inner,
            thread: ClientThread,
        }

        impl $ty {
            pub(crate) fn new(inner: $inner, thread: ClientThread) -> $ty {
                $ty { inner, thread }
            }

            /// The handle's name (its Redis key).
            pub fn name(&self) -> &str {
                self.inner.name()
            }

            blocking! { $($methods)* }
        }

        debug_as_blocking!($ty);
    )*};
}
pub(super) use blocking_handles;
