//! `lockctl status NAME`: what a lock's key holds, read by the runtime's
//! inspection ([`LockClient::inspect`]), which understands Redisson's
//! layouts:
//!
//! - reentrant lock: a hash `<owner>` → hold count;
//! - read/write lock: a hash with `mode` = `read` | `write`, readers as
//!   `<owner>` → count, the writer as `<owner>:write` → count;
//! - the fencing token counter `redisson_lock_token:{NAME}`;
//!
//! and, for a key holding an integer, a semaphore or a count-down latch
//! ([`counted`]): a leased semaphore with its permits taken and their
//! expiry, or a bare count.

use crate::connect;
use crate::counted;
use crate::duration;
use crate::exit::{self, Failure};
use crate::identity::{self, Identity};
use crate::main_args::Globals;
use crate::output::{self, Format};
use redis::aio::MultiplexedConnection;
use redlua_runtime::{self as runtime, LockClient, LockInfo};
use serde_json::{Value, json};
use std::time::Duration;

/// What a lock's key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// No key: nobody holds the lock.
    Free,
    /// A lock, held.
    Held(Held),
    /// The key holds something else.
    NotALock {
        /// Redis's `TYPE` of the key.
        redis_type: String,
        /// Why it is not a lock.
        reason: String,
    },
}

/// A held lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Which kind of lock.
    pub kind: LockKind,
    /// Who holds it, in the order Redis listed them.
    pub holders: Vec<Holder>,
    /// The remaining lease; `None` when the key has no expiry.
    pub ttl: Option<Duration>,
    /// The fencing token of the latest holder, if the counter exists.
    pub token: Option<u64>,
    /// A fair lock's queue: the owners waiting, first in line first.
    pub waiting: Vec<String>,
}

/// The kinds of lock lockctl recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// Redisson's `RLock` layout.
    Reentrant,
    /// Redisson's `RReadWriteLock` layout, in this mode.
    ReadWrite(Mode),
}

/// The mode of a read/write lock, or the role of a holder in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Shared.
    Read,
    /// Exclusive.
    Write,
}

impl Mode {
    /// `read` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::Write => "write",
        }
    }
}

/// One owner's holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// `<client-uuid>:<owner-id>`.
    pub owner: String,
    /// How many times it holds the lock.
    pub count: u64,
    /// Its role in a read/write lock; `None` in a reentrant lock.
    pub mode: Option<Mode>,
    /// Who it is, if it said so ([`identity`]).
    pub identity: Option<Identity>,
}

/// `lockctl status`: prints the state; exit code 0 held, 1 free, 3 not a
/// lock, 2 for an invalid name.
pub async fn run(globals: &Globals, name: &str) -> Result<u8, Failure> {
    let format = globals.format;
    let url = connect::url(globals.url.as_deref())?;
    let client = connect::lock_client(url, None).await?;
    let mut con = connect::redis_connection(url).await?;
    let state = read(&client, &mut con, name).await?;
    if let State::NotALock { redis_type, .. } = &state
        && redis_type == "string"
        && let Some(counted) = counted::read(&client, &mut con, name).await?
    {
        match format {
            Format::Human => output::out(&counted::describe(name, &counted)),
            Format::Json => output::json(&counted::json(name, &counted)),
        }
        return Ok(exit::OK);
    }
    match format {
        Format::Human => output::out(&describe(name, &state)),
        Format::Json => output::json(&state_json(name, &state)),
    }
    Ok(match state {
        State::Held(_) => exit::OK,
        State::Free => exit::NO,
        State::NotALock { .. } => exit::NOT_A_LOCK,
    })
}

/// Reads the state of lock `name` through the runtime's
/// [`LockClient::inspect`] (one read-only script: the key's type, fields,
/// TTL and fencing token at one instant), then its holders' identities
/// (one more round trip, on `con`).
///
/// # Cancellation
///
/// Only reads: dropping the future changes nothing.
pub async fn read(
    client: &LockClient,
    con: &mut MultiplexedConnection,
    name: &str,
) -> Result<State, Failure> {
    let info = client.inspect(name).await.map_err(Failure::lock)?;
    let mut state = from_info(info);
    add_identities(con, name, &mut state).await?;
    Ok(state)
}

/// Fills in the identities of a held lock's holders.
pub async fn add_identities(
    con: &mut MultiplexedConnection,
    name: &str,
    state: &mut State,
) -> Result<(), Failure> {
    let State::Held(held) = state else {
        return Ok(());
    };
    let owners: Vec<&str> = held.holders.iter().map(|h| h.owner.as_str()).collect();
    let identities = identity::read(con, name, &owners).await?;
    for (holder, identity) in held.holders.iter_mut().zip(identities) {
        holder.identity = identity;
    }
    Ok(())
}

/// The state lockctl shows, from what the runtime read.
pub fn from_info(info: LockInfo) -> State {
    let kind = match info.kind {
        runtime::LockKind::Free => return State::Free,
        runtime::LockKind::NotALock { key_type, reason } => {
            return State::NotALock {
                redis_type: key_type,
                reason,
            };
        }
        runtime::LockKind::Reentrant => LockKind::Reentrant,
        runtime::LockKind::ReadWrite { mode } => LockKind::ReadWrite(mode_of(mode)),
        _ => {
            return State::NotALock {
                redis_type: "hash".to_string(),
                reason: "a layout this lockctl does not know".to_string(),
            };
        }
    };
    let holders = info
        .holders
        .into_iter()
        .map(|h| Holder {
            owner: h.owner,
            count: h.count,
            mode: match h.side {
                runtime::Side::Exclusive => None,
                runtime::Side::Read => Some(Mode::Read),
                runtime::Side::Write => Some(Mode::Write),
            },
            identity: None,
        })
        .collect();
    State::Held(Held {
        kind,
        holders,
        ttl: info.ttl,
        token: info.token,
        waiting: info.waiting,
    })
}

