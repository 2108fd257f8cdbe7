//! The units every layer above uses: settings and limits, the error type
//! (and the one classifier of Redis errors), Redisson's key names, owners,
//! the kinds of lock, the key of a hold, and how a mutex is locked. They build on the scripts'
//! contract ([`protocol`](crate::protocol)) only.

pub(crate) mod config;
pub(crate) mod counted_names;
pub(crate) mod error;
pub(crate) mod hold_key;
pub(crate) mod kind;
pub(crate) mod mutex;
pub(crate) mod names;
pub(crate) mod owner;
pub(crate) mod sync_replicas;
