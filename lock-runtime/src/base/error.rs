//! The one error type of the locks, and the one place where a Redis error
//! is classified.

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
    /// A re-entry for an owner that holds nothing of the lock (any more):
    /// re-entry only adds holds to a holder. Nothing changed.
    #[error("lock `{name}` is not held by {owner}: there is nothing to re-enter")]
    NotHeld {
        /// The lock's name.
        name: String,
        /// The owner that asked.
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
    /// The lock's key holds a value that is not a lock of this kind (not a
    /// hash, a hash of another layout, the other kind of lock, or a hold
    /// count that is not a number), as any method that reads or changes the
    /// lock finds it. It was left untouched.
    #[error("key `{name}` holds a value that is not a lock of this kind; it was left untouched")]
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
    /// An invalid setting, such as a zero or out-of-range lease. Refused
    /// before anything was sent to Redis.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Replica-synced mode: fewer replicas than wanted acknowledged an
    /// acquire (or re-entry) within the sync timeout. The acquire was undone
    /// (at once if Redis answered, else in the background): nothing is held,
    /// and no fencing token was handed out. Trying again is safe; a replica
    /// that keeps failing to acknowledge needs looking at (or a lower
    /// [`SyncReplicas`](crate::SyncReplicas) setting).
    #[error(
        "lock `{name}`: {acked} of {wanted} replicas acknowledged the acquire in time; it was undone"
    )]
    NotReplicated {
        /// The lock's name.
        name: String,
        /// Replicas that acknowledged.
        acked: u32,
        /// Replicas wanted.
        wanted: u32,
    },
    /// Replica-synced mode: the hold was released on the primary, but fewer
    /// replicas than wanted acknowledged the release within the sync
    /// timeout. The client holds nothing and renews nothing; a failover to a
    /// replica that missed the release would bring the hold back there
    /// until its lease ends (nobody renews it), keeping others out meanwhile.
    #[error(
        "lock `{name}`: released, but {acked} of {wanted} replicas acknowledged the release in time"
    )]
    ReleaseNotReplicated {
        /// The lock's name.
        name: String,
        /// Replicas that acknowledged.
        acked: u32,
        /// Replicas wanted.
        wanted: u32,
    },
    /// Replica-synced mode is on, but the server refuses `WAIT` (a proxy or
    /// managed service without it, a renamed command, an ACL rule without
    /// `+wait`). Found at connect; nothing was written. Allow `WAIT`, or turn
    /// the mode off knowingly with
    /// [`SyncReplicas::Off`](crate::SyncReplicas::Off).
    #[error(
        "replica-synced mode needs WAIT, which the server refuses ({reason}); allow it, or connect with sync_replicas(SyncReplicas::Off)"
    )]
    SyncUnavailable {
        /// What the server answered.
        reason: String,
    },
    /// Redis could not be reached within the connect timeout.
    #[error("cannot connect to Redis at {addr}: {reason}")]
    Connect {
        /// The address (with any password masked).
        addr: String,
        /// Why (refused, timed out, ...).
        reason: String,
    },
    /// The server answered, but not as Redis does (an HTTP server, a TLS
    /// port reached without TLS, another protocol): the URL most likely
    /// names the wrong port or host. The raw error is the source.
    #[error(
        "{addr} did not answer as Redis: check the host and port (is it another service, or a TLS port that needs rediss://?)"
    )]
    NotRedis {
        /// The address (with any password masked).
        addr: String,
        /// What redis-rs made of the answer.
        #[source]
        source: redis::RedisError,
    },
    /// The connection URL cannot be used: it is not of the form
    /// `redis://HOST:PORT/` or `rediss://HOST:PORT/` (a missing scheme, say).
    /// Nothing was sent. The raw error is the source.
    #[error(
        "not a Redis URL: expected redis://HOST:PORT/ or rediss://HOST:PORT/ (TLS), with an optional USER:PASSWORD@ before HOST and a database number after the /"
    )]
    InvalidUrl {
        /// What redis-rs said of it.
        #[source]
        source: redis::RedisError,
    },
    /// The thread of a [`blocking::LockClient`](crate::blocking::LockClient)
    /// could not be started, or has ended (only after a panic inside it):
    /// nothing is held (a hold it had is freed by its lease).
    #[error("the lock client's thread {0}")]
    ClientThread(String),
    /// A number of permits (or a latch's count) that the call cannot take:
    /// zero or negative permits to acquire or release, a negative number
    /// of permits to set, a count of zero. Refused before anything was
    /// sent to Redis.
    #[error("`{name}`: {reason}")]
    InvalidPermits {
        /// The semaphore's (or latch's) name.
        name: String,
        /// Why not.
        reason: String,
    },
    /// A `rediss://` URL, in a build without TLS: enable the `tls-rustls`
    /// feature of `redlua` (or of `redlua-runtime`).
    #[error(
        "a rediss:// URL needs TLS, which this build leaves out: enable the `tls-rustls` feature of redlua (or redlua-runtime)"
    )]
    TlsNotEnabled,
    /// Redis failed or could not be reached. For an acquire, nothing is held
    /// (an acquire whose outcome is unknown is undone in the background);
    /// for a release, the release goes on in the background.
    #[error("redis error: {0}")]
    Redis(#[from] redis::RedisError),
}