fn mode_of(mode: runtime::Mode) -> Mode {
    match mode {
        runtime::Mode::Read => Mode::Read,
        runtime::Mode::Write => Mode::Write,
    }
}

/// The kind as shown to people.
pub fn kind_text(kind: LockKind) -> String {
    match kind {
        LockKind::Reentrant => "lock".to_string(),
        LockKind::ReadWrite(mode) => format!("read/write lock, mode {}", mode.as_str()),
    }
}

/// One holder as shown to people: `uuid:7 (2 holds)`, `uuid:7 (read, 1 hold)`.
pub fn holder_text(holder: &Holder) -> String {
    let holds = if holder.count == 1 {
        "1 hold".to_string()
    } else {
        format!("{} holds", holder.count)
    };
    let text = match holder.mode {
        None => format!("{} ({holds})", holder.owner),
        Some(mode) => format!("{} ({}, {holds})", holder.owner, mode.as_str()),
    };
    match &holder.identity {
        None => text,
        Some(identity) => format!("{text}: {}", identity::text(identity)),
    }
}

/// The state as shown to people.
pub fn describe(name: &str, state: &State) -> String {
    match state {
        State::Free => format!("lock `{name}`: free"),
        State::NotALock { reason, .. } => format!("key `{name}` is not a lock: {reason}"),
        State::Held(held) => {
            let ttl = match held.ttl {
                Some(ttl) => duration::show(ttl),
                None => "none (the key has no expiry)".to_string(),
            };
            let mut text = format!(
                "lock `{name}`: held\n  kind:    {}\n  ttl:     {ttl}",
                kind_text(held.kind)
            );
            if let Some(token) = held.token {
                text.push_str(&format!("\n  token:   {token}"));
            }
            for (i, holder) in held.holders.iter().enumerate() {
                let label = if i == 0 { "holders:" } else { "" };
                text.push_str(&format!("\n  {label:<8} {}", holder_text(holder)));
            }
            for (i, owner) in held.waiting.iter().enumerate() {
                let label = if i == 0 { "queue:" } else { "" };
                text.push_str(&format!("\n  {label:<8} {owner}"));
            }
            text
        }
    }
}

/// The kind as JSON: `lock` or `read_write`.
pub fn kind_json(kind: LockKind) -> (&'static str, Option<&'static str>) {
    match kind {
        LockKind::Reentrant => ("lock", None),
        LockKind::ReadWrite(mode) => ("read_write", Some(mode.as_str())),
    }
}

/// The holders as JSON.
pub fn holders_json(holders: &[Holder]) -> Value {
    holders
        .iter()
        .map(|h| {
            json!({
                "owner": h.owner,
                "count": h.count,
                "mode": h.mode.map(Mode::as_str),
                "identity": h.identity.as_ref().map(identity::json),
            })
        })
        .collect()
}

/// The state as JSON.
pub fn state_json(name: &str, state: &State) -> Value {
    match state {
        State::Free => json!({
            "name": name, "state": "free", "kind": null, "mode": null,
            "holders": [], "ttl_ms": null, "token": null,
        }),
        State::NotALock { redis_type, reason } => json!({
            "name": name, "state": "not_a_lock", "type": redis_type, "reason": reason,
        }),
        State::Held(held) => {
            let (kind, mode) = kind_json(held.kind);
            json!({
                "name": name,
                "state": "held",
                "kind": kind,
                "mode": mode,
                "holders": holders_json(&held.holders),
                "ttl_ms": held.ttl.map(duration::millis),
                "token": held.token,
                "waiting": held.waiting,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(owner: &str, count: u64, mode: Option<Mode>) -> Holder {
        Holder {
            owner: owner.to_string(),
            count,
            mode,
            identity: None,
        }
    }

    #[test]
    fn shows_holders_and_kinds() {
        assert_eq!(holder_text(&holder("u:1", 2, None)), "u:1 (2 holds)");
        assert_eq!(
            holder_text(&holder("u:1", 1, Some(Mode::Write))),
            "u:1 (write, 1 hold)"
        );
        assert_eq!(kind_text(LockKind::Reentrant), "lock");
        assert_eq!(
            kind_text(LockKind::ReadWrite(Mode::Read)),
            "read/write lock, mode read"
        );
        let held = State::Held(Held {
            kind: LockKind::Reentrant,
            holders: vec![holder("u:1", 1, None)],
            ttl: Some(Duration::from_millis(1500)),
            token: Some(42),
            waiting: vec!["u:2".into(), "u:3".into()],
        });
        let text = describe("a", &held);
        assert!(text.contains("token:   42"), "{text}");
        assert!(text.ends_with("\n  queue:   u:2\n           u:3"), "{text}");
        assert_eq!(state_json("a", &held)["token"], 42);
        assert_eq!(state_json("a", &held)["waiting"][1], "u:3");
        assert_eq!(describe("a", &State::Free), "lock `a`: free");
    }
}
