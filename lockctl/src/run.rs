//! `lockctl run NAME [--read|--write|--fair] [--wait D] [--lease D] [--on-lost A] [--grace D] -- CMD ...`:
//! a distributed `flock(1)`.
//!
//! Acquires the lock (the watchdog keeps it unless `--lease`), runs CMD
//! with lockctl's stdin, stdout and stderr and the lock's name, owner and
//! fencing token in its environment ([`child`]), forwards SIGINT, SIGTERM,
//! SIGHUP and SIGQUIT to it (not SIGINT and SIGQUIT typed on the terminal,
//! which reach it directly), releases the lock when it ends, and exits with
//! its exit code (128 + N when signal N killed it).
//!
//! If the lock is lost while CMD runs, CMD is stopped as `--on-lost` says
//! (SIGTERM, then SIGKILL after `--grace`; SIGKILL; or nothing), and
//! lockctl exits with [`exit::LOST`] once it has ended, whatever CMD's own
//! exit code.
//!
//! lockctl says nothing on success: CMD owns the output. Its notes go to
//! stderr (as JSON objects with `--json`).

use crate::child;
use crate::cli::{OnLost, RunArgs};
use crate::connect;
use crate::counted;
use crate::duration;
use crate::exit::{self, Failure};
use crate::holding::Holding;
use crate::locks::{self, Acquired, Kind};
use crate::main_args::Globals;
use crate::output;
use crate::signals::{self, Signals};
use redlua_runtime::Error;
use serde_json::json;
use std::io::ErrorKind;
use std::time::{Duration, Instant};

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
    let interrupted = |signal: i32| {
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
        Ok(exit::of_signal(signal))
    };
    if let Some(permits) = args.permits {
        let guard = match counted::acquire_permit(
            &client,
            &mut con.clone(),
            &args.name,
            permits,
            args.acquire,
            args.lease,
            &mut signals,
        )
        .await?
        {
            counted::Acquired::Held(guard) => guard,
            counted::Acquired::TimedOut(wait) => {
                return Err(counted::timed_out(&args.name, wait));
            }
            counted::Acquired::Interrupted(signal) => return interrupted(signal),
        };
        let holding = Holding::Permit {
            name: args.name.clone(),
            guard,
        };
        return held(globals, args, holding, &mut signals).await;
    }
    let lock = locks::handle(&client, &args.name, kind, args.acquire.prefer_writers)?;
    let guard = match locks::acquire(&lock, args.acquire, args.lease, &mut signals).await? {
        Acquired::Held(guard) => guard,
        Acquired::TimedOut(wait) => return Err(locks::timed_out(&args.name, kind, wait)),
        Acquired::Interrupted(signal) => return interrupted(signal),
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
    let outcome = held(globals, args, Holding::Lock(guard), &mut signals).await;
    announcer.stop().await;
    outcome
}

/// Runs the command while holding `guard`; releases it.
async fn held(
    globals: &Globals,
    args: &RunArgs,
    guard: Holding,
    signals: &mut Signals,
) -> Result<u8, Failure> {
    let (program, program_args) = args
        .command
        .split_first()
        .ok_or_else(|| Failure::usage("no command given"))?;
    let shown = program.to_string_lossy().into_owned();
    let spawned = child::command(program, program_args, &guard).spawn();
    let (mut child, target) = match spawned {
        Ok(started) => started,
        Err(error) => {
            let code = match error.kind() {
                ErrorKind::NotFound => exit::NOT_FOUND,
                _ => exit::CANNOT_EXECUTE,
            };
            if let Err(release) = guard.release().await {
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

    let mut lost = false;
    // When CMD (and its group) gets SIGKILL, after SIGTERM on a lost lock.
    let mut kill_at: Option<Instant> = None;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            signal = signals.next() => {
                target.forward(signal);
            }
            () = guard.lost(), if !lost => {
                lost = true;
                let action = match args.on_lost {
                    OnLost::Term => {
                        kill_at = Some(Instant::now() + args.grace);
                        target.send(libc::SIGTERM);
                        format!(
                            "sending it SIGTERM, and SIGKILL if it runs {} more",
                            duration::show(args.grace)
                        )
                    }
                    OnLost::Kill => {
                        target.send(libc::SIGKILL);
                        "sending it SIGKILL".to_string()
                    }
                    OnLost::Ignore => "letting it run (--on-lost ignore)".to_string(),
                };
                note(
                    globals,
                    "lost",
                    &format!(
                        "{} `{}` was lost while `{shown}` ran (lease expired, or it \
                         was deleted or broken); {action}",
                        guard.what(),
                        args.name
                    ),
                    json!({
                        "name": args.name,
                        "owner": guard.owner(),
                        "on_lost": on_lost_name(args.on_lost),
                    }),
                );
            }
            () = sleep_until(kill_at), if kill_at.is_some() => {
                kill_at = None;
                killed(globals, args, &format!("`{shown}`"));
                target.send(libc::SIGKILL);
            }
        }
    };
    // What CMD started in its group may outlive it: on a lost lock it gets
    // the rest of the grace, then SIGKILL.
    if let Some(deadline) = kill_at {
        while target.group_left() && Instant::now() < deadline {
            tokio::time::sleep(GROUP_POLL).await;
        }
        if target.send_to_group_left(libc::SIGKILL) {
            killed(globals, args, &format!("what `{shown}` started"));
        }
    }
    let status = status.map_err(|e| Failure::failed(format!("cannot wait for `{shown}`: {e}")));

    let what = guard.what();
    let released = guard.release().await;
    let status = status?;
    if lost {
        let code = exit::of_status(status);
        note(
            globals,
            "ended",
            &format!(
                "`{shown}` ended with exit code {code} after {what} `{}` was lost",
                args.name
            ),
            json!({ "name": args.name, "exit_code": code }),
        );
        return Ok(exit::LOST);
    }
    match released {
        Ok(()) => Ok(exit::of_status(status)),
        Err(Error::LockLost { .. }) => {
            note(
                globals,
                "lost",
                &format!(
                    "{what} `{}` was lost before `{shown}` ended (lease expired, or it \
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

/// How often lockctl looks whether CMD's group still has a process, once
/// CMD ended within the grace of a lost lock.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// Completes at `deadline`; never without one.
///
/// # Cancellation
///
/// Only waits: dropping the future changes nothing.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// The note that `what` gets SIGKILL, the grace after SIGTERM being over.
fn killed(globals: &Globals, args: &RunArgs, what: &str) {
    note(
        globals,
        "killed",
        &format!(
            "{what} did not end within {} of SIGTERM; sending it SIGKILL",
            duration::show(args.grace)
        ),
        json!({ "name": args.name, "grace_ms": duration::millis(args.grace) }),
    );
}

/// `--on-lost`'s value, as written on the command line.
fn on_lost_name(on_lost: OnLost) -> &'static str {
    match on_lost {
        OnLost::Term => "term",
        OnLost::Kill => "kill",
        OnLost::Ignore => "ignore",
    }
}

/// A note on stderr.
fn note(globals: &Globals, event: &str, text: &str, fields: serde_json::Value) {
    output::note(globals.format, event, text, fields);
}
