//! The Redis keys and channels of a lock, named as Redisson names them.
//!
//! - the lock itself: the name as given (`orders:42`);
//! - its channel: `redisson_lock__channel:{orders:42}`;
//! - a release's latch: `redisson_unlock_latch:{orders:42}:<request-id>`.
//!
//! The braces are a Redis Cluster hash tag: every key of one lock lands in the
//! slot of its name. A name that has braces of its own is used as it is
//! (`redisson_lock__channel:a{b}c`), as Redisson does; a name whose keys would
//! still not share a hash tag is refused.

use crate::error::Error;

/// The longest lock name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 1024;

/// Redisson's `prefixName`: `prefix:{name}`, or `prefix:name` when the name
/// has braces of its own.
fn prefixed(prefix: &str, name: &str) -> String {
    if name.contains('{') {
        format!("{prefix}:{name}")
    } else {
        format!("{prefix}:{{{name}}}")
    }
}

/// The part of `key` that Redis Cluster hashes: the content of the first
/// `{...}` when it is not empty, else the whole key.
pub(crate) fn hash_tag(key: &str) -> &str {
    if let Some(open) = key.find('{')
        && let Some(len) = key[open + 1..].find('}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// The keys of one reentrant lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockNames {
    /// The hash holding owner -> hold count.
    pub lock: String,
    /// The channel released locks are announced on.
    pub channel: String,
}

impl LockNames {
    /// Validates `name` and derives its keys.
    pub(crate) fn new(name: &str) -> Result<LockNames, Error> {
        let invalid = |reason: &str| Error::InvalidName {
            name: name.chars().take(80).collect(),
            reason: reason.to_string(),
        };
        if name.is_empty() {
            return Err(invalid("a lock name must not be empty"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(invalid("a lock name must be at most 1024 bytes"));
        }
        let names = LockNames {
            lock: name.to_string(),
            channel: prefixed("redisson_lock__channel", name),
        };
        let latch = names.latch("0");
        if hash_tag(&names.channel) != hash_tag(name) || hash_tag(&latch) != hash_tag(name) {
            return Err(invalid(
                "its braces would put the lock's keys in different Redis Cluster slots; \
                 use at most one non-empty {...} hash tag",
            ));
        }
        Ok(names)
    }

    /// The latch of the release with this request id.
    pub(crate) fn latch(&self, request_id: &str) -> String {
        format!(
            "{}:{request_id}",
            prefixed("redisson_unlock_latch", &self.lock)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redisson_names() {
        let names = LockNames::new("orders:42").unwrap();
        assert_eq!(names.lock, "orders:42");
        assert_eq!(names.channel, "redisson_lock__channel:{orders:42}");
        assert_eq!(
            names.latch("ab12"),
            "redisson_unlock_latch:{orders:42}:ab12"
        );
    }

    #[test]
    fn names_with_a_hash_tag_keep_it() {
        let names = LockNames::new("user{7}:cart").unwrap();
        assert_eq!(names.channel, "redisson_lock__channel:user{7}:cart");
        assert_eq!(hash_tag(&names.channel), "7");
        assert_eq!(hash_tag(&names.latch("x")), "7");
    }

    #[test]
    fn names_whose_keys_would_split_are_refused() {
        for bad in ["{}x", "a{}{b}", "}{"] {
            // "}{": the channel `p:}{` hashes whole, the name hashes whole too,
            // but differently: refused.
            let result = LockNames::new(bad);
            assert!(
                matches!(result, Err(Error::InvalidName { .. })),
                "{bad}: {result:?}"
            );
        }
        assert!(matches!(LockNames::new(""), Err(Error::InvalidName { .. })));
        assert!(LockNames::new(&"x".repeat(MAX_NAME_LEN + 1)).is_err());
    }

    #[test]
    fn hash_tags() {
        assert_eq!(hash_tag("{a}b"), "a");
        assert_eq!(hash_tag("a{}b"), "a{}b");
        assert_eq!(hash_tag("a{b"), "a{b");
        assert_eq!(hash_tag("x{y}{z}"), "y");
    }
}
