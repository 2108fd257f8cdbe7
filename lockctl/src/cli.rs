//! The command line: options and subcommands.

use crate::duration;
use crate::exit;
use clap::{Args, Parser, Subcommand, ValueEnum};
use redlua_analyzer::{ServerTarget, UnknownTarget};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Distributed locks on Redis, from the shell: lint Redis Lua scripts,
/// inspect, hold and break Redisson-compatible locks, run a command while
/// holding one (a distributed flock).
#[derive(Debug, Parser)]
#[command(name = "lockctl", version, after_help = exit::HELP)]
pub struct Cli {
    /// The Redis server, before the subcommand (`lockctl --url URL status
    /// NAME`), as earlier versions took it; hidden, as each subcommand that
    /// talks to Redis lists its own `--url`, which wins.
    #[arg(long = "url", hide = true, value_name = "URL")]
    pub url_before: Option<String>,

    /// `--json` before the subcommand (`lockctl --json status NAME`); hidden,
    /// as each subcommand lists its own `--json`, saying what it writes.
    #[arg(long = "json", hide = true)]
    pub json_before: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// How to reach Redis: the options of every subcommand but `lint`.
#[derive(Debug, Args, Clone)]
pub struct ServerArgs {
    /// The Redis server, e.g. redis://127.0.0.1:6379/ or
    /// redis://:PASSWORD@HOST:PORT/DB [default: $REDIS_URL].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
}

/// The lease options of the subcommands that hold locks.
#[derive(Debug, Args, Clone, Copy)]
pub struct WatchdogArgs {
    /// The watchdog timeout: the lease of holds taken without --lease,
    /// renewed every third of it (for tests and demos; at least 30ms).
    #[arg(long, hide = true, value_name = "DURATION", value_parser = duration::parse_watchdog)]
    pub watchdog_timeout: Option<Duration>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check Redis Lua scripts and print rustc-style diagnostics.
    ///
    /// Each script is parsed as Redis runs it and checked against the
    /// server target: KEYS and ARGV use, commands and their arities, writes
    /// in read-only scripts, globals the sandbox refuses. Directories are
    /// searched for `*.lua` files. Nothing is sent to Redis.
    #[command(after_help = exit::LINT_HELP)]
    Lint(LintArgs),
    /// Show whether a lock is held, its kind, holders and TTL.
    ///
    /// Reads the lock NAME (reentrant, fair or read/write, as Redisson and
    /// redlua store them) without changing it: who holds it and how many
    /// times, how long its lease has left, a fair lock's queue. Exit code 0 when it
    /// is held, 1 when it is free, 3 when the key is not a lock.
    Status(StatusArgs),
    /// List the locks whose names match a pattern (SCAN, never KEYS).
    ///
    /// Walks the keyspace with SCAN, a batch at a time (the server is never
    /// blocked for long), keeps the hashes that are locks, and prints one
    /// line per lock with its kind, holders and TTL. Exit code 0 when locks were found, 1 when none
    /// matched.
    Ls(LsArgs),
    /// Run a command while holding a lock (a distributed flock).
    ///
    /// Acquires the lock NAME (waiting at most --wait), runs CMD while the
    /// watchdog renews the lease, and releases the lock when CMD ends.
    /// lockctl exits with CMD's exit code; if the lock is lost while CMD
    /// runs, CMD is stopped as --on-lost says and lockctl exits with 123.
    #[command(
        override_usage = "lockctl run [OPTIONS] <NAME> [--] <CMD>...",
        after_help = crate::child::HELP
    )]
    Run(RunArgs),
    /// Acquire a lock, hold it for a while, release it.
    ///
    /// Acquires the lock NAME (waiting at most --wait), keeps it for --for
    /// while the watchdog renews the lease, then releases it: for trying
    /// out locks, draining a resource, or keeping others out for a while.
    Hold(HoldArgs),
    /// Break a lock whoever holds it, and wake its waiters.
    ///
    /// Deletes the lock NAME whoever holds it (--force is required: the
    /// holder's work is no longer protected) and announces the release, so
    /// that its waiters try again at once. Exit code 0 when a lock was
    /// broken, 1 when there was nothing to break.
    Unlock(UnlockArgs),
}

