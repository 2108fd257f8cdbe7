//! `lockctl ls [PATTERN]`: the locks whose names match PATTERN.
//!
//! Walks the keyspace with `SCAN cursor MATCH PATTERN COUNT N TYPE hash`
//! (never `KEYS`, which blocks the server for the whole keyspace): Redis
//! examines about N keys per call, and lockctl holds one batch at a time,
//! printing each lock as it is found, so memory stays bounded and output
//! starts at once however large the keyspace. Every candidate hash is read
//! through the runtime's inspection, which recognises Redisson's reentrant
//! and read/write layouts; other hashes and names that are not valid lock
//! names are skipped. A key that changes during the walk may be missed or
//! listed twice, as SCAN guarantees no more.
//!
//! Then the leased semaphores whose names match (found by their sets of
//! permits taken, see [`counted`]), and with `--counters` every key holding
//! an integer: a plain semaphore or a count-down latch (or any counter).
//! These walks keep the names they find in memory (one per semaphore, not
//! per key examined).

use crate::cli::LsArgs;
use crate::connect;
use crate::counted;
use crate::duration;
use crate::exit::{self, Failure};
use crate::main_args::Globals;
use crate::output::{self, Format};
use crate::status::{self, Held, State};
use redlua_runtime::Error;

/// What the walk found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Hashes whose names matched.
    pub candidates: u64,
    /// Locks among them.
    pub locks: u64,
}

/// Lists the locks; exit code 0 when at least one was found, 1 when none.
pub async fn run(globals: &Globals, args: &LsArgs) -> Result<u8, Failure> {
    let url = connect::url(globals.url.as_deref())?;
    let client = connect::lock_client(url, None).await?;
    let mut con = connect::redis_connection(url).await?;
    let mut scan_con = con.clone();
    let mut counts = Counts::default();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&args.pattern)
            .arg("COUNT")
            .arg(args.count)
            .arg("TYPE")
            .arg("hash")
            .query_async(&mut scan_con)
            .await
            .map_err(|e| Failure::failed(format!("SCAN failed: {e}")))?;
        for name in keys {
            counts.candidates += 1;
            if name.contains(":redlua_holder:") {
                continue; // a holder's identity, not a lock
            }
            let mut state = match client.inspect(&name).await {
                Ok(info) => status::from_info(info),
                Err(Error::InvalidName { .. }) => continue,
                Err(error) => return Err(Failure::lock(error)),
            };
            if let State::Held(_) = state {
                status::add_identities(&mut con, &name, &mut state).await?;
            }
            // Freed or replaced since SCAN saw it: not a lock now.
            let State::Held(held) = state else { continue };
            counts.locks += 1;
            print(globals.format, &name, &held);
        }
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    let mut counted = 0u64;
    // Leased semaphores, by their sets of permits taken: `{NAME}:timeout`,
    // and `NAME:timeout` for names with braces of their own.
    for (pattern, braced) in [
        (format!("{{{}}}:timeout", args.pattern), true),
        (format!("{}:timeout", args.pattern), false),
    ] {
        for key in scan(&mut scan_con, &pattern, args.count, "zset").await? {
            let Some(name) = counted::name_of_timeouts(&key, braced) else {
                continue;
            };
            if let Some(state) = counted::read(&client, &mut con, name).await? {
                counted += 1;
                print_counted(globals.format, name, &state);
            }
        }
    }
    if args.counters {
        for name in scan(&mut scan_con, &args.pattern, args.count, "string").await? {
            // redlua's and Redisson's own keys (token counters, attempts,
            // latches), not anyone's semaphore.
            if name.contains(":redlua_") || name.starts_with("redisson_") {
                continue;
            }
            if let Some(state @ counted::Counted::Count { .. }) =
                counted::read(&client, &mut con, &name).await?
            {
                counted += 1;
                print_counted(globals.format, &name, &state);
            }
        }
    }
    if globals.format == Format::Human {
        output::err(&summary(&args.pattern, counts));
        if counted > 0 {
            output::err(&format!(
                "{counted} semaphore{} or count{} matching `{}`",
                if counted == 1 { "" } else { "s" },
                if counted == 1 { "" } else { "s" },
                args.pattern
            ));
        }
    }
    Ok(if counts.locks + counted > 0 {
        exit::OK
    } else {
        exit::NO
    })
}

/// Every key of `kind` matching `pattern`, walked with SCAN.
async fn scan(
    con: &mut redis::aio::MultiplexedConnection,
    pattern: &str,
    count: u32,
    kind: &str,
) -> Result<Vec<String>, Failure> {
    let mut found = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(count)
            .arg("TYPE")
            .arg(kind)
            .query_async(con)
            .await
            .map_err(|e| Failure::failed(format!("SCAN failed: {e}")))?;
        found.extend(keys);
        cursor = next;
        if cursor == 0 {
            return Ok(found);
        }
    }
}

/// Prints one semaphore or count.
fn print_counted(format: Format, name: &str, state: &counted::Counted) {
    match format {
        Format::Human => output::out(&counted::line(name, state)),
        Format::Json => output::json(&counted::json(name, state)),
    }
}

/// Prints one lock: a line with its name, kind, TTL and token, then a line
/// per holder; with `--json`, one object per line.
fn print(format: Format, name: &str, held: &Held) {
    match format {
        Format::Human => output::out(&text(name, held)),
        Format::Json => output::json(&status::state_json(name, &State::Held(held.clone()))),
    }
}

/// One lock as shown to people.
pub fn text(name: &str, held: &Held) -> String {
    let ttl = held
        .ttl
        .map_or_else(|| "no expiry".to_string(), duration::show);
    let mut text = format!("{name}  {}  ttl {ttl}", status::kind_text(held.kind));
    if let Some(token) = held.token {
        text.push_str(&format!("  token {token}"));
    }
    for holder in &held.holders {
        text.push_str(&format!("\n  {}", status::holder_text(holder)));
    }
    text
}

/// The closing line, on stderr (stdout stays a list).
fn summary(pattern: &str, counts: Counts) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} among {} matching `{pattern}`",
        plural(counts.locks, "lock", "locks"),
        plural(counts.candidates, "hash", "hashes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{Holder, LockKind};
    use std::time::Duration;

    #[test]
    fn one_line_per_lock_and_per_holder() {
        let held = Held {
            kind: LockKind::Reentrant,
            holders: vec![Holder {
                owner: "u:1".into(),
                count: 2,
                mode: None,
                identity: None,
            }],
            ttl: Some(Duration::from_millis(1500)),
            token: Some(9),
            waiting: Vec::new(),
        };
        assert_eq!(
            text("a", &held),
            "a  lock  ttl 1s 500ms  token 9\n  u:1 (2 holds)"
        );
        let counts = Counts {
            candidates: 3,
            locks: 1,
        };
        assert_eq!(summary("*", counts), "1 lock among 3 hashes matching `*`");
    }
}
