//! What this client holds: per lock and owner, the number of holds, how many
//! of them the watchdog keeps alive, and the signal that tells their guards
//! the lock was lost.

use std::collections::HashMap;
use tokio::sync::watch;

/// The identity of a hold: the lock's key and the owner string.
pub(crate) type HoldKey = (String, String);

/// One lock held by one owner of this client.
#[derive(Debug)]
pub(crate) struct Hold {
    /// Holds not yet released (reentrant acquires count one each).
    pub count: u64,
    /// How many of them are kept alive by the watchdog.
    pub watched: u64,
    /// Releases under way: a renewal that finds the lock gone meanwhile is
    /// not a loss.
    pub releasing: u64,
    /// Set to `true` when the lock is found lost.
    pub lost: watch::Sender<bool>,
    /// Told apart from a later hold of the same key.
    pub generation: u64,
    /// What the watchdog renews besides the lock (a read hold's timeouts),
    /// or "".
    pub timeouts: String,
}

/// A hold the watchdog renews.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Watched {
    pub key: HoldKey,
    pub generation: u64,
    pub timeouts: String,
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

impl Holds {
    /// The local hold count of `key` (0 when not held).
    pub(crate) fn count(&self, key: &HoldKey) -> u64 {
        self.holds.get(key).map_or(0, |h| h.count)
    }

    /// Records one more hold; returns the receiver of its lost signal, and
    /// whether the caller must start the watchdog.
    pub(crate) fn acquired(
        &mut self,
        key: HoldKey,
        watched: bool,
        timeouts: String,
    ) -> (watch::Receiver<bool>, bool) {
        let generation = self.next_generation;
        let hold = self.holds.entry(key).or_insert_with(|| Hold {
            count: 0,
            watched: 0,
            releasing: 0,
            lost: watch::channel(false).0,
            generation,
            timeouts,
        });
        if hold.generation == generation {
            self.next_generation += 1;
        }
        hold.count += 1;
        if watched {
            hold.watched += 1;
        }
        let receiver = hold.lost.subscribe();
        let start_watchdog = watched && !self.renewing;
        if start_watchdog {
            self.renewing = true;
        }
        (receiver, start_watchdog)
    }

    /// A release of `key` starts.
    pub(crate) fn releasing(&mut self, key: &HoldKey) {
        if let Some(hold) = self.holds.get_mut(key) {
            hold.releasing += 1;
        }
    }

    /// A release of `key` ended. `held` is what Redis said: the owner
    /// still holds the lock (`Some(true)`), no longer does (`Some(false)`),
    /// or nothing could be learned (`None`: the hold is dropped here and
    /// its lease frees it in Redis).
    pub(crate) fn released(&mut self, key: &HoldKey, watched: bool, held: Option<bool>) {
        let Some(hold) = self.holds.get_mut(key) else {
            return;
        };
        hold.releasing = hold.releasing.saturating_sub(1);
        hold.count = hold.count.saturating_sub(1);
        if watched {
            hold.watched = hold.watched.saturating_sub(1);
        }
        if hold.count == 0 {
            self.holds.remove(key);
        } else if held == Some(false) {
            // Redis has no hold left, yet other guards of this owner
            // remain: theirs are lost.
            self.lost(key);
        }
    }

    /// `key` is gone from Redis: mark its guards lost and forget it.
    pub(crate) fn lost(&mut self, key: &HoldKey) {
        if let Some(hold) = self.holds.remove(key) {
            hold.lost.send_replace(true);
        }
    }

    /// The holds the watchdog renews, with their generation and timeouts.
    pub(crate) fn watched(&self) -> Vec<Watched> {
        self.holds
            .iter()
            .filter(|(_, h)| h.watched > 0)
            .map(|(k, h)| Watched {
                key: k.clone(),
                generation: h.generation,
                timeouts: h.timeouts.clone(),
            })
            .collect()
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

    /// Whether any hold is renewed by the watchdog.
    #[cfg(test)]
    pub(crate) fn any_watched(&self) -> bool {
        self.holds.values().any(|h| h.watched > 0)
    }

    /// Called by the watchdog before a round: the holds to renew, or `None`
    /// when there are none, in which case the watchdog must stop (and the
    /// next watched hold starts a new one).
    pub(crate) fn next_round(&mut self) -> Option<Vec<Watched>> {
        let watched = self.watched();
        if watched.is_empty() {
            self.renewing = false;
            return None;
        }
        Some(watched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> HoldKey {
        (name.to_string(), "c:1".to_string())
    }

    #[test]
    fn counts_reentrant_holds() {
        let mut holds = Holds::default();
        let (lost, start) = holds.acquired(key("a"), true, String::new());
        assert!(start, "the first watched hold starts the watchdog");
        let (_, start) = holds.acquired(key("a"), false, String::new());
        assert!(!start);
        assert_eq!(holds.count(&key("a")), 2);
        assert_eq!(holds.watched().len(), 1);
        holds.releasing(&key("a"));
        holds.released(&key("a"), true, Some(true));
        assert_eq!(holds.count(&key("a")), 1);
        assert!(!holds.any_watched(), "only the fixed-lease hold is left");
        holds.releasing(&key("a"));
        holds.released(&key("a"), false, Some(false));
        assert_eq!(holds.count(&key("a")), 0);
        assert!(!*lost.borrow());
        assert_eq!(holds.next_round(), None);
        let (_, start) = holds.acquired(key("b"), true, String::new());
        assert!(start, "a stopped watchdog is started again");
    }

    #[test]
    fn renewal_failures_during_a_release_are_not_losses() {
        let mut holds = Holds::default();
        let (lost, _) = holds.acquired(key("a"), true, String::new());
        holds.acquired(key("a"), true, String::new());
        let w = holds.watched().pop().unwrap();
        let (k, generation) = (w.key, w.generation);
        holds.releasing(&k);
        assert!(!holds.renewal_failed(&k, generation));
        holds.released(&k, true, Some(true));
        assert!(holds.renewal_failed(&k, generation));
        assert!(*lost.borrow());
        assert_eq!(holds.count(&k), 0);
    }

    #[test]
    fn a_lock_freed_under_other_guards_is_lost_for_them() {
        let mut holds = Holds::default();
        let (lost, _) = holds.acquired(key("a"), true, String::new());
        holds.acquired(key("a"), true, String::new());
        holds.releasing(&key("a"));
        holds.released(&key("a"), true, Some(false));
        assert!(*lost.borrow());
        assert_eq!(holds.count(&key("a")), 0);
    }

    #[test]
    fn a_stale_generation_is_not_a_loss() {
        let mut holds = Holds::default();
        holds.acquired(key("a"), true, String::new());
        let w = holds.watched().pop().unwrap();
        let (k, old) = (w.key, w.generation);
        holds.releasing(&k);
        holds.released(&k, true, Some(false));
        let (lost, _) = holds.acquired(key("a"), true, String::new());
        assert!(!holds.renewal_failed(&k, old));
        assert!(!*lost.borrow());
    }
}
