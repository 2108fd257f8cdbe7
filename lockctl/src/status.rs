//! `lockctl status NAME`: what a lock's key holds, read with plain
//! commands (`TYPE`, `HGETALL`, `PTTL`) and understood in Redisson's layouts:
//!
//! - reentrant lock: a hash `<owner>` → hold count;
//! - read/write lock: a hash with `mode` = `read` | `write`, readers as
//!   `<owner>` → count, the writer as `<owner>:write` → count.

use crate::connect;
use crate::duration;
use crate::exit::{self, Failure};
use crate::output::{self, Format};
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
}

/// `lockctl status`: prints the state; exit code 0 held, 1 free, 3 not a
/// lock.
pub async fn run(url: Option<&str>, name: &str, format: Format) -> Result<u8, Failure> {
    let url = connect::url(url)?;
    let mut con = connect::raw(url).await?;
    let state = read(&mut con, name).await?;
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

/// Reads the state of lock `name`.
///
/// # Cancellation
///
/// Only reads: dropping the future changes nothing.
pub async fn read(
    con: &mut redis::aio::MultiplexedConnection,
    name: &str,
) -> Result<State, Failure> {
    // The key may change type between TYPE and HGETALL: look again.
    for _ in 0..3 {
        let redis_type: String = redis::cmd("TYPE")
            .arg(name)
            .query_async(con)
            .await
            .map_err(Failure::redis)?;
        match redis_type.as_str() {
            "none" => return Ok(State::Free),
            "hash" => {}
            _ => {
                return Ok(State::NotALock {
                    reason: format!("it holds a {redis_type}, not a hash"),
                    redis_type,
                });
            }
        }
        let reply: redis::RedisResult<(Fields, i64)> = redis::pipe()
            .atomic()
            .cmd("HGETALL")
            .arg(name)
            .cmd("PTTL")
            .arg(name)
            .query_async(con)
            .await;
        match reply {
            Ok((fields, pttl)) => return Ok(parse(&fields, pttl)),
            Err(e) if e.code() == Some("WRONGTYPE") || e.to_string().contains("WRONGTYPE") => {
                continue;
            }
            Err(e) => return Err(Failure::redis(e)),
        }
    }
    Err(Failure::failed(format!(
        "key `{name}` keeps changing type; try again"
    )))
}

/// A hash's fields and values, as `HGETALL` gives them.
type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// Understands a hash's fields and its `PTTL`.
pub fn parse(fields: &[(Vec<u8>, Vec<u8>)], pttl: i64) -> State {
    if fields.is_empty() || pttl == -2 {
        return State::Free;
    }
    let not_a_lock = |reason: String| State::NotALock {
        redis_type: "hash".to_string(),
        reason,
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let mode = match fields.iter().find(|(field, _)| field == b"mode") {
        None => None,
        Some((_, value)) if value == b"read" => Some(Mode::Read),
        Some((_, value)) if value == b"write" => Some(Mode::Write),
        Some((_, value)) => {
            return not_a_lock(format!(
                "its field `mode` is `{}`, not `read` or `write`",
                text(value)
            ));
        }
    };
    let mut holders = Vec::new();
    for (field, value) in fields {
        if field == b"mode" && mode.is_some() {
            continue;
        }
        let field = text(field);
        let Some(count) = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            return not_a_lock(format!(
                "its field `{field}` holds `{}`, not a hold count",
                text(value)
            ));
        };
        let (owner, role) = match mode {
            None => (field, None),
            Some(_) => match field.strip_suffix(":write") {
                Some(owner) => (owner.to_string(), Some(Mode::Write)),
                None => (field, Some(Mode::Read)),
            },
        };
        holders.push(Holder {
            owner,
            count,
            mode: role,
        });
    }
    let ttl = u64::try_from(pttl).ok().map(Duration::from_millis);
    State::Held(Held {
        kind: match mode {
            None => LockKind::Reentrant,
            Some(mode) => LockKind::ReadWrite(mode),
        },
        holders,
        ttl,
    })
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
    match holder.mode {
        None => format!("{} ({holds})", holder.owner),
        Some(mode) => format!("{} ({}, {holds})", holder.owner, mode.as_str()),
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
            for (i, holder) in held.holders.iter().enumerate() {
                let label = if i == 0 { "holders:" } else { "" };
                text.push_str(&format!("\n  {label:<8} {}", holder_text(holder)));
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
        .map(|h| json!({ "owner": h.owner, "count": h.count, "mode": h.mode.map(Mode::as_str) }))
        .collect()
}

/// The state as JSON.
pub fn state_json(name: &str, state: &State) -> Value {
    match state {
        State::Free => json!({
            "name": name, "state": "free", "kind": null, "mode": null,
            "holders": [], "ttl_ms": null,
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
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(pairs: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        pairs
            .iter()
            .map(|(f, v)| (f.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn reads_a_reentrant_lock() {
        let state = parse(&hash(&[("u:1", "2")]), 1500);
        let State::Held(held) = state else {
            panic!("{state:?}")
        };
        assert_eq!(held.kind, LockKind::Reentrant);
        assert_eq!(held.ttl, Some(Duration::from_millis(1500)));
        assert_eq!(holder_text(&held.holders[0]), "u:1 (2 holds)");
    }

    #[test]
    fn reads_a_read_write_lock() {
        let fields = hash(&[("mode", "write"), ("u:1:write", "1"), ("u:1", "3")]);
        let State::Held(held) = parse(&fields, -1) else {
            panic!()
        };
        assert_eq!(held.kind, LockKind::ReadWrite(Mode::Write));
        assert_eq!(held.ttl, None);
        let texts: Vec<String> = held.holders.iter().map(holder_text).collect();
        assert_eq!(texts, ["u:1 (write, 1 hold)", "u:1 (read, 3 holds)"]);
    }

    #[test]
    fn refuses_hashes_that_are_no_locks() {
        for fields in [
            hash(&[("name", "ann")]),
            hash(&[("mode", "x"), ("u:1", "1")]),
        ] {
            let state = parse(&fields, 100);
            assert!(matches!(state, State::NotALock { .. }), "{state:?}");
        }
        assert_eq!(parse(&[], -2), State::Free);
    }
}
