//! The loss watch's budget of reads: how many held locks it may read per
//! second, so that its work (the reads, and the invalidations each read
//! arms) stays bounded whatever the number of holds, and never starves the
//! client's other tasks (the watchdog's renewals first) on its runtime.
//!
//! A token bucket: [`READS_PER_SECOND`] tokens a second, at most [`BURST`]
//! saved up; each lock the watch looks at costs one, read or not (found
//! released, or being released). Once the bucket runs low, reads wait until
//! [`RESUME`] tokens are back, so that they start again as one batch, not
//! one by one.
//!
//! Invariants:
//! - Never more than `BURST + READS_PER_SECOND * t` reads in any span of
//!   `t` seconds.
//! - A client whose reads stay under the rate never waits: the bucket
//!   starts full, and refills faster than it drains.

use std::time::Duration;
use tokio::time::Instant;

/// The reads a client's loss watch may start per second, on all nodes
/// together (its runtime parses each reply and each invalidation the read
/// arms): with each held key changed once per renewal, 5,000 holds at a
/// 3 s watchdog timeout, 50,000 at the default 30 s.
pub(crate) const READS_PER_SECOND: u32 = 5_000;

/// The most reads saved up, hence the most in one burst.
pub(crate) const BURST: u32 = 500;

/// Once the bucket ran low, how many tokens it waits for before reads
/// start again.
pub(crate) const RESUME: u32 = 100;

/// The budget of one loss watch.
pub(crate) struct ReadBudget {
    /// Reads that may start, as of `at`.
    tokens: f64,
    /// When `tokens` was counted.
    at: Instant,
}

impl ReadBudget {
    /// A full bucket.
    pub(crate) fn new(now: Instant) -> ReadBudget {
        ReadBudget {
            tokens: f64::from(BURST),
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let gained =
            now.saturating_duration_since(self.at).as_secs_f64() * f64::from(READS_PER_SECOND);
        self.tokens = (self.tokens + gained).min(f64::from(BURST));
        self.at = self.at.max(now);
    }

    /// How many reads may start at `now`: none while the bucket is below
    /// [`RESUME`] (reads wait to start again as one batch).
    pub(crate) fn available(&mut self, now: Instant) -> usize {
        self.refill(now);
        if self.tokens >= f64::from(RESUME) {
            self.tokens as usize
        } else {
            0
        }
    }

    /// `reads` reads started (at most what [`available`](Self::available)
    /// allowed).
    pub(crate) fn spend(&mut self, reads: usize) {
        self.tokens = (self.tokens - reads as f64).max(0.0);
    }

    /// When a read due at `due` may start: then, or once the bucket is
    /// back to [`RESUME`].
    pub(crate) fn ready_at(&self, due: Instant) -> Instant {
        let short = f64::from(RESUME) - self.tokens;
        if short <= 0.0 {
            return due;
        }
        let refilled = self.at + Duration::from_secs_f64(short / f64::from(READS_PER_SECOND));
        due.max(refilled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_allows_a_burst_then_waits_for_a_batch_worth() {
        let start = Instant::now();
        let mut budget = ReadBudget::new(start);
        assert_eq!(budget.available(start), BURST as usize);
        budget.spend(BURST as usize);
        assert_eq!(budget.available(start), 0);
        // Back to RESUME tokens after RESUME / rate seconds, not before.
        let resume = budget.ready_at(start);
        let wait = Duration::from_secs_f64(f64::from(RESUME) / f64::from(READS_PER_SECOND));
        assert_eq!(resume, start + wait);
        assert_eq!(budget.available(start + wait / 2), 0);
        assert_eq!(budget.available(resume), RESUME as usize);
        // A read due later than that starts when it is due.
        let later = start + Duration::from_secs(1);
        assert_eq!(budget.ready_at(later), later);
    }

    #[test]
    fn reads_under_the_rate_never_wait() {
        let start = Instant::now();
        let mut budget = ReadBudget::new(start);
        let step = Duration::from_millis(10);
        // 40 reads every 10 ms: 4,000 a second.
        for i in 0..1_000 {
            let now = start + step * i;
            assert!(budget.available(now) >= 40, "at step {i}");
            budget.spend(40);
            assert_eq!(budget.ready_at(now), now);
        }
    }

    #[test]
    fn a_second_of_reads_is_bounded_by_the_burst_and_the_rate() {
        let start = Instant::now();
        let mut budget = ReadBudget::new(start);
        let mut total = 0;
        for ms in 0..=1_000 {
            let now = start + Duration::from_millis(ms);
            let n = budget.available(now);
            budget.spend(n);
            total += n;
        }
        assert!(
            total <= (BURST + READS_PER_SECOND) as usize,
            "{total} reads in a second"
        );
        assert!(
            total >= READS_PER_SECOND as usize,
            "{total} reads in a second"
        );
    }
}
