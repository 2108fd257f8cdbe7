//! The Redis keys and channels of a semaphore and of a count-down latch,
//! named as Redisson names them.
//!
//! - a semaphore (Redisson's `RSemaphore`): the name itself, a string of
//!   the permits available; its channel `redisson_sc:{name}`;
//! - a count-down latch (Redisson's `RCountDownLatch`): the name itself, a
//!   string of the count; its channel
//!   `redisson_countdownlatch__channel__{name}` (braces always, as
//!   Redisson spells it);
//! - a leased semaphore (Redisson's `RPermitExpirableSemaphore`): the
//!   semaphore's keys, and the sorted set of the permits taken,
//!   `{name}:timeout` (16-byte id -> expiry in ms); its fencing token
//!   counter (redlua's) `{name}:redlua_token`;
//! - redlua's own short-lived keys beside them: an acquire attempt's key,
//!   `{name}:redlua_permits:<client-uuid>:<n>`, and a change's request
//!   latch, `{name}:redlua_change:<client-uuid>:<n>`.
//!
//! Every key and channel of one primitive lands in the slot of its name; a
//! name whose braces would split them is refused, as a lock's is.

use crate::base::error::Error;
use crate::base::names::{check_name, prefixed, suffixed};
use crate::protocol::counted_scripts::SEMAPHORE_CHANNEL_PREFIX;

/// The keys of one semaphore or count-down latch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountedNames {
    /// The string holding the permits available, or the count.
    pub key: String,
    /// The channel its changes are announced on.
    pub channel: String,
    /// A leased semaphore's permits taken, id -> expiry in ms.
    pub timeouts: String,
    /// A leased semaphore's fencing token counter.
    pub token: String,
    /// What every acquire attempt's key starts with.
    attempt_prefix: String,
    /// What every change's request latch starts with.
    latch_prefix: String,
}

impl CountedNames {
    /// Validates `name` and derives the keys of a semaphore.
    pub(crate) fn semaphore(name: &str) -> Result<CountedNames, Error> {
        CountedNames::with_channel(name, prefixed(SEMAPHORE_CHANNEL_PREFIX, name))
    }

    /// Validates `name` and derives the keys of a count-down latch.
    pub(crate) fn latch(name: &str) -> Result<CountedNames, Error> {
        CountedNames::with_channel(
            name,
            format!("redisson_countdownlatch__channel__{{{name}}}"),
        )
    }

    fn with_channel(name: &str, channel: String) -> Result<CountedNames, Error> {
        let names = CountedNames {
            key: name.to_string(),
            channel,
            timeouts: suffixed(name, "timeout"),
            token: suffixed(name, "redlua_token"),
            attempt_prefix: suffixed(name, "redlua_permits:"),
            latch_prefix: suffixed(name, "redlua_change:"),
        };
        let derived = [
            names.channel.clone(),
            names.timeouts.clone(),
            names.token.clone(),
            names.attempt("0", 0),
            names.request_latch("0", 0),
        ];
        check_name(name, "a name", "its", &derived)?;
        Ok(names)
    }

    /// The key of acquire attempt `n` of the client `client_id`.
    pub(crate) fn attempt(&self, client_id: &str, n: u64) -> String {
        format!("{}{client_id}:{n}", self.attempt_prefix)
    }

    /// The latch of change request `n` of the client `client_id`.
    pub(crate) fn request_latch(&self, client_id: &str, n: u64) -> String {
        format!("{}{client_id}:{n}", self.latch_prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::names::MAX_NAME_LEN;

    #[test]
    fn names_are_redissons() {
        let names = CountedNames::semaphore("jobs").unwrap();
        assert_eq!(names.key, "jobs");
        assert_eq!(names.channel, "redisson_sc:{jobs}");
        assert_eq!(names.attempt("u", 7), "{jobs}:redlua_permits:u:7");
        assert_eq!(names.request_latch("u", 8), "{jobs}:redlua_change:u:8");
        assert_eq!(names.timeouts, "{jobs}:timeout");
        assert_eq!(names.token, "{jobs}:redlua_token");
        let braced = CountedNames::semaphore("a{b}c").unwrap();
        assert_eq!(braced.channel, "redisson_sc:a{b}c");
        let latch = CountedNames::latch("done").unwrap();
        assert_eq!(latch.channel, "redisson_countdownlatch__channel__{done}");
    }

    #[test]
    fn names_that_would_split_their_keys_are_refused() {
        assert!(CountedNames::semaphore("").is_err());
        assert!(CountedNames::semaphore(&"x".repeat(MAX_NAME_LEN + 1)).is_err());
        // Redisson always braces the latch's channel: a name with a hash
        // tag of its own would put the channel elsewhere.
        assert!(matches!(
            CountedNames::latch("a{b}c"),
            Err(Error::InvalidName { .. })
        ));
    }
}
