//! The command `run` starts under a lock: what it is told about the lock,
//! which processes lockctl's signals reach, and the text of `run --help`.
//!
//! Invariants:
//! - CMD's environment names the lock, its owner and the hold's fencing
//!   token ([`NAME_VAR`], [`OWNER_VAR`], [`TOKEN_VAR`]).
//! - Off a terminal (scripts, cron, services), CMD leads a process group of
//!   its own and every signal lockctl sends it goes to that whole group, so
//!   that the processes a shell started stop with it. In the foreground of
//!   a terminal, CMD stays in lockctl's group (it may read the terminal, and
//!   Ctrl-C reaches it directly) and signals go to CMD alone.
//! - A signal never reaches a process that is not CMD's: CMD's pid stays
//!   reserved until `wait` reaps it, and a process group's id stays reserved
//!   while the group has a process; after the reaping only the group is
//!   signalled, and only while it still has one.

use crate::holding::Holding;
use std::ffi::OsString;

use crate::signals;

/// The variable holding the lock's name.
pub const NAME_VAR: &str = "REDLUA_LOCK_NAME";
/// The variable holding the hold's owner, as stored in Redis.
pub const OWNER_VAR: &str = "REDLUA_LOCK_OWNER";
/// The variable holding the hold's fencing token (decimal).
pub const TOKEN_VAR: &str = "REDLUA_LOCK_TOKEN";

/// The end of `lockctl run --help`.
pub const HELP: &str = "\
CMD's environment:
  REDLUA_LOCK_NAME   the lock's name (with --permits: the semaphore's)
  REDLUA_LOCK_OWNER  the hold's owner, as Redis stores it (<client-uuid>:<id>;
                     with --permits: the permit's id, 32 hex digits)
  REDLUA_LOCK_TOKEN  the hold's fencing token: greater than every earlier
                     holder's; hand it to what CMD writes, and let that
                     refuse a token lower than one it has seen

With --permits N, CMD runs under one leased permit of the N-permit
semaphore NAME (Redisson's RPermitExpirableSemaphore layout): at most N
commands run at once across every machine, like `sem` or `parallel -j N`.
The first run sizes the pool; a pool of another size is an error. A permit
whose lease ends (its holder died, or was stopped too long) comes back by
itself, once.

When the lock (or permit) is lost while CMD runs (its lease ended, or it
was deleted or broken), CMD is stopped as --on-lost says (by default SIGTERM, then SIGKILL
after --grace, 10s), and lockctl exits with 123 once CMD has ended.

Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to lockctl are passed on
to CMD, and lockctl releases the lock once CMD has ended. Off a terminal,
CMD runs in a process group of its own, and these signals (and those of
--on-lost) reach the whole group: the processes a shell script started
stop with it. In the foreground of a terminal, CMD shares lockctl's group:
Ctrl-C reaches it directly (once), and the other signals reach CMD alone.

lockctl exits with CMD's exit code, or 128 + N when signal N killed it;
`lockctl --help` lists lockctl's own exit codes.";

/// The command to start, with the lock's variables set.
pub fn command(program: &OsString, args: &[OsString], held: &Holding) -> Command {
    let own_group = !signals::in_terminal_foreground();
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env(NAME_VAR, held.name())
        .env(OWNER_VAR, held.owner())
        .env(TOKEN_VAR, held.token().to_string())
        .kill_on_drop(false);
    if own_group {
        // 0: a new group, whose id is CMD's pid.
        command.process_group(0);
    }
    Command { command, own_group }
}

/// A command ready to start.
pub struct Command {
    command: tokio::process::Command,
    own_group: bool,
}

impl Command {
    /// Starts it.
    pub fn spawn(mut self) -> std::io::Result<(tokio::process::Child, Target)> {
        let child = self.command.spawn()?;
        let target = Target {
            pid: child.id(),
            own_group: self.own_group,
        };
        Ok((child, target))
    }
}

/// Where the signals for a started command go.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// CMD's pid (and its group's id with `own_group`); `None` if it was
    /// gone before it could be read.
    pid: Option<u32>,
    own_group: bool,
}

impl Target {
    /// Sends `signal` to CMD (its group, if it has one). Only while CMD has
    /// not been reaped (its `wait` has not returned).
    pub fn send(self, signal: i32) -> bool {
        match self.pid {
            Some(pid) if self.own_group => signals::send_to_group(pid, signal),
            Some(pid) => signals::send(pid, signal),
            None => false,
        }
    }

    /// Passes on `signal`, which lockctl received: to CMD's group if it has
    /// one; else to CMD, unless the terminal sent it to both already.
    pub fn forward(self, signal: i32) -> bool {
        if !self.own_group && signals::sent_by_terminal_to_child(signal) {
            return false;
        }
        self.send(signal)
    }

    /// Whether CMD's group still has a process once CMD has been reaped
    /// (something it started); false without a group of its own.
    pub fn group_left(self) -> bool {
        match self.pid {
            Some(pid) if self.own_group => signals::send_to_group(pid, 0),
            _ => false,
        }
    }

    /// Sends `signal` to what is left of CMD's group once CMD has been
    /// reaped; nothing without a group of its own.
    pub fn send_to_group_left(self, signal: i32) -> bool {
        self.group_left() && self.send(signal)
    }
}
