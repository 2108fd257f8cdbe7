//! The observer outside the runtime: no overlap, no lost update, bounded waits, nothing held.

use super::{
    COUNTER, LOCK, PROCESSES, RESPONSE_TIMEOUT, THINK_MS, WATCHDOG, WORKERS_PER_PROCESS, WRITES,
};
use crate::workers::Wrote;
use redlua_test_support::RedisServer;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

const WORKERS: usize = PROCESSES * WORKERS_PER_PROCESS;
/// Every worker must get the lock at least this often per test.
const MIN_SECTIONS_PER_WORKER: usize = 3;

/// One critical section, as its worker reported it.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    token: u64,
    worker: usize,
    start_us: u64,
    /// The last instant it surely held the lock.
    held_until_us: u64,
    end_us: u64,
    wrote: Wrote,
    /// The counter it read, if it read before the guard was lost.
    read: Option<u64>,
    waited_us: u64,
    lock_errors: u32,
    lost_early: bool,
    /// Lease left when its write was sent (µs).
    margin_us: Option<u64>,
    unlocked: String,
}

impl Record {
    pub(crate) fn parse(line: &str) -> Record {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 12, "bad record: {line}");
        let num = |i: usize| -> u64 {
            f[i].parse()
                .unwrap_or_else(|_| panic!("bad record: {line}"))
        };
        let signed = |i: usize| -> i64 {
            f[i].parse()
                .unwrap_or_else(|_| panic!("bad record: {line}"))
        };
        Record {
            token: num(0),
            worker: num(1) as usize,
            start_us: num(2),
            held_until_us: num(3),
            end_us: num(4),
            wrote: match num(5) {
                0 => Wrote::Skipped,
                1 => Wrote::Yes,
                _ => Wrote::Uncertain,
            },
            read: u64::try_from(signed(6)).ok(),
            waited_us: num(7),
            lock_errors: num(8) as u32,
            lost_early: num(9) == 1,
            margin_us: u64::try_from(signed(10)).ok(),
            unlocked: f[11].to_string(),
        }
    }
}

