//! What this client holds: per lock and owner, the number of holds, how many
//! of them the watchdog keeps alive, and their shared lease clock.

use crate::lease_clock::LeaseClock;
use crate::telemetry::holds_changed;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The identity of a hold: the lock's key and the hash field that counts
/// the owner's holds (`<owner>`, or `<owner>:write`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct HoldKey {
    /// The lock's key.
    pub lock: String,
    /// The field in the lock's hash.
    pub field: String,
}

/// One lock held by one owner of this client.
#[derive(Debug)]
struct Hold {
    /// Holds not yet released (re-entries count one each).
    count: u64,
    /// How many of them are kept alive by the watchdog.
    watched: u64,
    /// Releases under way: a renewal that finds the lock gone meanwhile is
    /// not a loss.
    releasing: u64,
    /// The lease clock shared by the guards of these holds.
    clock: Arc<LeaseClock>,
    /// Told apart from an entry made later for the same key.
    generation: u64,
    /// What the watchdog renews besides the lock (a read hold's timeouts),
    /// or "".
    timeouts: String,
}

/// A hold the watchdog renews.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub key: HoldKey,
    pub generation: u64,
    pub timeouts: String,
    pub clock: Arc<LeaseClock>,
}

/// The registry of this client's holds.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    holds: HashMap<HoldKey, Hold>,
    next_generation: u64,
    /// Whether the watchdog task runs (kept under the same lock as the
    /// holds, so that a new hold never misses a stopping watchdog).
    renewing: bool,
}

/// A new hold as the registry records it.
pub(crate) struct NewHold {
    pub key: HoldKey,
    pub watched: bool,
    pub timeouts: String,
    /// When its acquire script was sent, and the lease it set.
    pub sent: Instant,
    pub lease: Duration,
}

impl Holds {
    /// Records one more hold; returns its lease clock, and whether the
    /// caller must start the watchdog.
    pub(crate) fn acquired(&mut self, new: NewHold) -> (Arc<LeaseClock>, bool) {
        let generation = self.next_generation;
        let hold = self.holds.entry(new.key).or_insert_with(|| Hold {
            count: 0,
            watched: 0,
            releasing: 0,
            clock: Arc::new(LeaseClock::new(new.sent, new.lease)),
            generation,
            timeouts: new.timeouts,
        });
        if hold.generation == generation {
            self.next_generation += 1;
        } else {
            hold.clock.confirm(new.sent, new.lease);
        }
        hold.count += 1;
        holds_changed(1);
        if new.watched {
            hold.watched += 1;
        }
        let clock = hold.clock.clone();
        let start_watchdog = new.watched && !self.renewing;
        if start_watchdog {
            self.renewing = true;
        }
        (clock, start_watchdog)
    }

    /// A release of `key` starts.
    pub(crate) fn releasing(&mut self, key: &HoldKey) {
        if let Some(hold) = self.holds.get_mut(key) {
            hold.releasing += 1;
        }
    }

    /// A release of `key` ended. `still_held` is what Redis said: the owner
    /// still holds the lock (`Some(true)`), no longer does (`Some(false)`),
    /// or nothing could be learned (`None`: the hold is dropped here and
    /// its lease frees it in Redis).
    pub(crate) fn released(&mut self, key: &HoldKey, watched: bool, still_held: Option<bool>) {
        let Some(hold) = self.holds.get_mut(key) else {
            return;
        };
        hold.releasing = hold.releasing.saturating_sub(1);
        if hold.count > 0 {
            hold.count -= 1;
            holds_changed(-1);
        }
        if watched {
            hold.watched = hold.watched.saturating_sub(1);
        }
        if hold.count == 0 {
            if let Some(hold) = self.holds.remove(key) {
                hold.clock.mark_lost();
            }
        } else if still_held != Some(true) {
            // Redis has no hold left (or cannot say), yet other guards of
            // this owner remain: theirs are lost.
            self.lost(key);
        }
    }

    /// `key` is gone from Redis: mark its guards lost and forget it.
    pub(crate) fn lost(&mut self, key: &HoldKey) {
        if let Some(hold) = self.holds.remove(key) {
            holds_changed(-i64::try_from(hold.count).unwrap_or(i64::MAX));
            hold.clock.mark_lost();
        }
    }

