//! What this client holds: per lock and owner (or per guard of leased
//! permits), the number of holds, how many of them the watchdog keeps
//! alive, their shared lease clock, and what they are in Redis
//! ([`HoldShape`]).
//!
//! The watched holds are also kept in round order, so that a renewal round
//! walks them a chunk at a time ([`Holds::watched_after`]) and never holds
//! the registry's mutex (every acquire and release takes it) for work that
//! grows with the number of holds. On a single server the order is that of
//! their entries: a hold taken during a round is renewed at its end, and
//! each keeps its place (renewed a period apart, however long a round
//! takes). On a cluster it is by slot first, as one script call needs a
//! slot's holds together; a hold taken behind a round's progress waits for
//! the next round.

use crate::base::hold_key::{HoldKey, HoldShape};
use crate::base::names::slot;
use crate::holds::lease_clock::LeaseClock;
use crate::observability::telemetry::holds_changed;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The registry's hasher: a [`HoldKey`] brings its own hash.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `HoldKey`; anything else still hashes.
        for &byte in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
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
    /// What the hold is in Redis.
    shape: HoldShape,
    /// Its lock's slot on a cluster, else 0 (its place in the round order).
    slot: u16,
}

/// Where a watched hold comes in a renewal round: its lock's cluster slot
/// on a cluster (0 on a single server), then its entry's generation
/// (unique, and never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RoundPlace {
    slot: u16,
    generation: u64,
}

/// A hold the watchdog renews.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub key: HoldKey,
    pub generation: u64,
    pub shape: HoldShape,
    pub clock: Arc<LeaseClock>,
}

/// The registry of this client's holds.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    holds: HashMap<HoldKey, Hold, BuildHasherDefault<Prehashed>>,
    /// The holds with `watched > 0`, in round order.
    watched: BTreeMap<RoundPlace, HoldKey>,
    next_generation: u64,
    /// Whether the watchdog task runs (kept under the same lock as the
    /// holds, so that a new hold never misses a stopping watchdog).
    renewing: bool,
    /// Rounds go slot by slot (a cluster).
    by_slot: bool,
}

/// A new hold as the registry records it.
pub(crate) struct NewHold {
    pub key: HoldKey,
    pub watched: bool,
    pub shape: HoldShape,
    /// When its acquire script was sent, and the lease it set.
    pub sent: Instant,
    pub lease: Duration,
}

impl Holds {
    /// An empty registry; `by_slot` on a cluster.
    pub(crate) fn new(by_slot: bool) -> Holds {
        let mut holds = Holds::default();
        holds.by_slot = by_slot;
        holds
    }

