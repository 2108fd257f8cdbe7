//! The worker processes and their workers: the guarded read-modify-write of one counter.

use super::{
    CHILD_ENV, COUNTER, LOCK, PROCESSES, RESPONSE_TIMEOUT, THINK_MS, WATCHDOG, WORKERS_PER_PROCESS,
    WRITES, now_us,
};
use crate::observer::Record;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisResult};
use redlua_runtime::{Error, LockClient, LockGuard};
use redlua_test_support::RedisServer;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A fair lock waiter's wait time (Redisson's `threadWaitTime`): shorter
/// than the lease, so that a handoff gives the lock this long at first.
const FAIR_WAIT: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Inside the critical section, between the read and the write.
const HOLD: Duration = Duration::from_millis(1);

/// The write of the read-modify-write, and its entry in the write log.
#[redlua_macros::redis_script("tests/user_scripts/logged_write.lua", returns = i64, crate = redlua_runtime)]
struct LoggedWrite<'a> {
    #[key]
    counter: &'a str,
    #[key]
    log: &'a str,
    #[arg]
    value: u64,
    #[arg]
    token: u64,
}

/// xorshift64*: deterministic think times from the printed seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        Rng((seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Kills a worker process when dropped (the test failing included).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Three running worker processes.
pub(crate) struct Run {
    children: Vec<KillOnDrop>,
    readers: Vec<JoinHandle<Vec<String>>>,
    /// When the workers were told to start.
    pub(crate) go: Instant,
}

impl Run {
    /// Starts the worker processes, waits until each has connected its
    /// clients, and tells them to go: each works for `phase`.
    pub(crate) fn start(
        test: &str,
        server: &RedisServer,
        phase: Duration,
        seed: u64,
        kind: Kind,
    ) -> Run {
        let exe = std::env::current_exe().expect("the test binary");
        let (ready_tx, ready) = mpsc::channel();
        let mut children = Vec::new();
        let mut stdins: Vec<ChildStdin> = Vec::new();
        let mut readers = Vec::new();
        for process in 0..PROCESSES {
            let mut child = KillOnDrop(
                Command::new(&exe)
                    .args([test, "--exact", "--nocapture", "--test-threads=1"])
                    .env(
                        CHILD_ENV,
                        format!(
                            "{} {} {process} {seed} {}",
                            server.url(),
                            phase.as_millis(),
                            kind.name()
                        ),
                    )
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .spawn()
                    .expect("spawning a worker process"),
            );
            stdins.push(child.0.stdin.take().unwrap());
            let stdout = child.0.stdout.take().unwrap();
            let ready_tx = ready_tx.clone();
            // Read everything it prints (a full pipe would block it).
            readers.push(std::thread::spawn(move || {
                let mut lines = Vec::new();
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if line.contains("REDLUA_READY") {
                        let _ = ready_tx.send(process);
                    }
                    lines.push(line);
                }
                lines
            }));
            children.push(child);
        }
        for _ in 0..PROCESSES {
            ready
                .recv_timeout(Duration::from_secs(60))
                .expect("a worker process did not connect within 60 s");
        }
        for stdin in &mut stdins {
            stdin.write_all(b"go\n").expect("telling a worker to go");
            stdin.flush().unwrap();
        }
        let go = Instant::now();
        Run {
            children,
            readers,
            go,
        }
    }

    /// Waits for the workers to finish (at most `limit` after `go`) and
    /// returns their records.
    pub(crate) fn finish(mut self, limit: Duration) -> Vec<Record> {
        let deadline = self.go + limit;
        for (process, child) in self.children.iter_mut().enumerate() {
            loop {
                if let Some(status) = child.0.try_wait().expect("waiting for a worker") {
                    assert!(
                        status.success(),
                        "worker process {process} failed: {status}"
                    );
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "worker process {process} still running {limit:?} after the start"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let mut records = Vec::new();
        for (process, reader) in self.readers.drain(..).enumerate() {
            let lines = reader.join().expect("a reader thread");
            assert!(
                lines.iter().any(|l| l.contains("REDLUA_DONE")),
                "worker process {process} did not finish its work:\n{}",
                lines.join("\n")
            );
            for line in lines {
                if let Some((_, rest)) = line.split_once("REDLUA_CS ") {
                    records.push(Record::parse(rest));
                }
            }
        }
        records
    }
}

/// A worker process: [`WORKERS_PER_PROCESS`] workers, each with its own
/// lock client and data connection, until the phase ends.
pub(crate) fn child(spec: &str) {
    let mut parts = spec.split(' ');
    let url = parts.next().unwrap().to_string();
    let phase = Duration::from_millis(parts.next().unwrap().parse().unwrap());
    let process: usize = parts.next().unwrap().parse().unwrap();
    let seed: u64 = parts.next().unwrap().parse().unwrap();
    let kind = Kind::from_name(parts.next().unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let clients = runtime.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..WORKERS_PER_PROCESS {
            let client = LockClient::builder(url.as_str())
                .watchdog_timeout(WATCHDOG)
                // A fair waiter's wait time under the lease: a release
                // hands it the lock for that shorter time, and the holder
                // extends the lease in the background, under the faults.
                .fair_lock_wait_timeout(FAIR_WAIT)
                .connect_timeout(CONNECT_TIMEOUT)
                .response_timeout(RESPONSE_TIMEOUT)
                .connect()
                .await
                .expect("worker connect");
            let data = Data::new(&url);
            clients.push((client, data));
        }
        clients
    });
    println!("REDLUA_READY {process}");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).expect("go");
    assert_eq!(go.trim(), "go");
    let end = Instant::now() + phase;
    runtime.block_on(async {
        let workers: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, (client, data))| {
                let worker = process * WORKERS_PER_PROCESS + i;
                let rng = Rng::new(seed, worker as u64);
                tokio::spawn(work(worker, client, kind, data, rng, end))
            })
            .collect();
        for worker in workers {
            worker.await.expect("a worker panicked");
        }
        // Releases whose reply was lost go on in the background: give
        // them time to finish before the process (and its client) ends.
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    println!("REDLUA_DONE {process}");
}

