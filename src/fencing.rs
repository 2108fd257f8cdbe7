//! Fencing: how a resource refuses the late write of a holder that lost
//! its lock.
//!
//! No lock can stop a holder that was paused (GC, swap, `SIGSTOP`) or cut
//! off past its lease from acting after another holder got the lock: only
//! the resource can. Every [`LockGuard`](crate::LockGuard) carries a
//! fencing token ([`LockGuard::token`](crate::LockGuard::token)) that grows
//! strictly with each new holder of the lock's name. Send it with every
//! write, and let the resource keep the highest token it has seen and
//! refuse lower ones.
//!
//! [`FencedSet`] is that check for a value stored in Redis, as a typed
//! script (`scripts/fenced_set.lua`); the same pattern fits a database row
//! (`UPDATE ... WHERE fence < $token`) or a service's API.
//!
//! ```no_run
//! # async fn demo(client: redlua::LockClient, mut con: redlua::redis::aio::MultiplexedConnection)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use redlua::fencing::FencedSet;
//!
//! let guard = client.lock("report:7").lock().await?;
//! let written = FencedSet {
//!     resource: "report:7:body",
//!     fence: "report:7:fence",
//!     token: guard.token(),
//!     value: "the new body",
//! }
//! .invoke(&mut con)
//! .await?;
//! if written == 0 {
//!     // A later holder wrote first: this holder had lost the lock.
//! }
//! guard.unlock().await?;
//! # Ok(()) }
//! ```

use crate::redis_script;

/// Writes `value` to `resource` if `token` is at least the highest token
/// `fence` has seen (and records it): 1 when written, 0 when refused.
///
/// The keys are your data: they get no expiry.
#[redis_script("scripts/fenced_set.lua", returns = i64, crate = crate)]
pub struct FencedSet<'a> {
    /// The value's key.
    #[key]
    pub resource: &'a str,
    /// The key keeping the highest token seen.
    #[key]
    pub fence: &'a str,
    /// The writer's fencing token.
    #[arg]
    pub token: u64,
    /// The value to write.
    #[arg]
    pub value: &'a str,
}
