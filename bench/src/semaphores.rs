//! The semaphores: uncontended acquire + release pairs of redlua's
//! `Semaphore` and `LeasedSemaphore` against the raw cost of the scripts
//! they send (plain `EVALSHA`, fresh attempt and request keys each time, as
//! redlua sends them), and 16 contenders on a 4-permit pool with a 1 ms
//! critical section: utilization (time inside critical sections over wall
//! time × permits) and the wake-up latency of waiters (from a release call
//! to a waiter's acquire returning). The peer, npm redis-semaphore's
//! `Semaphore`, runs in `peers.rs`.

use crate::Settings;
use crate::metrics::{Figure, Measured, Outcome, percentile};
use crate::monitor::counted;
use redlua::LockClient;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// redlua's semaphore scripts.
const TAKE: &str = include_str!("../../lock-runtime/scripts/semaphore_acquire.lua");
const CHANGE: &str = include_str!("../../lock-runtime/scripts/semaphore_change.lua");
const LEASED_TAKE: &str = include_str!("../../lock-runtime/scripts/leased_acquire.lua");
const LEASED_RELEASE: &str = include_str!("../../lock-runtime/scripts/leased_release.lua");

/// Contenders and permits of the contended scenario.
pub const CONTENDERS: usize = 16;
pub const PERMITS: u64 = 4;

/// The name of the contended scenario.
pub fn contended_name() -> String {
    format!("{CONTENDERS} contenders, {PERMITS} permits")
}

/// What the scenarios compare.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Raw,
    Semaphore,
    RawLeased,
    Leased,
}

/// Runs the semaphore scenarios.
pub async fn run_all(url: &str, settings: &Settings) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let pairs = [
        ("semaphore uncontended", Kind::Raw, Kind::Semaphore),
        (
            "leased semaphore uncontended",
            Kind::RawLeased,
            Kind::Leased,
        ),
    ];
    for (scenario, raw, redlua) in pairs {
        let [raw_result, redlua_result] = if settings.counting() {
            // The MONITOR pass: each alone, once.
            [
                counted(
                    settings,
                    &format!("raw EVALSHA, {scenario}"),
                    uncontended(url, settings.iterations, raw),
                )
                .await,
                counted(
                    settings,
                    &format!("redlua, {scenario}"),
                    uncontended(url, settings.iterations, redlua),
                )
                .await,
            ]
        } else {
            side_by_side(url, settings, raw, redlua).await
        };
        for (library, result) in [("raw EVALSHA", raw_result), ("redlua", redlua_result)] {
            outcomes.push(Outcome {
                library: library.to_string(),
                scenario: scenario.to_string(),
                result,
            });
        }
    }
    if settings.counting() {
        return outcomes;
    }
    for (library, leased) in [
        ("redlua Semaphore", false),
        ("redlua LeasedSemaphore", true),
    ] {
        outcomes.push(Outcome {
            library: library.to_string(),
            scenario: contended_name(),
            result: contended(url, settings, leased).await,
        });
    }
    outcomes
}

/// The raw scripts and redlua in turns, 7 rounds each: each one's median
/// round (the machine's drift hits both alike).
async fn side_by_side(
    url: &str,
    settings: &Settings,
    raw: Kind,
    redlua: Kind,
) -> [Result<Measured, String>; 2] {
    const ROUNDS: usize = 7;
    let per_round = (settings.iterations / ROUNDS).max(100);
    let mut rates = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (i, kind) in [raw, redlua].into_iter().enumerate() {
            match uncontended(url, per_round, kind).await {
                Ok(measured) => rates[i].push(measured.per_second),
                Err(error) => return [Err(error.clone()), Err(error)],
            }
        }
    }
    rates.map(|mut rates| {
        rates.sort_by(f64::total_cmp);
        Ok(Measured {
            per_second: rates[rates.len() / 2],
            acquisitions: per_round * ROUNDS,
            ..Measured::default()
        })
    })
}