/// The worker's own connection for the counter, replaced after any error
/// (a killed connection, a reply that did not come).
struct Data {
    client: redis::Client,
    con: Option<MultiplexedConnection>,
    errors: u64,
    failures_in_a_row: u32,
}

impl Data {
    fn new(url: &str) -> Data {
        Data {
            client: redis::Client::open(url).unwrap(),
            con: None,
            errors: 0,
            failures_in_a_row: 0,
        }
    }

    async fn con(&mut self) -> RedisResult<MultiplexedConnection> {
        if let Some(con) = &self.con {
            return Ok(con.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let connect = self
            .client
            .get_multiplexed_async_connection_with_config(&config);
        let con = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
            Ok(con) => con?,
            Err(_) => {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "connect timed out",
                )));
            }
        };
        self.con = Some(con.clone());
        Ok(con)
    }

    fn failed<T>(&mut self, reply: RedisResult<T>) -> Option<T> {
        match reply {
            Ok(value) => {
                self.failures_in_a_row = 0;
                Some(value)
            }
            Err(_) => {
                self.errors += 1;
                self.failures_in_a_row += 1;
                self.con = None;
                None
            }
        }
    }

    /// Before a retry: none after the first failure (a killed connection
    /// is found out only when used; a new one usually works), then 10 ms.
    async fn pause(&self) {
        if self.failures_in_a_row > 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Reads the counter, retrying while the guard holds: `None` if it was
    /// lost first.
    async fn read(&mut self, guard: &LockGuard) -> Option<u64> {
        while !guard.is_lost() {
            let reply = match self.con().await {
                Ok(mut con) => {
                    redis::cmd("GET")
                        .arg(COUNTER)
                        .query_async::<Option<u64>>(&mut con)
                        .await
                }
                Err(e) => Err(e),
            };
            if let Some(value) = self.failed(reply) {
                return Some(value.unwrap_or(0));
            }
            self.pause().await;
        }
        None
    }

    /// Writes `value` under `guard`'s token, each try only while the guard
    /// holds. Returns what became of it, and the lease left at the last try.
    async fn write(&mut self, guard: &LockGuard, value: u64) -> (Wrote, Option<Duration>) {
        let mut wrote = Wrote::Skipped;
        let mut margin = None;
        loop {
            // Lease left, read before is_lost(): a write is sent only while
            // the guard surely holds.
            let left = guard
                .valid_until()
                .saturating_duration_since(Instant::now());
            if guard.is_lost() {
                return (wrote, margin);
            }
            margin = Some(left);
            wrote = Wrote::Uncertain;
            let reply = match self.con().await {
                Ok(mut con) => {
                    LoggedWrite {
                        counter: COUNTER,
                        log: WRITES,
                        value,
                        token: guard.token(),
                    }
                    .invoke(&mut con)
                    .await
                }
                Err(e) => Err(e),
            };
            if self.failed(reply).is_some() {
                return (Wrote::Yes, margin);
            }
            self.pause().await;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// Not sent: the guard was lost first.
    Skipped,
    /// Confirmed by Redis.
    Yes,
    /// Sent, never confirmed before the guard was lost.
    Uncertain,
}

/// One worker: lock, read, write, unlock, think — until `end`.
/// The lock the workers take.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// `LockClient::lock` (Redisson's `RLock`).
    Plain,
    /// `LockClient::fair_lock` (Redisson's `RFairLock`).
    Fair,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Fair => "fair",
        }
    }

    fn from_name(name: &str) -> Kind {
        match name {
            "plain" => Kind::Plain,
            "fair" => Kind::Fair,
            other => panic!("unknown lock kind {other:?}"),
        }
    }
}

