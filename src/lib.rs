//! redlua.
