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
mod counted;
mod duration;
mod exit;
mod hold;
mod holding;
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
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
        Command::Unlock(args) => on_runtime(unlock::run(
            &globals(&args.server, None),
            &args.name,
            args.permit.as_deref(),
        )),
    };
    ExitCode::from(outcome.unwrap_or_else(|failure| report(format, &failure)))
}

/// A command line clap refused: help and version are printed as they are;
/// errors as one line with a hint (JSON with `--json` among the arguments).
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(exit::USAGE));
    }
    // lockctl's own arguments: those before `--`.
    let args: Vec<_> = std::env::args_os()
        .skip(1)
        .take_while(|arg| arg != "--")
        .collect();
    let format = if args.iter().any(|arg| arg == "--json") {
        Format::Json
    } else {
        Format::Human
    };
    // The subcommand whose help to point at: the first argument that names one.
    let command = <Cli as clap::CommandFactory>::command();
    let subcommand = args.iter().find_map(|arg| {
        command
            .get_subcommands()
            .map(clap::Command::get_name)
            .find(|name| arg == *name)
    });
    let command = match subcommand {
        Some(name) => format!("lockctl {name}"),
        None => "lockctl".to_string(),
    };
    ExitCode::from(report(format, &Failure::from_usage(error, &command)))
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
