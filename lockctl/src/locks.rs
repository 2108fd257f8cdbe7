//! Which lock of a name a command takes, and acquiring it.

use crate::cli::{AcquireArgs, ModeArgs};
use crate::duration;
use crate::exit::{self, Failure};
use crate::identity;
use crate::signals::Signals;
use redlua_runtime::{Lock, LockClient, LockGuard, flavor};
use std::time::Duration;

/// The lock of a name to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The reentrant lock (Redisson's `RLock`).
    Exclusive,
    /// The read half of the read/write lock.
    Read,
    /// The write half of the read/write lock.
    Write,
    /// The fair lock (Redisson's `RFairLock`).
    Fair,
}

impl Kind {
    /// The kind chosen by `--read` / `--write` / `--fair`.
    pub fn of(mode: ModeArgs) -> Kind {
        if mode.read {
            Kind::Read
        } else if mode.write {
            Kind::Write
        } else if mode.fair {
            Kind::Fair
        } else {
            Kind::Exclusive
        }
    }

    /// How the kind is named in output.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Exclusive => "lock",
            Kind::Read => "read lock",
            Kind::Write => "write lock",
            Kind::Fair => "fair lock",
        }
    }
}

/// A handle on one lock of a name, of the kind chosen on the command line.
pub type Handle = Lock<flavor::Any>;

/// The handle for the `kind` lock of `name`; `prefer_writers` makes a
/// read/write lock writer-preferring (a usage error for the others).
pub fn handle(
    client: &LockClient,
    name: &str,
    kind: Kind,
    prefer_writers: bool,
) -> Result<Handle, Failure> {
    let read_write = || {
        let rw = client.read_write_lock(name);
        if prefer_writers {
            rw.writer_preferring()
        } else {
            rw
        }
    };
    match kind {
        Kind::Exclusive | Kind::Fair if prefer_writers => Err(Failure::usage(
            "--prefer-writers needs --read or --write (it is about read/write locks)",
        )),
        Kind::Exclusive => Ok(client.lock(name).into_any()),
        Kind::Fair => Ok(client.fair_lock(name).into_any()),
        Kind::Read => Ok(read_write().read().into_any()),
        Kind::Write => Ok(read_write().write().into_any()),
    }
}

/// The outcome of an acquire.
#[derive(Debug)]
pub enum Acquired {
    /// The lock is held.
    Held(LockGuard),
    /// `--wait` ran out.
    TimedOut(Duration),
    /// A signal arrived while waiting; nothing is held.
    Interrupted(i32),
}

/// Acquires `lock` as `args` say, with a fixed `lease` or (when `None`) the
/// watchdog, giving up on a signal.
pub async fn acquire(
    lock: &Handle,
    args: AcquireArgs,
    lease: Option<Duration>,
    signals: &mut Signals,
) -> Result<Acquired, Failure> {
    let attempt = async {
        match (args.wait, lease) {
            (Some(wait), lease) => lock
                .try_lock_for(wait, lease)
                .await
                .map(|guard| guard.ok_or(wait)),
            (None, Some(lease)) => lock.lock_with_lease(lease).await.map(Ok),
            (None, None) => lock.lock().await.map(Ok),
        }
    };
    // Dropping the acquire on a signal leaves nothing held (the runtime
    // undoes an acquire that was under way).
    tokio::select! {
        outcome = attempt => match outcome {
            Ok(Ok(guard)) => Ok(Acquired::Held(guard)),
            Ok(Err(wait)) => Ok(Acquired::TimedOut(wait)),
            Err(error) => Err(Failure::lock(error)),
        },
        signal = signals.next() => Ok(Acquired::Interrupted(signal)),
    }
}

/// Starts announcing who holds `guard` ([`identity`]), as `program`.
pub async fn announce(
    con: redis::aio::MultiplexedConnection,
    client: &LockClient,
    guard: &LockGuard,
    program: &str,
) -> identity::Announcer<redis::aio::MultiplexedConnection> {
    let me = identity::Identity::of_this_process(program);
    identity::Announcer::start(con, client, guard, me).await
}

/// The failure for an acquire that ran out of time.
pub fn timed_out(name: &str, kind: Kind, wait: Duration) -> Failure {
    Failure::new(
        exit::TIMEOUT,
        format!(
            "timed out after {} waiting for {} `{name}`",
            duration::show(wait),
            kind.describe()
        ),
    )
}
