//! The watchdog scenario: thousands of holds on one client with a 3 s
//! watchdog timeout (rounds every second).
//!
//! The client runs alone on a single-threaded runtime of its own thread,
//! next to a task that ticks every millisecond: how late the ticker gets is
//! how long a renewal round keeps the runtime's other tasks waiting (the
//! worst case: with one thread, nothing else can run them). From the bench's
//! own runtime, meanwhile, full sweeps of `PTTL` over every lock give the
//! lowest remaining TTL, and `INFO commandstats` counts the renewal calls
//! (`EVALSHA`: nothing else sends scripts during the window).

use crate::metrics::{Figure, Measured, percentile};
use crate::scenarios::calls;
use redlua::LockClient;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// The watchdog timeout of the scenario (rounds every third of it).
const TIMEOUT: Duration = Duration::from_secs(3);

/// How many holds acquire (or release) at once. The watchdog's renewals
/// share the client's connection with them: a deeper flood of commands
/// would hold each renewal call behind it, and slow a round down.
const CHUNK: usize = 100;

/// How many keys one `PTTL` pipeline reads.
const SWEEP: usize = 10_000;

/// How late the ticker's ticks were.
#[derive(Debug, Clone, Copy)]
struct Lateness {
    /// The worst, in ms.
    worst: f64,
    /// The 99.9th percentile, in ms (on a loaded machine the worst is
    /// often the operating system's doing).
    p999: f64,
    /// The worst delay the runtime itself caused, in ms: of each tick's
    /// delay, at most the CPU time the client's thread used since the
    /// previous tick (a thread kept waiting for a CPU by the operating
    /// system uses none; a runtime busy with a long poll uses all of it).
    worst_on_cpu: f64,
}

/// Runs the scenario with `holds` holds for `seconds` of rounds.
pub async fn run(url: &str, holds: usize, seconds: f64) -> Result<Measured, String> {
    let keys: Vec<String> = (0..holds).map(|i| format!("bench:wd:{i}")).collect();
    let (ready_tx, ready_rx) = oneshot::channel::<Result<Lateness, String>>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let client_url = url.to_string();
    let client_keys = keys.clone();
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(hold_and_tick(&client_url, &client_keys, ready_tx, done_rx))
    });
    // The noise floor (the ticker alone), then the holds are taken.
    let idle_lateness = ready_rx
        .await
        .map_err(|_| "the client thread ended early".to_string())??;
    // A window of a whole number of periods holds as many round starts,
    // wherever it starts (rounds run on a fixed period).
    let period = TIMEOUT / 3;
    let periods = seconds.round().max(2.0) as u32;
    // A period to settle: the round under way when the last hold was taken
    // ran slower, next to the acquisitions.
    tokio::time::sleep(period).await;
    let before = calls(url, "evalsha").await;
    let started = Instant::now();
    let end = tokio::time::Instant::from_std(started + period * periods);
    let mut lowest = i64::MAX;
    let mut sweeps = 0;
    let mut con = redis::Client::open(url)
        .map_err(|e| e.to_string())?
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    while tokio::time::Instant::now() < end {
        for chunk in keys.chunks(SWEEP) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("PTTL").arg(key);
            }
            let ttls: Vec<i64> = pipe
                .query_async(&mut con)
                .await
                .map_err(|e| e.to_string())?;
            lowest = lowest.min(ttls.into_iter().min().unwrap_or(i64::MAX));
        }
        sweeps += 1;
        // Spaced, so that the sweeps load the machine little.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    tokio::time::sleep_until(end).await;
    let after = calls(url, "evalsha").await;
    let _ = done_tx.send(());
    let busy_lateness = client
        .join()
        .map_err(|_| "the client thread panicked".to_string())??;
    let renewals = after.saturating_sub(before) as f64;
    let lease_ms = TIMEOUT.as_millis() as f64;
    Ok(Measured {
        per_second: 0.0,
        commands_per_acquisition: None,
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: holds,
        contention: None,
        figures: vec![
            Figure::new("lowest TTL / lease", lowest as f64 / lease_ms, ""),
            Figure::new("ticker worst delay", busy_lateness.worst, "ms"),
            Figure::new("ticker p99.9 delay", busy_lateness.p999, "ms"),
            Figure::new(
                "ticker worst delay on the thread's CPU time",
                busy_lateness.worst_on_cpu,
                "ms",
            ),
            Figure::new("ticker worst delay, no holds", idle_lateness.worst, "ms"),
            Figure::new("ticker p99.9 delay, no holds", idle_lateness.p999, "ms"),
            Figure::new(
                "renewal calls / 100 holds / period",
                renewals / (holds as f64 / 100.0) / f64::from(periods),
                "",
            ),
            Figure::new("PTTL sweeps", f64::from(sweeps), ""),
        ],
    })
}

