//! redlua's scenarios, run in this process, and the raw baseline: the same
//! two scripts sent as plain `EVALSHA`, without the client around them.

use crate::Settings;
use crate::flavor::Flavor;
use crate::metrics::{Event, Figure, Measured, Outcome, contention, percentile};
use crate::monitor::counted;
use redlua::LockClient;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The acquire and release scripts redlua's reentrant lock runs.
const ACQUIRE: &str = include_str!("../../lock-runtime/scripts/lock_acquire.lua");
const RELEASE: &str = include_str!("../../lock-runtime/scripts/lock_release.lua");

/// Runs every in-process scenario (those `settings` want).
pub async fn run_all(url: &str, settings: &Settings) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    if settings.wants("uncontended") {
        let [raw, redlua] = if settings.counting() {
            // The MONITOR pass: each alone, once.
            [
                counted(
                    settings,
                    "raw EVALSHA, uncontended",
                    uncontended(url, settings, Pairs::Raw),
                )
                .await,
                counted(
                    settings,
                    "redlua, uncontended",
                    uncontended(url, settings, Pairs::Redlua),
                )
                .await,
            ]
        } else {
            uncontended_side_by_side(url, settings).await
        };
        outcomes.push(outcome("raw EVALSHA", "uncontended", raw));
        outcomes.push(outcome("redlua", "uncontended", redlua));
        if !settings.counting() {
            let [raw, redlua] = uncontended_on_current_thread(url, settings).await;
            outcomes.push(outcome(&current_thread("raw EVALSHA"), "uncontended", raw));
            outcomes.push(outcome(&current_thread("redlua"), "uncontended", redlua));
        }
    }
    if settings.wants("independent") {
        let measured = counted(
            settings,
            "redlua, independent locks",
            crate::independent::run(url, settings),
        )
        .await;
        outcomes.push(outcome(
            "redlua",
            &format!("{} independent locks", crate::independent::LOCKS),
            measured,
        ));
    }
    if settings.wants("contended") {
        for flavor in Flavor::ALL {
            for clients in [1, settings.contenders] {
                let scenario = contended_name(settings.contenders, clients);
                let label = format!("{}, {scenario}", flavor.library());
                let measured = counted(
                    settings,
                    &label,
                    redlua_contended(url, settings, clients, flavor),
                )
                .await;
                outcomes.push(outcome(flavor.library(), &scenario, measured));
            }
        }
    }
    if settings.wants("processes") {
        for flavor in Flavor::ALL {
            let label = format!("{}, 2 processes", flavor.library());
            let measured = counted(
                settings,
                &label,
                crate::processes::run(url, settings, flavor),
            )
            .await;
            outcomes.push(outcome(
                flavor.library(),
                &format!("{} contenders, 2 processes × 4", settings.contenders),
                measured,
            ));
        }
    }
    if settings.wants("semaphores") {
        outcomes.extend(crate::semaphores::run_all(url, settings).await);
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
        for flavor in Flavor::ALL {
            let measured = crate::cancelled::run(url, 300, flavor).await;
            outcomes.push(outcome(
                flavor.library(),
                "cancelled woken waiter",
                measured,
            ));
        }
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
    if settings.wants("editor") {
        let rounds = if settings.seconds < 2.0 { 10 } else { 40 };
        let measured = crate::editor::run(rounds);
        outcomes.push(outcome("redlua-lsp", "editor, 5,000-line script", measured));
    }
    outcomes
}

/// What [`current_thread`] appends to a library's name.
pub const CURRENT_THREAD: &str = " (current-thread runtime)";

/// A library's name for its figures on tokio's current-thread runtime.
fn current_thread(library: &str) -> String {
    format!("{library}{CURRENT_THREAD}")
}

/// The argument that makes the bench a child process running the
/// uncontended scenario on a current-thread runtime
/// ([`current_thread_child`]).
pub const CURRENT_THREAD_ARG: &str = "--uncontended-current-thread";

