//! The latches of answered releases, waiting to be deleted.
//!
//! A release's latch (`redisson_unlock_latch:{name}:<request-id>`) keeps its
//! result for a retry of that release; once the release was answered (and
//! never sent twice) nothing will read it, and it is deleted early instead
//! of living out its 30 s. It goes with the next release script this client
//! sends to the same slot (any slot on one server): the script deletes the
//! latches it is given before anything else, so that under steady
//! contention deleting them costs no command of its own. A latch that no
//! release took within [`LATCH_SWEEP_DELAY`] is deleted by a sweep in the
//! background (one `DEL` per slot); one that neither removes expires by
//! itself.

use crate::base::mutex::locked;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a latch waits for a release script to carry it before a sweep
/// deletes it with a `DEL` of its own.
pub(crate) const LATCH_SWEEP_DELAY: Duration = Duration::from_millis(250);

/// At most this many latches go with one release script.
pub(crate) const LATCHES_PER_SCRIPT: usize = 16;

/// A latch waiting to be deleted.
#[derive(Debug, Clone)]
pub(crate) struct Latch {
    pub key: String,
    /// Its slot on a cluster (0 on one server).
    pub slot: u16,
    /// When it was queued (or put back).
    queued: Instant,
}

/// The latches waiting, oldest first, and whether a sweep is scheduled.
#[derive(Debug, Default)]
pub(crate) struct Latches {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    waiting: VecDeque<Latch>,
    sweeping: bool,
}

impl State {
    /// Marks a sweep scheduled: true when none was.
    fn start_sweep(&mut self) -> bool {
        !std::mem::replace(&mut self.sweeping, true)
    }
}

impl Latches {
    /// Queues `key` (in `slot`): true when a sweep must be started (none
    /// is scheduled).
    pub(crate) fn queue(&self, key: String, slot: u16) -> bool {
        let mut state = locked(&self.state);
        state.waiting.push_back(Latch {
            key,
            slot,
            queued: Instant::now(),
        });
        state.start_sweep()
    }

    /// Queues again the latches a script was to delete but maybe did not
    /// (it failed): true when a sweep must be started.
    pub(crate) fn put_back(&self, latches: Vec<Latch>) -> bool {
        if latches.is_empty() {
            return false;
        }
        let mut state = locked(&self.state);
        state.waiting.extend(latches);
        state.start_sweep()
    }

    /// Takes up to [`LATCHES_PER_SCRIPT`] latches for a script sent to
    /// `slot` (`None`: one server, where any latch can go).
    pub(crate) fn carry(&self, slot: Option<u16>) -> Vec<Latch> {
        let mut state = locked(&self.state);
        let Some(slot) = slot else {
            // One server: the oldest ones.
            let n = state.waiting.len().min(LATCHES_PER_SCRIPT);
            return state.waiting.drain(..n).collect();
        };
        if state.waiting.is_empty() {
            return Vec::new();
        }
        let mut carried = Vec::new();
        let mut kept = VecDeque::new();
        while let Some(latch) = state.waiting.pop_front() {
            if carried.len() < LATCHES_PER_SCRIPT && latch.slot == slot {
                carried.push(latch);
            } else {
                kept.push_back(latch);
            }
        }
        state.waiting = kept;
        carried
    }

    /// For the sweep: when the oldest latch waiting is due; `None` when none
    /// waits (the sweep ends; the next latch queued starts another).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        let mut state = locked(&self.state);
        let oldest = state.waiting.iter().map(|latch| latch.queued).min();
        if oldest.is_none() {
            state.sweeping = false;
        }
        oldest.map(|queued| queued + LATCH_SWEEP_DELAY)
    }

    /// For the sweep: takes the latches that waited [`LATCH_SWEEP_DELAY`]
    /// or more.
    pub(crate) fn take_due(&self, now: Instant) -> Vec<Latch> {
        let mut state = locked(&self.state);
        let (due, kept) = std::mem::take(&mut state.waiting)
            .into_iter()
            .partition(|latch| latch.queued + LATCH_SWEEP_DELAY <= now);
        state.waiting = kept;
        due.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latch_goes_with_a_script_to_its_slot_or_waits_for_the_sweep() {
        let latches = Latches::default();
        assert!(latches.queue("a".into(), 1), "the first starts a sweep");
        assert!(!latches.queue("b".into(), 2), "one sweep at a time");
        let carried = latches.carry(Some(2));
        assert_eq!(
            carried.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        // Not yet due.
        assert!(latches.take_due(Instant::now()).is_empty());
        let due = latches.next_due().expect("one waits");
        let taken = latches.take_due(due);
        assert_eq!(
            taken.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        assert_eq!(latches.next_due(), None, "the sweep ends");
        assert!(latches.put_back(carried), "a new sweep starts");
    }

    #[test]
    fn one_server_takes_any_latch_and_at_most_a_scripts_worth() {
        let latches = Latches::default();
        for i in 0..LATCHES_PER_SCRIPT + 3 {
            latches.queue(format!("l{i}"), 0);
        }
        assert_eq!(latches.carry(None).len(), LATCHES_PER_SCRIPT);
        assert_eq!(latches.carry(None).len(), 3);
        assert!(latches.carry(None).is_empty());
    }
}