/// What a Redis error means for the locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The key is not a lock of the expected kind (`WRONGTYPE`): nothing
    /// was changed.
    WrongType,
    /// A read/write lock owner holding reads asked to write (`LOCKUPGRADE`).
    Upgrade,
    /// The command may or may not have run: its reply was lost (connection
    /// dropped, timed out, I/O error). Retry with the same identity.
    Unknown,
    /// Redis refused the command: it did not run.
    Refused,
}

/// Classifies a Redis error: the only place that looks at error codes.
pub(crate) fn classify(error: &redis::RedisError) -> Failure {
    match error.code() {
        Some("WRONGTYPE") => return Failure::WrongType,
        Some("LOCKUPGRADE") => return Failure::Upgrade,
        _ => {}
    }
    // A cluster outage that outlived the cluster connection's own retries
    // (a failover or a slot migration under way) is retried too: the script
    // did not run, and retrying is harmless. A redirection (`MOVED`, `ASK`)
    // that reaches here is not: it means a single-node connection to a
    // cluster (use `LockClient::cluster`), which retrying cannot mend.
    let cluster_outage = matches!(error.code(), Some("TRYAGAIN" | "CLUSTERDOWN"));
    // A write refused by a replica: the connection reaches a master that
    // was demoted (a Sentinel failover, or a managed service's endpoint
    // that moved). The script did not run; a new connection finds the
    // master again.
    let demoted = error.code() == Some("READONLY");
    if error.is_io_error()
        || cluster_outage
        || demoted
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
    {
        Failure::Unknown
    } else {
        Failure::Refused
    }
}

/// The connection was found closed (the server, a proxy or a network
/// device dropped it, typically while it sat idle): the client's healing
/// connection has been replaced, and an idempotent request is worth sending
/// again at once. A timeout is not this: the request may be under way.
pub(crate) fn connection_was_closed(error: &redis::RedisError) -> bool {
    // An I/O error from the socket (redis-rs's own kind: it has a source),
    // not one this crate made of a timeout.
    std::error::Error::source(error).is_some()
        && error.is_connection_dropped()
        && !error.is_timeout()
}

impl Error {
    /// The error for a connection URL (or its settings) that cannot be
    /// used: [`Error::TlsNotEnabled`] for a
    /// `rediss://` URL in a build without TLS, [`Error::InvalidUrl`] for
    /// one that does not parse.
    pub(crate) fn from_url(error: redis::RedisError) -> Error {
        // redis-rs's only word for it is its message.
        let tls_missing = error.kind() == redis::ErrorKind::InvalidClientConfig
            && error
                .to_string()
                .contains("TLS, the feature is not enabled");
        if tls_missing {
            Error::TlsNotEnabled
        } else if error.kind() == redis::ErrorKind::InvalidClientConfig {
            Error::InvalidUrl { source: error }
        } else {
            Error::Redis(error)
        }
    }

    /// The error for a connection to `addr` that failed: [`Error::NotRedis`]
    /// when the server answered something that is not Redis's protocol,
    /// else [`Error::Connect`].
    pub(crate) fn connect(addr: String, error: redis::RedisError) -> Error {
        // A reply that does not parse, before any command of ours had a
        // reply: the other end does not speak RESP.
        if error.kind() == redis::ErrorKind::Parse {
            Error::NotRedis {
                addr,
                source: error,
            }
        } else {
            Error::Connect {
                addr,
                reason: error.to_string(),
            }
        }
    }

    /// The error for a Redis failure about the lock `name`.
    pub(crate) fn from_redis(name: &str, error: redis::RedisError) -> Error {
        match classify(&error) {
            Failure::WrongType => Error::WrongType {
                name: name.to_string(),
            },
            Failure::Upgrade => Error::Upgrade {
                name: name.to_string(),
            },
            Failure::Unknown | Failure::Refused => Error::Redis(name_refused_command(error)),
        }
    }
}

/// A command refused inside a lock script (an ACL rule without it) is
/// reported by Redis with the script's SHA1 and line only: this names the
/// command, from the lines the macro recorded for each lock script, in a
/// `NOPERM` error. Other errors are returned as they are.
pub(crate) fn name_refused_command(error: redis::RedisError) -> redis::RedisError {
    name_refused_in(error, crate::protocol::lock_scripts::ALL)
}

