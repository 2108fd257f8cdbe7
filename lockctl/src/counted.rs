//! Semaphores and count-down latches in lockctl: one leased permit for
//! `run --permits N`, what `status` and `ls` show of them, and giving one
//! leased permit back (`unlock --force --permit ID`).
//!
//! What can be told from the keys: a leased semaphore (Redisson's
//! `RPermitExpirableSemaphore`) has a sorted set `{NAME}:timeout` of the
//! permits taken beside its count, so `ls` finds it by that set. A plain
//! semaphore (`RSemaphore`) and a count-down latch (`RCountDownLatch`) are
//! both a bare integer at the name, which nothing tells apart from any
//! other integer: `status` shows such a key as a count, with how many
//! clients wait on each primitive's channel, and `ls` lists them only with
//! `--counters`.

use crate::cli::AcquireArgs;
use crate::duration;
use crate::exit::{self, Failure};
use crate::signals::Signals;
use redis::aio::MultiplexedConnection;
use redlua_runtime::{LockClient, PermitGuard, PermitInfo};
use serde_json::{Value, json};
use std::time::Duration;

/// The outcome of acquiring a permit.
#[derive(Debug)]
pub enum Acquired {
    /// The permit is held.
    Held(PermitGuard),
    /// `--wait` ran out.
    TimedOut(Duration),
    /// A signal arrived while waiting; nothing is held.
    Interrupted(i32),
}

/// The permits of the leased semaphore `name` in all (available plus
/// taken), read at one instant; `None` when it does not exist.
async fn pool(con: &mut MultiplexedConnection, name: &str) -> Result<Option<i64>, Failure> {
    let (available, taken): (Option<String>, i64) = redis::pipe()
        .atomic()
        .get(name)
        .zcard(timeouts(name))
        .query_async(con)
        .await
        .map_err(|e| Failure::failed(format!("cannot read semaphore `{name}`: {e}")))?;
    let Some(available) = available else {
        return Ok(None);
    };
    let available: i64 = available.parse().map_err(|_| {
        Failure::new(
            exit::NOT_A_LOCK,
            format!("key `{name}` is not a semaphore: it holds `{available}`"),
        )
    })?;
    Ok(Some(available + taken))
}

/// The sorted set of a leased semaphore's permits taken.
fn timeouts(name: &str) -> String {
    if name.contains('{') {
        format!("{name}:timeout")
    } else {
        format!("{{{name}}}:timeout")
    }
}

/// Takes one leased permit of the `permits`-permit semaphore `name`,
/// sizing the pool if it does not exist; a pool of another size is a usage
/// error. Waits as `args` say, with a fixed `lease` or the watchdog, giving
/// up on a signal.
pub async fn acquire_permit(
    client: &LockClient,
    con: &mut MultiplexedConnection,
    name: &str,
    permits: u64,
    args: AcquireArgs,
    lease: Option<Duration>,
    signals: &mut Signals,
) -> Result<Acquired, Failure> {
    let semaphore = client.leased_semaphore(name);
    if !semaphore
        .try_set_permits(permits)
        .await
        .map_err(Failure::lock)?
    {
        let total = pool(con, name).await?;
        if total != Some(i64::try_from(permits).unwrap_or(i64::MAX)) {
            return Err(Failure::usage(format!(
                "semaphore `{name}` is a pool of {} permits, not {permits}",
                total.map_or_else(|| "no".to_string(), |t| t.to_string())
            ))
            .with_hint("use the pool's size, or change it from a program (set_permits)"));
        }
    }
    let attempt = async {
        match args.wait {
            Some(wait) => semaphore
                .try_acquire_for(1, wait, lease)
                .await
                .map(|guard| guard.ok_or(wait)),
            None => match lease {
                Some(lease) => semaphore.acquire_with_lease(1, lease).await.map(Ok),
                None => semaphore.acquire(1).await.map(Ok),
            },
        }
    };
    // Dropping the acquire on a signal leaves nothing held (the runtime
    // gives back what an acquire under way took).
    tokio::select! {
        outcome = attempt => match outcome {
            Ok(Ok(guard)) => Ok(Acquired::Held(guard)),
            Ok(Err(wait)) => Ok(Acquired::TimedOut(wait)),
            Err(error) => Err(Failure::lock(error)),
        },
        signal = signals.next() => Ok(Acquired::Interrupted(signal)),
    }
}

/// The failure for a permit that could not be had in time.
pub fn timed_out(name: &str, wait: Duration) -> Failure {
    Failure::new(
        exit::TIMEOUT,
        format!(
            "timed out after {} waiting for a permit of semaphore `{name}`",
            duration::show(wait)
        ),
    )
}

/// What an integer key (with, for a leased semaphore, its set of permits
/// taken) holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// A leased semaphore: the permits available, and those taken.
    Leased {
        available: i64,
        taken: Vec<PermitInfo>,
    },
    /// A bare count: a semaphore's permits available, or a latch's count,
    /// with the clients subscribed to each one's channel.
    Count {
        value: i64,
        semaphore_waiters: u64,
        latch_waiters: u64,
    },
}

