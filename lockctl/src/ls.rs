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

use crate::cli::LsArgs;
use crate::connect;
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
    if globals.format == Format::Human {
        output::err(&summary(&args.pattern, counts));
    }
    Ok(if counts.locks > 0 { exit::OK } else { exit::NO })
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
