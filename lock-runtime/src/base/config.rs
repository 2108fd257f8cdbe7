//! A client's settings, their defaults, and the checks that refuse a bad
//! value before anything is written to Redis.

use crate::base::error::{Error, Result};
use crate::protocol::replies::Publish;
use std::time::Duration;

/// The default watchdog timeout, which is also the lease of a lock taken
/// without an explicit one: 30 seconds, as in Redisson.
pub const DEFAULT_WATCHDOG_TIMEOUT: Duration = Duration::from_secs(30);

/// The default wait time of a fair lock's waiter (Redisson's
/// `fairLockWaitTimeout`, its `threadWaitTime`): 10 s. Each waiter in a
/// [`FairLock`](crate::FairLock)'s queue has a deadline, the one before it
/// (or the lease left, for the first) plus this; a waiter first in line
/// whose deadline passed is dropped from the queue, so that a waiter that
/// died holds the others up for at most about this long.
///
/// Redisson's default is 5 minutes, as its waiters stay queued until their
/// deadline. redlua's leave when they stop waiting (cancelled, timed out,
/// failed) and push their deadline forward each time they ask again (at
/// most every half of this): only a waiter that died or lost Redis relies
/// on the deadline, and a live one that cannot reach Redis for a few
/// seconds keeps its place.
pub const DEFAULT_FAIR_LOCK_WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default time allowed to open a connection to Redis.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The default time allowed for Redis to answer a command; a connection
/// that lets it pass is replaced.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);

/// The longest lease accepted (about 146 million years): anything longer
/// would overflow Redis's expiry arithmetic.
pub const MAX_LEASE: Duration = Duration::from_millis(i64::MAX as u64 / 2);

/// The shortest lease accepted.
pub const MIN_LEASE: Duration = Duration::from_millis(1);

/// The shortest watchdog timeout accepted.
pub const MIN_WATCHDOG_TIMEOUT: Duration = Duration::from_millis(30);

/// How long a release's latch is kept, so that a retried release finds the
/// first one's result.
pub(crate) const LATCH_TTL: Duration = Duration::from_secs(30);

/// How long a fencing token counter outlives the lease that last used it.
pub(crate) const TOKEN_RETENTION: Duration = Duration::from_secs(3600);

/// How long the pub/sub connection may stay quiet (no message, no reply)
/// before it is pinged, to find out it died silently.
pub(crate) const PUBSUB_PING_INTERVAL: Duration = Duration::from_secs(1);

/// The longest a pub/sub connection's ping may go unanswered (the response
/// timeout, if shorter): a silent link is found within
/// [`PUBSUB_PING_INTERVAL`] plus this of its last sign of life.
pub(crate) const PUBSUB_PING_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a Sentinel client asks the sentinels which node is the
/// master, to leave an old master soon after a failover.
pub(crate) const SENTINEL_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The longest a waiter sleeps between two tries, whatever it was told:
/// a lost message costs at most this.
pub(crate) const MAX_WAIT_BETWEEN_TRIES: Duration = Duration::from_secs(5);

/// How often a waiter tries while it has no working subscription.
pub(crate) const POLL_WITHOUT_SUBSCRIPTION: Duration = Duration::from_millis(100);

/// How long opening a connection, and a reply on it, may take: the
/// client's settings, for every connection it opens.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub connect: Duration,
    pub response: Duration,
}

impl Timeouts {
    /// The settings of a connection with these timeouts.
    pub(crate) fn config(self) -> redis::AsyncConnectionConfig {
        redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect))
            .set_response_timeout(Some(self.response))
    }
}

/// Settings of a client.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The lease of watched holds; renewed every third of it.
    pub watchdog_timeout: Duration,
    /// A fair lock waiter's wait time (Redisson's `threadWaitTime`).
    pub fair_wait: Duration,
    /// How long a release's latch lives.
    pub latch_ttl: Duration,
    /// How releases are announced (detected once, at connect).
    pub publish: Publish,
}

impl Config {
    /// How long an attempt key lives once written: long enough to stop a
    /// late copy of the acquire that a stalled connection may still deliver.
    pub(crate) fn attempt_ttl(&self, lease: Duration) -> Duration {
        lease.max(self.latch_ttl)
    }
}

/// Checks a lease (or watchdog timeout) given by the caller: at least
/// [`MIN_LEASE`], at most [`MAX_LEASE`].
pub(crate) fn check_lease(what: &str, lease: Duration) -> Result<Duration> {
    if lease < MIN_LEASE {
        return Err(Error::Config(format!(
            "{what} must be at least 1 ms, not {lease:?}"
        )));
    }
    if lease > MAX_LEASE {
        return Err(Error::Config(format!(
            "{what} of {lease:?} is beyond what Redis can expire (at most {} ms)",
            MAX_LEASE.as_millis()
        )));
    }
    Ok(lease)
}

/// How long a fencing token counter lives after an acquire with `lease`.
pub(crate) fn token_ttl(lease: Duration) -> Duration {
    lease.saturating_add(TOKEN_RETENTION).min(MAX_LEASE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::replies::millis;

    #[test]
    fn leases_outside_redis_range_are_refused() {
        assert!(check_lease("a lease", Duration::ZERO).is_err());
        assert!(check_lease("a lease", Duration::from_micros(999)).is_err());
        assert!(check_lease("a lease", Duration::MAX).is_err());
        assert!(check_lease("a lease", MAX_LEASE + Duration::from_millis(1)).is_err());
        assert_eq!(check_lease("a lease", MAX_LEASE).unwrap(), MAX_LEASE);
        assert_eq!(millis(MAX_LEASE), i64::MAX as u64 / 2);
        assert_eq!(millis(Duration::from_micros(1500)), 2);
        assert_eq!(millis(Duration::from_secs(3)), 3000);
        assert!(token_ttl(MAX_LEASE) <= MAX_LEASE);
    }
}
