//! redlua runtime.
