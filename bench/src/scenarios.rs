//! redlua's scenarios, run in this process, and the raw baseline: the same
//! two scripts sent as plain `EVALSHA`, without the client around them.

use crate::Settings;
use crate::metrics::{Event, Measured, Outcome, contention};
use crate::monitor::counted;
use redlua::LockClient;
use std::time::{Duration, Instant};

/// The acquire and release scripts redlua's reentrant lock runs.
const ACQUIRE: &str = include_str!("../../lock-runtime/scripts/lock_acquire.lua");
const RELEASE: &str = include_str!("../../lock-runtime/scripts/lock_release.lua");

/// Runs every in-process scenario (those `settings` want).
pub async fn run_all(url: &str, settings: &Settings) -> Vec<Outcome> {
    let port = settings.monitor;
    let mut outcomes = Vec::new();
    if settings.wants("uncontended") {
        outcomes.push(outcome(
            "raw EVALSHA",
            "uncontended",
            counted(port, raw_uncontended(url, settings)).await,
        ));
        outcomes.push(outcome(
            "redlua",
            "uncontended",
            counted(port, redlua_uncontended(url, settings)).await,
        ));
    }
    if settings.wants("independent") {
        let measured = counted(port, crate::independent::run(url, settings)).await;
        outcomes.push(outcome(
            "redlua",
            &format!("{} independent locks", crate::independent::LOCKS),
            measured,
        ));
    }
    if settings.wants("contended") {
        for clients in [1, settings.contenders] {
            let scenario = contended_name(settings.contenders, clients);
            let measured = counted(port, redlua_contended(url, settings, clients)).await;
            outcomes.push(outcome("redlua", &scenario, measured));
        }
    }
    if settings.wants("processes") {
        let measured = counted(port, crate::processes::run(url, settings)).await;
        outcomes.push(outcome(
            "redlua",
            &format!("{} contenders, 2 processes × 4", settings.contenders),
            measured,
        ));
    }
    if settings.counting() {
        return outcomes;
    }
    if settings.wants("watchdog") {
        // Several rounds (one a second).
        let seconds = (settings.seconds * 2.0).max(3.0);
        for &holds in &settings.watchdog_holds {
            let measured = crate::watchdog::run(url, holds, seconds).await;
            outcomes.push(outcome(
                "redlua",
                &format!("watchdog, {holds} holds"),
                measured,
            ));
        }
    }
    if settings.wants("cancelled") {
        let measured = crate::cancelled::run(url, 300).await;
        outcomes.push(outcome("redlua", "cancelled woken waiter", measured));
    }
    if settings.wants("rwlock") {
        let measured = crate::rwlock::run(url, settings).await;
        outcomes.push(outcome("redlua", "16 readers + 1 writer", measured));
    }
    if settings.wants("expansion") {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let measured = crate::expansion::run(&root);
        outcomes.push(outcome("redlua", "macro analysis", measured));
    }
    outcomes
}

/// The name of a contended scenario.
pub fn contended_name(contenders: usize, clients: usize) -> String {
    let clients = if clients == 1 {
        "1 client".to_string()
    } else {
        format!("{clients} clients")
    };
    format!("{contenders} contenders, {clients}")
}

fn outcome(library: &str, scenario: &str, result: Result<Measured, String>) -> Outcome {
    Outcome {
        library: library.to_string(),
        scenario: scenario.to_string(),
        result,
    }
}

/// The server's version.
pub async fn redis_version(url: &str) -> String {
    let info = info(url, "server").await.unwrap_or_default();
    info.lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .trim()
        .to_string()
}

async fn info(url: &str, section: &str) -> redis::RedisResult<String> {
    let mut con = redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?;
    redis::cmd("INFO").arg(section).query_async(&mut con).await
}

/// Every command the server ran so far (its `INFO commandstats` calls).
pub async fn commands_so_far(url: &str) -> Option<u64> {
    let info = info(url, "commandstats").await.ok()?;
    Some(
        info.lines()
            .filter_map(|line| line.split("calls=").nth(1))
            .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
            .sum(),
    )
}

