//! What the clones of a client, its handles, guards and background tasks
//! share: its identity, connections, settings, the registry of holds and
//! the background worker's queue. Everything else builds on this.

use crate::config::Config;
use crate::connection::Connection;
use crate::holds::Holds;
use crate::job::Job;
use crate::owner::{Ids, Owner};
use crate::pubsub::PubSubHub;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// The state shared by everything made from one client.
pub(crate) struct Shared {
    /// The client's uuid.
    pub id: Arc<str>,
    pub con: Connection,
    /// The watchdog's own connection (the same place and settings as
    /// `con`; `con` itself when the user gave it).
    pub renewal_con: Connection,
    pub hub: PubSubHub,
    pub config: Config,
    pub holds: Mutex<Holds>,
    pub ids: Ids,
    /// The background worker's queue. Each job carries the state it needs,
    /// so that it still runs when the last client handle was dropped with
    /// it (a guard that outlived its client, dropped).
    pub jobs: mpsc::UnboundedSender<(Arc<Shared>, Job)>,
    /// Latches of answered releases, to be deleted by the next sweep.
    pub latches: Mutex<Vec<String>>,
}

impl Shared {
    /// The registry of holds (a poisoned lock is still usable: its data is
    /// kept consistent at every step).
    pub(crate) fn holds(&self) -> MutexGuard<'_, Holds> {
        self.holds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The owner with a new id, never used before by this client, and the
    /// fencing token its first hold got.
    pub(crate) fn owner(&self, id: u64, token: u64) -> Owner {
        Owner::new(&self.id, id, token)
    }

    /// The latches waiting for the next sweep.
    pub(crate) fn latches(&self) -> MutexGuard<'_, Vec<String>> {
        self.latches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Deletes `latch` with the next sweep (starting one if none is due):
    /// the background worker is woken once per sweep, not per release.
    pub(crate) fn delete_latch(self: &Arc<Self>, latch: String) {
        let mut latches = self.latches();
        let first = latches.is_empty();
        latches.push(latch);
        drop(latches);
        if first {
            self.submit(Job::SweepLatches);
        }
    }

    /// Hands `job` to the background worker; never blocks.
    pub(crate) fn submit(self: &Arc<Self>, job: Job) {
        if self.jobs.send((self.clone(), job)).is_err() {
            tracing::warn!(
                target: crate::observability::targets::RELEASE,
                "the background worker is gone (tokio runtime shut down?); a lock will be freed by its lease"
            );
        }
    }
}
