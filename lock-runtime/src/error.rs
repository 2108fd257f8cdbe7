//! The one error type of the locks.

use std::time::Duration;

/// What can go wrong with a lock.
///
/// Every variant says what happened to the lock: none of them leaves a hold
/// that nobody will release or renew.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A release by an owner that does not hold the lock. The lock was left
    /// untouched.
    #[error("lock `{name}` is not held by {owner}; it was left untouched")]
    NotOwner {
        /// The lock's name.
        name: String,
        /// The owner that tried to release it.
        owner: String,
    },
    /// Waiting for the lock took longer than allowed. Nothing is held.
    #[error("timed out after {waited:?} waiting for lock `{name}`")]
    Timeout {
        /// The lock's name.
        name: String,
        /// How long it waited.
        waited: Duration,
    },
    /// The hold ended before it was released: its lease expired, or someone
    /// deleted or broke the lock. Whatever it protected may have been used by
    /// another holder meanwhile.
    #[error(
        "lock `{name}` was lost before it was released (lease expired, or the lock was deleted)"
    )]
    LockLost {
        /// The lock's name.
        name: String,
    },
    /// The lock's key holds a value that is not a lock (not a hash). It was
    /// left untouched.
    #[error("key `{name}` holds a value that is not a lock; it was left untouched")]
    WrongType {
        /// The key's name.
        name: String,
    },
    /// The owner holds the read lock and asked for the write lock of the
    /// same read/write lock: it would wait for itself forever. Nothing
    /// changed; release the read holds first.
    #[error(
        "lock `{name}`: the owner holds the read lock and cannot upgrade to the write lock (it would wait forever); release the read lock first"
    )]
    Upgrade {
        /// The lock's name.
        name: String,
    },
    /// The name cannot be used as a lock name.
    #[error("invalid lock name `{name}`: {reason}")]
    InvalidName {
        /// The name (its first 80 characters).
        name: String,
        /// Why not.
        reason: String,
    },
    /// An invalid setting, such as a zero lease.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Redis failed or could not be reached. For an acquire, nothing is held;
    /// for a release, the release goes on in the background.
    #[error("redis error: {0}")]
    Redis(#[from] redis::RedisError),
}

impl Error {
    /// Maps a Redis error about `name` to [`Error::WrongType`] when it is one.
    pub(crate) fn from_redis(name: &str, error: redis::RedisError) -> Error {
        let wrong_type =
            error.code() == Some("WRONGTYPE") || error.to_string().contains("WRONGTYPE");
        if error.code() == Some("LOCKUPGRADE") {
            Error::Upgrade {
                name: name.to_string(),
            }
        } else if wrong_type {
            Error::WrongType {
                name: name.to_string(),
            }
        } else {
            Error::Redis(error)
        }
    }
}

/// The result type of the locks.
pub type Result<T, E = Error> = std::result::Result<T, E>;
