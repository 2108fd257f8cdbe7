//! Servers kept until the process exits (in a `static`, never dropped):
//! killed, and their directories removed, by an exit handler.

use std::path::{Path, PathBuf};

/// What is cleaned up when the process exits.
struct AtExit {
    registered: bool,
    /// Each node's pid and directory.
    nodes: Vec<(u32, PathBuf)>,
}

static AT_EXIT: std::sync::Mutex<AtExit> = std::sync::Mutex::new(AtExit {
    registered: false,
    nodes: Vec::new(),
});

/// Kills the process `pid` when this process exits and removes `dir` (a
/// server kept in a `static`, which is never dropped).
///
/// # Panics
///
/// When the exit handler cannot be registered.
pub(crate) fn clean_up_at_exit_too(pid: u32, dir: &Path) {
    let mut at_exit = AT_EXIT.lock().unwrap_or_else(|e| e.into_inner());
    if !at_exit.registered {
        // SAFETY: `clean_up_at_exit` is a plain `extern "C" fn()`.
        let failed = unsafe { libc::atexit(clean_up_at_exit) } != 0;
        assert!(!failed, "cannot register an atexit handler");
        at_exit.registered = true;
    }
    at_exit.nodes.push((pid, dir.to_owned()));
}

/// Kills the nodes kept until exit and removes their directories.
extern "C" fn clean_up_at_exit() {
    let nodes = match AT_EXIT.lock() {
        Ok(mut at_exit) => std::mem::take(&mut at_exit.nodes),
        Err(_) => return,
    };
    for (pid, dir) in nodes {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill(2) has no memory-safety preconditions; the pid is
            // our own child, never waited on, so not reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
