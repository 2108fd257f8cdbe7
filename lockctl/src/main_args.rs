//! The options every subcommand shares, once parsed.

use crate::output::Format;
use std::time::Duration;

/// Options shared by the subcommands.
#[derive(Debug, Clone)]
pub struct Globals {
    /// `--url` / `REDIS_URL`.
    pub url: Option<String>,
    /// `--json` or not.
    pub format: Format,
    /// The hidden `--watchdog-timeout`.
    pub watchdog_timeout: Option<Duration>,
}
