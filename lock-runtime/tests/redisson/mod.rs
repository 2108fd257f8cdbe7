//! The Redisson reference of the lock tests: the key and channel names
//! Redisson uses (and redlua shares), and Redisson's own scripts, run with
//! `EVAL` exactly as a Java service sends them (the `.lua` files next to
//! this one; see /work/shared/design/redisson-wire.md for the layout).
//!
//! Used by `lock.rs` and `rwlock.rs`; each uses part of it.

#![allow(dead_code)]

use crate::common::Redis;

/// Redisson's acquire script (`RedissonLock#tryLockInnerAsync`).
pub const ACQUIRE: &str = include_str!("acquire.lua");
/// Redisson's release script with the unlock latch (`unlockInnerAsync`).
pub const RELEASE: &str = include_str!("release.lua");
/// Redisson's read lock acquire script (`RedissonReadLock#tryLockInnerAsync`).
pub const READ_ACQUIRE: &str = include_str!("rwlock_read_acquire.lua");
/// Redisson's read lock release script (`RedissonReadLock#unlockInnerAsync`).
pub const READ_RELEASE: &str = include_str!("rwlock_read_release.lua");
/// Redisson's write lock acquire script (`RedissonWriteLock#tryLockInnerAsync`).
pub const WRITE_ACQUIRE: &str = include_str!("rwlock_write_acquire.lua");
/// Redisson's write lock release script (`RedissonWriteLock#unlockInnerAsync`).
pub const WRITE_RELEASE: &str = include_str!("rwlock_write_release.lua");

// Key and channel names.

/// The channel a lock's release is announced on.
pub fn lock_channel(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

/// The channel a read/write lock's releases are announced on.
pub fn rwlock_channel(name: &str) -> String {
    format!("redisson_rwlock:{{{name}}}")
}

/// The latch of a release.
pub fn latch(name: &str, request_id: &str) -> String {
    format!("redisson_unlock_latch:{{{name}}}:{request_id}")
}

/// The fencing token counter of a lock (Redisson's `RFencedLock` name).
pub fn token_key(name: &str) -> String {
    format!("redisson_lock_token:{{{name}}}")
}

/// The prefix of `owner`'s read hold timeouts (Redisson's
/// `getReadWriteTimeoutNamePrefix`).
pub fn timeouts(name: &str, owner: &str) -> String {
    format!("{{{name}}}:{owner}:rwlock_timeout")
}

/// The timeout key of `owner`'s read hold number `n`.
pub fn timeout_key(name: &str, owner: &str, n: u64) -> String {
    format!("{}:{n}", timeouts(name, owner))
}

/// The attempt key of the acquire that made `owner` a holder (redlua's, in
/// Redisson's key space); a re-entry's is this plus `:<n>`.
pub fn attempt_key(name: &str, owner: &str) -> String {
    format!("{{{name}}}:redlua_attempt:{owner}")
}

// Redisson's scripts, run with EVAL as a Java service sends them.

/// A Java service's Redisson acquire.
pub async fn java_acquire(redis: &Redis, name: &str, lease_ms: u64, owner: &str) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(ACQUIRE)
        .arg(1)
        .arg(name)
        .arg(lease_ms)
        .arg(owner)
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson acquire")
}

/// Redisson's release with the latch of `request_id` (3 keys; the lease is
/// reset unconditionally; nil when not held).
pub async fn eval_redisson_release(
    redis: &Redis,
    name: &str,
    request_id: &str,
    owner: &str,
    lease_ms: u64,
) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(RELEASE)
        .arg(3)
        .arg(name)
        .arg(lock_channel(name))
        .arg(latch(name, request_id))
        .arg("0")
        .arg(lease_ms)
        .arg(owner)
        .arg("PUBLISH")
        .arg(30_000)
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson release")
}

/// A Java service's Redisson release with a fresh request id (16 random
/// bytes in hex).
pub async fn java_release(redis: &Redis, name: &str, owner: &str) -> Option<i64> {
    let request_id = uuid::Uuid::new_v4().simple().to_string();
    eval_redisson_release(redis, name, &request_id, owner, 30_000).await
}

/// A Java service's read lock acquire.
pub async fn java_read_acquire(
    redis: &Redis,
    name: &str,
    lease_ms: u64,
    owner: &str,
) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(READ_ACQUIRE)
        .arg(2)
        .arg(name)
        .arg(timeouts(name, owner))
        .arg(lease_ms)
        .arg(owner)
        .arg(format!("{owner}:write"))
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson read acquire")
}

/// A Java service's read lock release.
pub async fn java_read_release(redis: &Redis, name: &str, owner: &str) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(READ_RELEASE)
        .arg(4)
        .arg(name)
        .arg(rwlock_channel(name))
        .arg(timeouts(name, owner))
        .arg(format!("{{{name}}}"))
        .arg("0")
        .arg(owner)
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson read release")
}

/// A Java service's write lock acquire.
pub async fn java_write_acquire(
    redis: &Redis,
    name: &str,
    lease_ms: u64,
    owner: &str,
) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(WRITE_ACQUIRE)
        .arg(1)
        .arg(name)
        .arg(lease_ms)
        .arg(format!("{owner}:write"))
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson write acquire")
}

/// A Java service's write lock release.
pub async fn java_write_release(redis: &Redis, name: &str, owner: &str) -> Option<i64> {
    redis::cmd("EVAL")
        .arg(WRITE_RELEASE)
        .arg(2)
        .arg(name)
        .arg(rwlock_channel(name))
        .arg("1")
        .arg(30_000)
        .arg(format!("{owner}:write"))
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson write release")
}

// Semaphores and count-down latches.

