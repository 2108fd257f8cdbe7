//! [`ReadWriteLock`]: many readers or one writer, stored as Redisson's
//! `RReadWriteLock`.

use crate::api::lock::{ReadLock, WriteLock};
use crate::base::kind::Kind;
use crate::holds::shared::Shared;
use std::sync::Arc;

/// A read/write lock, made by
/// [`LockClient::read_write_lock`](crate::LockClient::read_write_lock).
/// Its sides, [`ReadWriteLock::read`] and [`ReadWriteLock::write`], are
/// [`Lock`](crate::Lock)s ([`ReadLock`], [`WriteLock`]) with the whole lock
/// API.
///
/// - Many may hold the read side at once; the write side excludes readers
///   and other writers. Each acquire is a new holder; re-entry is explicit.
/// - Downgrade: a write hold's owner may take a read hold with
///   `rw.read().reenter(write_guard.owner())`, release the write hold, and
///   keep reading (other readers may then enter, and are woken).
/// - Upgrade: a read hold's owner re-entering the write side gets
///   [`Error::Upgrade`](crate::Error::Upgrade) at once (Redisson deadlocks
///   there). A task holding a read guard that calls `write().lock()` is a
///   new writer, waiting for every reader, itself included.
/// - Every release that can let someone in wakes the waiters.
/// - Each read hold has its own timeout key, renewed for its owner only: a
///   dead reader stops blocking writers when its lease ends.
///
/// **Writer starvation.** By default (as Redisson) readers enter whenever
/// no writer holds the lock, so overlapping readers can keep a writer
/// waiting forever. [`ReadWriteLock::writer_preferring`] makes a waiting
/// writer leave a mark (`{name}:redlua_writer_waiting`, renewed every
/// second, gone when it stops waiting, at most 3 s after it died) that new
/// readers wait behind. Readers that do not honour it (Redisson's, or
/// without this option) still enter; the write side's `try_lock` leaves no
/// mark.
///
/// The layout is Redisson's: a hash at the name with `mode` = `read` |
/// `write`, readers as `<owner>` = hold count, the writer as
/// `<owner>:write` = hold count, read hold timeouts at
/// `{name}:<owner>:rwlock_timeout:<n>`, releases announced on
/// `redisson_rwlock:{name}`.
///
/// ```no_run
/// # async fn demo(client: redlua::LockClient) -> Result<(), redlua::Error> {
/// let rw = client.read_write_lock("catalog");
/// let reading = rw.read().lock().await?; // shared with other readers
/// reading.unlock().await?;
/// let writing = rw.write().lock().await?; // exclusive
/// writing.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ReadWriteLock {
    client: Arc<Shared>,
    name: String,
    prefer_writers: bool,
}

impl std::fmt::Debug for ReadWriteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadWriteLock")
            .field("name", &self.name)
            .field("prefer_writers", &self.prefer_writers)
            .finish_non_exhaustive()
    }
}

impl ReadWriteLock {
    pub(crate) fn new(client: Arc<Shared>, name: &str) -> ReadWriteLock {
        ReadWriteLock {
            client,
            name: name.to_string(),
            prefer_writers: false,
        }
    }

    /// The lock's name (its Redis key).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This lock, preferring writers: a waiting writer makes new readers
    /// wait behind it (see the type's documentation). Both sides of every
    /// handle that reads or writes must use it for the preference to hold.
    pub fn writer_preferring(mut self) -> ReadWriteLock {
        self.prefer_writers = true;
        self
    }

    /// The read side: shared with other readers.
    pub fn read(&self) -> ReadLock {
        ReadLock::new(
            self.client.clone(),
            &self.name,
            Kind::Read {
                prefer_writers: self.prefer_writers,
            },
        )
    }

    /// The write side: exclusive.
    pub fn write(&self) -> WriteLock {
        WriteLock::new(
            self.client.clone(),
            &self.name,
            Kind::Write {
                prefer_writers: self.prefer_writers,
            },
        )
    }
}
