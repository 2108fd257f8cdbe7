//! What the clones of a client, its handles, guards and background tasks
//! share: its identity, connections, settings, the registry of holds and
//! the background worker's queue. Everything else builds on this.

use crate::base::config::Config;
use crate::base::mutex::locked;
use crate::base::names::slot;
use crate::base::owner::Ids;
use crate::holds::job::Job;
use crate::holds::latches::{Latch, Latches};
use crate::holds::loss_watch::LossWatch;
use crate::holds::registry::Holds;
use crate::transport::connection::Connection;
use crate::transport::pubsub::PubSubHub;
use crate::transport::replication::Replication;
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
    /// Notices holds taken away while held (see `loss_watch.rs`).
    pub losses: LossWatch,
    pub config: Config,
    /// How lock writes are synced to replicas (probed once, at connect).
    pub sync: Replication,
    /// The registry of holds (shared with the loss watch's task).
    pub holds: Arc<Mutex<Holds>>,
    pub ids: Ids,
    /// The background worker's queue. Each job carries the state it needs,
    /// so that it still runs when the last client handle was dropped with
    /// it (a guard that outlived its client, dropped).
    pub jobs: mpsc::UnboundedSender<(Arc<Shared>, Job)>,
    /// Latches of answered releases, to be deleted with the next release
    /// script to their slot, or by a sweep.
    pub latches: Latches,
}

impl Shared {
    /// The registry of holds (a poisoned lock is still usable: its data is
    /// kept consistent at every step).
    pub(crate) fn holds(&self) -> MutexGuard<'_, Holds> {
        locked(&self.holds)
    }

    /// The slot latches of `key`'s slot are grouped by: its slot on a
    /// cluster, 0 on one server.
    pub(crate) fn latch_slot(&self, key: &str) -> u16 {
        if self.con.is_cluster() { slot(key) } else { 0 }
    }

    /// Deletes `latch` with the next release script to its slot, or with
    /// a sweep (starting one if none is scheduled): the background worker
    /// is woken once per sweep, not per release.
    pub(crate) fn delete_latch(self: &Arc<Self>, latch: String) {
        let slot = self.latch_slot(&latch);
        if self.latches.queue(latch, slot) {
            self.submit(Job::SweepLatches);
        }
    }

    /// Takes the latches waiting that a release script sent to `lock`'s
    /// slot can delete (see `latches.rs`); unless [`Carried::deleted`] is
    /// called, they are queued again when the value is dropped (the script
    /// failed, or its future was dropped), and at worst deleted twice.
    pub(crate) fn carry_latches(self: &Arc<Self>, lock: &str) -> Carried {
        let slot = self.con.is_cluster().then(|| slot(lock));
        Carried {
            latches: self.latches.carry(slot),
            shared: self.clone(),
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

/// Latches a release script is to delete, queued again if it may not have.
pub(crate) struct Carried {
    pub latches: Vec<Latch>,
    shared: Arc<Shared>,
}

impl Carried {
    /// The script ran: its latches are gone.
    pub(crate) fn deleted(mut self) {
        self.latches.clear();
    }
}

impl Drop for Carried {
    fn drop(&mut self) {
        let latches = std::mem::take(&mut self.latches);
        if self.shared.latches.put_back(latches) {
            self.shared.submit(Job::SweepLatches);
        }
    }
}