/// Raw and redlua side by side as in the main run, on a tokio
/// current-thread runtime: in a copy of the bench (a process without a
/// multi-thread runtime; within this one, its idle workers still slowed a
/// current-thread runtime of its own down to the multi-thread figures).
/// The bench runs on the multi-thread runtime (2 workers, what
/// `#[tokio::main]` starts on this 2-core machine); the peers run on one
/// thread each (redis-py blocking, Node's event loop). These figures show
/// what the multi-thread runtime's wake-ups across threads cost the same
/// code.
async fn uncontended_on_current_thread(
    url: &str,
    settings: &Settings,
) -> [Result<Measured, String>; 2] {
    let output = async {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let output = tokio::process::Command::new(exe)
            .arg(CURRENT_THREAD_ARG)
            .arg(url)
            .arg(settings.iterations.to_string())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(format!(
                "the current-thread process failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
    .await;
    let parse = |i: usize| -> Result<Measured, String> {
        let output = output.as_ref().map_err(Clone::clone)?;
        let line = output.lines().nth(i).ok_or("no line from the child")?;
        let Some((per_second, commands)) = line.split_once(' ') else {
            return Err(format!("bad line from the child: {line}"));
        };
        Ok(Measured {
            per_second: per_second
                .parse()
                .map_err(|_| format!("bad rate: {line}"))?,
            commands_per_acquisition: commands.parse().ok(),
            ..Measured::default()
        })
    };
    [parse(0), parse(1)]
}

/// The child of [`uncontended_on_current_thread`]: `args` are the server's
/// URL and the pairs to time; prints one line for raw, then one for redlua:
/// pairs per second and server commands per pair (`-` if not counted).
pub async fn current_thread_child(args: &[String]) -> Result<(), String> {
    let [url, iterations] = args else {
        return Err(format!("usage: {CURRENT_THREAD_ARG} <url> <iterations>"));
    };
    let settings = Settings {
        iterations: iterations.parse().map_err(|_| "bad iterations")?,
        ..Settings::default()
    };
    for measured in uncontended_side_by_side(url, &settings).await {
        let measured = measured?;
        let commands = measured
            .commands_per_acquisition
            .map_or("-".to_string(), |c| c.to_string());
        println!("{} {commands}", measured.per_second);
    }
    Ok(())
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

/// How the uncontended timing alternates raw and redlua: this many rounds
/// each, in turns (raw first in one round, redlua in the next), so that
/// the machine's drift (other load, frequency changes) hits both alike;
/// each library's figure is its median round.
const UNCONTENDED_ROUNDS: usize = 7;

/// Lock + unlock pairs, one after another: the raw scripts or redlua.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pairs {
    Raw,
    Redlua,
}

/// A ready connection or client for [`Pairs`].
enum PairRunner {
    Raw {
        con: redis::aio::MultiplexedConnection,
        acquire: redis::Script,
        release: redis::Script,
        /// The lock's name: one per runner and process, so that no runner
        /// meets another's latches (a release finding its latch returns
        /// early, doing less than a real one).
        name: String,
        attempt: String,
        n: usize,
    },
    Redlua {
        lock: redlua::Lock,
        _client: LockClient,
    },
}

const RAW_OWNER: &str = "00000000-0000-4000-8000-000000000000:1";

impl PairRunner {
    async fn new(url: &str, pairs: Pairs) -> Result<PairRunner, String> {
        let mut runner = match pairs {
            Pairs::Raw => {
                let client = redis::Client::open(url).map_err(|e| e.to_string())?;
                let con = client
                    .get_multiplexed_async_connection()
                    .await
                    .map_err(|e| e.to_string())?;
                static RUNNERS: AtomicUsize = AtomicUsize::new(0);
                let name = format!(
                    "bench:raw:{}:{}",
                    std::process::id(),
                    RUNNERS.fetch_add(1, Ordering::Relaxed)
                );
                PairRunner::Raw {
                    con,
                    acquire: redis::Script::new(ACQUIRE),
                    release: redis::Script::new(RELEASE),
                    attempt: format!("{{{name}}}:redlua_attempt:{RAW_OWNER}"),
                    name,
                    n: 0,
                }
            }
            Pairs::Redlua => {
                let client = LockClient::connect(url).await.map_err(|e| e.to_string())?;
                PairRunner::Redlua {
                    lock: client.lock("bench:uncontended"),
                    _client: client,
                }
            }
        };
        runner.run(50).await?;
        // Let the warm-up's background clean-up finish.
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(runner)
    }

    /// Runs `count` pairs; how long they took.
    async fn run(&mut self, count: usize) -> Result<Duration, String> {
        let started = Instant::now();
        for _ in 0..count {
            self.pair().await?;
        }
        Ok(started.elapsed())
    }

    async fn pair(&mut self) -> Result<(), String> {
        match self {
            PairRunner::Raw {
                con,
                acquire,
                release,
                name,
                attempt,
                n,
            } => {
                *n += 1;
                let _: redis::Value = acquire
                    .key(&*name)
                    .key(format!("redisson_lock_token:{{{name}}}"))
                    .key(&*attempt)
                    .arg(30_000)
                    .arg(RAW_OWNER)
                    .arg("0")
                    .arg(30_000)
                    .arg(3_630_000)
                    .invoke_async(con)
                    .await
                    .map_err(|e| e.to_string())?;
                let _: redis::Value = release
                    .key(&*name)
                    .key(format!("redisson_lock__channel:{{{name}}}"))
                    .key(format!("redisson_unlock_latch:{{{name}}}:{n}"))
                    .key(&*attempt)
                    .key(&*attempt)
                    .arg("0")
                    .arg(30_000)
                    .arg(RAW_OWNER)
                    .arg(30_000)
                    .arg("release")
                    .arg(30_000)
                    .arg("0")
                    .arg("0")
                    .invoke_async(con)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            PairRunner::Redlua { lock, .. } => {
                let guard = lock.lock().await.map_err(|e| e.to_string())?;
                guard.unlock().await.map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

/// One library's uncontended scenario, alone (the `MONITOR` pass).
async fn uncontended(url: &str, settings: &Settings, pairs: Pairs) -> Result<Measured, String> {
    let mut runner = PairRunner::new(url, pairs).await?;
    let before = commands_so_far(url).await;
    let took = runner.run(settings.iterations).await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = commands_so_far(url).await;
    Ok(Measured {
        per_second: settings.iterations as f64 / took.as_secs_f64(),
        commands_per_acquisition: per_op(before, after, settings.iterations),
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: settings.iterations + 50,
        contention: None,
        figures: Vec::new(),
    })
}

/// Raw and redlua side by side: server commands counted over 500 pairs of
/// each, then [`UNCONTENDED_ROUNDS`] timed rounds in turns; each figure is
/// the median round.
async fn uncontended_side_by_side(url: &str, settings: &Settings) -> [Result<Measured, String>; 2] {
    const COUNTED: usize = 500;
    let mut commands = [Ok(None), Ok(None)];
    let mut runners = [None, None];
    for (i, pairs) in [Pairs::Raw, Pairs::Redlua].into_iter().enumerate() {
        let counted = async {
            let mut runner = PairRunner::new(url, pairs).await?;
            let before = commands_so_far(url).await;
            runner.run(COUNTED).await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let after = commands_so_far(url).await;
            Ok::<_, String>((runner, per_op(before, after, COUNTED)))
        };
        match counted.await {
            Ok((runner, counted)) => {
                runners[i] = Some(runner);
                commands[i] = Ok(counted);
            }
            Err(error) => commands[i] = Err(error),
        }
    }
    let per_round = (settings.iterations / UNCONTENDED_ROUNDS).max(1);
    let mut rates = [Vec::new(), Vec::new()];
    for round in 0..UNCONTENDED_ROUNDS {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let Some(runner) = &mut runners[i] else {
                continue;
            };
            match runner.run(per_round).await {
                Ok(took) => rates[i].push(per_round as f64 / took.as_secs_f64()),
                Err(error) => {
                    runners[i] = None;
                    commands[i] = Err(error);
                }
            }
        }
    }
    let [raw, redlua] = commands;
    let [raw_rates, redlua_rates] = rates;
    let measured = |commands: Result<Option<f64>, String>, mut rates: Vec<f64>| {
        let commands = commands?;
        rates.sort_by(f64::total_cmp);
        Ok(Measured {
            per_second: rates.get(rates.len() / 2).copied().unwrap_or(0.0),
            commands_per_acquisition: commands,
            client_commands_per_acquisition: None,
            steady: None,
            acquisitions: per_round * rates.len() + COUNTED + 50,
            contention: None,
            figures: Vec::new(),
        })
    };
    [measured(raw, raw_rates), measured(redlua, redlua_rates)]
}

async fn redlua_contended(
    url: &str,
    settings: &Settings,
    clients: usize,
    flavor: Flavor,
) -> Result<Measured, String> {
    let mut handles = Vec::new();
    for _ in 0..clients {
        handles.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
    }
    let before = commands_so_far(url).await;
    let origin = Instant::now();
    let origin_unix = crate::metrics::unix_now();
    let deadline = origin + Duration::from_secs_f64(settings.seconds);
    let critical = Duration::from_millis(settings.critical_ms);
    let mut tasks = Vec::new();
    for index in 0..settings.contenders {
        let lock = flavor.lock(&handles[index % clients], "bench:contended");
        tasks.push(tokio::spawn(async move {
            let mut events: Vec<Event> = Vec::new();
            let mut unlocks = Vec::new();
            while Instant::now() < deadline {
                let guard = lock.lock().await.map_err(|e| e.to_string())?;
                let acquired = origin.elapsed().as_secs_f64();
                // A precise 1 ms (tokio's timer rounds up to its next tick).
                tokio::task::spawn_blocking(move || std::thread::sleep(critical))
                    .await
                    .map_err(|e| e.to_string())?;
                let released = origin.elapsed().as_secs_f64();
                guard.unlock().await.map_err(|e| e.to_string())?;
                unlocks.push((origin.elapsed().as_secs_f64() - released) * 1000.0);
                events.push((index, acquired, released));
            }
            Ok::<_, String>((events, unlocks))
        }));
    }
    let mut events = Vec::new();
    let mut unlocks = Vec::new();
    for task in tasks {
        let (more, took) = task.await.map_err(|e| e.to_string())??;
        events.extend(more);
        unlocks.extend(took);
    }
    unlocks.sort_by(f64::total_cmp);
    let wall = origin.elapsed().as_secs_f64();
    let after = commands_so_far(url).await;
    let (per_second, contention) = contention(&events, settings.contenders, wall);
    Ok(Measured {
        per_second,
        commands_per_acquisition: per_op(before, after, events.len()),
        client_commands_per_acquisition: None,
        steady: Some(crate::metrics::Steady::of(
            origin_unix,
            settings.seconds,
            &events,
        )),
        acquisitions: events.len(),
        contention: Some(contention),
        // The release's own round trip under the same load: what a
        // handoff cannot go below (the next holder learns of the release
        // from it, or from a message sent with its reply).
        figures: vec![Figure::new(
            "unlock() call to its return, p50",
            percentile(&unlocks, 0.5),
            "ms",
        )],
    })
}