impl Command {
    /// Whether the subcommand's own `--json` was given.
    pub fn json(&self) -> bool {
        match self {
            Command::Lint(args) => args.json,
            Command::Status(args) => args.json,
            Command::Ls(args) => args.json,
            Command::Run(args) => args.json,
            Command::Hold(args) => args.json,
            Command::Unlock(args) => args.json,
        }
    }
}

/// When to colour diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// How `lockctl lint` writes its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// Diagnostics as rustc prints them, for people.
    Human,
    /// One JSON document (as `--json`).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

/// `lockctl lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Script files, and directories searched for `*.lua` files (`-` reads
    /// standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The output format [default: human, or json with --json].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<LintFormat>,

    /// When to colour the diagnostics.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,

    /// The server the scripts must run on: commands, options and shebang
    /// flags it lacks are errors. One of redis-7.0 (the oldest supported),
    /// redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2,
    /// valkey-8.0. A script's `-- redlua: target=...` header wins over it;
    /// without either, the `[package.metadata.redlua]` target of the crate
    /// the script is in, else redis-7.0.
    #[arg(long, value_name = "TARGET", value_parser = parse_target)]
    pub target: Option<ServerTarget>,

    /// Write the findings as one JSON document on stdout (as --format
    /// json).
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,
}

/// A `--target` value.
fn parse_target(value: &str) -> Result<ServerTarget, UnknownTarget> {
    value.parse()
}

/// `lockctl status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The lock's name (its Redis key).
    pub name: String,

    /// Write the lock's state (kind, holders, TTL, waiters) as one JSON
    /// document on stdout.
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,

    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `lockctl ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// Which names to list: a Redis glob pattern (`jobs:*`, `user{7}:*`).
    #[arg(default_value = "*", value_name = "PATTERN")]
    pub pattern: String,

    /// Keys Redis examines per SCAN call (a hint: more is faster, less
    /// blocks the server for shorter moments).
    #[arg(long, default_value_t = 500, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub count: u32,

    /// Also list every key holding an integer as a count: a plain
    /// semaphore's permits or a count-down latch's count (Redisson stores
    /// both as a bare integer, which nothing tells apart from other
    /// integers). Leased semaphores are always listed.
    #[arg(long)]
    pub counters: bool,

    /// Write one JSON object per lock found, one per line, on stdout.
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,

    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Which lock of a name to take.
#[derive(Debug, Args, Clone, Copy)]
#[group(multiple = false)]
pub struct ModeArgs {
    /// Take the read half of the read/write lock NAME (shared with other
    /// readers).
    #[arg(long)]
    pub read: bool,
    /// Take the write half of the read/write lock NAME (exclusive).
    #[arg(long)]
    pub write: bool,
    /// Take the fair lock NAME (Redisson's RFairLock): waiters get it in
    /// the order they asked, Rust and Java ones alike.
    #[arg(long)]
    pub fair: bool,
}

/// How to acquire a lock.
#[derive(Debug, Args, Clone, Copy)]
pub struct AcquireArgs {
    /// Which lock: the reentrant lock by default.
    #[command(flatten)]
    pub mode: ModeArgs,

    /// Wait at most this long for the lock (e.g. 500ms, 30s, 2m), then give
    /// up with exit code 124. Without it, wait as long as it takes.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub wait: Option<Duration>,

    /// With --read or --write: a waiting writer makes new readers wait
    /// behind it, so that a stream of readers cannot starve writers. Every
    /// reader and writer of the lock must use it for it to hold.
    #[arg(long)]
    pub prefer_writers: bool,
}

/// `lockctl run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The lock's name (its Redis key).
    pub name: String,

    /// Which lock, and how long to wait for it.
    #[command(flatten)]
    pub acquire: AcquireArgs,

    /// Run CMD under one leased permit of the semaphore NAME, a pool of N
    /// permits across every machine (Redisson's RPermitExpirableSemaphore
    /// layout), instead of under the lock NAME: at most N such commands at
    /// once. The first run sizes the pool; a pool of another size is an
    /// error.
    #[arg(long, value_name = "N", conflicts_with_all = ["read", "write", "fair", "prefer_writers"],
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub permits: Option<u64>,

    /// Hold the lock at most this long: Redis frees it then, and CMD is
    /// stopped as --on-lost says. Without it the watchdog keeps the lock
    /// while CMD runs.
    #[arg(long, value_name = "DURATION", value_parser = duration::parse_positive)]
    pub lease: Option<Duration>,

    /// What to do to CMD when the lock is lost while it runs (lease ended,
    /// lock deleted or broken). lockctl then exits with 123 once CMD has
    /// ended, whatever the action.
    #[arg(long, value_enum, value_name = "ACTION", default_value_t = OnLost::Term)]
    pub on_lost: OnLost,

    /// With --on-lost term: how long CMD has to end after SIGTERM before it
    /// gets SIGKILL (0s: at once).
    #[arg(long, value_name = "DURATION", default_value = "10s",
          value_parser = duration::parse)]
    pub grace: Duration,

    /// Write lockctl's notes (lock acquired, lost, released) as JSON
    /// objects, one per line, on stderr; CMD's own output is left as it is.
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,

    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,

    /// The watchdog.
    #[command(flatten)]
    pub watchdog: WatchdogArgs,

    /// The command and its arguments: after `--`, or from the first
    /// argument that is not an option of lockctl's. Everything before it
    /// that starts with `-` is parsed as lockctl's, so a misspelt option is
    /// an error, not the command.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// What `run` does to its command when the lock is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnLost {
    /// SIGTERM, then SIGKILL if it has not ended within --grace.
    Term,
    /// SIGKILL at once.
    Kill,
    /// Nothing: it runs to its end, beside whoever takes the lock next.
    Ignore,
}

