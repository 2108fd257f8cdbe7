//! The blocking client's thread: a current-thread tokio runtime that runs the
//! async client's background work and every blocking call, and ends once the
//! client and everything made from it is gone.

use crate::api::client::{LockClient, LockClientBuilder};
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

    /// Runs `future` on the client's thread and waits for its output.
    pub(crate) fn run<F>(&self, future: F) -> Result<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn(future).recv().map_err(|_| gone())
    }

    /// Runs a fallible operation on the client's thread.
    pub(crate) fn call<T, F>(&self, future: F) -> Result<T>
    where
        F: Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        self.run(future)?
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
