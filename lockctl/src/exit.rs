//! Exit codes, and the error type that carries one.
//!
//! `run` passes its command's exit code through, so lockctl's own failures
//! use codes that commands rarely do (the 123–127 range of `timeout(1)` and
//! `env(1)`), apart from the conventional 1, 2 and 3 of simple answers.

use std::fmt;

/// Success (`status`: the lock is held; `ls`: locks were found; `unlock`: a
/// lock was broken).
pub const OK: u8 = 0;
/// A negative answer: `lint` found errors or could not read a file;
/// `status`: the lock is free; `ls`: no lock matches; `unlock --force`:
/// there was nothing to break.
pub const NO: u8 = 1;
/// Bad usage: unknown option, malformed duration, no Redis URL, invalid
/// lock name.
pub const USAGE: u8 = 2;
/// The key holds something that is not a lock; it was left alone.
pub const NOT_A_LOCK: u8 = 3;
/// `run`, `hold`: the lock was lost (lease expired, lock deleted or broken)
/// before it was released; `run` stopped the command first, as `--on-lost`
/// says, whatever the command's own exit code.
pub const LOST: u8 = 123;
/// `run`, `hold`: the lock could not be had within `--wait`.
pub const TIMEOUT: u8 = 124;
/// lockctl failed: Redis unreachable or failing.
pub const FAILED: u8 = 125;
/// `run`: the command was found but could not be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// `run`: the command was not found.
pub const NOT_FOUND: u8 = 127;
/// `run`, `hold`: killed by signal N (the command, or lockctl while it
/// waited) gives 128 + N.
pub const SIGNAL_BASE: u8 = 128;

/// The exit-code table shown at the end of `lockctl --help`.
pub const HELP: &str = "\
Exit codes:
  0    success; status: the lock is held (or a semaphore or count);
       ls: locks or semaphores were found; unlock: a lock was broken,
       or a permit given back
  1    lint: errors found, or a file unreadable; status: free;
       ls: nothing matches; unlock: nothing to break
  2    usage error (bad option or duration, no Redis URL, invalid name)
  3    the key holds something that is not a lock (left alone)
  123  run, hold: the lock (or permit) was lost while held (run: CMD was stopped
       as --on-lost says: SIGTERM, then SIGKILL after --grace)
  124  run, hold: the lock was not acquired within --wait
  125  lockctl failed (Redis unreachable or failing)
  126  run: CMD cannot be executed
  127  run: CMD not found
  128+N  run: CMD was killed by signal N; run, hold: lockctl got
       signal N while waiting or holding (after releasing)
  run otherwise exits with CMD's own exit code.";

/// The exit codes of `lockctl lint`, shown at the end of `lockctl lint
/// --help`.
pub const LINT_HELP: &str = "\
Exit status:
  0  no errors (warnings allowed)
  1  errors found, or a file that could not be read or checked
  2  usage error (bad option, unknown target or format)";

/// A failure: what to tell the user, what to do about it, and the exit
/// code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// What went wrong (made one line when shown: [`Failure::line`]).
    pub message: String,
    /// What to do about it, when the exit code's own hint
    /// ([`hint_for`]) would not say.
    pub hint: Option<String>,
}