/// `lockctl hold`.
#[derive(Debug, Args)]
pub struct HoldArgs {
    /// The lock's name (its Redis key).
    pub name: String,

    /// How long to hold it (e.g. 500ms, 30s, 2m).
    #[arg(long = "for", value_name = "DURATION", value_parser = duration::parse)]
    pub hold_for: Duration,

    /// Which lock, and how long to wait for it.
    #[command(flatten)]
    pub acquire: AcquireArgs,

    /// Write one JSON object per step (acquired, released), one per line,
    /// on stdout.
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,

    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,

    /// The watchdog.
    #[command(flatten)]
    pub watchdog: WatchdogArgs,
}

/// `lockctl unlock`.
#[derive(Debug, Args)]
pub struct UnlockArgs {
    /// Required: the lock is broken whoever holds it (their work is no
    /// longer protected).
    #[arg(long, required = true)]
    pub force: bool,

    /// The lock's name (its Redis key); with --permit, the leased
    /// semaphore's.
    pub name: String,

    /// Give back this one permit of the leased semaphore NAME (its id, 32
    /// hex digits, as `lockctl status NAME` lists it) instead of breaking a
    /// lock: its holder's guard says lost at its next renewal, and a
    /// `lockctl run --permits` holding it stops its command.
    #[arg(long, value_name = "ID")]
    pub permit: Option<String>,

