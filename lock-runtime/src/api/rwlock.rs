//! [`ReadWriteLock`]: many readers or one writer, stored as Redisson's
//! `RReadWriteLock`.

use crate::api::lock::{ReadLock, WriteLock};
use crate::base::kind::Kind;
use crate::holds::shared::Shared;
use std::sync::Arc;

/// A read/write lock, made by
/// [`LockClient::read_write_lock`](crate::LockClient::read_write_lock).
/// Its two sides, [`ReadWriteLock::read`] and [`ReadWriteLock::write`], are
/// [`Lock`](crate::Lock) handles ([`ReadLock`], [`WriteLock`]) with the
/// whole lock API: waiting, leases, the watchdog,
/// guards and their lost signal, force release, queries.
///
/// - Many holders may hold the read lock at once; the write lock excludes
///   readers and other writers. Each acquire is a new holder; re-entry is
///   explicit ([`LockGuard::reenter`](crate::LockGuard::reenter),
///   [`Lock::reenter`](crate::Lock::reenter)).
/// - Downgrade: the owner of a write hold may take a read hold with
///   `rw.read().reenter(write_guard.owner())`, then release the write hold,
///   and keeps reading (other readers may then enter, and are woken).
/// - Upgrade: the owner of read holds that asks to re-enter the write side
///   gets [`Error::Upgrade`](crate::Error::Upgrade) at once (it would wait
///   for itself forever; Redisson deadlocks there). A task that holds a
///   read guard and calls `write().lock()` is a new writer: it waits for
///   every reader, itself included — release the read guard first.
/// - Every release that can let someone in wakes the waiters.
/// - Each read hold has its own timeout key, renewed by the watchdog for
///   its owner only: a reader that died stops blocking writers when its
///   lease ends.
///
/// **Writer starvation.** By default (Redisson's behaviour) readers enter
/// whenever no writer holds the lock, so a steady stream of overlapping
/// readers can keep a writer waiting forever.
/// [`ReadWriteLock::writer_preferring`] makes a waiting writer leave a mark
/// (`{name}:redlua_writer_waiting`) that new readers wait behind: the writer
/// gets in once the current readers are done. The writer renews the mark
/// every second while it waits and takes it away when it stops waiting; a
/// writer that dies while waiting holds readers back for at most 3 s.
/// Readers of services that do not honour the mark (Redisson's, or
/// redlua's without this option) still enter. `try_lock` on the write side
/// leaves no mark.
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
