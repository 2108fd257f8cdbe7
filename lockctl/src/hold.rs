//! `lockctl hold NAME --for DURATION`: acquires a lock, holds it, releases
//! it, saying when (for scripts and demos). A signal (SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT) ends the hold early: the lock is released, and lockctl
//! exits with 128 + the signal.

use crate::cli::HoldArgs;
use crate::connect;
use crate::duration;
use crate::exit::{self, Failure};
use crate::locks::{self, Acquired, Kind};
use crate::main_args::Globals;
use crate::output::{self, Format};
use crate::signals::{self, Signals};
use redlua_runtime::{Error, LockGuard};
use serde_json::json;
use std::time::Instant;

/// Holds the lock; the exit code.
pub async fn run(globals: &Globals, args: &HoldArgs) -> Result<u8, Failure> {
    let kind = Kind::of(args.acquire.mode);
    let url = connect::url(globals.url.as_deref())?;
    let mut signals = Signals::listen()?;
    let client = connect::lock_client(url, globals.watchdog_timeout).await?;
    let con = connect::redis_connection(url).await?;
    let lock = locks::handle(&client, &args.name, kind, args.acquire.prefer_writers)?;
    let guard = match locks::acquire(&lock, args.acquire, None, &mut signals).await? {
        Acquired::Held(guard) => guard,
        Acquired::TimedOut(wait) => return Err(locks::timed_out(&args.name, kind, wait)),
        Acquired::Interrupted(signal) => {
            output::err(&format!(
                "lockctl: {} while waiting for `{}`; nothing is held",
                signals::name(signal),
                args.name
            ));
            return Ok(exit::of_signal(signal));
        }
    };
    let program = format!("lockctl hold --for {}", duration::show(args.hold_for));
    let announcer = locks::announce(con, &client, &guard, &program).await;
    let outcome = held(globals, args, kind, guard, &mut signals).await;
    announcer.stop().await;
    outcome
}

/// Holds the acquired lock for its time, or until a signal or its loss;
/// releases it.
async fn held(
    globals: &Globals,
    args: &HoldArgs,
    kind: Kind,
    guard: LockGuard,
    signals: &mut Signals,
) -> Result<u8, Failure> {
    let since = Instant::now();
    match globals.format {
        Format::Human => output::out(&format!(
            "acquired {} `{}` as {}; holding it for {}",
            kind.describe(),
            args.name,
            guard.owner(),
            duration::show(args.hold_for)
        )),
        Format::Json => output::json(&json!({
            "event": "acquired",
            "name": args.name,
            "kind": kind.describe(),
            "owner": guard.owner().to_string(),
            "for_ms": duration::millis(args.hold_for),
        })),
    }
    let interrupted = tokio::select! {
        () = tokio::time::sleep(args.hold_for) => None,
        () = guard.lost() => {
            lost(globals.format, &guard, since);
            return Ok(exit::LOST);
        }
        signal = signals.next() => Some(signal),
    };
    let owner = guard.owner().to_string();
    match guard.unlock().await {
        Ok(()) => {}
        Err(Error::LockLost { .. }) => {
            output::err(&format!(
                "lockctl: lock `{}` was lost before it was released",
                args.name
            ));
            return Ok(exit::LOST);
        }
        Err(error) => return Err(Failure::lock(error)),
    }
    let (text, code) = match interrupted {
        None => (
            format!("released {} `{}`", kind.describe(), args.name),
            exit::OK,
        ),
        Some(signal) => (
            format!(
                "released {} `{}` early ({})",
                kind.describe(),
                args.name,
                signals::name(signal)
            ),
            exit::of_signal(signal),
        ),
    };
    match globals.format {
        Format::Human => output::out(&format!("{text} after {}", duration::show(since.elapsed()))),
        Format::Json => output::json(&json!({
            "event": "released",
            "name": args.name,
            "owner": owner,
            "held_ms": duration::millis(since.elapsed()),
            "signal": interrupted.map(signals::name),
        })),
    }
    Ok(code)
}

/// Reports a lost lock (stderr for people, an event on stdout for
/// machines).
fn lost(format: Format, guard: &LockGuard, since: Instant) {
    let text = format!(
        "lock `{}` was lost after {} (lease expired, or the lock was deleted or broken)",
        guard.name(),
        duration::show(since.elapsed())
    );
    match format {
        Format::Human => output::err(&format!("lockctl: {text}")),
        Format::Json => output::json(&json!({
            "event": "lost",
            "name": guard.name(),
            "owner": guard.owner().to_string(),
            "held_ms": duration::millis(since.elapsed()),
            "message": text,
        })),
    }
}
