//! Holder identity: who holds a lock, for operators.
//!
//! A holder may describe itself (host, process id, program, since when) in a
//! small hash of its own next to the lock, `{NAME}:redlua_holder:<owner>`
//! (`NAME:redlua_holder:<owner>` when NAME has braces of its own), under the
//! lock's hash tag and with the lock's expiry: it never outlives the lock,
//! and is deleted when the holder releases. `lockctl run` and `hold` write
//! it; `status` and `ls` show it. Holders that write none (Java services,
//! redlua library users) show as their owner alone.

use crate::exit::Failure;
use redis::aio::MultiplexedConnection;
use redlua_macros::redis_script;
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};

/// Writes, refreshes or removes one holder's identity (see the script).
#[redis_script("scripts/holder_identity.lua", returns = i64, crate = redlua_runtime)]
struct HolderIdentity<'a> {
    /// The lock.
    #[key]
    lock: &'a str,
    /// The identity key.
    #[key]
    identity: &'a str,
    /// The holder's field in the lock.
    #[arg]
    field: &'a str,
    /// The host name.
    #[arg]
    host: &'a str,
    /// The process id.
    #[arg]
    pid: u32,
    /// The program.
    #[arg]
    program: &'a str,
    /// Since when it holds the lock (RFC 3339, UTC).
    #[arg]
    since: &'a str,
}

/// The longest program description stored, in bytes.
const MAX_PROGRAM: usize = 200;

/// Who holds a lock, as the holder said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The host it runs on.
    pub host: String,
    /// Its process id.
    pub pid: String,
    /// The program (for lockctl: `lockctl run -- CMD ARGS`).
    pub program: String,
    /// Since when it holds the lock (RFC 3339, UTC).
    pub since: String,
}

impl Identity {
    /// The identity of this process, holding a lock from now on.
    pub fn of_this_process(program: &str) -> Identity {
        Identity {
            host: host_name(),
            pid: std::process::id().to_string(),
            program: truncated(program, MAX_PROGRAM),
            since: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        }
    }

    /// As shown to people: `host web-1, pid 4242, program `lockctl hold`,
    /// since 2026-11-23T10:21:03Z`.
    pub fn text(&self) -> String {
        format!(
            "host {}, pid {}, program `{}`, since {}",
            self.host, self.pid, self.program, self.since
        )
    }

    /// As JSON.
    pub fn json(&self) -> Value {
        let pid = self
            .pid
            .parse::<u64>()
            .map_or_else(|_| Value::from(self.pid.as_str()), Value::from);
        json!({ "host": self.host, "pid": pid, "program": self.program, "since": self.since })
    }
}

/// The identity key of `owner` holding lock `name` (Redisson's suffix
/// rule: the lock's hash tag is kept).
pub fn key(name: &str, owner: &str) -> String {
    if name.contains('{') {
        format!("{name}:redlua_holder:{owner}")
    } else {
        format!("{{{name}}}:redlua_holder:{owner}")
    }
}

/// Reads the identities of `owners` of lock `name`, in one round trip;
/// `None` for a holder that wrote none (or an unreadable one).
pub async fn read(
    con: &mut MultiplexedConnection,
    name: &str,
    owners: &[&str],
) -> Result<Vec<Option<Identity>>, Failure> {
    if owners.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for owner in owners {
        pipe.hgetall(key(name, owner));
    }
    let maps: Vec<std::collections::HashMap<String, String>> = pipe
        .query_async(con)
        .await
        .map_err(|e| Failure::failed(format!("cannot read the holders of `{name}`: {e}")))?;
    Ok(maps
        .into_iter()
        .map(|mut map| {
            let mut take = |field: &str| map.remove(field);
            Some(Identity {
                host: take("host")?,
                pid: take("pid")?,
                program: take("program")?,
                since: take("since")?,
            })
        })
        .collect())
}

/// Keeps one holder's identity next to the lock while it holds it: written
/// at once, refreshed (with the lock's expiry) every `period`, deleted by
/// [`Announcer::stop`]. Best effort: a failure to write it changes nothing
/// about the lock.
#[derive(Debug)]
pub struct Announcer {
    task: tokio::task::JoinHandle<()>,
    con: MultiplexedConnection,
    key: String,
}

impl Announcer {
    /// Starts announcing `identity` as the holder `owner` (its field in the
    /// lock is `field`) of lock `name`.
    pub async fn start(
        con: MultiplexedConnection,
        name: &str,
        owner: &str,
        field: &str,
        identity: Identity,
        period: Duration,
    ) -> Announcer {
        let key = key(name, owner);
        let mut task_con = con.clone();
        let (task_lock, task_key, task_field) = (name.to_string(), key.clone(), field.to_string());
        // The first write happens before `start` returns, so that `status`
        // run right after an acquire sees it.
        let _ = write(&mut task_con, &task_lock, &task_key, &task_field, &identity).await;
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period.max(Duration::from_millis(10)));
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if let Ok(0) =
                    write(&mut task_con, &task_lock, &task_key, &task_field, &identity).await
                {
                    break; // no longer held: the identity is gone
                }
            }
        });
        Announcer { task, con, key }
    }

    /// Stops announcing and deletes the identity (only this holder's key).
    /// Call it after releasing; should the delete fail, the identity ends
    /// with the lock's expiry anyway.
    pub async fn stop(mut self) {
        self.task.abort();
        let mut delete = redis::cmd("DEL");
        delete.arg(&self.key);
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            delete.query_async::<i64>(&mut self.con),
        )
        .await;
    }
}

/// Runs the script once: the identity's TTL, or 0 when not held.
async fn write(
    con: &mut MultiplexedConnection,
    lock: &str,
    key: &str,
    field: &str,
    identity: &Identity,
) -> redis::RedisResult<i64> {
    let pid = identity.pid.parse().unwrap_or(0);
    HolderIdentity {
        lock,
        identity: key,
        field,
        host: &identity.host,
        pid,
        program: &identity.program,
        since: &identity.since,
    }
    .invoke(con)
    .await
}

/// This machine's host name (`unknown` when it cannot be read).
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that many bytes.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if result != 0 {
        return "unknown".to_string();
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).into_owned()
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn truncated(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_the_locks_hash_tag() {
        assert_eq!(key("jobs:1", "u:3"), "{jobs:1}:redlua_holder:u:3");
        assert_eq!(key("user{7}:cart", "u:3"), "user{7}:cart:redlua_holder:u:3");
    }

    #[test]
    fn long_programs_are_cut() {
        assert_eq!(truncated("abc", 5), "abc");
        assert_eq!(truncated("abcdef", 3), "abc…");
        assert_eq!(truncated("ééé", 3), "é…");
        let me = Identity::of_this_process("lockctl hold");
        assert_eq!(me.pid, std::process::id().to_string());
        assert!(me.since.ends_with('Z'), "{me:?}");
        assert!(me.text().contains("program `lockctl hold`"));
    }
}
