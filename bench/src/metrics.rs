//! What a scenario measured, and the numbers the report derives from it.

/// One scenario of one library.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The library (`redlua`, `raw EVALSHA`, `redis-py`, ...).
    pub library: String,
    /// The scenario (`uncontended`, `8 contenders, 1 client`, ...).
    pub scenario: String,
    /// What was measured, or why nothing was.
    pub result: Result<Measured, String>,
}

/// The measurements of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// Lock + unlock pairs per second (uncontended), or acquisitions per
    /// second (contended).
    pub per_second: f64,
    /// Redis commands per acquisition, as the server counted them (all
    /// commands, those run inside scripts included), when known.
    pub commands_per_acquisition: Option<f64>,
    /// Commands clients sent per acquisition (scripts count one), from a
    /// separate, shorter pass with `MONITOR` attached.
    pub client_commands_per_acquisition: Option<f64>,
    /// Acquisitions made (warm-up included).
    pub acquisitions: usize,
    /// The steady part of a contended run, where client commands are
    /// counted: after every contender's first acquisitions (connects,
    /// first subscribes, the previous scenario's background work left
    /// out).
    pub steady: Option<Steady>,
    /// Contended only.
    pub contention: Option<Contention>,
    /// The figures of the scenarios that are not about throughput
    /// (watchdog, cancelled waiters, read/write, macro expansion).
    pub figures: Vec<Figure>,
}

/// A window of a run, by the clock both the bench and Redis read (seconds
/// since the epoch: `MONITOR` stamps each command with it), and the
/// acquisitions made in it.
#[derive(Debug, Clone, Copy)]
pub struct Steady {
    pub from: f64,
    pub to: f64,
    pub acquisitions: usize,
}

/// How long a contended run goes before its steady part starts.
pub const WARM_UP: f64 = 0.5;

impl Steady {
    /// The steady part of a run that started at `start` (seconds since the
    /// epoch) and took new holds for `seconds`; `events` are timed from
    /// `start`.
    pub fn of(start: f64, seconds: f64, events: &[Event]) -> Steady {
        let acquisitions = events
            .iter()
            .filter(|(_, acquired, _)| (WARM_UP..seconds).contains(acquired))
            .count();
        Steady {
            from: start + WARM_UP,
            to: start + seconds,
            acquisitions,
        }
    }
}

/// Seconds since the epoch.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// One named figure of a scenario.
#[derive(Debug, Clone)]
pub struct Figure {
    /// What it measures (`lowest TTL / lease`, ...).
    pub name: &'static str,
    pub value: f64,
    /// Its unit (`ms`, `×`, ...; "" for a plain number).
    pub unit: &'static str,
}

impl Figure {
    /// A figure.
    pub fn new(name: &'static str, value: f64, unit: &'static str) -> Figure {
        Figure { name, value, unit }
    }
}

/// The numbers of a contended run.
#[derive(Debug, Clone, Default)]
pub struct Contention {
    /// Time inside critical sections / wall time.
    pub utilization: f64,
    /// Handoff latency (release call to the next holder's acquire
    /// returning, holder changed), in milliseconds.
    pub handoff_p50_ms: f64,
    pub handoff_p99_ms: f64,
    /// The least-served contender's acquisitions / the mean.
    pub fairness: f64,
    /// Every handoff latency, in milliseconds (for the plot).
    pub handoffs_ms: Vec<f64>,
}

/// One critical section: contender, acquired at, release called at
/// (seconds on one monotonic clock).
pub type Event = (usize, f64, f64);

/// Derives the contended numbers from the critical sections of a run of
/// `seconds`.
pub fn contention(events: &[Event], contenders: usize, seconds: f64) -> (f64, Contention) {
    let mut events = events.to_vec();
    events.sort_by(|a, b| a.1.total_cmp(&b.1));
    let inside: f64 = events.iter().map(|e| (e.2 - e.1).max(0.0)).sum();
    let mut handoffs: Vec<f64> = events
        .windows(2)
        .filter(|w| w[0].0 != w[1].0)
        .map(|w| ((w[1].1 - w[0].2) * 1000.0).max(0.0))
        .collect();
    handoffs.sort_by(f64::total_cmp);
    let mut counts = vec![0usize; contenders];
    for event in &events {
        if let Some(count) = counts.get_mut(event.0) {
            *count += 1;
        }
    }
    let mean = events.len() as f64 / contenders.max(1) as f64;
    let least = counts.iter().copied().min().unwrap_or(0) as f64;
    let contention = Contention {
        utilization: inside / seconds,
        handoff_p50_ms: percentile(&handoffs, 0.50),
        handoff_p99_ms: percentile(&handoffs, 0.99),
        fairness: if mean > 0.0 { least / mean } else { 0.0 },
        handoffs_ms: handoffs,
    };
    (events.len() as f64 / seconds, contention)
}

/// The `q` quantile of sorted `values` (0 when empty).
pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let index = ((values.len() - 1) as f64 * q).round() as usize;
    values[index.min(values.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handoffs_count_only_when_the_holder_changes() {
        let events = [(0, 0.000, 0.001), (0, 0.0015, 0.0025), (1, 0.003, 0.004)];
        let (rate, c) = contention(&events, 2, 1.0);
        assert_eq!(rate, 3.0);
        assert_eq!(c.handoffs_ms.len(), 1);
        assert!((c.handoffs_ms[0] - 0.5).abs() < 1e-9);
        assert!((c.utilization - 0.003).abs() < 1e-9);
        assert!((c.fairness - 1.0 / 1.5).abs() < 1e-9);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
