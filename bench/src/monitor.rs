//! Counting the commands clients send (not those scripts run inside Redis):
//! a `MONITOR` connection, attached only for a separate short pass so that
//! it does not slow the timed runs, counts the lines that do not come from
//! Lua (`[0 lua]`). With `--commands`, each counted scenario also prints
//! which commands those were (a script by its SHA1's first 8 digits), when
//! the first and the last of each kind came, and how many came per
//! acquisition.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One kind of command seen: how many, and when the first and the last
/// came (seconds since the monitor attached, by the server's clock).
#[derive(Debug, Clone, Copy)]
struct Seen {
    count: u64,
    first: f64,
    last: f64,
}

/// A running count of client commands.
pub struct Monitor {
    count: Arc<AtomicU64>,
    histogram: Arc<Mutex<BTreeMap<String, Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

/// The kind of a `MONITOR` line's command (`EVALSHA 1a2b3c4d` for a
/// script) and its server timestamp, or `None` for a script's own call.
fn parse(line: &str) -> Option<(String, f64)> {
    if line.contains(" lua] ") {
        return None;
    }
    let time = line.split(' ').next()?.parse().unwrap_or(0.0);
    let rest = &line[line.find("] ")? + 2..];
    let mut words = rest.split('"').skip(1).step_by(2);
    let name = words.next().unwrap_or("?").to_ascii_uppercase();
    let kind = match name.as_str() {
        "EVALSHA" | "EVALSHA_RO" => {
            let sha = words.next().unwrap_or("");
            format!("{name} {}", &sha[..sha.len().min(8)])
        }
        _ => name,
    };
    Some((kind, time))
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
        let histogram = Arc::new(Mutex::new(BTreeMap::new()));
        let (counted, kinds) = (count.clone(), histogram.clone());
        let task = tokio::spawn(async move {
            let mut origin = None;
            while let Ok(Some(line)) = lines.next_line().await {
                let Some((kind, time)) = parse(&line) else {
                    continue;
                };
                counted.fetch_add(1, Ordering::Relaxed);
                let at = time - *origin.get_or_insert(time);
                let mut kinds = kinds.lock().unwrap_or_else(|e| e.into_inner());
                let seen = kinds.entry(kind).or_insert(Seen {
                    count: 0,
                    first: at,
                    last: at,
                });
                seen.count += 1;
                seen.last = at;
            }
        });
        Ok(Monitor {
            count,
            histogram,
            task,
        })
    }

    /// Client commands seen so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The commands seen so far, one line per kind, most frequent first.
    fn histogram(&self, acquisitions: usize) -> String {
        let kinds = self.histogram.lock().unwrap_or_else(|e| e.into_inner());
        let mut kinds: Vec<_> = kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        let mut out = String::new();
        for (kind, seen) in kinds {
            out.push_str(&format!(
                "  {kind:<20} {:>7} {:>8.4}/acq  first {:>6.3} s  last {:>6.3} s\n",
                seen.count,
                seen.count as f64 / acquisitions.max(1) as f64,
                seen.first,
                seen.last,
            ));
        }
        out
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs a measurement; in the counting pass (`settings.monitor`), counts
/// the client commands it sends and records them per acquisition, and with
/// `settings.histogram` prints them by kind under `label`.
pub async fn counted(
    settings: &crate::Settings,
    label: &str,
    measurement: impl std::future::Future<Output = Result<crate::metrics::Measured, String>>,
) -> Result<crate::metrics::Measured, String> {
    let monitor = match settings.monitor {
        Some(port) => Some(Monitor::attach(port).await.map_err(|e| e.to_string())?),
        None => None,
    };
    let mut measured = measurement.await?;
    if let Some(monitor) = monitor {
        // Let the last lines arrive.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        measured.client_commands_per_acquisition =
            Some(monitor.count() as f64 / measured.acquisitions.max(1) as f64);
        if settings.histogram {
            eprintln!(
                "client commands of {label}: {} in {} acquisitions\n{}",
                monitor.count(),
                measured.acquisitions,
                monitor.histogram(measured.acquisitions)
            );
        }
    }
    Ok(measured)
}
