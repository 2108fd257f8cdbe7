//! What Redis's Lua sandbox provides.
