//! The lease clock: the latest instant at which Redis could still count a
//! hold as held, as the holder can know it without asking.
//!
//! It runs from when the acquire, or the last renewal that Redis confirmed,
//! was *sent* (Redis set the expiry later than that, never earlier), minus a
//! drift margin for the two clocks' rates (1% of the lease plus 2 ms, as
//! Redlock allows). It only moves forward, only on a confirmed reply, and
//! never once it has passed. A guard is lost once the clock has passed, or
//! once Redis was seen without the hold; [`LeaseClock::is_lost`] works that
//! out when asked, so it is right even when no task could run.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// The margin taken off every lease for clock drift: 1% + 2 ms.
pub(crate) fn drift(lease: Duration) -> Duration {
    lease / 100 + Duration::from_millis(2)
}

/// The instant the clock counts from (process-wide).
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// The clock's reading for a script sent at `sent` with `lease`.
fn until(sent: Instant, lease: Duration) -> u64 {
    sent.checked_add(lease.saturating_sub(drift(lease)))
        .map_or(u64::MAX, to_nanos)
}

fn to_nanos(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(base()).as_nanos()).unwrap_or(u64::MAX)
}

/// One hold's (one owner's, on one lock) lease clock, shared by its guards
/// and the watchdog.
#[derive(Debug)]
pub(crate) struct LeaseClock {
    /// Nanoseconds after [`base`] until which the hold is surely valid.
    valid_until: AtomicU64,
    /// Redis was seen without the hold (or it was released everywhere).
    lost: AtomicBool,
    /// Told on every change, for [`LeaseClock::lost`].
    changed: Notify,
}

impl LeaseClock {
    /// A clock for a hold acquired by a script sent at `sent` with `lease`.
    pub(crate) fn new(sent: Instant, lease: Duration) -> LeaseClock {
        LeaseClock {
            valid_until: AtomicU64::new(until(sent, lease)),
            lost: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    /// Redis confirmed a script sent at `sent` that made the lease run at
    /// least `lease` from when it ran: move the clock forward if that is
    /// later than what it says — unless it has passed: a hold its holder
    /// was told may be gone is not brought back (a renewal that Redis ran
    /// but too few replicas acknowledged leaves the clock behind Redis's
    /// expiry, and a later one must not revive it).
    pub(crate) fn confirm(&self, sent: Instant, lease: Duration) {
        let until = until(sent, lease);
        let now = to_nanos(Instant::now());
        let _ = self
            .valid_until
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |current| {
                (current > now && until > current).then_some(until)
            });
        self.changed.notify_waiters();
    }

    /// The latest instant at which Redis could still count the hold, as far
    /// as this client knows.
    pub(crate) fn valid_until(&self) -> Instant {
        let nanos = self.valid_until.load(Ordering::SeqCst);
        base()
            .checked_add(Duration::from_nanos(nanos))
            .unwrap_or_else(|| base() + Duration::from_secs(u32::MAX.into()))
    }

    /// Redis was seen without the hold.
    pub(crate) fn mark_lost(&self) {
        self.lost.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Whether the hold may be gone: found gone, or the clock has passed.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
            || to_nanos(Instant::now()) >= self.valid_until.load(Ordering::SeqCst)
    }

    /// Completes once [`LeaseClock::is_lost`] is true.
    pub(crate) async fn lost(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_lost() {
                return;
            }
            let until = tokio::time::Instant::from_std(self.valid_until());
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep_until(until) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_runs_from_the_send_minus_drift_and_only_forward() {
        let sent = Instant::now();
        let clock = LeaseClock::new(sent, Duration::from_secs(10));
        let expected = sent + Duration::from_secs(10) - Duration::from_millis(102);
        let got = clock.valid_until();
        assert!(got <= expected && expected - got < Duration::from_micros(2));
        assert!(!clock.is_lost());
        // An older confirmation does not move it back.
        clock.confirm(sent - Duration::from_secs(5), Duration::from_secs(10));
        assert_eq!(clock.valid_until(), got);
        clock.confirm(sent + Duration::from_secs(1), Duration::from_secs(10));
        assert!(clock.valid_until() > got);
        clock.mark_lost();
        assert!(clock.is_lost());
    }

    #[test]
    fn a_passed_clock_is_lost_without_any_task() {
        let clock = LeaseClock::new(Instant::now(), Duration::from_millis(20));
        assert!(!clock.is_lost());
        std::thread::sleep(Duration::from_millis(25));
        assert!(clock.is_lost());
        // Once passed, a confirmation does not bring it back.
        clock.confirm(Instant::now(), Duration::from_secs(10));
        assert!(clock.is_lost());
    }

    #[tokio::test]
    async fn lost_completes_at_the_deadline() {
        let clock = LeaseClock::new(Instant::now(), Duration::from_millis(100));
        let started = Instant::now();
        clock.lost().await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(90), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
    }
}