/// Checks the records and Redis after a run; `max_wait` is the longest wait
/// allowed.
pub(crate) fn check(
    server: &RedisServer,
    fault: &str,
    seed: u64,
    faults: &str,
    records: &[Record],
    max_wait: Duration,
) {
    let mut con = server.connection();
    let counter: Option<u64> = redis::cmd("GET").arg(COUNTER).query(&mut con).unwrap();
    let counter = counter.unwrap_or(0);
    let log: HashMap<u64, u64> = redis::cmd("HGETALL").arg(WRITES).query(&mut con).unwrap();
    let lock_left: HashMap<String, String> =
        redis::cmd("HGETALL").arg(LOCK).query(&mut con).unwrap();
    let lock_ttl: i64 = redis::cmd("PTTL").arg(LOCK).query(&mut con).unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    let mut no_expiry = Vec::new();
    for key in keys {
        if key == COUNTER || key == WRITES {
            continue;
        }
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut con).unwrap();
        if ttl < 0 {
            no_expiry.push(format!("{key} ({ttl})"));
        }
    }

    let mut sorted = records.to_vec();
    sorted.sort_by_key(|r| r.token);

    // Summary.
    let count = |w: Wrote| records.iter().filter(|r| r.wrote == w).count();
    let (written, skipped, uncertain) = (
        count(Wrote::Yes),
        count(Wrote::Skipped),
        count(Wrote::Uncertain),
    );
    let mut per_worker = [0usize; WORKERS];
    let mut worst_wait = [0u64; WORKERS];
    for r in records {
        per_worker[r.worker] += 1;
        worst_wait[r.worker] = worst_wait[r.worker].max(r.waited_us);
    }
    let mut waits: Vec<u64> = records.iter().map(|r| r.waited_us).collect();
    waits.sort_unstable();
    let pct = |p: usize| {
        waits
            .get(waits.len().saturating_sub(1) * p / 100)
            .copied()
            .unwrap_or(0)
    };
    let longest = records.iter().max_by_key(|r| r.waited_us);
    let mut sections: Vec<u64> = records.iter().map(|r| r.end_us - r.start_us).collect();
    sections.sort_unstable();
    let section_ms = |p: usize| {
        sections
            .get(sections.len().saturating_sub(1) * p / 100)
            .map_or(0.0, |&us| us as f64 / 1000.0)
    };
    let min_margin = records.iter().filter_map(|r| r.margin_us).min();
    let mut unlocks: BTreeMap<&str, usize> = BTreeMap::new();
    for r in records {
        *unlocks.entry(r.unlocked.as_str()).or_default() += 1;
    }
    let lock_errors: u32 = records.iter().map(|r| r.lock_errors).sum();
    let lost_early = records.iter().filter(|r| r.lost_early).count();
    let lost_in_section = records
        .iter()
        .filter(|r| r.held_until_us < r.end_us)
        .count();
    // The longest time the lock sat free (between one holder's end and the
    // next one's start) while some worker was waiting for it: what wake-ups
    // cost, as opposed to waiting behind other holders.
    let mut sorted_by_start = records.to_vec();
    sorted_by_start.sort_by_key(|r| r.start_us);
    let free_while_waited = sorted_by_start
        .windows(2)
        .filter(|p| {
            records.iter().any(|r| {
                r.start_us.saturating_sub(r.waited_us) <= p[0].end_us && r.start_us > p[0].end_us
            })
        })
        .map(|p| (p[1].start_us.saturating_sub(p[0].end_us), p[0].end_us))
        .max();

    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "faults under load — {fault}; seed {seed} (replay with REDLUA_SEED={seed})"
    );
    let _ = writeln!(
        summary,
        "  {WORKERS} workers in {PROCESSES} processes, watchdog {WATCHDOG:?}, response timeout {RESPONSE_TIMEOUT:?}, think {THINK_MS:?} ms"
    );
    let _ = writeln!(summary, "  faults: {faults}");
    let _ = writeln!(
        summary,
        "  {} critical sections ({per_worker:?} per worker; lasting p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms); writes: {written} confirmed, {uncertain} uncertain, {skipped} skipped (guard lost); log {} entries; counter {counter}",
        records.len(),
        section_ms(50),
        section_ms(90),
        section_ms(100),
        log.len()
    );
    let _ = writeln!(
        summary,
        "  wait for the lock: max {:.1} ms (worker {:?}, token {:?}), p50 {:.1} ms, p99 {:.1} ms; limit {max_wait:?}; per worker max (ms) {:?}",
        longest.map_or(0.0, |r| r.waited_us as f64 / 1000.0),
        longest.map(|r| r.worker),
        longest.map(|r| r.token),
        pct(50) as f64 / 1000.0,
        pct(99) as f64 / 1000.0,
        worst_wait.iter().map(|w| w / 1000).collect::<Vec<_>>(),
    );
    if let Some(w) = longest {
        let asked = w.start_us.saturating_sub(w.waited_us);
        let holders: Vec<String> = sorted_by_start
            .iter()
            .filter(|r| r.end_us >= asked && r.start_us <= w.start_us)
            .take(40)
            .map(|r| {
                format!(
                    "{}:{:.0}-{:.0}",
                    r.worker,
                    (r.start_us as f64 - asked as f64) / 1000.0,
                    (r.end_us as f64 - asked as f64) / 1000.0
                )
            })
            .collect();
        let _ = writeln!(
            summary,
            "  holders during the longest wait (worker:start-end ms after it asked): {}",
            holders.join(" ")
        );
    }
    let _ = writeln!(
        summary,
        "  longest the lock sat free while someone waited: {:?} (at {:?} µs)",
        free_while_waited.map(|(gap, _)| gap as f64 / 1000.0),
        free_while_waited.map(|(_, at)| at)
    );
    let _ = writeln!(
        summary,
        "  guards lost inside their section: {lost_in_section}; lost before their lease clock ran out: {lost_early}; least lease left at a write: {:?} ms; lock() errors: {lock_errors}; unlock outcomes: {unlocks:?}",
        min_margin.map(|m| m as f64 / 1000.0)
    );
    eprintln!("{summary}");

    // Fencing tokens order the holders, one per critical section.
    for pair in sorted.windows(2) {
        assert!(
            pair[0].token < pair[1].token,
            "two critical sections got the same token:\n{:?}\n{:?}\n{summary}",
            pair[0],
            pair[1]
        );
    }

    // No overlap: each holder surely held the lock only before the next
    // one started (same machine, same wall clock; no slack).
    let overlaps: Vec<String> = sorted
        .windows(2)
        .filter(|p| p[0].held_until_us > p[1].start_us)
        .map(|p| {
            format!(
                "token {} (worker {}, held until {} µs, ended {} µs, wrote {:?}, lease left at write {:?} µs) overlaps token {} (worker {}, started {} µs) by {} µs",
                p[0].token,
                p[0].worker,
                p[0].held_until_us,
                p[0].end_us,
                p[0].wrote,
                p[0].margin_us,
                p[1].token,
                p[1].worker,
                p[1].start_us,
                p[0].held_until_us - p[1].start_us
            )
        })
        .collect();
    assert!(
        overlaps.is_empty(),
        "{} overlapping holds:\n{}\n{summary}",
        overlaps.len(),
        overlaps.join("\n")
    );
    assert_eq!(
        lost_early, 0,
        "guards found their lock gone before their lease clock ran out\n{summary}"
    );

    // No lost update: in token order, the write log counts 1, 2, 3, ...
    // (each writer read its predecessor's write), confirmed writes are in
    // it as written, skipped ones are not, and the counter is the count.
    let by_token: HashMap<u64, &Record> = sorted.iter().map(|r| (r.token, r)).collect();
    for r in &sorted {
        match r.wrote {
            Wrote::Yes => assert_eq!(
                log.get(&r.token),
                r.read.map(|v| v + 1).as_ref(),
                "a confirmed write is missing from the log or differs: {r:?}\n{summary}"
            ),
            Wrote::Skipped => assert!(
                !log.contains_key(&r.token),
                "a write that was never sent is in the log: {r:?}\n{summary}"
            ),
            Wrote::Uncertain => {}
        }
    }
    let mut entries: Vec<(u64, u64)> = log.iter().map(|(t, v)| (*t, *v)).collect();
    entries.sort_unstable();
    for (i, (token, value)) in entries.iter().enumerate() {
        assert!(
            by_token.contains_key(token),
            "the log has a write by token {token}, which no critical section had\n{summary}"
        );
        assert_eq!(
            *value,
            i as u64 + 1,
            "lost update: write {} in token order (token {token}, {:?}) wrote {value}; log in token order: {:?}\n{summary}",
            i + 1,
            by_token.get(token),
            &entries[i.saturating_sub(3)..(i + 3).min(entries.len())]
        );
    }
    assert_eq!(
        counter,
        entries.len() as u64,
        "lost update: the counter is not the number of writes\n{summary}"
    );
    assert!(
        written <= entries.len() && entries.len() <= written + uncertain,
        "the log does not match the writes\n{summary}"
    );

    // Everyone got in, and nobody waited longer than allowed.
    assert!(
        per_worker.iter().all(|&n| n >= MIN_SECTIONS_PER_WORKER),
        "a worker got the lock fewer than {MIN_SECTIONS_PER_WORKER} times\n{summary}"
    );
    assert_eq!(
        lock_errors, 0,
        "lock() returned errors instead of retrying while waiting\n{summary}"
    );
    let too_long: Vec<String> = sorted
        .iter()
        .filter(|r| Duration::from_micros(r.waited_us) > max_wait)
        .map(|r| {
            format!(
                "worker {} waited {:.1} ms for token {} (got it at {} µs)",
                r.worker,
                r.waited_us as f64 / 1000.0,
                r.token,
                r.start_us
            )
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "{} waits longer than {max_wait:?}:\n{}\n{summary}",
        too_long.len(),
        too_long.join("\n")
    );

    // Nothing held, nothing without an expiry.
    assert!(
        lock_left.is_empty(),
        "the lock is still held at the end: {lock_left:?} (PTTL {lock_ttl} ms)\n{summary}"
    );
    assert!(
        no_expiry.is_empty(),
        "keys without an expiry: {no_expiry:?}\n{summary}"
    );
}
