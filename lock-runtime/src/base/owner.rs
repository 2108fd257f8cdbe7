//! Who holds a lock: an [`Owner`], stored as `<client-uuid>:<owner-id>`,
//! Redisson's format.
//!
//! Every plain acquire is a new owner, with an id never used before by its
//! client: two acquires never share a hold by accident, whether they run in
//! two tasks or as two futures of one task (`join!`, `select!`). Re-entry is
//! explicit: it adds a hold to an owner that already holds the lock, through
//! [`LockGuard::reenter`](crate::LockGuard::reenter) or
//! [`Lock::reenter`](crate::Lock::reenter) with the guard's [`Owner`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The owner of a hold, as stored in Redis: `<client-uuid>:<owner-id>`.
///
/// Get one from a guard ([`LockGuard::owner`](crate::LockGuard::owner)) and
/// pass it on (it is `Clone + Send`) to re-enter the lock from another task
/// with [`Lock::reenter`](crate::Lock::reenter). An owner only re-enters
/// while it holds the lock: once its last hold is released or lost, its id
/// is never used again.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// `<client-uuid>:<owner-id>`, written once (every script call and
    /// registry entry of the owner uses it).
    field: Arc<str>,
    /// The length of the client's uuid, the start of `field`.
    client_len: usize,
    id: u64,
    token: u64,
}

impl Owner {
    pub(crate) fn new(client: &str, id: u64, token: u64) -> Owner {
        Owner {
            field: format!("{client}:{id}").into(),
            client_len: client.len(),
            id,
            token,
        }
    }

    /// The same owner, with the fencing token its first hold got.
    pub(crate) fn with_token(&self, token: u64) -> Owner {
        Owner {
            token,
            ..self.clone()
        }
    }

    /// The client's uuid, the first part of the stored owner.
    pub fn client_id(&self) -> &str {
        &self.field[..self.client_len]
    }

    /// The owner id, the second part of the stored owner (unique within
    /// its client).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The fencing token of the acquire that made this owner a holder.
    pub(crate) fn token(&self) -> u64 {
        self.token
    }

    /// The field stored in the lock's hash: `<client-uuid>:<owner-id>`.
    pub(crate) fn field(&self) -> &Arc<str> {
        &self.field
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.field)
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Owner({self})")
    }
}

/// Hands out a client's owner ids and re-entry sequence numbers: each once.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    /// How many were given out (the first is 1).
    given: AtomicU64,
}

impl Ids {
    /// A number this client never gave out before.
    pub(crate) fn next(&self) -> u64 {
        self.given.fetch_add(1, Ordering::Relaxed) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_owners_print_as_redisson() {
        let ids = Ids::default();
        let (a, b) = (ids.next(), ids.next());
        assert_ne!(a, b);
        let owner = Owner::new("u", a, 7);
        assert_eq!(owner.to_string(), format!("u:{a}"));
        assert_eq!(&**owner.field(), format!("u:{a}"));
        assert_eq!(owner.client_id(), "u");
        assert_eq!(owner.id(), a);
        assert_eq!(owner.token(), 7);
        assert_eq!(owner.with_token(9).field(), owner.field());
        assert_eq!(owner.with_token(9).token(), 9);
    }
}
