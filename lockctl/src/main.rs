//! `lockctl`: the command line of redlua.
//!
//! - `lockctl lint FILE...`: rustc-style diagnostics for Redis Lua scripts;
//! - `lockctl status NAME`: whether a lock is held, by whom, for how long;
//! - `lockctl ls [PATTERN]`: the locks whose names match, with SCAN;
//! - `lockctl run NAME -- CMD...`: run a command while holding a lock;
//! - `lockctl hold NAME --for D`: hold a lock for a while;
//! - `lockctl unlock --force NAME`: break a lock.
//!
//! `lockctl --help` lists the options and exit codes.
#![warn(missing_docs)]

mod child;
mod cli;
mod connect;
mod duration;
mod exit;
mod hold;
mod identity;
mod lint;
mod locks;
mod ls;
mod main_args;
mod output;
mod run;
mod signals;
mod status;
mod unlock;

use clap::Parser;
use cli::{Cli, Command};
use exit::Failure;
use main_args::Globals;
use output::Format;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = if cli.json_before || cli.command.json() {
        Format::Json
    } else {
        Format::Human
    };
    let globals = |server: &cli::ServerArgs, watchdog: Option<&cli::WatchdogArgs>| Globals {
        // The subcommand's --url, else one given before it, else REDIS_URL.
        url: server
            .url
            .clone()
            .or_else(|| cli.url_before.clone())
            .or_else(|| std::env::var("REDIS_URL").ok()),
        format,
        watchdog_timeout: watchdog.and_then(|w| w.watchdog_timeout),
    };
    let outcome = match &cli.command {
        Command::Lint(args) => Ok(lint::run(args, format)),
        Command::Status(args) => on_runtime(status::run(&globals(&args.server, None), &args.name)),
        Command::Ls(args) => on_runtime(ls::run(&globals(&args.server, None), args)),
        Command::Run(args) => {
            on_runtime(run::run(&globals(&args.server, Some(&args.watchdog)), args))
        }
        Command::Hold(args) => on_runtime(hold::run(
            &globals(&args.server, Some(&args.watchdog)),
            args,
        )),
        Command::Unlock(args) => on_runtime(unlock::run(&globals(&args.server, None), &args.name)),
    };
    ExitCode::from(outcome.unwrap_or_else(|failure| report(format, &failure)))
}

/// Runs a command that talks to Redis on a tokio runtime of its own.
fn on_runtime(command: impl Future<Output = Result<u8, Failure>>) -> Result<u8, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("cannot start the async runtime: {e}")))?;
    let outcome = runtime.block_on(command);
    // Background work (connections, the watchdog) stops here; releases
    // were awaited already.
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome
}

/// Prints a failure to stderr, as one line with a hint; its exit code.
fn report(format: Format, failure: &Failure) -> u8 {
    match format {
        Format::Human => output::err(&format!(
            "lockctl: error: {} (hint: {})",
            failure.line(),
            failure.hint()
        )),
        Format::Json => output::err(
            &serde_json::json!({
                "error": failure.line(),
                "hint": failure.hint(),
                "exit_code": failure.code,
            })
            .to_string(),
        ),
    }
    failure.code
}