/// Reads the integer key `name` as a semaphore or latch; `None` when it is
/// not an integer (or is gone).
pub async fn read(
    client: &LockClient,
    con: &mut MultiplexedConnection,
    name: &str,
) -> Result<Option<Counted>, Failure> {
    let failed = |e: redis::RedisError| Failure::failed(format!("cannot read `{name}`: {e}"));
    let (value, leased): (Option<String>, i64) = redis::pipe()
        .get(name)
        .exists(timeouts(name))
        .query_async(con)
        .await
        .map_err(failed)?;
    let Some(value) = value.and_then(|v| v.parse::<i64>().ok()) else {
        return Ok(None);
    };
    if leased == 1 {
        let taken = client
            .leased_semaphore(name)
            .holders()
            .await
            .map_err(Failure::lock)?;
        return Ok(Some(Counted::Leased {
            available: value,
            taken,
        }));
    }
    let channels = [
        format!("redisson_sc:{}", braced(name)),
        format!("redisson_countdownlatch__channel__{{{name}}}"),
    ];
    let numsub = |shard: bool| {
        let mut cmd = redis::cmd("PUBSUB");
        cmd.arg(if shard { "SHARDNUMSUB" } else { "NUMSUB" })
            .arg(&channels[0])
            .arg(&channels[1]);
        cmd
    };
    let mut waiters = [0u64; 2];
    for shard in [false, true] {
        // SHARDNUMSUB is Redis 7's: an older server refuses it, and has no
        // sharded subscribers anyway.
        if let Ok(counts) = numsub(shard).query_async::<Vec<(String, u64)>>(con).await {
            for (i, (_, n)) in counts.iter().enumerate().take(2) {
                waiters[i] += n;
            }
        }
    }
    Ok(Some(Counted::Count {
        value,
        semaphore_waiters: waiters[0],
        latch_waiters: waiters[1],
    }))
}

/// `{name}`, or the name itself when it has braces of its own (Redisson's
/// `prefixName`).
fn braced(name: &str) -> String {
    if name.contains('{') {
        name.to_string()
    } else {
        format!("{{{name}}}")
    }
}

/// One permit taken, as shown to people.
fn permit_text(permit: &PermitInfo) -> String {
    match permit.expires_in {
        Some(left) => format!("{} (expires in {})", permit.id, duration::show(left)),
        None => format!("{} (expired; comes back at the next call)", permit.id),
    }
}

/// The state as shown to people.
pub fn describe(name: &str, counted: &Counted) -> String {
    match counted {
        Counted::Leased { available, taken } => {
            let mut text = format!(
                "leased semaphore `{name}`: {available} available, {} taken",
                taken.len()
            );
            for (i, permit) in taken.iter().enumerate() {
                let label = if i == 0 { "permits:" } else { "" };
                text.push_str(&format!("\n  {label:<8} {}", permit_text(permit)));
            }
            text
        }
        Counted::Count {
            value,
            semaphore_waiters,
            latch_waiters,
        } => format!(
            "count `{name}`: {value} (a semaphore's permits available, or a count-down \
             latch's count; Redisson stores both as a bare integer)\n  waiting: \
             {semaphore_waiters} client(s) on the semaphore channel, {latch_waiters} on the \
             latch channel"
        ),
    }
}

/// One line (and a line per permit) for `ls`.
pub fn line(name: &str, counted: &Counted) -> String {
    match counted {
        Counted::Leased { available, taken } => {
            let mut text = format!(
                "{name}  leased semaphore  {available} available  {} taken",
                taken.len()
            );
            for permit in taken {
                text.push_str(&format!("\n  {}", permit_text(permit)));
            }
            text
        }
        Counted::Count { value, .. } => format!("{name}  count {value}"),
    }
}

/// The state as JSON.
pub fn json(name: &str, counted: &Counted) -> Value {
    match counted {
        Counted::Leased { available, taken } => json!({
            "name": name,
            "state": "leased_semaphore",
            "available": available,
            "permits": taken.iter().map(|p| json!({
                "id": p.id,
                "expires_in_ms": p.expires_in.map(duration::millis),
            })).collect::<Vec<_>>(),
        }),
        Counted::Count {
            value,
            semaphore_waiters,
            latch_waiters,
        } => json!({
            "name": name,
            "state": "count",
            "value": value,
            "semaphore_waiters": semaphore_waiters,
            "latch_waiters": latch_waiters,
        }),
    }
}

/// The name of the leased semaphore whose set of permits taken is `key`,
/// found by `ls` scanning for `{PATTERN}:timeout` (`braced`) or, for names
/// with braces of their own, `PATTERN:timeout`.
pub fn name_of_timeouts(key: &str, braced: bool) -> Option<&str> {
    let stem = key.strip_suffix(":timeout")?;
    if braced {
        let inner = stem.strip_prefix('{')?.strip_suffix('}')?;
        (!inner.contains(['{', '}'])).then_some(inner)
    } else {
        (stem.contains('{') && !stem.starts_with('{')).then_some(stem)
    }
}

/// `lockctl unlock --force --permit ID NAME`: gives the permit back.
pub async fn force_release(client: &LockClient, name: &str, id: &str) -> Result<bool, Failure> {
    client
        .leased_semaphore(name)
        .force_release(id)
        .await
        .map_err(Failure::lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_back_from_their_sets() {
        assert_eq!(name_of_timeouts("{jobs}:timeout", true), Some("jobs"));
        assert_eq!(name_of_timeouts("a{b}c:timeout", false), Some("a{b}c"));
        assert_eq!(name_of_timeouts("{jobs}:timeout", false), None);
        assert_eq!(name_of_timeouts("plain:timeout", false), None);
        assert_eq!(name_of_timeouts("{a}:x", true), None);
        assert_eq!(timeouts("jobs"), "{jobs}:timeout");
        assert_eq!(timeouts("a{b}c"), "a{b}c:timeout");
    }

    #[test]
    fn leased_semaphores_show_their_permits() {
        let counted = Counted::Leased {
            available: 1,
            taken: vec![],
        };
        assert_eq!(
            describe("s", &counted),
            "leased semaphore `s`: 1 available, 0 taken"
        );
        assert_eq!(json("s", &counted)["state"], "leased_semaphore");
    }
}
