//! The key of a hold in a client's registry: the lock and the hash field
//! of its owner, hashed once.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// The identity of a hold: the lock's key and the hash field that counts
/// the owner's holds (`<owner>`, or `<owner>:write`). Hashed once, when
/// made: the registry's lookups (every acquire and release makes some)
/// use that hash.
#[derive(Debug, Clone)]
pub(crate) struct HoldKey {
    /// The lock's key.
    pub lock: Arc<str>,
    /// The field in the lock's hash.
    pub field: Arc<str>,
    /// The hash of both, keyed at random once per process (as a
    /// `HashMap`'s own would be).
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
