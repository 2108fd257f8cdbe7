//! Running lockctl on a pseudo-terminal, as in an operator's shell: the
//! terminal is its controlling terminal, its process group is in the
//! foreground, and Ctrl-C typed on it sends SIGINT to that whole group.

use std::ffi::CStr;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A process on a terminal of its own.
pub struct Terminal {
    master: File,
    /// The process.
    pub child: Child,
    output: Arc<Mutex<Vec<u8>>>,
}

/// Starts `command` in a new session whose controlling terminal is a new
/// pseudo-terminal (its stdin, stdout and stderr).
pub fn spawn(mut command: Command) -> Terminal {
    // SAFETY: plain libc calls on a descriptor we own; `name` is a valid
    // buffer of the given length, NUL-terminated by ptsname_r on success.
    let (master, slave_path) = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        assert_eq!(libc::grantpt(fd), 0, "grantpt");
        assert_eq!(libc::unlockpt(fd), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
        (File::from_raw_fd(fd), path)
    };
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .expect("open the terminal");
    command
        .stdin(slave.try_clone().expect("dup"))
        .stdout(slave.try_clone().expect("dup"))
        .stderr(slave);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().expect("lockctl starts on the terminal");
    drop(command); // closes our copies of the terminal's side
    let output = Arc::new(Mutex::new(Vec::new()));
    let mut reader = master.try_clone().expect("dup master");
    let sink = Arc::clone(&output);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        // EIO once every process closed the terminal: the end.
        while let Ok(n) = reader.read(&mut buffer) {
            if n == 0 {
                break;
            }
            sink.lock().expect("output").extend_from_slice(&buffer[..n]);
        }
    });
    Terminal {
        master,
        child,
        output,
    }
}

impl Terminal {
    /// What was written on the terminal so far.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().expect("output")).into_owned()
    }

    /// Types `bytes` on the terminal (`b"\x03"` is Ctrl-C).
    pub fn type_bytes(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("type on the terminal");
    }

    /// Waits until the output contains `text`.
    pub fn wait_for(&self, text: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.output().contains(text) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?} on the terminal: {:?}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for the process to end; its exit code and all it wrote.
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Let the reader drain what is left.
                std::thread::sleep(Duration::from_millis(100));
                return (status.code(), self.output());
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!(
                    "lockctl did not finish within {limit:?}: {:?}",
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
