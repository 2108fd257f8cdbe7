//! Helpers shared by lockctl's tests: running the real binary, waiting.
#![allow(dead_code)] // each test file uses a part of it

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, with no Redis URL and no colour settings
/// inherited from the environment.
pub fn lockctl() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lockctl"));
    command.env_remove("REDIS_URL").env_remove("NO_COLOR");
    command
}

/// The binary under test, pointed at `url`.
pub fn lockctl_at(url: &str) -> Command {
    let mut command = lockctl();
    command.env("REDIS_URL", url);
    command
}

/// What a finished lockctl did.
#[derive(Debug)]
pub struct Run {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs `command` to the end, capturing its output.
pub fn run(command: &mut Command) -> Run {
    command
        .stdin(Stdio::null())
        .output()
        .expect("lockctl runs")
        .into()
}

/// Starts `command` with captured output.
pub fn spawn(command: &mut Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lockctl starts")
}

/// Waits for `child` at most `limit`; kills it and fails the test when it
/// takes longer.
pub fn finish(mut child: Child, limit: Duration) -> Run {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait().expect("try_wait") {
            Some(_) => return child.wait_with_output().expect("output").into(),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let run: Run = child.wait_with_output().expect("output").into();
                panic!("lockctl did not finish within {limit:?}: {run:?}");
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Waits until `condition` holds, failing the test after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The text of `path`, empty when it does not exist.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Parses lockctl's JSON output.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}
pub mod pty;
