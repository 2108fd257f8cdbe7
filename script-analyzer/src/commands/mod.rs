//! Redis's command table.
