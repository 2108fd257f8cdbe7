//! The read/write scenario: 16 readers and one writer on one writer-
//! preferring read/write lock, 1 ms holds, one client (and connection)
//! each.
//!
//! - Readers alone first: how long a reader waits to get in when only
//!   other readers hold the lock (it should not wait at all: one round
//!   trip).
//! - Then with the writer, which writes every 5 ms: its wait from the
//!   `lock()` call to holding the lock.
//! - Server work per read release, with 1, 4 and 16 read holds on the lock:
//!   Redisson's layout keeps one timeout key per read hold, and a release
//!   sets the lock's TTL to the longest of them, so it reads them all
//!   (`INFO commandstats`, script internals included).

use crate::Settings;
use crate::metrics::{Figure, Measured, percentile};
use crate::scenarios::commands_so_far;
use redlua::{LockClient, ReadWriteLock};
use std::time::{Duration, Instant};

/// Readers of the scenario.
const READERS: usize = 16;

/// Runs the scenario.
pub async fn run(url: &str, settings: &Settings) -> Result<Measured, String> {
    let mut clients = Vec::new();
    for _ in 0..=READERS {
        clients.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
    }
    let lock = |client: &LockClient| client.read_write_lock("bench:rw").writer_preferring();
    let hold = Duration::from_millis(settings.critical_ms);
    let seconds = Duration::from_secs_f64(settings.seconds);

    let (readers_alone, _) = phase(&clients[..READERS], &lock, hold, seconds, None).await?;
    let writer = lock(&clients[READERS]);
    let (with_writer, writer_waits) =
        phase(&clients[..READERS], &lock, hold, seconds, Some(writer)).await?;

    let mut figures = vec![
        Figure::new(
            "reader wait p99, readers only",
            percentile(&readers_alone, 0.99),
            "ms",
        ),
        Figure::new(
            "reader wait max, readers only",
            readers_alone.last().copied().unwrap_or(0.0),
            "ms",
        ),
        Figure::new(
            "reader wait p99, with the writer",
            percentile(&with_writer, 0.99),
            "ms",
        ),
        Figure::new("writer wait p50", percentile(&writer_waits, 0.5), "ms"),
        Figure::new("writer wait p99", percentile(&writer_waits, 0.99), "ms"),
        Figure::new("writes", writer_waits.len() as f64, ""),
    ];
    for (holders, name) in [
        (1, "server cmds / read release, 1 holder"),
        (4, "server cmds / read release, 4 holders"),
        (16, "server cmds / read release, 16 holders"),
    ] {
        figures.push(Figure::new(
            name,
            release_cost(url, &clients, &lock, holders).await?,
            "",
        ));
    }
    Ok(Measured {
        per_second: 0.0,
        commands_per_acquisition: None,
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: readers_alone.len() + with_writer.len() + writer_waits.len(),
        contention: None,
        figures,
    })
}

/// Readers (and a writer, writing every 5 ms) for `seconds`: the readers'
/// and the writer's waits, sorted, in ms.
async fn phase(
    clients: &[LockClient],
    lock: &impl Fn(&LockClient) -> ReadWriteLock,
    hold: Duration,
    seconds: Duration,
    writer: Option<ReadWriteLock>,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let deadline = Instant::now() + seconds;
    let mut tasks = Vec::new();
    for client in clients {
        let read = lock(client).read();
        tasks.push(tokio::spawn(async move {
            let mut waits = Vec::new();
            while Instant::now() < deadline {
                let asked = Instant::now();
                let guard = read.lock().await.map_err(|e| e.to_string())?;
                waits.push(asked.elapsed().as_secs_f64() * 1000.0);
                tokio::task::spawn_blocking(move || std::thread::sleep(hold))
                    .await
                    .map_err(|e| e.to_string())?;
                guard.unlock().await.map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(waits)
        }));
    }
    let writes = writer.map(|writer| {
        let write = writer.write();
        tokio::spawn(async move {
            let mut waits = Vec::new();
            while Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let asked = Instant::now();
                let guard = write.lock().await.map_err(|e| e.to_string())?;
                waits.push(asked.elapsed().as_secs_f64() * 1000.0);
                tokio::task::spawn_blocking(move || std::thread::sleep(hold))
                    .await
                    .map_err(|e| e.to_string())?;
                guard.unlock().await.map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(waits)
        })
    });
    let mut readers = Vec::new();
    for task in tasks {
        readers.extend(task.await.map_err(|e| e.to_string())??);
    }
    let mut writers = match writes {
        Some(task) => task.await.map_err(|e| e.to_string())??,
        None => Vec::new(),
    };
    readers.sort_by(f64::total_cmp);
    writers.sort_by(f64::total_cmp);
    Ok((readers, writers))
}

/// Server commands of one read release (its latch's clean-up included)
/// while `holders` read holds, the released one included, are on the lock:
/// the mean of 20 releases.
async fn release_cost(
    url: &str,
    clients: &[LockClient],
    lock: &impl Fn(&LockClient) -> ReadWriteLock,
    holders: usize,
) -> Result<f64, String> {
    const RELEASES: u32 = 20;
    let read = lock(&clients[0]).read();
    let mut others = Vec::new();
    for _ in 1..holders {
        others.push(read.lock().await.map_err(|e| e.to_string())?);
    }
    let settle = Duration::from_millis(20);
    let mut commands = 0.0;
    for _ in 0..RELEASES {
        let guard = read.lock().await.map_err(|e| e.to_string())?;
        tokio::time::sleep(settle).await;
        let before = commands_so_far(url).await;
        guard.unlock().await.map_err(|e| e.to_string())?;
        tokio::time::sleep(settle).await;
        let after = commands_so_far(url).await;
        commands += crate::scenarios::per_op(before, after, 1).unwrap_or(f64::NAN);
    }
    for guard in others {
        guard.unlock().await.map_err(|e| e.to_string())?;
    }
    Ok(commands / f64::from(RELEASES))
}