    /// Write the outcome (what was broken) as one JSON document on stdout.
    /// Errors are one JSON object on stderr, with a hint.
    #[arg(long)]
    pub json: bool,

    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_takes_the_command_after_dashes_or_not() {
        let cli = Cli::try_parse_from(["lockctl", "run", "n", "--wait", "2s", "--", "ls", "-l"])
            .expect("parses");
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["ls", "-l"]);
        assert_eq!(run.acquire.wait, Some(Duration::from_secs(2)));
        let cli =
            Cli::try_parse_from(["lockctl", "run", "n", "sh", "-c", "exit 3"]).expect("parses");
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["sh", "-c", "exit 3"]);
    }

    #[test]
    fn run_refuses_a_misspelt_option_before_the_command() {
        for args in [
            &["lockctl", "run", "n", "--wiat", "5s", "--", "true"][..],
            &["lockctl", "run", "n", "--wiat", "5s", "true"],
            &["lockctl", "run", "n", "--on-lost", "stop", "--", "true"],
            &["lockctl", "run", "n", "--grace", "10", "--", "true"],
        ] {
            let error = Cli::try_parse_from(args).expect_err("refused");
            assert_eq!(error.exit_code(), i32::from(exit::USAGE), "{args:?}");
        }
        let cli = Cli::try_parse_from(["lockctl", "run", "n", "true", "--wiat"]).expect("parses");
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.command, ["true", "--wiat"]);
        assert_eq!(
            (run.on_lost, run.grace),
            (OnLost::Term, Duration::from_secs(10))
        );
        let cli = Cli::try_parse_from([
            "lockctl",
            "run",
            "n",
            "--on-lost",
            "ignore",
            "--grace",
            "0s",
            "--",
            "true",
        ])
        .expect("parses");
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!((run.on_lost, run.grace), (OnLost::Ignore, Duration::ZERO));
    }

    #[test]
    fn read_and_write_exclude_each_other() {
        let parsed =
            Cli::try_parse_from(["lockctl", "hold", "n", "--for", "1s", "--read", "--write"]);
        assert!(parsed.is_err());
    }

    #[test]
    fn only_what_a_subcommand_takes_is_in_its_help() {
        let mut command = Cli::command();
        let lint = command
            .find_subcommand_mut("lint")
            .expect("lint")
            .render_long_help();
        assert!(!lint.to_string().contains("--url"), "{lint}");
        assert!(!lint.to_string().contains("Exit codes"), "{lint}");
        let status = command
            .find_subcommand_mut("status")
            .expect("status")
            .render_long_help();
        assert!(status.to_string().contains("--url"), "{status}");
        let top = command.render_long_help().to_string();
        assert!(top.contains("Exit codes"), "{top}");
    }

    #[test]
    fn each_subcommand_help_explains_that_subcommand_and_its_json() {
        let mut command = Cli::command();
        let mut json_helps = Vec::new();
        for (name, says) in [
            ("lint", "Nothing is sent to Redis"),
            ("status", "without changing it"),
            ("ls", "Walks the keyspace with SCAN"),
            ("run", "lockctl exits with CMD's exit code"),
            ("hold", "keeps it for --for"),
            ("unlock", "--force is required"),
        ] {
            let help = command
                .find_subcommand_mut(name)
                .expect(name)
                .render_long_help()
                .to_string();
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(says), "{name}: {flat}");
            let json = command
                .find_subcommand(name)
                .expect(name)
                .get_arguments()
                .find(|arg| arg.get_long() == Some("json") && !arg.is_hide_set())
                .and_then(|arg| arg.get_help())
                .unwrap_or_else(|| panic!("{name}: no --json of its own"))
                .to_string();
            assert!(json.contains("JSON"), "{name}: {json}");
            assert!(flat.contains(&json), "{name}: its help lacks {json:?}");
            json_helps.push(json);
        }
        // Each says what that subcommand writes: no two alike.
        let mut distinct = json_helps.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), json_helps.len(), "{json_helps:#?}");
    }

    #[test]
    fn json_is_taken_before_or_after_the_subcommand() {
        for args in [
            &["lockctl", "--json", "status", "n"][..],
            &["lockctl", "status", "n", "--json"],
        ] {
            let cli = Cli::try_parse_from(args).expect("parses");
            assert!(cli.json_before || cli.command.json(), "{args:?}");
        }
        let cli = Cli::try_parse_from(["lockctl", "status", "n"]).expect("parses");
        assert!(!cli.json_before && !cli.command.json());
    }

    #[test]
    fn lint_takes_a_target() {
        let cli = Cli::try_parse_from(["lockctl", "lint", "x.lua"]).expect("parses");
        let Command::Lint(lint) = cli.command else {
            panic!("not lint")
        };
        assert_eq!(lint.target, None);
        let cli = Cli::try_parse_from(["lockctl", "lint", "--target", "valkey-8.0", "x.lua"])
            .expect("parses");
        let Command::Lint(lint) = cli.command else {
            panic!("not lint")
        };
        assert_eq!(lint.target, Some(ServerTarget::Valkey8_0));
        // The help names every target.
        let help = Cli::command()
            .find_subcommand_mut("lint")
            .expect("lint")
            .render_long_help()
            .to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for target in ServerTarget::ALL {
            assert!(help.contains(target.name()), "{target}: {help}");
        }
    }

    #[test]
    fn the_url_may_come_before_the_subcommand() {
        let cli =
            Cli::try_parse_from(["lockctl", "--url", "redis://a/", "status", "n"]).expect("parses");
        assert_eq!(cli.url_before.as_deref(), Some("redis://a/"));
        assert!(Cli::try_parse_from(["lockctl", "--url", "redis://a/", "lint", "x.lua"]).is_ok());
    }

    #[test]
    fn unlock_needs_force() {
        assert!(Cli::try_parse_from(["lockctl", "unlock", "n"]).is_err());
        assert!(Cli::try_parse_from(["lockctl", "unlock", "--force", "n"]).is_ok());
    }
}