/// Acquire + release pairs on one pool of plenty, one contender.
async fn uncontended(url: &str, iterations: usize, kind: Kind) -> Result<Measured, String> {
    let client = LockClient::connect(url).await.map_err(|e| e.to_string())?;
    let mut con = redis::Client::open(url)
        .map_err(|e| e.to_string())?
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let name = format!("bench:sem:{kind:?}");
    let plain = client.semaphore(&name);
    let leased = client.leased_semaphore(&name);
    match kind {
        Kind::Raw | Kind::Semaphore => plain.set_permits(1_000).await,
        Kind::RawLeased | Kind::Leased => leased.set_permits(1_000).await,
    }
    .map_err(|e| e.to_string())?;
    let (take, change) = (redis::Script::new(TAKE), redis::Script::new(CHANGE));
    let (leased_take, leased_release) = (
        redis::Script::new(LEASED_TAKE),
        redis::Script::new(LEASED_RELEASE),
    );
    let timeouts = format!("{{{name}}}:timeout");
    let channel = format!("redisson_sc:{{{name}}}");
    let token = format!("{{{name}}}:redlua_token");
    let mut pair = async |n: usize| -> Result<(), String> {
        let e = |e: redis::RedisError| e.to_string();
        match kind {
            Kind::Raw => {
                let attempt = format!("{{{name}}}:redlua_permits:raw:{n}");
                let latch = format!("{{{name}}}:redlua_change:raw:{n}");
                let _: (i64, i64) = take
                    .key(&name)
                    .key(&attempt)
                    .arg(1)
                    .arg(30_000)
                    .invoke_async(&mut con)
                    .await
                    .map_err(e)?;
                let _: (i64, i64) = change
                    .key(&name)
                    .key(&channel)
                    .key(&latch)
                    .key(&timeouts)
                    .arg("release")
                    .arg(1)
                    .arg(30_000)
                    .arg("publish")
                    .invoke_async(&mut con)
                    .await
                    .map_err(e)?;
            }
            Kind::RawLeased => {
                let attempt = format!("{{{name}}}:redlua_permits:raw:{n}");
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&(n as u64).to_be_bytes());
                let _: (i64, i64, i64) = leased_take
                    .key(&name)
                    .key(&timeouts)
                    .key(&channel)
                    .key(&attempt)
                    .key(&token)
                    .arg(30_000)
                    .arg(30_000)
                    .arg(3_630_000)
                    .arg("publish")
                    .arg(&id[..])
                    .invoke_async(&mut con)
                    .await
                    .map_err(e)?;
                let latch = format!("{{{name}}}:redlua_change:raw:{n}");
                let _: (i64, i64) = leased_release
                    .key(&name)
                    .key(&timeouts)
                    .key(&channel)
                    .key(&latch)
                    .arg(30_000)
                    .arg("publish")
                    .arg(&id[..])
                    .invoke_async(&mut con)
                    .await
                    .map_err(e)?;
            }
            Kind::Semaphore => {
                plain.acquire(1).await.map_err(|e| e.to_string())?;
                plain.release(1).await.map_err(|e| e.to_string())?;
            }
            Kind::Leased => {
                let permit = leased.acquire(1).await.map_err(|e| e.to_string())?;
                permit.release().await.map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };
    // Attempt keys, request latches and ids never repeat (a repeated
    // attempt key would find its earlier attempt, and do nothing).
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let next = || NEXT.fetch_add(1, Ordering::Relaxed);
    for _ in 0..50 {
        pair(next()).await?;
    }
    let started = Instant::now();
    for _ in 0..iterations {
        pair(next()).await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(Measured {
        per_second: iterations as f64 / seconds,
        acquisitions: iterations + 50,
        ..Measured::default()
    })
}

/// 16 contenders (4 clients × 4 tasks) on a 4-permit pool, 1 ms inside.
async fn contended(url: &str, settings: &Settings, leased: bool) -> Result<Measured, String> {
    let name = format!("bench:sem:contended:{leased}");
    let clients = {
        let mut clients = Vec::new();
        for _ in 0..4 {
            clients.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
        }
        clients
    };
    if leased {
        clients[0]
            .leased_semaphore(&name)
            .set_permits(PERMITS)
            .await
    } else {
        clients[0].semaphore(&name).set_permits(PERMITS).await
    }
    .map_err(|e| e.to_string())?;
    let base = Instant::now();
    let at = move || base.elapsed().as_secs_f64();
    // (acquire called, acquired, release called) per critical section.
    let sections: Arc<Mutex<Vec<(f64, f64, f64)>>> = Arc::default();
    let seconds = settings.seconds;
    let critical = std::time::Duration::from_millis(settings.critical_ms);
    let mut tasks = Vec::new();
    for c in 0..CONTENDERS {
        let client = clients[c % clients.len()].clone();
        let name = name.clone();
        let sections = sections.clone();
        tasks.push(tokio::spawn(async move {
            let plain = client.semaphore(&name);
            let leased_sem = client.leased_semaphore(&name);
            while at() < seconds {
                let called = at();
                if leased {
                    let permit = leased_sem.acquire(1).await.map_err(|e| e.to_string())?;
                    let acquired = at();
                    tokio::time::sleep(critical).await;
                    let released = at();
                    permit.release().await.map_err(|e| e.to_string())?;
                    sections.lock().unwrap().push((called, acquired, released));
                } else {
                    plain.acquire(1).await.map_err(|e| e.to_string())?;
                    let acquired = at();
                    tokio::time::sleep(critical).await;
                    let released = at();
                    plain.release(1).await.map_err(|e| e.to_string())?;
                    sections.lock().unwrap().push((called, acquired, released));
                }
            }
            Ok::<_, String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let wall = at();
    let sections = sections.lock().unwrap().clone();
    let inside: f64 = sections.iter().map(|(_, a, r)| r - a).sum();
    let utilization = inside / (wall * PERMITS as f64);
    // A waiter's wake-up: from the latest release call before its acquire
    // returned, when it was already waiting then.
    let mut releases: Vec<f64> = sections.iter().map(|s| s.2).collect();
    releases.sort_by(f64::total_cmp);
    let mut wakeups_ms: Vec<f64> = Vec::new();
    for &(called, acquired, _) in &sections {
        let i = releases.partition_point(|&r| r <= acquired);
        if i > 0 && releases[i - 1] > called {
            wakeups_ms.push((acquired - releases[i - 1]) * 1000.0);
        }
    }
    wakeups_ms.sort_by(f64::total_cmp);
    Ok(Measured {
        per_second: sections.len() as f64 / wall,
        acquisitions: sections.len(),
        figures: vec![
            Figure::new(
                "utilization (inside / wall × permits)",
                utilization * 100.0,
                "%",
            ),
            Figure::new("wake-up p50", percentile(&wakeups_ms, 0.5), "ms"),
            Figure::new("wake-up p99", percentile(&wakeups_ms, 0.99), "ms"),
        ],
        ..Measured::default()
    })
}