async fn work(
    worker: usize,
    client: LockClient,
    kind: Kind,
    mut data: Data,
    mut rng: Rng,
    end: Instant,
) {
    let (plain, fair) = (client.lock(LOCK), client.fair_lock(LOCK));
    while Instant::now() < end {
        let asked = Instant::now();
        let mut lock_errors = 0u32;
        let guard = loop {
            let locked = match kind {
                Kind::Plain => plain.lock().await,
                Kind::Fair => fair.lock().await,
            };
            match locked {
                Ok(guard) => break guard,
                Err(error) => {
                    lock_errors += 1;
                    eprintln!("worker {worker}: lock() failed: {error}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        let waited = asked.elapsed();
        let start_us = now_us();
        let token = guard.token();
        let (read, wrote, margin) = match data.read(&guard).await {
            Some(read) => {
                tokio::time::sleep(HOLD).await;
                let (wrote, margin) = data.write(&guard, read + 1).await;
                (Some(read), wrote, margin)
            }
            None => (None, Wrote::Skipped, None),
        };
        // The last instant this holder surely held the lock: now, if the
        // lease clock says so after the reading; else the clock's deadline
        // (on this process's wall clock).
        let end_inst = Instant::now();
        let end_us = now_us();
        let lost = guard.is_lost();
        let valid_until = guard.valid_until();
        let (held_until_us, lost_early) = if !lost {
            (end_us, false)
        } else if valid_until <= end_inst {
            let before = (end_inst - valid_until).as_micros() as u64;
            (end_us - before, false)
        } else {
            // Found gone before its lease clock ran out: Redis dropped it
            // early (nothing in this test should).
            (end_us, true)
        };
        let unlocked = match guard.unlock().await {
            Ok(()) => "ok",
            Err(Error::LockLost { .. }) => "lost",
            Err(Error::NotOwner { .. }) => "not-owner",
            Err(Error::Redis(_)) => "redis-error",
            Err(_) => "other-error",
        };
        println!(
            "REDLUA_CS {token} {worker} {start_us} {held_until_us} {end_us} {} {} {} {} {} {} {unlocked}",
            match wrote {
                Wrote::Skipped => 0,
                Wrote::Yes => 1,
                Wrote::Uncertain => 2,
            },
            read.map_or(-1, |r| r as i64),
            waited.as_micros(),
            lock_errors,
            u8::from(lost_early),
            margin.map_or(-1, |m| m.as_micros() as i64),
        );
        let think = rng.between(THINK_MS.0, THINK_MS.1);
        tokio::time::sleep(Duration::from_millis(think)).await;
    }
    eprintln!("worker {worker}: {} data connection errors", data.errors);
}