/// Redisson's `RSemaphore` acquire script.
pub const SEMAPHORE_TRY_ACQUIRE: &str = include_str!("semaphore_try_acquire.lua");
/// Redisson's `RSemaphore` release script.
pub const SEMAPHORE_RELEASE: &str = include_str!("semaphore_release.lua");
/// Redisson's `RSemaphore` trySetPermits script.
pub const SEMAPHORE_TRY_SET_PERMITS: &str = include_str!("semaphore_try_set_permits.lua");
/// Redisson's `RCountDownLatch` countDown script.
pub const LATCH_COUNT_DOWN: &str = include_str!("latch_count_down.lua");
/// Redisson's `RCountDownLatch` trySetCount script.
pub const LATCH_TRY_SET_COUNT: &str = include_str!("latch_try_set_count.lua");

/// The channel of a semaphore (`RedissonSemaphore#getChannelName`).
pub fn semaphore_channel(name: &str) -> String {
    format!("redisson_sc:{{{name}}}")
}

/// The channel of a count-down latch (`RedissonCountDownLatch#getChannelName`).
pub fn latch_channel(name: &str) -> String {
    format!("redisson_countdownlatch__channel__{{{name}}}")
}

/// A Java service's `RSemaphore#tryAcquire(permits)`.
pub async fn java_semaphore_try_acquire(redis: &Redis, name: &str, permits: u64) -> bool {
    let taken: i64 = redis::cmd("EVAL")
        .arg(SEMAPHORE_TRY_ACQUIRE)
        .arg(1)
        .arg(name)
        .arg(permits)
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson semaphore acquire");
    taken == 1
}

/// A Java service's `RSemaphore#release(permits)`.
pub async fn java_semaphore_release(redis: &Redis, name: &str, permits: u64) {
    let _: () = redis::cmd("EVAL")
        .arg(SEMAPHORE_RELEASE)
        .arg(2)
        .arg(name)
        .arg(semaphore_channel(name))
        .arg(permits)
        .arg("PUBLISH")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson semaphore release");
}

/// A Java service's `RSemaphore#trySetPermits(permits)`.
pub async fn java_semaphore_try_set_permits(redis: &Redis, name: &str, permits: u64) -> bool {
    let set: i64 = redis::cmd("EVAL")
        .arg(SEMAPHORE_TRY_SET_PERMITS)
        .arg(2)
        .arg(name)
        .arg(semaphore_channel(name))
        .arg(permits)
        .arg("PUBLISH")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson trySetPermits");
    set == 1
}

/// A Java service's `RCountDownLatch#countDown()`.
pub async fn java_latch_count_down(redis: &Redis, name: &str) {
    let _: () = redis::cmd("EVAL")
        .arg(LATCH_COUNT_DOWN)
        .arg(2)
        .arg(name)
        .arg(latch_channel(name))
        .arg(0)
        .arg("PUBLISH")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson countDown");
}

/// A Java service's `RCountDownLatch#trySetCount(count)`.
pub async fn java_latch_try_set_count(redis: &Redis, name: &str, count: u64) -> bool {
    let set: i64 = redis::cmd("EVAL")
        .arg(LATCH_TRY_SET_COUNT)
        .arg(2)
        .arg(name)
        .arg(latch_channel(name))
        .arg(1)
        .arg(count)
        .arg("PUBLISH")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson trySetCount");
    set == 1
}

/// Redisson's `RPermitExpirableSemaphore` acquire script.
pub const LEASED_TRY_ACQUIRE: &str = include_str!("leased_try_acquire.lua");
/// Redisson's `RPermitExpirableSemaphore` release script (one permit).
pub const LEASED_TRY_RELEASE: &str = include_str!("leased_try_release.lua");

/// The sorted set of a permit-expirable semaphore's permits taken.
pub fn leased_timeouts(name: &str) -> String {
    format!("{{{name}}}:timeout")
}

/// Milliseconds since the epoch, as a Java client reads its clock.
pub fn java_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A Java service's `RPermitExpirableSemaphore#tryAcquire(leaseTime)`: the
/// new permit's id (hex) if it took one.
pub async fn java_leased_try_acquire(redis: &Redis, name: &str, lease_ms: u64) -> Option<String> {
    let id = *uuid::Uuid::new_v4().as_bytes();
    let now = java_now_ms();
    let reply: Option<String> = redis::cmd("EVAL")
        .arg(LEASED_TRY_ACQUIRE)
        .arg(3)
        .arg(name)
        .arg(leased_timeouts(name))
        .arg(semaphore_channel(name))
        .arg(1)
        .arg(now + lease_ms)
        .arg(now)
        .arg(922_337_203_685_477u64)
        .arg("PUBLISH")
        .arg(&id[..])
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson permit-expirable acquire");
    (reply.as_deref() == Some("OK")).then(|| id.iter().map(|b| format!("{b:02x}")).collect())
}

/// A Java service's `RPermitExpirableSemaphore#tryRelease(permitId)`.
pub async fn java_leased_try_release(redis: &Redis, name: &str, id_hex: &str) -> bool {
    let id: Vec<u8> = (0..id_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&id_hex[i..i + 2], 16).unwrap())
        .collect();
    let released: i64 = redis::cmd("EVAL")
        .arg(LEASED_TRY_RELEASE)
        .arg(3)
        .arg(name)
        .arg(semaphore_channel(name))
        .arg(leased_timeouts(name))
        .arg(&id[..])
        .arg(1)
        .arg(java_now_ms())
        .arg("PUBLISH")
        .query_async(&mut redis.raw())
        .await
        .expect("EVAL Redisson permit-expirable release");
    released == 1
}
