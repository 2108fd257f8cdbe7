//! The signals lockctl forwards (SIGINT, SIGTERM, SIGHUP, SIGQUIT), and
//! sending signals to a child.

use crate::exit::Failure;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Listens for the forwarded signals. Once made, these signals no longer
/// kill lockctl: it decides what they mean (release first, then exit).
#[derive(Debug)]
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
    quit: Signal,
}

impl Signals {
    /// Starts listening. Call it before acquiring or spawning anything, so
    /// that no signal can kill lockctl while it holds a lock or a child.
    pub fn listen() -> Result<Signals, Failure> {
        let listen = |kind: SignalKind, number: i32| {
            signal(kind)
                .map_err(|e| Failure::failed(format!("cannot listen for {}: {e}", name(number))))
        };
        Ok(Signals {
            interrupt: listen(SignalKind::interrupt(), libc::SIGINT)?,
            terminate: listen(SignalKind::terminate(), libc::SIGTERM)?,
            hangup: listen(SignalKind::hangup(), libc::SIGHUP)?,
            quit: listen(SignalKind::quit(), libc::SIGQUIT)?,
        })
    }

    /// The next signal received (its number).
    ///
    /// # Cancellation
    ///
    /// Dropping the future loses no signal: one that arrived meanwhile is
    /// returned by the next call.
    pub async fn next(&mut self) -> i32 {
        // `recv` gives `None` only when the runtime shuts down; nothing is
        // reported then.
        tokio::select! {
            Some(()) = self.interrupt.recv() => libc::SIGINT,
            Some(()) = self.terminate.recv() => libc::SIGTERM,
            Some(()) = self.hangup.recv() => libc::SIGHUP,
            Some(()) = self.quit.recv() => libc::SIGQUIT,
            else => std::future::pending().await,
        }
    }
}

/// Whether `signal` most likely reached the child already: SIGINT and
/// SIGQUIT typed on the terminal go to its whole foreground process group,
/// which the child shares with lockctl when lockctl is in the foreground.
/// Forwarding them again would make the child see them twice (a second
/// Ctrl-C means "force quit" to many programs).
pub fn sent_by_terminal_to_child(signal: i32) -> bool {
    (signal == libc::SIGINT || signal == libc::SIGQUIT) && in_terminal_foreground()
}

/// Whether lockctl's process group is the foreground group of the terminal
/// on its stdin, stdout or stderr: what the keys typed on the terminal
/// (Ctrl-C, Ctrl-Z) reach, and the group allowed to read the terminal.
pub fn in_terminal_foreground() -> bool {
    // SAFETY: plain system calls on the standard descriptors and our own
    // process; none of them touches memory of ours.
    unsafe {
        let group = libc::getpgrp();
        [libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO]
            .into_iter()
            .any(|fd| libc::isatty(fd) == 1 && libc::tcgetpgrp(fd) == group)
    }
}

/// Sends `signal` to process `pid`; false when it could not be sent (the
/// process is gone, or the pid does not fit).
pub fn send(pid: u32, signal: i32) -> bool {
    let Some(pid) = positive(pid) else {
        return false;
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours;
    // `pid` is a positive process id, never 0 or -1 (lockctl's own group,
    // every process).
    unsafe { libc::kill(pid, signal) == 0 }
}

/// Sends `signal` to every process of process group `group`; false when it
/// could not be sent (the group has no process left, or the id does not
/// fit). `signal` 0 sends nothing: it tells whether the group has a
/// process left.
pub fn send_to_group(group: u32, signal: i32) -> bool {
    // Group 1 would be `kill(-1)`: every process lockctl may signal.
    let Some(group) = positive(group).filter(|&group| group > 1) else {
        return false;
    };
    // SAFETY: as in `send`; `-group` names the group, never lockctl's own
    // (0) or every process (-1), as `group` is above 1.
    unsafe { libc::kill(-group, signal) == 0 }
}

/// `id` as a process id, when it is a positive one.
fn positive(id: u32) -> Option<libc::pid_t> {
    libc::pid_t::try_from(id).ok().filter(|&id| id > 0)
}

/// The signal's name, for messages: `SIGTERM`.
pub fn name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        other => format!("signal {other}"),
    }
}
