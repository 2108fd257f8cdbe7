//! `lockctl unlock --force NAME`: breaks a lock whoever holds it, waking
//! its waiters, and says what was broken.

use crate::connect;
use crate::exit::{self, Failure};
use crate::locks;
use crate::main_args::Globals;
use crate::output::{self, Format};
use crate::status::{self, LockKind, State};
use serde_json::json;

/// Breaks lock `name`; exit code 0 when a lock was broken, 1 when there
/// was none.
pub async fn run(globals: &Globals, name: &str) -> Result<u8, Failure> {
    let url = connect::url(globals.url.as_deref())?;
    let mut con = connect::raw(url).await?;
    let held = match status::read(&mut con, name).await? {
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
        LockKind::Reentrant => {
            let client = connect::lock_client(url, globals.watchdog_timeout).await?;
            client
                .lock(name)
                .force_unlock()
                .await
                .map_err(Failure::lock)?
        }
        LockKind::ReadWrite(_) => return Err(locks::rwlock_not_supported()),
    };
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
                    format!(
                        "broke {} `{name}`, held by {}; its waiters were woken",
                        status::kind_text(held.kind),
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
