//! Holder identity (opt-in): a holder says who it is, for operators.
//!
//! A lock's hash names its holders by owner (`<client-uuid>:<n>`), which
//! tells an operator nothing of the host or process. A holder may describe
//! itself (host, process id, program, since when) in a small hash next to
//! the lock, `{NAME}:redlua_holder:<owner>` (`NAME:redlua_holder:<owner>`
//! when NAME has braces of its own): in the lock's cluster slot, with its
//! expiry, refreshed while held and deleted at release, so it never
//! outlives the lock. `lockctl run` and `lockctl hold` write one; `lockctl
//! status` and `lockctl ls` show it; other holders show their owner alone.
//!
//! ```no_run
//! # async fn demo(client: redlua::LockClient) -> Result<(), Box<dyn std::error::Error>> {
//! use redlua::identity::{Announcer, HolderIdentity};
//!
//! let redis = redlua::redis::Client::open("redis://127.0.0.1:6379/")?;
//! let con = redis.get_multiplexed_async_connection().await?;
//! let guard = client.lock("jobs:nightly").lock().await?;
//! let announcer = Announcer::start(con, &client, &guard, HolderIdentity::of_this_process("nightly-job")).await;
//! // ... work; `lockctl status jobs:nightly` shows the host, pid and program ...
//! guard.unlock().await?;
//! announcer.stop().await;
//! # Ok(()) }
//! ```

use crate::api::client::LockClient;
use crate::api::guard::LockGuard;
use redis::aio::ConnectionLike;
use redlua_macros::redis_script;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

/// Writes, refreshes or removes one holder's identity.
#[redis_script("scripts/holder_identity.lua", returns = i64, crate = crate)]
struct WriteIdentity<'a> {
    /// The lock.
    #[key]
    lock: &'a str,
    /// The identity key.
    #[key]
    identity: &'a str,
    /// The holder's owner.
    #[arg]
    owner: &'a str,
    /// The host name.
    #[arg]
    host: &'a str,
    /// The process id.
    #[arg]
    pid: &'a str,
    /// The program.
    #[arg]
    program: &'a str,
    /// Since when.
    #[arg]
    since: &'a str,
}

/// The longest program description stored, in bytes.
const MAX_PROGRAM: usize = 200;

/// Who holds a lock, as the holder says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HolderIdentity {
    /// The host it runs on.
    pub host: String,
    /// Its process id.
    pub pid: String,
    /// The program, as the holder describes it.
    pub program: String,
    /// Since when it holds the lock (RFC 3339, UTC, to the second).
    pub since: String,
}

impl HolderIdentity {
    /// The identity of this process, taking a lock now, running `program`
    /// (cut to 200 bytes).
    pub fn of_this_process(program: &str) -> HolderIdentity {
        HolderIdentity {
            host: host_name(),
            pid: std::process::id().to_string(),
            program: truncated(program, MAX_PROGRAM),
            since: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        }
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

/// Reads the identities of `owners` of lock `name` in one round trip;
/// `None` for a holder that wrote none.
///
/// # Cancellation
///
/// Only reads: dropping the future changes nothing.
pub async fn read<C: ConnectionLike>(
    con: &mut C,
    name: &str,
    owners: &[&str],
) -> redis::RedisResult<Vec<Option<HolderIdentity>>> {
    if owners.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for owner in owners {
        pipe.hgetall(key(name, owner));
    }
    let maps: Vec<HashMap<String, String>> = pipe.query_async(con).await?;
    Ok(maps
        .into_iter()
        .map(|mut map| {
            Some(HolderIdentity {
                host: map.remove("host")?,
                pid: map.remove("pid")?,
                program: map.remove("program")?,
                since: map.remove("since")?,
            })
        })
        .collect())
}

/// Keeps one guard's identity next to its lock: written before
/// [`Announcer::start`] returns (waiting at most 1 s), refreshed with the
/// lock's expiry every quarter of the guard's lease (or watchdog timeout),
/// deleted by [`Announcer::stop`]. Best effort: a failed write changes
/// nothing about the lock. Dropped, it stops refreshing, and the identity
/// ends with the lock's expiry.
#[derive(Debug)]
pub struct Announcer<C> {
    task: tokio::task::JoinHandle<()>,
    con: C,
    key: String,
}

impl<C> Drop for Announcer<C> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<C> Announcer<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    /// Starts announcing `identity` as the holder of `guard` (taken from
    /// `client`), on `con` (a multiplexed connection or connection manager
    /// of the lock's server). Needs a tokio runtime.
    ///
    /// # Cancellation
    ///
    /// If the future is dropped, the identity may have been written once
    /// (it ends with the lock's expiry); it is not refreshed.
    pub async fn start(
        con: C,
        client: &LockClient,
        guard: &LockGuard,
        identity: HolderIdentity,
    ) -> Announcer<C> {
        let lock = guard.name().to_string();
        let owner = guard.owner().to_string();
        let key = key(&lock, &owner);
        let period =
            (guard.lease().unwrap_or(client.watchdog_timeout()) / 4).max(Duration::from_millis(5));
        let mut task_con = con.clone();
        let task_key = key.clone();
        let first = write(&mut task_con, &lock, &task_key, &owner, &identity);
        let _ = tokio::time::timeout(Duration::from_secs(1), first).await;
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if let Ok(0) = write(&mut task_con, &lock, &task_key, &owner, &identity).await {
                    break; // no longer held: the identity is gone
                }
            }
        });
        Announcer { task, con, key }
    }

    /// Stops announcing and deletes the identity (this holder's key only;
    /// waiting at most 1 s). Call it once the guard is released.
    ///
    /// # Cancellation
    ///
    /// The refreshes stop at once; if the future is dropped, the identity
    /// may not have been deleted (it ends with the lock's expiry).
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
async fn write<C: ConnectionLike>(
    con: &mut C,
    lock: &str,
    key: &str,
    owner: &str,
    identity: &HolderIdentity,
) -> redis::RedisResult<i64> {
    WriteIdentity {
        lock,
        identity: key,
        owner,
        host: &identity.host,
        pid: &identity.pid,
        program: &identity.program,
        since: &identity.since,
    }
    .invoke(con)
    .await
}

/// This machine's host name, from the kernel or the environment
/// (`unknown` when none says).
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
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
        let names = crate::base::names::LockNames::new("jobs:1").expect("valid");
        assert_eq!(
            crate::base::names::hash_tag(&key("jobs:1", "u:3")),
            crate::base::names::hash_tag(&names.lock)
        );
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        let since = |secs| {
            humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(secs))
        };
        assert_eq!(since(0).to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(since(1_795_429_692).to_string(), "2026-11-23T10:28:12Z");
        assert_eq!(since(951_782_400).to_string(), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn identities_of_this_process() {
        assert_eq!(truncated("abc", 5), "abc");
        assert_eq!(truncated("ééé", 3), "é…");
        let me = HolderIdentity::of_this_process("job");
        assert_eq!(me.pid, std::process::id().to_string());
        assert!(!me.host.is_empty());
        assert!(me.since.ends_with('Z'), "{me:?}");
    }
}
