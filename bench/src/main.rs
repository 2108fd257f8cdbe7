//! The benchmark runner of redlua (`tools/bench`): redlua's locks against
//! the raw cost of their scripts and against peer libraries, on one
//! throwaway loopback `redis-server`.
//!
//! ```sh
//! tools/bench            # every scenario, every library; ~1 minute
//! tools/bench --quick    # shorter runs
//! tools/bench --no-peers # redlua and the raw baseline only
//! tools/bench --only watchdog --holds 10000  # one group of scenarios
//! tools/bench --only contended --commands    # + the client commands by kind
//! ```
//!
//! It prints a table, and writes `bench/results/latest.json` and
//! `bench/results/latest.svg` (shown by `bench/README.md` and the README).
//! The peers are installed into a throwaway environment under
//! `target/bench-env/`: a Python venv with redis-py (its `Lock`) and
//! python-redis-lock, and an npm prefix with redis-semaphore (its `Mutex`,
//! on ioredis). One lock object and one
//! connection per contender; the same 30 s lease everywhere.

mod cancelled;
mod editor;
mod expansion;
mod flavor;
mod independent;
mod metrics;
mod monitor;
mod peers;
mod processes;
mod report;
mod rwlock;
mod scenarios;
mod semaphores;
mod watchdog;

use std::path::PathBuf;

/// What to run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Lock + unlock pairs of the uncontended scenario.
    pub iterations: usize,
    /// How long each contended scenario runs.
    pub seconds: f64,
    /// Contenders of the contended scenarios.
    pub contenders: usize,
    /// Critical section of the contended scenarios, in milliseconds.
    pub critical_ms: u64,
    /// Run the peers too.
    pub peers: bool,
    /// Count client commands with `MONITOR` on the server at this port.
    pub monitor: Option<u16>,
    /// Run only this group of scenarios (see [`GROUPS`]).
    pub only: Option<String>,
    /// The numbers of holds of the watchdog scenario.
    pub watchdog_holds: Vec<usize>,
    /// Print the client commands of each counted scenario by kind
    /// (`--commands`).
    pub histogram: bool,
}

/// The groups of scenarios `--only` picks from.
pub const GROUPS: [&str; 10] = [
    "uncontended",
    "independent",
    "contended",
    "processes",
    "watchdog",
    "cancelled",
    "rwlock",
    "expansion",
    "editor",
    "semaphores",
];

impl Settings {
    /// Whether the group `group` runs.
    pub fn wants(&self, group: &str) -> bool {
        self.only.as_deref().is_none_or(|only| only == group)
    }

    /// Whether this is the pass that counts client commands (throughput
    /// scenarios only).
    pub fn counting(&self) -> bool {
        self.monitor.is_some()
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            iterations: 5_000,
            seconds: 3.0,
            contenders: 8,
            critical_ms: 1,
            peers: true,
            monitor: None,
            only: None,
            watchdog_holds: vec![10_000, 100_000],
            histogram: false,
        }
    }
}

fn settings() -> Result<Settings, String> {
    let mut settings = Settings::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => {
                settings.iterations = 1_000;
                settings.seconds = 1.0;
            }
            "--no-peers" => settings.peers = false,
            "--commands" => settings.histogram = true,
            "--only" => {
                let group = args.next().unwrap_or_default();
                if !GROUPS.contains(&group.as_str()) {
                    return Err(format!("--only takes one of {}", GROUPS.join(", ")));
                }
                settings.only = Some(group);
            }
            "--holds" => {
                let holds = args.next().and_then(|n| n.parse().ok());
                settings.watchdog_holds = vec![holds.ok_or("--holds takes a number")?];
            }
            "-h" | "--help" => {
                println!(
                    "usage: tools/bench [--quick] [--no-peers] [--only {}] [--holds N] [--commands]",
                    GROUPS.join("|")
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (see --help)")),
        }
    }
    Ok(settings)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(scenarios::CURRENT_THREAD_ARG) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
        if let Err(message) = runtime.block_on(scenarios::current_thread_child(&args[1..])) {
            eprintln!("redlua-bench (current-thread process): {message}");
            std::process::exit(1);
        }
        return;
    }
    // The runtime `#[tokio::main]` gives a service on this 2-core machine;
    // the uncontended scenario also runs in a current-thread copy.
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a multi-thread runtime")
        .block_on(bench(args));
}

/// The bench (or the contender process of the two-process scenario).
async fn bench(args: Vec<String>) {
    if args.first().map(String::as_str) == Some("--contender-process") {
        if let Err(message) = processes::child(&args[1..]).await {
            eprintln!("redlua-bench (contender process): {message}");
            std::process::exit(1);
        }
        return;
    }
    let settings = match settings() {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("redlua-bench: {message}");
            std::process::exit(2);
        }
    };
    let server = tokio::task::spawn_blocking(redlua_test_support::RedisServer::start)
        .await
        .expect("starting redis-server");
    let url = server.url();
    let redis_version = scenarios::redis_version(&url).await;
    eprintln!("redis-server {redis_version} at {url}; settings {settings:?}");

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The peers and the counting pass are about throughput only.
    let peers = settings.wants("uncontended")
        || settings.wants("contended")
        || settings.wants("semaphores");
    let throughput = peers || settings.wants("independent") || settings.wants("processes");
    let env = (settings.peers && peers)
        .then(|| peers::Environment::prepare(&root.join("../target/bench-env")));
    let run = async |settings: &Settings| {
        let mut outcomes = scenarios::run_all(&url, settings).await;
        if let Some(env) = &env {
            outcomes.extend(peers::run_all(env, &root.join("peers"), &url, settings).await);
        }
        outcomes
    };
    // The timed pass; then a short pass counting the commands clients send,
    // with MONITOR attached (it slows the server, so it times nothing).
    let mut outcomes = run(&settings).await;
    let counting = Settings {
        iterations: 300,
        // The steady part: 2.5 s, after the warm-up (a few per-second
        // periods, and few acquisitions under way at its ends).
        seconds: 3.0,
        monitor: Some(server.port()),
        ..settings.clone()
    };
    let counted = if throughput {
        run(&counting).await
    } else {
        Vec::new()
    };
    for counted in counted {
        let Ok(measured) = counted.result else {
            continue;
        };
        if let Some(outcome) = outcomes
            .iter_mut()
            .find(|o| o.library == counted.library && o.scenario == counted.scenario)
            && let Ok(timed) = &mut outcome.result
        {
            timed.client_commands_per_acquisition = measured.client_commands_per_acquisition;
        }
    }

    let machine = report::Machine {
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        redis_version,
    };
    println!("{}", report::table(&outcomes));
    if settings.only.is_some() {
        // A partial run leaves the full results alone.
        return;
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    match report::write(&out, &machine, &settings, &outcomes) {
        Ok(()) => eprintln!("wrote {}/latest.json and latest.svg", out.display()),
        Err(error) => {
            eprintln!("redlua-bench: cannot write the results: {error}");
            std::process::exit(1);
        }
    }
}
