//! 64 independent locks: 64 contenders, each with its own lock and its own
//! client (connection), locking and unlocking as fast as they can.

use crate::Settings;
use crate::metrics::Measured;
use crate::scenarios::{commands_so_far, per_op};
use redlua::LockClient;
use std::time::Instant;

/// Locks (and contenders).
pub const LOCKS: usize = 64;

/// Runs the scenario.
pub async fn run(url: &str, settings: &Settings) -> Result<Measured, String> {
    let mut clients = Vec::new();
    for _ in 0..LOCKS {
        clients.push(LockClient::connect(url).await.map_err(|e| e.to_string())?);
    }
    let per_lock = (settings.iterations / 10).max(50);
    let before = commands_so_far(url).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (i, client) in clients.iter().enumerate() {
        let lock = client.lock(&format!("bench:independent:{i}"));
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_lock {
                let guard = lock.lock().await.map_err(|e| e.to_string())?;
                guard.unlock().await.map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let after = commands_so_far(url).await;
    let total = per_lock * LOCKS;
    Ok(Measured {
        per_second: total as f64 / elapsed,
        commands_per_acquisition: per_op(before, after, total),
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: total,
        contention: None,
        figures: Vec::new(),
    })
}
