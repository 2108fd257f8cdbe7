//! `#[redis_script]`.