impl Failure {
    /// A failure with `code` and `message`, and the code's hint.
    pub fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            hint: None,
        }
    }

    /// The same failure, with `hint` instead of the exit code's own.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    /// The message on one line: the lines of a multi-line error (a
    /// server's, a parser's) joined with " / ".
    pub fn line(&self) -> String {
        one_line(&self.message)
    }

    /// What to do about it: the hint given, else the exit code's.
    pub fn hint(&self) -> String {
        one_line(self.hint.as_deref().unwrap_or_else(|| hint_for(self.code)))
    }

    /// Bad usage ([`USAGE`]).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }

    /// lockctl failed ([`FAILED`]).
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure::new(FAILED, message)
    }

    /// A lock error, with the exit code and hint that fit it.
    pub fn lock(error: redlua_runtime::Error) -> Failure {
        use redlua_runtime::Error;
        let code = match &error {
            Error::WrongType { .. } => NOT_A_LOCK,
            Error::InvalidName { .. }
            | Error::InvalidPermits { .. }
            | Error::Config(_)
            | Error::InvalidUrl { .. } => USAGE,
            Error::Timeout { .. } => TIMEOUT,
            Error::LockLost { .. } => LOST,
            _ => FAILED,
        };
        let hint = match &error {
            Error::NotRedis { .. } => Some(NOT_REDIS_HINT),
            Error::InvalidUrl { .. } => Some(URL_HINT),
            Error::TlsNotEnabled => Some("build lockctl with its default features (tls-rustls)"),
            _ => None,
        };
        let failure = Failure::new(code, error.to_string());
        match hint {
            Some(hint) => failure.with_hint(hint),
            None => failure,
        }
    }
}

impl Failure {
    /// A command line clap refused, as one line with a hint: clap's
    /// message, and its tip, the usage line and where the help is
    /// (`command`, e.g. `lockctl hold`) as the hint.
    pub fn from_usage(error: &clap::Error, command: &str) -> Failure {
        let text = error.render().to_string();
        let mut paragraphs = text.split("\n\n");
        let message = paragraphs.next().unwrap_or_default();
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut hint = Vec::new();
        for line in paragraphs.flat_map(str::lines).map(str::trim) {
            if let Some(tip) = line.strip_prefix("tip: ") {
                hint.push(tip.to_string());
            } else if let Some(usage) = line.strip_prefix("Usage: ") {
                hint.push(format!("usage: {usage}"));
            }
        }
        hint.push(format!("`{command} --help` explains it"));
        Failure::new(USAGE, message).with_hint(hint.join("; "))
    }
}

/// The hint for an endpoint that does not speak Redis.
pub const NOT_REDIS_HINT: &str =
    "point --url (or REDIS_URL) at the Redis port: `redis-cli -u URL PING` should answer PONG";

/// The hint for a URL that does not parse.
pub const URL_HINT: &str = "for example --url redis://127.0.0.1:6379/, or redis://:PASSWORD@HOST:PORT/DB; rediss:// for TLS";

/// What to do about a failure with exit code `code`.
pub fn hint_for(code: u8) -> &'static str {
    match code {
        NO => "see `lockctl --help` for what this exit code means",
        USAGE => "see `lockctl <SUBCOMMAND> --help` for the arguments",
        NOT_A_LOCK => "`lockctl status NAME` shows what the key holds; lockctl leaves it alone",
        LOST => {
            "the lease ran out or the lock was broken: a longer --lease, or a shorter job, keeps it"
        }
        TIMEOUT => "`lockctl status NAME` shows who holds it; wait longer with --wait",
        CANNOT_EXECUTE => "check that CMD is an executable file, and its permissions",
        NOT_FOUND => "check CMD's spelling, or give its full path",
        _ => {
            "check that Redis is up and reachable at --url (or REDIS_URL): `redis-cli -u URL PING`"
        }
    }
}

/// `text` on one line: its lines, trimmed, joined with " / ".
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The exit code of a command that ended with `status`: its code, or
/// 128 + the signal that killed it.
pub fn of_status(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        // Exit codes are 0..=255 on Unix; `code & 0xff` is what a shell sees.
        return (code & 0xff) as u8;
    }
    match status.signal() {
        Some(signal) => of_signal(signal),
        None => FAILED,
    }
}

/// 128 + `signal`, as a shell reports a death by signal.
pub fn of_signal(signal: i32) -> u8 {
    u8::try_from(signal)
        .ok()
        .and_then(|s| SIGNAL_BASE.checked_add(s))
        .unwrap_or(FAILED)
}
