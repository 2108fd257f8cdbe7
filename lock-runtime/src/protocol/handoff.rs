//! Direct handoffs of a fair lock: a release hands the free lock to the
//! head of the queue, so that the head need not try again.
//!
//! Under Redisson's protocol a fair lock changes hands in two round trips
//! after the release: it wakes the head of the queue, which runs the
//! acquire script. A redlua waiter may instead be handed the lock by the
//! release script itself (`scripts/fair_release.lua`): one message.
//!
//! - **Who.** Each try of a waiter that joins the queue says whether it
//!   takes a handoff, with what expiry, and which try it is ([`Offer`]),
//!   in the waiters' hash `{name}:redlua_handoff` (see [`LockNames`]). A
//!   waiter that is not in it (a Java waiter, a redlua waiter that takes
//!   none) is woken as Redisson wakes one. A waiter takes handoffs only
//!   when its lock scripts go without `WAIT`: the release's `WAIT` would be
//!   another client's, which it does not see.
//! - **The expiry** ([`expiry`]) is the waiter's lease, but at most its
//!   wait time (Redisson's `threadWaitTime`): a waiter that died while it
//!   was first in line holds the lock up no longer than it would have
//!   kept it free by Redisson's rules. It is at least [`MIN_EXPIRY`]; a
//!   waiter whose lease or wait time is shorter takes no handoff.
//! - **The message** on the waiter's channel is
//!   `redlua:handoff:<token>:<try>`: the fencing token the release minted,
//!   and the number of the try whose offer it took ([`parse`]). A waiter
//!   trusts it only as the answer to its latest try, which found the lock
//!   busy: a message that comes late, for an earlier try, is not used.
//! - **The lease clock** of a handed-over hold runs from when that try was
//!   *sent* (the handoff came later, so Redis's expiry is later still). A
//!   waiter uses the message only while at least half of the expiry is left
//!   by that clock ([`usable`]); otherwise it tries the lock, and the
//!   acquire script, finding the lock handed to it, gives it a full lease.
//! - **The full lease** follows at once, off the caller's path: the new
//!   holder extends the lease to its own in the background
//!   ([`watchdog::extend`](crate::holds::watchdog::extend)).
//! - **Cancellation.** A waiter that stops waiting without the lock leaves
//!   the queue (`scripts/fair_leave.lua`), and gives up a lock it was handed
//!   and never took; the next waiter is told. A waiter whose message was
//!   lost finds the lock handed to it at its next try.
//!
//! [`LockNames`]: crate::base::names::LockNames

use redis::{RedisWrite, ToRedisArgs};
use std::time::{Duration, Instant};

/// The shortest expiry a handoff gives the lock (a shorter one would leave
/// too little of the clock to extend the lease in).
pub(crate) const MIN_EXPIRY: Duration = Duration::from_secs(1);

/// What a handoff message starts with (`scripts/fair_release.lua`).
const PREFIX: &[u8] = b"redlua:handoff:";

/// The expiry a handoff gives a waiter with `lease` and wait time `wait`,
/// or `None` when it takes no handoff.
pub(crate) fn expiry(lease: Duration, wait: Duration) -> Option<Duration> {
    let expiry = lease.min(wait);
    (expiry >= MIN_EXPIRY).then_some(expiry)
}

/// What a try of a fair lock's waiter says about handoffs (the acquire
/// script's argument: `'<expiry ms>:<try>'`, or `'0'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// It takes none: a release wakes it, as Redisson's does.
    No,
    /// A release may hand it the lock with this expiry; `try_number`
    /// names the try (a message answers one try).
    Take { expiry: Duration, try_number: u64 },
}

impl ToRedisArgs for Offer {
    fn write_redis_args<W: ?Sized + RedisWrite>(&self, out: &mut W) {
        match self {
            Offer::No => out.write_arg(b"0"),
            Offer::Take { expiry, try_number } => out.write_arg_fmt(format_args!(
                "{}:{try_number}",
                crate::protocol::replies::millis(*expiry)
            )),
        }
    }
}

/// A handoff message's token and try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Handoff {
    pub token: u64,
    pub try_number: u64,
}

/// The handoff a message carries, if `payload` is one.
pub(crate) fn parse(payload: &[u8]) -> Option<Handoff> {
    let rest = std::str::from_utf8(payload.strip_prefix(PREFIX)?).ok()?;
    let (token, try_number) = rest.split_once(':')?;
    let number = |digits: &str| -> Option<u64> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    Some(Handoff {
        token: number(token)?,
        try_number: number(try_number)?,
    })
}

/// Whether a handoff with `expiry` answering a try sent at `sent` is
/// usable: at least half of it is left.
pub(crate) fn usable(sent: Instant, expiry: Duration) -> bool {
    sent.elapsed() <= expiry / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expiry_is_the_lease_but_at_most_the_wait_time_and_at_least_a_second() {
        let s = Duration::from_secs;
        assert_eq!(expiry(s(30), s(5)), Some(s(5)));
        assert_eq!(expiry(s(2), s(5)), Some(s(2)));
        assert_eq!(expiry(s(30), Duration::from_millis(999)), None);
        assert_eq!(expiry(Duration::from_millis(500), s(5)), None);
        assert_eq!(expiry(s(1), s(1)), Some(s(1)));
    }

    #[test]
    fn only_a_handoff_message_with_a_token_and_a_try_parses() {
        assert_eq!(
            parse(b"redlua:handoff:1732400000123456:7"),
            Some(Handoff {
                token: 1_732_400_000_123_456,
                try_number: 7
            })
        );
        for bad in [
            &b"redlua:handoff:"[..],
            b"redlua:handoff:12",
            b"redlua:handoff:12:",
            b"redlua:handoff::3",
            b"redlua:handoff:12x:3",
            b"redlua:handoff:-1:3",
            b"redlua:handoff:1:2:3",
            b"redlua:handoff:99999999999999999999999:1",
            b"redlua:handoff:\xff:1",
            b"0",
            b"1",
            b"",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn an_offer_is_the_expiry_in_ms_and_the_try() {
        assert_eq!(Offer::No.to_redis_args(), vec![b"0".to_vec()]);
        let offer = Offer::Take {
            expiry: Duration::from_secs(5),
            try_number: 3,
        };
        assert_eq!(offer.to_redis_args(), vec![b"5000:3".to_vec()]);
    }

    #[test]
    fn a_handoff_is_used_while_half_of_its_expiry_is_left() {
        let expiry = Duration::from_secs(4);
        assert!(usable(Instant::now(), expiry));
        let old = Instant::now() - Duration::from_millis(2100);
        assert!(!usable(old, expiry));
    }
}
