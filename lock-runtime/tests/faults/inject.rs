//! The faults: CLIENT KILL of every connection, and Redis stopped (SIGSTOP) and resumed.

use super::{STOP_FOR, STOP_GAP, STOP_LEAD, STOPS};
use redlua_test_support::RedisServer;
use std::time::{Duration, Instant};

/// The kill test: `CLIENT KILL` every `KILL_EVERY` for `KILL_PHASE`.
const KILL_EVERY: Duration = Duration::from_millis(300);

/// `CLIENT KILL` of every normal and pub/sub connection but its own, every
/// [`KILL_EVERY`] from `go` for `phase`. Returns a summary.
pub(crate) fn kill_connections(server: &RedisServer, go: Instant, phase: Duration) -> String {
    let mut con = server.connection();
    let (mut rounds, mut normal, mut pubsub) = (0u32, 0i64, 0i64);
    let mut next = go + KILL_EVERY;
    while next < go + phase {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let n: i64 = redis::cmd("CLIENT")
            .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"][..])
            .query(&mut con)
            .expect("CLIENT KILL TYPE normal");
        let p: i64 = redis::cmd("CLIENT")
            .arg(&["KILL", "TYPE", "pubsub"][..])
            .query(&mut con)
            .expect("CLIENT KILL TYPE pubsub");
        rounds += 1;
        normal += n;
        pubsub += p;
        next += KILL_EVERY;
    }
    std::thread::sleep((go + phase).saturating_duration_since(Instant::now()));
    format!(
        "{rounds} kill rounds every {KILL_EVERY:?}: {normal} normal and {pubsub} pub/sub connections killed"
    )
}

/// Resumes the server if the test fails while it is stopped.
struct ResumeOnDrop<'a>(&'a RedisServer);

impl Drop for ResumeOnDrop<'_> {
    fn drop(&mut self) {
        self.0.resume();
    }
}

/// SIGSTOP for [`STOP_FOR`], [`STOPS`] times, [`STOP_GAP`] apart, starting
/// [`STOP_LEAD`] after `go`. Returns a summary.
pub(crate) fn stop_server(server: &RedisServer, go: Instant) -> String {
    let mut stops = Vec::new();
    let mut at = go + STOP_LEAD;
    for _ in 0..STOPS {
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        let stopped = Instant::now();
        let resume = ResumeOnDrop(server);
        server.pause();
        std::thread::sleep(STOP_FOR);
        drop(resume);
        stops.push(stopped.elapsed());
        at += STOP_FOR + STOP_GAP;
    }
    std::thread::sleep(at.saturating_duration_since(Instant::now()));
    format!("{STOPS} SIGSTOPs, lasting {stops:?}")
}