/// On the client's own runtime: measures the ticker alone for a second,
/// takes the holds, reports ready, then measures the ticker until `done`
/// and releases everything.
async fn hold_and_tick(
    url: &str,
    keys: &[String],
    ready: oneshot::Sender<Result<Lateness, String>>,
    done: oneshot::Receiver<()>,
) -> Result<Lateness, String> {
    let taken = async {
        let client = LockClient::builder(url)
            .watchdog_timeout(TIMEOUT)
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let idle = tick_until(tokio::time::sleep(Duration::from_secs(2))).await;
        let mut guards = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(CHUNK) {
            let mut set = JoinSet::new();
            for key in chunk {
                let lock = client.lock(key);
                set.spawn(async move { lock.lock().await });
            }
            while let Some(joined) = set.join_next().await {
                guards.push(
                    joined
                        .map_err(|e| e.to_string())?
                        .map_err(|e| e.to_string())?,
                );
            }
        }
        Ok::<_, String>((client, guards, idle))
    }
    .await;
    let (client, guards, idle) = match taken {
        Ok(taken) => taken,
        Err(why) => {
            let _ = ready.send(Err(why.clone()));
            return Err(why);
        }
    };
    let _ = ready.send(Ok(idle));
    let busy = tick_until(done).await;
    if guards.iter().any(|g| g.is_lost()) {
        return Err("a hold was lost".to_string());
    }
    let mut guards = guards.into_iter();
    loop {
        let mut set = JoinSet::new();
        for guard in guards.by_ref().take(CHUNK) {
            set.spawn(guard.unlock());
        }
        if set.is_empty() {
            break;
        }
        while let Some(joined) = set.join_next().await {
            joined
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        }
    }
    drop(client);
    Ok(busy)
}

/// The CPU time the calling thread has used so far.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime only writes the struct it is given.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer; CLOCK_THREAD_CPUTIME_ID is POSIX.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Runs a task ticking every millisecond until `end` completes: how late
/// its ticks were, and how much CPU time the thread used in between.
async fn tick_until(end: impl std::future::Future) -> Lateness {
    let seen = Arc::new(Mutex::new(Vec::<(Duration, Duration)>::new()));
    let ticker = tokio::spawn({
        let seen = seen.clone();
        async move {
            let mut next = tokio::time::Instant::now() + Duration::from_millis(1);
            let mut cpu = thread_cpu();
            loop {
                tokio::time::sleep_until(next).await;
                let now = tokio::time::Instant::now();
                let late = now.saturating_duration_since(next);
                let now_cpu = thread_cpu();
                let used = now_cpu.saturating_sub(cpu);
                cpu = now_cpu;
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((late, used));
                next = now + Duration::from_millis(1);
            }
        }
    });
    end.await;
    ticker.abort();
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
    let mut all: Vec<f64> = seen.iter().map(|(late, _)| ms(late)).collect();
    all.sort_by(f64::total_cmp);
    let on_cpu = seen.iter().map(|(late, used)| ms(late.min(used)));
    Lateness {
        worst: all.last().copied().unwrap_or(0.0),
        p999: percentile(&all, 0.999),
        worst_on_cpu: on_cpu.fold(0.0, f64::max),
    }
}
