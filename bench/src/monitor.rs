//! Counting the commands clients send (not those scripts run inside Redis):
//! a `MONITOR` connection, attached only for a separate short pass so that
//! it does not slow the timed runs, counts the lines that do not come from
//! Lua (`[0 lua]`). A contended run is counted over its steady part (see
//! [`crate::metrics::Steady`]): what the clients send per acquisition once
//! they are connected and subscribed, periodic work included. With
//! `--commands`, each counted scenario also prints which commands those
//! were (a script by its SHA1's first 8 digits), when the first and the
//! last of each kind came, and how many came per acquisition.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A running record of client commands: each one's kind and server time.
pub struct Monitor {
    count: Arc<AtomicU64>,
    seen: Arc<Mutex<Vec<(f64, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

/// The kind of a `MONITOR` line's command (`EVALSHA 1a2b3c4d` for a
/// script) and its server timestamp (seconds since the epoch), or `None`
/// for a script's own call.
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
        // A batch's size: how many keys each DEL took.
        "DEL" => format!("DEL of {}", words.count()),
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
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (counted, record) = (count.clone(), seen.clone());
        let task = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let Some((kind, time)) = parse(&line) else {
                    continue;
                };
                counted.fetch_add(1, Ordering::Relaxed);
                record
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((time, kind));
            }
        });
        Ok(Monitor { count, seen, task })
    }

    /// Client commands seen so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// When the first command seen came (0 when none did).
    fn first_time(&self) -> f64 {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.first().map_or(0.0, |(time, _)| *time)
    }

    /// Client commands seen between `from` and `to` (seconds since the
    /// epoch).
    fn count_within(&self, from: f64, to: f64) -> usize {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter().filter(|(t, _)| (from..to).contains(t)).count()
    }

    /// The commands seen between `from` and `to`, one line per kind, most
    /// frequent first: how many, per acquisition, and when the first and
    /// the last came (seconds from `from`).
    fn histogram(&self, from: f64, to: f64, acquisitions: usize) -> String {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut kinds: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
        for (time, kind) in seen.iter().filter(|(t, _)| (from..to).contains(t)) {
            let at = time - from;
            let entry = kinds.entry(kind).or_insert((0, at, at));
            entry.0 += 1;
            entry.2 = at;
        }
        let mut kinds: Vec<_> = kinds.into_iter().collect();
        kinds.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
        let mut out = String::new();
        for (kind, (count, first, last)) in kinds {
            out.push_str(&format!(
                "  {kind:<20} {count:>7} {:>8.4}/acq  first {first:>6.3} s  last {last:>6.3} s\n",
                count as f64 / acquisitions.max(1) as f64,
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
/// the client commands it sends and records them per acquisition — over
/// its steady part where it has one ([`Measured::steady`]), else over the
/// whole run — and with `settings.histogram` prints them by kind under
/// `label`.
///
/// [`Measured::steady`]: crate::metrics::Measured::steady
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
        let (from, to, commands, acquisitions, part) = match measured.steady {
            Some(steady) => (
                steady.from,
                steady.to,
                monitor.count_within(steady.from, steady.to),
                steady.acquisitions,
                "its steady part",
            ),
            None => (
                monitor.first_time(),
                f64::MAX,
                monitor.count() as usize,
                measured.acquisitions,
                "the whole run",
            ),
        };
        measured.client_commands_per_acquisition =
            Some(commands as f64 / acquisitions.max(1) as f64);
        if settings.histogram {
            eprintln!(
                "client commands of {label}, over {part}: {commands} in {acquisitions} acquisitions ({} in the whole run)\n{}",
                monitor.count(),
                monitor.histogram(from, to, acquisitions)
            );
        }
    }
    Ok(measured)
}
