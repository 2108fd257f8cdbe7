//! Faults injected into a private redis-server for a while, from the test's
//! own tasks: every client connection killed now and then (`CLIENT KILL`,
//! normal and pub/sub in turn), the server stopped (`SIGSTOP`) now and then;
//! the run's seed, and an observer outside Redis counting holders.
//!
//! Invariants: nothing is injected after the deadline; [`Chaos::finish`]
//! joins both tasks and leaves the server running (`SIGCONT`), so the
//! test's final checks meet a working server.

use super::Redis;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Time between two `CLIENT KILL` rounds.
pub const KILL_EVERY: Duration = Duration::from_millis(300);
/// Time the server runs between two stops.
pub const RUN_FOR: Duration = Duration::from_millis(1000);
/// How long each stop lasts.
pub const STOP_FOR: Duration = Duration::from_millis(500);

/// The run's seed: `SEED` from the environment, or else the clock. Printed,
/// so that a failing run can be replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("seed {seed}");
    seed
}

/// Task `i`'s own pseudo-random numbers from the run's seed (xorshift64).
pub fn rng(seed: u64, i: u64) -> impl FnMut() -> u64 {
    let mut state = seed.wrapping_add(i).wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The killer and the stopper, running against one server until a deadline.
#[must_use = "join the fault tasks with `finish`"]
pub struct Chaos {
    pid: u32,
    killer: JoinHandle<()>,
    stopper: JoinHandle<()>,
}

impl Chaos {
    /// Starts both tasks against `redis` until `stop_at`: a `CLIENT KILL`
    /// round every [`KILL_EVERY`] (pub/sub and normal connections in
    /// turn), and, while a whole cycle still fits before `stop_at`, a stop
    /// of [`STOP_FOR`] after every [`RUN_FOR`] of running.
    pub fn start(redis: &Redis, stop_at: Instant) -> Chaos {
        let client = redis.server.client();
        let killer = tokio::spawn(async move {
            let mut round = 0u32;
            while Instant::now() < stop_at {
                tokio::time::sleep(KILL_EVERY).await;
                round += 1;
                if let Ok(mut con) = client.get_multiplexed_async_connection().await {
                    let _: redis::RedisResult<i64> = redis::cmd("CLIENT")
                        .arg("KILL")
                        .arg("TYPE")
                        .arg(if round.is_multiple_of(2) {
                            "normal"
                        } else {
                            "pubsub"
                        })
                        .query_async(&mut con)
                        .await;
                }
            }
        });
        let pid = redis.server.pid();
        let stopper = tokio::spawn(async move {
            while Instant::now() + RUN_FOR + STOP_FOR < stop_at {
                tokio::time::sleep(RUN_FOR).await;
                signal(pid, "-STOP");
                tokio::time::sleep(STOP_FOR).await;
                signal(pid, "-CONT");
            }
        });
        Chaos {
            pid,
            killer,
            stopper,
        }
    }

    /// Waits for both tasks to end, then makes sure the server runs.
    pub async fn finish(self) {
        self.killer.await.unwrap();
        self.stopper.await.unwrap();
        signal(self.pid, "-CONT");
    }
}

fn signal(pid: u32, which: &str) {
    let _ = std::process::Command::new("kill")
        .arg(which)
        .arg(pid.to_string())
        .status();
}

/// An observer outside Redis: how many tasks hold at once (each says when
/// it starts and stops holding), the most ever at once, and how many
/// acquires there were. Clones count together.
#[derive(Clone, Default)]
pub struct Holders(Arc<Counts>);

#[derive(Default)]
struct Counts {
    now: AtomicUsize,
    most: AtomicUsize,
    acquired: AtomicUsize,
}

impl Holders {
    /// A task starts holding (its acquire returned).
    pub fn enter(&self) {
        let now = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.most.fetch_max(now, Ordering::SeqCst);
        self.0.acquired.fetch_add(1, Ordering::SeqCst);
    }

    /// A task stops holding.
    pub fn leave(&self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }

    /// The most holders there were at once.
    pub fn most(&self) -> usize {
        self.0.most.load(Ordering::SeqCst)
    }

    /// How many acquires there were in all.
    pub fn acquired(&self) -> usize {
        self.0.acquired.load(Ordering::SeqCst)
    }
}
