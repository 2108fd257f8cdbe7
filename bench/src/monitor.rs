//! Counting the commands clients send (not those scripts run inside Redis):
//! a `MONITOR` connection, attached only for a separate short pass so that
//! it does not slow the timed runs, counts the lines that do not come from
//! Lua (`[0 lua]`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A running count of client commands.
pub struct Monitor {
    count: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Monitor {
    /// Attaches to the server at `port` (loopback).
    pub async fn attach(port: u16) -> std::io::Result<Monitor> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.write_all(b"MONITOR\r\n").await?;
        let mut lines = BufReader::new(stream).lines();
        // "+OK"
        lines.next_line().await?;
        let count = Arc::new(AtomicU64::new(0));
        let counted = count.clone();
        let task = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if !line.contains(" lua] ") {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ok(Monitor { count, task })
    }

    /// Client commands seen so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs a measurement; with `port`, counts the client commands it sends
/// and records them per acquisition.
pub async fn counted(
    port: Option<u16>,
    measurement: impl std::future::Future<Output = Result<crate::metrics::Measured, String>>,
) -> Result<crate::metrics::Measured, String> {
    let monitor = match port {
        Some(port) => Some(Monitor::attach(port).await.map_err(|e| e.to_string())?),
        None => None,
    };
    let mut measured = measurement.await?;
    if let Some(monitor) = monitor {
        // Let the last lines arrive.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        measured.client_commands_per_acquisition =
            Some(monitor.count() as f64 / measured.acquisitions.max(1) as f64);
    }
    Ok(measured)
}
