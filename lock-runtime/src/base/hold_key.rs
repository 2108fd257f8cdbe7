//! The key of a hold in a client's registry: the lock and the hash field
//! of its owner, hashed once; and what the hold is in Redis
//! ([`HoldShape`]): the watchdog renews and the loss watch reads each
//! shape its own way.

use crate::base::counted_names::CountedNames;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// The identity of a hold: the lock's key and the hash field that counts
/// the owner's holds (`<owner>`, or `<owner>:write`); for leased permits,
/// the semaphore's permits taken and the guard's first permit id (hex).
/// Hashed once, for the registry's lookups.
#[derive(Debug, Clone)]
pub(crate) struct HoldKey {
    /// The lock's key.
    pub lock: Arc<str>,
    /// The field in the lock's hash.
    pub field: Arc<str>,
    /// The hash of both, keyed at random once per process.
    hash: u64,
}

impl HoldKey {
    pub(crate) fn new(lock: Arc<str>, field: Arc<str>) -> HoldKey {
        static KEYS: OnceLock<RandomState> = OnceLock::new();
        let hash = KEYS
            .get_or_init(RandomState::new)
            .hash_one((&*lock, &*field));
        HoldKey { lock, field, hash }
    }
}

/// What a hold is in Redis.
#[derive(Debug, Clone)]
pub(crate) enum HoldShape {
    /// A lock's hold: its field in the hash at [`HoldKey::lock`].
    /// `timeouts`: a read hold's timeouts, renewed with it, or "".
    Lock { timeouts: String },
    /// Leased permits: members of the sorted set at [`HoldKey::lock`] (the
    /// permits taken of the semaphore `names`), scored by their expiry.
    /// The hold is there while every one of them is.
    Permits {
        names: Arc<CountedNames>,
        ids: Arc<[[u8; 16]]>,
    },
}

impl HoldShape {
    /// How many members say the hold is there (one flag each in a
    /// renewal's reply, one value each in the loss watch's read).
    pub(crate) fn parts(&self) -> usize {
        match self {
            HoldShape::Lock { .. } => 1,
            HoldShape::Permits { ids, .. } => ids.len(),
        }
    }

    /// The members whose presence says the hold is there: the hash field,
    /// or the permits' ids.
    pub(crate) fn members(&self, key: &HoldKey) -> Vec<Vec<u8>> {
        match self {
            HoldShape::Lock { .. } => vec![key.field.as_bytes().to_vec()],
            HoldShape::Permits { ids, .. } => ids.iter().map(|id| id.to_vec()).collect(),
        }
    }
}

impl PartialEq for HoldKey {
    fn eq(&self, other: &HoldKey) -> bool {
        self.hash == other.hash && self.lock == other.lock && self.field == other.field
    }
}

impl Eq for HoldKey {}

impl Hash for HoldKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_equal_exactly_when_lock_and_field_are() {
        let key = |lock: &str, field: &str| HoldKey::new(lock.into(), field.into());
        assert_eq!(key("a", "c:1"), key("a", "c:1"));
        let hasher = RandomState::new();
        assert_eq!(
            hasher.hash_one(key("a", "c:1")),
            hasher.hash_one(key("a", "c:1"))
        );
        assert_ne!(key("a", "c:1"), key("a", "c:2"));
        assert_ne!(key("a", "c:1"), key("b", "c:1"));
        // The boundary between the two counts.
        assert_ne!(key("a:b", "c"), key("a", "b:c"));
    }
}