/// The calls of one command so far (`cmdstat_<command>`; 0 when unknown).
pub async fn calls(url: &str, command: &str) -> u64 {
    let info = info(url, "commandstats").await.unwrap_or_default();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// Commands per operation between two counts (minus the INFO calls).
pub fn per_op(before: Option<u64>, after: Option<u64>, ops: usize) -> Option<f64> {
    let (before, after) = (before?, after?);
    Some(after.saturating_sub(before + 1) as f64 / ops.max(1) as f64)
}

async fn raw_uncontended(url: &str, settings: &Settings) -> Result<Measured, String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let acquire = redis::Script::new(ACQUIRE);
    let release = redis::Script::new(RELEASE);
    let owner = "00000000-0000-4000-8000-000000000000:1";
    let attempt = format!("{{bench:raw}}:redlua_attempt:{owner}");
    let pair = async |con: &mut redis::aio::MultiplexedConnection, n: usize| {
        let _: redis::Value = acquire
            .key("bench:raw")
            .key("redisson_lock_token:{bench:raw}")
            .key(&attempt)
            .arg(30_000)
            .arg(owner)
            .arg("0")
            .arg(30_000)
            .arg(3_630_000)
            .invoke_async(con)
            .await?;
        let _: redis::Value = release
            .key("bench:raw")
            .key("redisson_lock__channel:{bench:raw}")
            .key(format!("redisson_unlock_latch:{{bench:raw}}:{n}"))
            .key(&attempt)
            .key(&attempt)
            .arg("0")
            .arg(30_000)
            .arg(owner)
            .arg(30_000)
            .arg("release")
            .arg(30_000)
            .arg("0")
            .arg("0")
            .invoke_async(con)
            .await?;
        redis::RedisResult::Ok(())
    };
    for n in 0..50 {
        pair(&mut con, n).await.map_err(|e| e.to_string())?;
    }
    let before = commands_so_far(url).await;
    let started = Instant::now();
    for n in 0..settings.iterations {
        pair(&mut con, 100 + n).await.map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let after = commands_so_far(url).await;
    Ok(Measured {
        per_second: settings.iterations as f64 / elapsed,
        commands_per_acquisition: per_op(before, after, settings.iterations),
        client_commands_per_acquisition: None,
        acquisitions: settings.iterations + 50,
        contention: None,
        figures: Vec::new(),
    })
}

async fn redlua_uncontended(url: &str, settings: &Settings) -> Result<Measured, String> {
    let client = LockClient::connect(url).await.map_err(|e| e.to_string())?;
    let lock = client.lock("bench:uncontended");
    for _ in 0..50 {
        let guard = lock.lock().await.map_err(|e| e.to_string())?;
        guard.unlock().await.map_err(|e| e.to_string())?;
    }
    // Let the warm-up's background clean-up finish.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let before = commands_so_far(url).await;
    let started = Instant::now();
    for _ in 0..settings.iterations {
        let guard = lock.lock().await.map_err(|e| e.to_string())?;
        guard.unlock().await.map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = commands_so_far(url).await;
    Ok(Measured {
        per_second: settings.iterations as f64 / elapsed,
        commands_per_acquisition: per_op(before, after, settings.iterations),
        client_commands_per_acquisition: None,
        acquisitions: settings.iterations + 50,
        contention: None,
        figures: Vec::new(),
    })
}

async fn redlua_contended(
    url: &str,
    settings: &Settings,
    clients: usize,
) -> Result<Measured, String> {
    let mut handles = Vec::new();
    for _ in 0..clients {
        handles.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
    }
    let before = commands_so_far(url).await;
    let origin = Instant::now();
    let deadline = origin + Duration::from_secs_f64(settings.seconds);
    let critical = Duration::from_millis(settings.critical_ms);
    let mut tasks = Vec::new();
    for index in 0..settings.contenders {
        let lock = handles[index % clients].lock("bench:contended");
        tasks.push(tokio::spawn(async move {
            let mut events: Vec<Event> = Vec::new();
            while Instant::now() < deadline {
                let guard = lock.lock().await.map_err(|e| e.to_string())?;
                let acquired = origin.elapsed().as_secs_f64();
                // A precise 1 ms (tokio's timer rounds up to its next tick).
                tokio::task::spawn_blocking(move || std::thread::sleep(critical))
                    .await
                    .map_err(|e| e.to_string())?;
                let released = origin.elapsed().as_secs_f64();
                guard.unlock().await.map_err(|e| e.to_string())?;
                events.push((index, acquired, released));
            }
            Ok::<_, String>(events)
        }));
    }
    let mut events = Vec::new();
    for task in tasks {
        events.extend(task.await.map_err(|e| e.to_string())??);
    }
    let wall = origin.elapsed().as_secs_f64();
    let after = commands_so_far(url).await;
    let (per_second, contention) = contention(&events, settings.contenders, wall);
    Ok(Measured {
        per_second,
        commands_per_acquisition: per_op(before, after, events.len()),
        client_commands_per_acquisition: None,
        acquisitions: events.len(),
        contention: Some(contention),
        figures: Vec::new(),
    })
}