/// [`name_refused_command`] among the given scripts.
fn name_refused_in(
    error: redis::RedisError,
    scripts: &[crate::protocol::lock_scripts::Listed],
) -> redis::RedisError {
    let text = error.to_string();
    if !text.contains("can't run this command") {
        return error;
    }
    let found = scripts.iter().find_map(|(def, calls)| {
        if !text.contains(def.sha1) {
            return None;
        }
        let (_, after) = text.rsplit_once("@user_script:")?;
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let number: u32 = digits.parse().ok()?;
        let mut commands: Vec<&str> = calls
            .iter()
            .filter(|(line, _)| *line == number)
            .map(|(_, command)| *command)
            .collect();
        commands.dedup();
        if commands.is_empty() {
            return None;
        }
        Some(format!(
            "the Redis user may not run {} ({} line {number}); Redis said: {text}",
            commands.join(" or "),
            def.path
        ))
    });
    match found {
        Some(detail) => redis::RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::NoPerm),
            "redlua: a command of a lock script was refused",
            detail,
        )),
        None => error,
    }
}

/// The result type of the locks.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use redis::{ErrorKind, RedisError, ServerErrorKind};

    fn server(kind: ServerErrorKind) -> RedisError {
        RedisError::from((
            ErrorKind::Server(kind),
            "test",
            "1 127.0.0.1:7000".to_string(),
        ))
    }

    #[test]
    fn cluster_outages_are_retried_redirections_are_not() {
        assert_eq!(
            classify(&server(ServerErrorKind::TryAgain)),
            Failure::Unknown
        );
        assert_eq!(
            classify(&server(ServerErrorKind::ClusterDown)),
            Failure::Unknown
        );
        assert_eq!(classify(&server(ServerErrorKind::Moved)), Failure::Refused);
        assert_eq!(classify(&server(ServerErrorKind::Ask)), Failure::Refused);
        assert_eq!(
            classify(&server(ServerErrorKind::CrossSlot)),
            Failure::Refused
        );
    }

    /// The error Redis gives when an ACL rule refuses the command on `line`
    /// of the script `sha1`.
    fn refused(sha1: &str, line: u32) -> RedisError {
        RedisError::from((
            ErrorKind::Server(ServerErrorKind::NoPerm),
            "test",
            format!(
                "The user executing the script can't run this command or subcommand \
                 script: {sha1}, on @user_script:{line}."
            ),
        ))
    }

    #[test]
    fn a_refused_lock_script_command_is_named_from_the_recorded_lines() {
        use crate::protocol::lock_scripts::Acquire;
        let line = Acquire::CALLS
            .iter()
            .find(|(_, command)| *command == "HSET")
            .map(|(line, _)| *line)
            .expect("lock_acquire.lua calls HSET");
        let named = name_refused_command(refused(Acquire::SHA1, line));
        assert_eq!(named.code(), Some("NOPERM"), "{named}");
        let text = named.to_string();
        assert!(
            text.contains(&format!(
                "the Redis user may not run HSET (scripts/lock_acquire.lua line {line}); \
                 Redis said: "
            )) && text.contains("can't run this command"),
            "{text}"
        );
    }

    #[test]
    fn every_command_of_the_refused_line_is_named_and_other_lines_are_left_alone() {
        static DEF: crate::script::ScriptDef = crate::script::ScriptDef {
            name: "Demo",
            path: "scripts/demo.lua",
            source: "",
            sha1: "0123456789abcdef0123456789abcdef01234567",
            read_only: false,
        };
        let scripts = [(
            &DEF,
            &[
                (1, "GET"),
                (3, "DEL"),
                (3, "PUBLISH"),
                (4, "SET"),
                (4, "SET"),
            ][..],
        )];
        let text = name_refused_in(refused(DEF.sha1, 3), &scripts).to_string();
        assert!(
            text.contains("the Redis user may not run DEL or PUBLISH (scripts/demo.lua line 3)"),
            "{text}"
        );
        let text = name_refused_in(refused(DEF.sha1, 4), &scripts).to_string();
        assert!(
            text.contains("the Redis user may not run SET (scripts/demo.lua line 4)"),
            "{text}"
        );
        // A line without a literal command (a computed name), another
        // script, or another error: unchanged.
        let unnamed = refused(DEF.sha1, 2);
        let before = unnamed.to_string();
        assert_eq!(name_refused_in(unnamed, &scripts).to_string(), before);
        let other = refused("fedcba9876543210fedcba9876543210fedcba98", 3);
        let before = other.to_string();
        assert_eq!(name_refused_in(other, &scripts).to_string(), before);
        let timeout = server(ServerErrorKind::TryAgain);
        let before = timeout.to_string();
        assert_eq!(name_refused_in(timeout, &scripts).to_string(), before);
    }

    #[test]
    fn a_demoted_master_is_retried_on_a_new_connection() {
        let readonly = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ReadOnly),
            "test",
            "You can't write against a read only replica.".to_string(),
        ));
        assert_eq!(readonly.code(), Some("READONLY"));
        assert_eq!(classify(&readonly), Failure::Unknown);
    }
}
