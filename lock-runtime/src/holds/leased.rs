//! Leased permits: the acquire of a leased semaphore (Redisson's
//! `RPermitExpirableSemaphore` layout, see `leased_acquire.lua`), and a
//! guard's permits as a hold of the client's registry.
//!
//! Invariants:
//! - **Each permit has an id and an expiry in Redis**, and comes back to
//!   the pool exactly once: released, undone, or expired (whichever script
//!   removes it from the permits taken counts it back, in the same step).
//! - **A guard's permits are one hold** of the registry
//!   ([`HoldShape::Permits`]), with everything a lock's hold has: its lease
//!   clock, the watchdog's renewal, the loss watch, and the registry's
//!   release bookkeeping.
//! - **They are released as a lock's hold is**: a [`ReleaseRequest`] whose
//!   target is the permits, sent by `release.rs` (latched by request,
//!   retried in the background), or, for an abandoned acquire, its undo.
//!   Only the script differs ([`PermitsTarget::release`]).

use crate::base::hold_key::{HoldKey, HoldShape};
use crate::holds::job::{Job, PermitsTarget, ReleaseRequest, Target};
use crate::holds::permits::{Attempt, Try};
use crate::holds::registry::NewHold;
use crate::holds::shared::Shared;
use crate::observability::telemetry;
use crate::protocol::counted_scripts::{LeasedTaken, ReleaseLeased, TakeLeased, UndoLeased};
use crate::protocol::replies::{ReleaseMode, Released, millis};
use crate::script::ScriptCall;
use crate::transport::connection::Connection;
use crate::transport::replication::{Synced, unsynced};
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
pub(crate) struct LeasedRequest {
    pub target: PermitsTarget,
    pub lease: Duration,
    pub attempt_ttl_ms: u64,
    pub token_ttl_ms: u64,
    pub publish: crate::protocol::replies::Publish,
}

impl Attempt for LeasedRequest {
    type Reply = LeasedTaken;
    type Value = u64;
    const KIND: &'static str = telemetry::LEASED_SEMAPHORE;

    fn permits(&self) -> u64 {
        self.target.ids.len() as u64
    }

    fn call(&self) -> ScriptCall {
        let names = &self.target.names;
        TakeLeased {
            semaphore: &names.key,
            timeouts: &names.timeouts,
            channel: &names.channel,
            attempt: &self.target.attempt,
            token: &names.token,
            lease_ms: millis(self.lease),
            attempt_ttl_ms: self.attempt_ttl_ms,
            token_ttl_ms: self.token_ttl_ms,
            publish: self.publish,
            ids: self.target.ids.iter().map(|id| &id[..]).collect(),
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

    fn undo(&self) -> Job {
        Job::Release(ReleaseRequest {
            key: hold_key(&self.target),
            target: Target::Permits(self.target.clone()),
            lease: self.lease,
            watched: false,
            // An undo writes no latch: the attempt's key tells what it did.
            latch: String::new(),
            mode: ReleaseMode::Undo,
            resent: false,
        })
    }
}

impl PermitsTarget {
    /// Runs the release script of the permits once (or, for an undo, the
    /// undo of their attempt): [`Released::Freed`] when every permit came
    /// back; [`Released::NotHeld`] when one had expired or been given back
    /// before (it came back once, then); [`Released::NeverTook`] for an
    /// undo whose attempt took nothing.
    pub(crate) async fn release(
        &self,
        con: &mut Connection,
        shared: &Shared,
        request: &ReleaseRequest,
    ) -> redis::RedisResult<Synced<Released>> {
        let (config, names) = (&shared.config, &self.names);
        let ids = self.ids.iter().map(|id| &id[..]).collect();
        if request.mode == ReleaseMode::Undo {
            let call = UndoLeased {
                semaphore: &names.key,
                timeouts: &names.timeouts,
                channel: &names.channel,
                attempt: &self.attempt,
                attempt_ttl_ms: millis(config.latch_ttl),
                publish: config.publish,
                ids,
            };
            // Nothing relies on an undo: it need not wait for replicas.
            let back: Synced<i64> = unsynced(con, &call.call()).await?;
            let reply = if back.reply > 0 {
                Released::Freed
            } else {
                Released::NeverTook
            };
            return Ok(Synced {
                reply,
                acked: back.acked,
            });
        }
        let call = ReleaseLeased {
            semaphore: &names.key,
            timeouts: &names.timeouts,
            channel: &names.channel,
            latch: &request.latch,
            latch_ttl_ms: millis(config.latch_ttl),
            publish: config.publish,
            ids,
        };
        let synced: Synced<(i64, i64)> = shared.sync.run(con, &call.call(), &names.key).await?;
        // (given back, of which expired): all of them, none expired.
        let all_back = synced.reply == (i64::try_from(self.ids.len()).unwrap_or(0), 0);
        let reply = if all_back {
            Released::Freed
        } else {
            Released::NotHeld
        };
        let acked = shared.sync.recount_release(con, &names.key, synced.acked);
        Ok(Synced {
            reply,
            acked: acked.await,
        })
    }
}

/// The registry key of the hold of `permits`: the semaphore's permits
/// taken and the first permit's id (each guard is a hold of its own).
fn hold_key(permits: &PermitsTarget) -> HoldKey {
    HoldKey::new(
        permits.names.timeouts.as_str().into(),
        permits
            .ids
            .first()
            .map_or_else(String::new, |id| hex(id))
            .into(),
    )
}

/// A guard's permits as a new hold, renewed by the watchdog if `watched`.
pub(crate) fn new_hold(
    permits: &PermitsTarget,
    watched: bool,
    sent: Instant,
    lease: Duration,
) -> NewHold {
    NewHold {
        key: hold_key(permits),
        watched,
        shape: HoldShape::Permits {
            names: permits.names.clone(),
            ids: permits.ids.clone(),
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