    /// Records one more hold; returns its lease clock, and whether the
    /// caller must start the watchdog.
    pub(crate) fn acquired(&mut self, new: NewHold) -> (Arc<LeaseClock>, bool) {
        let generation = self.next_generation;
        let by_slot = self.by_slot;
        let hold = self.holds.entry(new.key.clone()).or_insert_with(|| Hold {
            count: 0,
            watched: 0,
            releasing: 0,
            clock: Arc::new(LeaseClock::new(new.sent, new.lease)),
            generation,
            shape: new.shape,
            slot: if by_slot { slot(&new.key.lock) } else { 0 },
        });
        if hold.generation == generation {
            self.next_generation += 1;
        } else {
            hold.clock.confirm(new.sent, new.lease);
        }
        hold.count += 1;
        holds_changed(1);
        if new.watched {
            if hold.watched == 0 {
                self.watched.insert(hold.place(), new.key);
            }
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
        if watched && hold.watched > 0 {
            hold.watched -= 1;
            if hold.watched == 0 {
                self.watched.remove(&hold.place());
            }
        }
        // The last guard went; or Redis has no hold left (or cannot say),
        // yet other guards of this owner remain: theirs are lost.
        if hold.count == 0 || still_held != Some(true) {
            self.lost(key);
        }
    }

    /// `key` is gone from Redis: mark its guards lost and forget it.
    pub(crate) fn lost(&mut self, key: &HoldKey) {
        if let Some(hold) = self.holds.remove(key) {
            self.watched.remove(&hold.place());
            holds_changed(-i64::try_from(hold.count).unwrap_or(i64::MAX));
            hold.clock.mark_lost();
        }
    }

    /// `key`'s hold as the watchdog renews it, if it is held.
    pub(crate) fn entry(&self, key: &HoldKey) -> Option<Watched> {
        self.holds.get(key).map(|hold| hold.watched(key))
    }

    /// The generation of `key`'s entry, if it is held.
    pub(crate) fn generation(&self, key: &HoldKey) -> Option<u64> {
        self.holds.get(key).map(|hold| hold.generation)
    }

    /// Whether every hold of `key` is being released (none would be left
    /// if the releases under way succeed).
    pub(crate) fn all_releasing(&self, key: &HoldKey) -> bool {
        self.holds
            .get(key)
            .is_some_and(|hold| hold.releasing >= hold.count)
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

    /// Called by the watchdog before a round: whether there is anything
    /// to renew. When there is not, the watchdog must stop (and the next
    /// watched hold starts a new one).
    pub(crate) fn round_due(&mut self) -> bool {
        if self.watched.is_empty() {
            self.renewing = false;
            return false;
        }
        true
    }

    /// The next at most `max` watched holds in round order, after `after`
    /// (from the first when `None`), and the place of the last one: a
    /// round calls this until it gets nothing. Holds watched meanwhile
    /// come in this round if their place is still ahead; a hold released
    /// meanwhile is simply not there. Costs `O(max · log n)`.
    pub(crate) fn watched_after(
        &self,
        after: Option<RoundPlace>,
        max: usize,
    ) -> (Vec<Watched>, Option<RoundPlace>) {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut last = after;
        let chunk = self
            .watched
            .range((from, Bound::Unbounded))
            .take(max)
            .filter_map(|(place, key)| {
                last = Some(*place);
                self.holds.get(key).map(|hold| hold.watched(key))
            })
            .collect();
        (chunk, last)
    }

    /// Every watched hold, in round order (tests).
    #[cfg(test)]
    pub(crate) fn all_watched(&self) -> Vec<Watched> {
        self.watched_after(None, usize::MAX).0
    }
}

impl Hold {
    /// Its place in the round order.
    fn place(&self) -> RoundPlace {
        RoundPlace {
            slot: self.slot,
            generation: self.generation,
        }
    }

    /// What the watchdog and the loss watch are given of it.
    fn watched(&self, key: &HoldKey) -> Watched {
        Watched {
            key: key.clone(),
            generation: self.generation,
            shape: self.shape.clone(),
            clock: self.clock.clone(),
        }
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
        HoldKey::new(name.into(), "c:1".into())
    }

    fn new(name: &str, watched: bool) -> NewHold {
        NewHold {
            key: key(name),
            watched,
            shape: HoldShape::Lock {
                timeouts: String::new(),
            },
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
        assert!(!holds.round_due());
        let (_, start) = holds.acquired(new("b", true));
        assert!(start, "a stopped watchdog is started again");
    }

    #[test]
    fn renewal_failures_during_a_release_are_not_losses() {
        let mut holds = Holds::default();
        let (clock, _) = holds.acquired(new("a", true));
        holds.acquired(new("a", true));
        let w = holds.all_watched().pop().unwrap();
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
        let w = holds.all_watched().pop().unwrap();
        holds.releasing(&w.key);
        holds.released(&w.key, true, Some(false));
        let (clock, _) = holds.acquired(new("a", true));
        assert!(!holds.renewal_failed(&w.key, w.generation));
        assert!(!clock.is_lost());
    }

    #[test]
    fn a_round_walks_every_watched_hold_in_chunks_whatever_changes_meanwhile() {
        let mut holds = Holds::default();
        for i in 0..10 {
            holds.acquired(new(&format!("w{i}"), true));
        }
        holds.acquired(new("unwatched", false));
        assert!(holds.round_due());
        let mut seen = Vec::new();
        let (chunk, mut after) = holds.watched_after(None, 4);
        assert_eq!(chunk.len(), 4);
        seen.extend(chunk.into_iter().map(|w| w.key.lock.to_string()));
        // Between chunks: one hold not yet walked is released, one walked
        // is released, and a new one comes.
        let pending = holds
            .all_watched()
            .into_iter()
            .map(|w| w.key)
            .find(|k| !seen.contains(&k.lock.to_string()))
            .unwrap();
        holds.releasing(&pending);
        holds.released(&pending, true, Some(false));
        let walked = key(&seen[0]);
        holds.releasing(&walked);
        holds.released(&walked, true, Some(false));
        holds.acquired(new("late", true));
        loop {
            let (chunk, next) = holds.watched_after(after, 4);
            if chunk.is_empty() {
                break;
            }
            after = next;
            seen.extend(chunk.into_iter().map(|w| w.key.lock.to_string()));
        }
        let mut expected: Vec<String> = (0..10)
            .map(|i| format!("w{i}"))
            .filter(|l| **l != *pending.lock)
            .collect();
        // A hold taken during a round comes at its end.
        assert_eq!(seen.last().map(String::as_str), Some("late"));
        seen.pop();
        let mut unique = seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), seen.len(), "nothing twice: {seen:?}");
        unique.sort();
        expected.sort();
        assert_eq!(unique, expected);
        // Once nothing is watched, the watchdog stops.
        for w in holds.all_watched() {
            holds.releasing(&w.key);
            holds.released(&w.key, true, Some(false));
        }
        assert!(!holds.round_due());
        assert_eq!(holds.count(&key("unwatched")), 1);
    }

    #[test]
    fn on_a_cluster_rounds_go_slot_by_slot() {
        let mut holds = Holds::new(true);
        for i in 0..20 {
            holds.acquired(new(&format!("s{i}"), true));
        }
        holds.acquired(new("{s3}again", true));
        let slots: Vec<u16> = holds
            .all_watched()
            .iter()
            .map(|w| slot(&w.key.lock))
            .collect();
        assert_eq!(slots.len(), 21);
        assert!(slots.windows(2).all(|w| w[0] <= w[1]), "{slots:?}");
    }
}
