//! Leased permits: the acquire of a leased semaphore (Redisson's
//! `RPermitExpirableSemaphore` layout, see `leased_acquire.lua`), and a
//! guard's permits as a hold of the client's registry.
//!
//! Invariants:
//! - **Each permit has an id and an expiry in Redis**, and comes back to
//!   the pool exactly once: released, undone, or expired (whichever script
//!   removes it from the set of permits taken counts it back, in the same
//!   step).
//! - **A guard's permits are one hold** of the registry
//!   ([`HoldShape::Permits`]), with everything a lock's hold has: its lease
//!   clock, renewal by the watchdog's rounds, the loss watch (a permit
//!   removed from the permits taken marks the guard lost within a round
//!   trip), and the registry's release bookkeeping.

use crate::base::counted_names::CountedNames;
use crate::base::hold_key::{HoldKey, HoldShape};
use crate::holds::job::PermitJob;
use crate::holds::permits::{Attempt, Try};
use crate::holds::registry::NewHold;
use crate::observability::telemetry;
use crate::protocol::counted_scripts::{LeasedTaken, TakeLeased};
use crate::protocol::replies::millis;
use crate::script::ScriptCall;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A new permit id: 16 random bytes (Redisson's ids are 16 bytes too).
pub(crate) fn new_id() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

/// An id as Redisson prints it: 32 lowercase hex digits.
pub(crate) fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// An id from its hex form, if it is one.
pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.is_empty() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// An acquire of leased permits.
pub(crate) struct LeasedRequest<'a> {
    pub names: &'a CountedNames,
    pub attempt: String,
    pub ids: Vec<[u8; 16]>,
    pub lease: Duration,
    pub attempt_ttl_ms: u64,
    pub token_ttl_ms: u64,
    pub publish: crate::protocol::replies::Publish,
}

impl Attempt for LeasedRequest<'_> {
    type Reply = LeasedTaken;
    type Value = u64;
    const KIND: &'static str = telemetry::LEASED_SEMAPHORE;

    fn permits(&self) -> u64 {
        self.ids.len() as u64
    }

    fn call(&self) -> ScriptCall {
        TakeLeased {
            semaphore: &self.names.key,
            timeouts: &self.names.timeouts,
            channel: &self.names.channel,
            attempt: &self.attempt,
            token: &self.names.token,
            lease_ms: millis(self.lease),
            attempt_ttl_ms: self.attempt_ttl_ms,
            token_ttl_ms: self.token_ttl_ms,
            publish: self.publish,
            ids: self.ids.iter().map(|id| &id[..]).collect(),
        }
        .call()
    }

    fn read(reply: LeasedTaken) -> Try<u64> {
        match reply {
            LeasedTaken::Yes { token, available } => Try::Took {
                value: token,
                available,
            },
            LeasedTaken::No { wait, .. } => Try::Busy { wait },
            LeasedTaken::Abandoned => Try::Abandoned,
        }
    }

    fn undo(&self) -> PermitJob {
        PermitJob::UndoLeased {
            names: Arc::new(self.names.clone()),
            attempt: self.attempt.clone(),
            ids: self.ids.clone(),
        }
    }
}

/// A guard's permits as a new hold: keyed by the semaphore's permits
/// taken and the first permit's id (unique: each guard is a hold of its
/// own), renewed by the watchdog if `watched`.
pub(crate) fn new_hold(
    names: &Arc<CountedNames>,
    ids: Arc<[[u8; 16]]>,
    watched: bool,
    sent: Instant,
    lease: Duration,
) -> NewHold {
    let key = HoldKey::new(
        names.timeouts.as_str().into(),
        ids.first().map_or_else(String::new, |id| hex(id)).into(),
    );
    NewHold {
        key,
        watched,
        shape: HoldShape::Permits {
            names: names.clone(),
            ids,
        },
        sent,
        lease,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_as_redisson_prints_them_and_read_back() {
        let id = [0xab; 16];
        assert_eq!(hex(&id), "ab".repeat(16));
        assert_eq!(from_hex(&hex(&id)).unwrap(), id.to_vec());
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex(""), None);
        assert_ne!(new_id(), new_id());
    }
}
