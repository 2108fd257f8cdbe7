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
  0    success; status: the lock is held; ls: locks were found;
       unlock: a lock was broken
  1    lint: errors found, or a file unreadable; status: free;
       ls: no lock matches; unlock: nothing to break
  2    usage error (bad option or duration, no Redis URL, invalid name)
  3    the key holds something that is not a lock (left alone)
  123  run, hold: the lock was lost while held (run: CMD was stopped
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

/// A failure: what to tell the user, and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// One line saying what went wrong.
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// Bad usage ([`USAGE`]).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }

    /// lockctl failed ([`FAILED`]).
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure::new(FAILED, message)
    }

    /// A lock error, with the exit code that fits it.
    pub fn lock(error: redlua_runtime::Error) -> Failure {
        use redlua_runtime::Error;
        let code = match &error {
            Error::WrongType { .. } => NOT_A_LOCK,
            Error::InvalidName { .. } | Error::Config(_) => USAGE,
            Error::Timeout { .. } => TIMEOUT,
            Error::LockLost { .. } => LOST,
            _ => FAILED,
        };
        Failure::new(code, error.to_string())
    }
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
