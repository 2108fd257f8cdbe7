//! `lockctl unlock --force NAME`: breaks a lock whoever holds it, waking
//! its waiters, and says what was broken. With `--permit ID`, gives back
//! one permit of the leased semaphore NAME instead.

use crate::connect;
use crate::counted;
use crate::exit::{self, Failure};
use crate::main_args::Globals;
use crate::output::{self, Format};
use crate::status::{self, LockKind, Mode, State};
use serde_json::json;

/// Breaks lock `name`; exit code 0 when a lock was broken, 1 when there
/// was none.
pub async fn run(globals: &Globals, name: &str, permit: Option<&str>) -> Result<u8, Failure> {
    let url = connect::url(globals.url.as_deref())?;
    let client = connect::lock_client(url, globals.watchdog_timeout).await?;
    if let Some(id) = permit {
        let released = counted::force_release(&client, name, id).await?;
        match globals.format {
            Format::Human => output::out(&if released {
                format!(
                    "gave back permit {id} of semaphore `{name}`; its holder finds it gone \
                     at its next renewal, and waiters were woken"
                )
            } else {
                format!("permit {id} of semaphore `{name}` is not taken; nothing to give back")
            }),
            Format::Json => output::json(&json!({
                "name": name,
                "permit": id,
                "broken": released,
            })),
        }
        return Ok(if released { exit::OK } else { exit::NO });
    }
    let mut con = connect::redis_connection(url).await?;
    let held = match status::read(&client, &mut con, name).await? {
        State::Free => {
            report(globals.format, name, None, false);
            return Ok(exit::NO);
        }
        State::NotALock { reason, .. } => {
            return Err(Failure::new(
                exit::NOT_A_LOCK,
                format!("key `{name}` is not a lock ({reason}); it was left alone"),
            ));
        }
        State::Held(held) => held,
    };
    let broken = match held.kind {
        // A fair lock with a queue: its head is woken on its own channel.
        LockKind::Reentrant if !held.waiting.is_empty() => {
            client.fair_lock(name).force_unlock().await
        }
        LockKind::Reentrant => client.lock(name).force_unlock().await,
        // Broken through the side it is held in: a lock whose mode changed
        // meanwhile is left alone (and reported as not broken).
        LockKind::ReadWrite(Mode::Read) => client.read_write_lock(name).read().force_unlock().await,
        LockKind::ReadWrite(Mode::Write) => {
            client.read_write_lock(name).write().force_unlock().await
        }
    }
    .map_err(Failure::lock)?;
    report(globals.format, name, Some(&held), broken);
    Ok(if broken { exit::OK } else { exit::NO })
}

/// Prints the outcome.
fn report(format: Format, name: &str, held: Option<&status::Held>, broken: bool) {
    match format {
        Format::Human => {
            let text = match held {
                Some(held) if broken => {
                    let holders: Vec<String> =
                        held.holders.iter().map(status::holder_text).collect();
                    let what = match held.kind {
                        LockKind::Reentrant => format!("lock `{name}`"),
                        LockKind::ReadWrite(mode) => {
                            format!("read/write lock `{name}` (mode {})", mode.as_str())
                        }
                    };
                    format!(
                        "broke {what}, held by {}; its waiters were woken",
                        holders.join(", ")
                    )
                }
                Some(_) => format!("lock `{name}` was released meanwhile; nothing to break"),
                None => format!("lock `{name}` is not held; nothing to break"),
            };
            output::out(&text);
        }
        Format::Json => {
            let (kind, mode) = held.map_or((None, None), |h| {
                let (kind, mode) = status::kind_json(h.kind);
                (Some(kind), mode)
            });
            output::json(&json!({
                "name": name,
                "broken": broken,
                "kind": kind,
                "mode": mode,
                "holders": held.map_or(json!([]), |h| status::holders_json(&h.holders)),
            }));
        }
    }
}
