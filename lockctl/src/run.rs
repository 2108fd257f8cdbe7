//! `lockctl run NAME [--read|--write|--fair] [--wait D] [--lease D] -- CMD ...`:
//! a distributed `flock(1)`.
//!
//! Acquires the lock (the watchdog keeps it unless `--lease`), runs CMD
//! with lockctl's stdin, stdout and stderr (and process group), forwards
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT to it (not SIGINT and SIGQUIT typed
//! on the terminal, which reach it directly), releases the lock when it ends, and exits with
//! its exit code (128 + N when signal N killed it). If the lock is lost
//! while CMD runs, CMD gets SIGTERM and lockctl exits with
//! [`exit::LOST`] once it has ended.
//!
//! lockctl says nothing on success: CMD owns the output. Its notes go to
//! stderr (as JSON objects with `--json`).

use crate::cli::RunArgs;
use crate::connect;
use crate::exit::{self, Failure};
use crate::locks::{self, Acquired, Kind};
use crate::main_args::Globals;
use crate::output;
use crate::signals::{self, Signals};
use redlua_runtime::{Error, LockGuard};
use serde_json::json;
use std::io::ErrorKind;

/// Runs the command under the lock; the exit code.
pub async fn run(globals: &Globals, args: &RunArgs) -> Result<u8, Failure> {
    let kind = Kind::of(args.acquire.mode);
    let url = connect::url(globals.url.as_deref())?;
    let Some(program) = args.command.first() else {
        return Err(Failure::usage(
            "no command given: lockctl run NAME -- CMD [ARGS...]",
        ));
    };
    let shown = program.to_string_lossy().into_owned();
    let mut signals = Signals::listen()?;
    let client = connect::lock_client(url, globals.watchdog_timeout).await?;
    let con = connect::redis_connection(url).await?;
    let lock = locks::handle(&client, &args.name, kind, args.acquire.prefer_writers)?;
    let guard = match locks::acquire(&lock, args.acquire, args.lease, &mut signals).await? {
        Acquired::Held(guard) => guard,
        Acquired::TimedOut(wait) => return Err(locks::timed_out(&args.name, kind, wait)),
        Acquired::Interrupted(signal) => {
            note(
                globals,
                "interrupted",
                &format!(
                    "{} while waiting for `{}`; nothing is held, `{shown}` was not run",
                    signals::name(signal),
                    args.name
                ),
                json!({ "name": args.name, "signal": signals::name(signal) }),
            );
            return Ok(exit::of_signal(signal));
        }
    };
    let described: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let announcer = locks::announce(
        con,
        &client,
        &guard,
        &format!("lockctl run -- {}", described.join(" ")),
    )
    .await;
    let outcome = held(globals, args, guard, &mut signals).await;
    announcer.stop().await;
    outcome
}

/// Runs the command while holding `guard`; releases it.
async fn held(
    globals: &Globals,
    args: &RunArgs,
    guard: LockGuard,
    signals: &mut Signals,
) -> Result<u8, Failure> {
    let (program, program_args) = args
        .command
        .split_first()
        .ok_or_else(|| Failure::usage("no command given"))?;
    let shown = program.to_string_lossy().into_owned();
    let spawned = tokio::process::Command::new(program)
        .args(program_args)
        .kill_on_drop(false)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            let code = match error.kind() {
                ErrorKind::NotFound => exit::NOT_FOUND,
                _ => exit::CANNOT_EXECUTE,
            };
            if let Err(release) = guard.unlock().await {
                note(
                    globals,
                    "release_failed",
                    &format!("could not release `{}`: {release}", args.name),
                    json!({ "name": args.name }),
                );
            }
            return Err(Failure::new(code, format!("cannot run `{shown}`: {error}")));
        }
    };
    // While the child runs its pid stays reserved (it is not reaped before
    // `wait` returns), so signals cannot reach another process.
    let pid = child.id();

    let mut lost = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            signal = signals.next() => {
                if let Some(pid) = pid
                    && !signals::sent_by_terminal_to_child(signal)
                {
                    signals::send(pid, signal);
                }
            }
            () = guard.lost(), if !lost => {
                lost = true;
                note(
                    globals,
                    "lost",
                    &format!(
                        "lock `{}` was lost while `{shown}` ran (lease expired, or the lock \
                         was deleted or broken); sending it SIGTERM",
                        args.name
                    ),
                    json!({ "name": args.name, "owner": guard.owner().to_string() }),
                );
                if let Some(pid) = pid {
                    signals::send(pid, libc::SIGTERM);
                }
            }
        }
    };
    let status = status.map_err(|e| Failure::failed(format!("cannot wait for `{shown}`: {e}")));

    let released = guard.unlock().await;
    let status = status?;
    if lost {
        return Ok(exit::LOST);
    }
    match released {
        Ok(()) => Ok(exit::of_status(status)),
        Err(Error::LockLost { .. }) => {
            note(
                globals,
                "lost",
                &format!(
                    "lock `{}` was lost before `{shown}` ended (lease expired, or the lock \
                     was deleted or broken)",
                    args.name
                ),
                json!({ "name": args.name }),
            );
            Ok(exit::LOST)
        }
        Err(error) => {
            // CMD ran under the lock; the lock ends with its lease.
            note(
                globals,
                "release_failed",
                &format!("could not release `{}`: {error}", args.name),
                json!({ "name": args.name }),
            );
            Ok(exit::of_status(status))
        }
    }
}

/// A note on stderr.
fn note(globals: &Globals, event: &str, text: &str, fields: serde_json::Value) {
    output::note(globals.format, event, text, fields);
}
