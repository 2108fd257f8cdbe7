//! 8 contenders across 2 processes × 4 (one client each): the bench
//! process runs 4, and a copy of itself (`--contender-process`) the other
//! 4. Both time their critical sections on the system clock (one clock for
//! both processes of one machine), from a start instant agreed in advance.
//! Besides the contended figures: how many handoffs cross from one process
//! to the other (with 4 contenders waiting in each, 4 of the 7 others a
//! holder can hand to are in the other process: 57% would be fair).
//! Run once with each lock flavor (the other process is told which).

use crate::Settings;
use crate::flavor::Flavor;
use crate::metrics::{Event, Figure, Measured, Steady, contention, unix_now as now};
use crate::scenarios::{commands_so_far, per_op};
use redlua::LockClient;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Contenders per process.
const PER_PROCESS: usize = 4;

/// The lock they contend for.
const LOCK: &str = "bench:processes";

/// Runs the scenario.
pub async fn run(url: &str, settings: &Settings, flavor: Flavor) -> Result<Measured, String> {
    // Both processes start together, once the child is surely up.
    let start = now() + 1.5;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = tokio::process::Command::new(exe)
        .arg("--contender-process")
        .arg(url)
        .arg(start.to_string())
        .arg(settings.seconds.to_string())
        .arg(settings.critical_ms.to_string())
        .arg(flavor.arg())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let before = commands_so_far(url).await;
    let mine = contend(
        url,
        0,
        start,
        settings.seconds,
        settings.critical_ms,
        flavor,
    )
    .await?;
    let mut theirs = String::new();
    stdout
        .read_to_string(&mut theirs)
        .await
        .map_err(|e| e.to_string())?;
    let status = child.wait().await.map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("the other process failed: {status}"));
    }
    let after = commands_so_far(url).await;
    let mut events = mine;
    for line in theirs.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [index, acquired, released] = parts[..] else {
            return Err(format!("bad line from the other process: {line}"));
        };
        let parse = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
        events.push((
            index.parse::<usize>().map_err(|e| e.to_string())? + PER_PROCESS,
            parse(acquired)?,
            parse(released)?,
        ));
    }
    let (per_second, contention) = contention(&events, 2 * PER_PROCESS, settings.seconds);
    let mut sorted = events.clone();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    let handoffs: Vec<_> = sorted.windows(2).filter(|w| w[0].0 != w[1].0).collect();
    let crossing = handoffs
        .iter()
        .filter(|w| (w[0].0 < PER_PROCESS) != (w[1].0 < PER_PROCESS))
        .count();
    let first_share =
        events.iter().filter(|e| e.0 < PER_PROCESS).count() as f64 / events.len().max(1) as f64;
    Ok(Measured {
        per_second,
        commands_per_acquisition: per_op(before, after, events.len()),
        client_commands_per_acquisition: None,
        steady: Some(Steady::of(start, settings.seconds, &events)),
        acquisitions: events.len(),
        contention: Some(contention),
        figures: vec![
            Figure::new(
                "handoffs crossing processes",
                crossing as f64 / handoffs.len().max(1) as f64,
                "",
            ),
            Figure::new("the bench process's share", first_share, ""),
        ],
    })
}

/// The other process: runs its contenders and prints one line per critical
/// section (`index acquired released`, seconds since the agreed start).
pub async fn child(args: &[String]) -> Result<(), String> {
    let [url, start, seconds, critical_ms, flavor] = args else {
        return Err(
            "usage: --contender-process URL START SECONDS CRITICAL_MS reentrant|fair".to_string(),
        );
    };
    let parse = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
    let events = contend(
        url,
        0,
        parse(start)?,
        parse(seconds)?,
        parse(critical_ms)? as u64,
        Flavor::parse(flavor)?,
    )
    .await?;
    for (index, acquired, released) in events {
        println!("{index} {acquired} {released}");
    }
    Ok(())
}

/// Runs [`PER_PROCESS`] contenders from `start` (seconds since the epoch)
/// for `seconds`: their critical sections, timed from `start`.
async fn contend(
    url: &str,
    first_index: usize,
    start: f64,
    seconds: f64,
    critical_ms: u64,
    flavor: Flavor,
) -> Result<Vec<Event>, String> {
    let mut clients = Vec::new();
    for _ in 0..PER_PROCESS {
        clients.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
    }
    let wait = start - now();
    if wait > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(wait)).await;
    }
    let critical = Duration::from_millis(critical_ms);
    let mut tasks = Vec::new();
    for (i, client) in clients.iter().enumerate() {
        let lock = flavor.lock(client, LOCK);
        let index = first_index + i;
        tasks.push(tokio::spawn(async move {
            let mut events: Vec<Event> = Vec::new();
            while now() - start < seconds {
                let guard = lock.lock().await.map_err(|e| e.to_string())?;
                let acquired = now() - start;
                tokio::task::spawn_blocking(move || std::thread::sleep(critical))
                    .await
                    .map_err(|e| e.to_string())?;
                let released = now() - start;
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
    Ok(events)
}