    /// The renewal of `key` (as of `generation`) found it gone: a loss,
    /// unless it was released meanwhile.
    pub(crate) fn renewal_failed(&mut self, key: &HoldKey, generation: u64) -> bool {
        match self.holds.get(key) {
            Some(hold) if hold.generation == generation && hold.releasing == 0 => {
                self.lost(key);
                true
            }
            _ => false,
        }
    }

    /// The number of holds recorded for `key`.
    #[cfg(test)]
    pub(crate) fn count(&self, key: &HoldKey) -> u64 {
        self.holds.get(key).map_or(0, |h| h.count)
    }

    /// Called by the watchdog before a round: the holds to renew, or `None`
    /// when there are none, in which case the watchdog must stop (and the
    /// next watched hold starts a new one).
    pub(crate) fn next_round(&mut self) -> Option<Vec<Watched>> {
        let watched: Vec<Watched> = self
            .holds
            .iter()
            .filter(|(_, h)| h.watched > 0)
            .map(|(k, h)| Watched {
                key: k.clone(),
                generation: h.generation,
                timeouts: h.timeouts.clone(),
                clock: h.clock.clone(),
            })
            .collect();
        if watched.is_empty() {
            self.renewing = false;
            return None;
        }
        Some(watched)
    }
}

impl Drop for Holds {
    /// Holds whose release was never recorded (the runtime went away) no
    /// longer count as held.
    fn drop(&mut self) {
        let left: u64 = self.holds.values().map(|h| h.count).sum();
        if left > 0 {
            holds_changed(-i64::try_from(left).unwrap_or(i64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> HoldKey {
        HoldKey {
            lock: name.to_string(),
            field: "c:1".to_string(),
        }
    }

    fn new(name: &str, watched: bool) -> NewHold {
        NewHold {
            key: key(name),
            watched,
            timeouts: String::new(),
            sent: Instant::now(),
            lease: Duration::from_secs(30),
        }
    }

    #[test]
    fn counts_reentrant_holds() {
        let mut holds = Holds::default();
        let (clock, start) = holds.acquired(new("a", true));
        assert!(start, "the first watched hold starts the watchdog");
        let (same, start) = holds.acquired(new("a", false));
        assert!(!start);
        assert!(Arc::ptr_eq(&clock, &same), "one clock per owner and lock");
        assert_eq!(holds.count(&key("a")), 2);
        holds.releasing(&key("a"));
        holds.released(&key("a"), true, Some(true));
        assert_eq!(holds.count(&key("a")), 1);
        assert!(!clock.is_lost());
        holds.releasing(&key("a"));
        holds.released(&key("a"), false, Some(false));
        assert_eq!(holds.count(&key("a")), 0);
        assert!(holds.next_round().is_none());
        let (_, start) = holds.acquired(new("b", true));
        assert!(start, "a stopped watchdog is started again");
    }

    #[test]
    fn renewal_failures_during_a_release_are_not_losses() {
        let mut holds = Holds::default();
        let (clock, _) = holds.acquired(new("a", true));
        holds.acquired(new("a", true));
        let w = holds.next_round().unwrap().pop().unwrap();
        holds.releasing(&w.key);
        assert!(!holds.renewal_failed(&w.key, w.generation));
        holds.released(&w.key, true, Some(true));
        assert!(holds.renewal_failed(&w.key, w.generation));
        assert!(clock.is_lost());
        assert_eq!(holds.count(&w.key), 0);
    }

    #[test]
    fn a_lock_freed_under_other_guards_is_lost_for_them() {
        let mut holds = Holds::default();
        let (clock, _) = holds.acquired(new("a", true));
        holds.acquired(new("a", true));
        holds.releasing(&key("a"));
        holds.released(&key("a"), true, Some(false));
        assert!(clock.is_lost());
        assert_eq!(holds.count(&key("a")), 0);
    }

    #[test]
    fn a_stale_generation_is_not_a_loss() {
        let mut holds = Holds::default();
        holds.acquired(new("a", true));
        let w = holds.next_round().unwrap().pop().unwrap();
        holds.releasing(&w.key);
        holds.released(&w.key, true, Some(false));
        let (clock, _) = holds.acquired(new("a", true));
        assert!(!holds.renewal_failed(&w.key, w.generation));
        assert!(!clock.is_lost());
    }
}
