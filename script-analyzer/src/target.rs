//! The server a script must run on: a Redis or Valkey release.
//!
//! Commands, command options (`SET ... GET`, `HEXPIRE`) and shebang flags
//! came with different releases. The analyzer checks a script against one
//! [`ServerTarget`]; the default, [`ServerTarget::Redis7_0`], is the oldest
//! release the project supports (the runtime needs `EVALSHA_RO`, new in
//! Redis 7.0).
//!
//! ```
//! use redlua_analyzer::{ServerTarget, Vendor};
//!
//! let target: ServerTarget = "redis-7.4".parse().unwrap();
//! assert_eq!(target, ServerTarget::Redis7_4);
//! assert_eq!(target.vendor(), Vendor::Redis);
//! assert_eq!(target.to_string(), "redis-7.4");
//! assert_eq!(ServerTarget::default(), ServerTarget::Redis7_0);
//!
//! let error = "redis-7.3".parse::<ServerTarget>().unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "unknown target `redis-7.3` (did you mean `redis-7.2`?); the targets are \
//!      redis-7.0, redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2, valkey-8.0"
//! );
//! ```

use std::fmt;
use std::str::FromStr;

/// Who makes the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    /// Redis (redis.io).
    Redis,
    /// Valkey (valkey.io), the fork of Redis 7.2.4.
    Valkey,
}

impl Vendor {
    /// `"Redis"` or `"Valkey"`.
    pub fn display_name(self) -> &'static str {
        match self {
            Vendor::Redis => "Redis",
            Vendor::Valkey => "Valkey",
        }
    }
}

macro_rules! targets {
    ($($(#[$meta:meta])* $variant:ident => ($vendor:ident, $major:literal, $minor:literal, $name:literal),)*) => {
        /// A server release a script may be checked against. Each has a
        /// name: `redis-7.4`, `valkey-8.0`.
        ///
        /// The facts of each target come from the command JSON files of that
        /// release (see [`ServerTarget::source`]). Targets compare within a
        /// vendor by version; a Redis target and a Valkey target are not
        /// ordered by release ([`PartialOrd`] orders them Redis first).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub enum ServerTarget {
            $(
                $(#[$meta])*
                $variant,
            )*
        }

        impl ServerTarget {
            /// Every target, Redis first, oldest first.
            pub const ALL: &'static [ServerTarget] = &[$(ServerTarget::$variant,)*];

            /// The target's name (`"redis-7.4"`), as the attribute option
            /// `target = "..."`, `[package.metadata.redlua]` and
            /// `lockctl lint --target` take it.
            pub fn name(self) -> &'static str {
                match self {
                    $(ServerTarget::$variant => $name,)*
                }
            }

            /// Who makes the server.
            pub fn vendor(self) -> Vendor {
                match self {
                    $(ServerTarget::$variant => Vendor::$vendor,)*
                }
            }

            /// The release's `(major, minor)` version.
            pub fn version(self) -> (u8, u8) {
                match self {
                    $(ServerTarget::$variant => ($major, $minor),)*
                }
            }
        }
    };
}

targets! {
    /// Redis 7.0, the default: the oldest release the project supports.
    #[default]
    Redis7_0 => (Redis, 7, 0, "redis-7.0"),
    /// Redis 7.2.
    Redis7_2 => (Redis, 7, 2, "redis-7.2"),
    /// Redis 7.4 (hash field expiration: `HEXPIRE`, `HTTL`, ...).
    Redis7_4 => (Redis, 7, 4, "redis-7.4"),
    /// Redis 8.0 (`HGETEX`, `HSETEX`, `HGETDEL`, vector sets).
    Redis8_0 => (Redis, 8, 0, "redis-8.0"),
    /// Redis 8.2 (`XDELEX`, `XACKDEL`, `BITOP DIFF`, ...).
    Redis8_2 => (Redis, 8, 2, "redis-8.2"),
    /// Redis 8.4 (`SET ... IFEQ`, `DELEX`, `DIGEST`, `MSETEX`).
    Redis8_4 => (Redis, 8, 4, "redis-8.4"),
    /// Valkey 7.2 (the commands of Redis 7.2).
    Valkey7_2 => (Valkey, 7, 2, "valkey-7.2"),
    /// Valkey 8.0.
    Valkey8_0 => (Valkey, 8, 0, "valkey-8.0"),
}

/// The flags a `#!lua flags=...` shebang may name, on every target.
const SHEBANG_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

impl ServerTarget {
    /// `"Redis 7.4"`, `"Valkey 8.0"`.
    pub fn display_name(self) -> String {
        let (major, minor) = self.version();
        format!("{} {major}.{minor}", self.vendor().display_name())
    }

    /// The flags a `#!lua flags=...` shebang may name on this target.
    pub fn shebang_flags(self) -> &'static [&'static str] {
        SHEBANG_FLAGS
    }

    /// Whether `self` is a release of `other`'s vendor at least as new.
    pub fn at_least(self, other: ServerTarget) -> bool {
        self.vendor() == other.vendor() && self.version() >= other.version()
    }

    /// The names of every target, comma-separated, for messages.
    pub fn names() -> String {
        ServerTarget::ALL
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ServerTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target name that is not one of [`ServerTarget::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    /// What was given.
    pub given: String,
    /// The closest target name, if one is close.
    pub suggestion: Option<ServerTarget>,
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown target `{}`", self.given)?;
        if let Some(s) = self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        write!(f, "; the targets are {}", ServerTarget::names())
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for ServerTarget {
    type Err = UnknownTarget;

    /// Parses a target name (`"redis-7.4"`, any ASCII case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        if let Some(t) = ServerTarget::ALL.iter().find(|t| t.name() == lower) {
            return Ok(*t);
        }
        let suggestion = nearest(&lower).or_else(|| {
            crate::similar::best_match(&lower, ServerTarget::ALL.iter().map(|t| t.name()))
                .and_then(|name| ServerTarget::ALL.iter().copied().find(|t| t.name() == name))
        });
        Err(UnknownTarget {
            given: s.to_string(),
            suggestion,
        })
    }
}

/// For a vendor and a version that is not a target (`redis-7.3`,
/// `redis7.4.1`, `valkey 8`), the newest target of that vendor no newer than
/// it, else the vendor's oldest.
fn nearest(lower: &str) -> Option<ServerTarget> {
    let (vendor, rest) = if let Some(rest) = lower.strip_prefix("redis") {
        (Vendor::Redis, rest)
    } else if let Some(rest) = lower.strip_prefix("valkey") {
        (Vendor::Valkey, rest)
    } else {
        return None;
    };
    let rest = rest.trim_start_matches(['-', ' ', '_', 'v']);
    let mut numbers = rest.split('.').map(|n| n.parse::<u8>().ok());
    let major = numbers.next().flatten()?;
    let minor = numbers.next().flatten().unwrap_or(0);
    let of_vendor = ServerTarget::ALL
        .iter()
        .copied()
        .filter(|t| t.vendor() == vendor);
    let oldest = of_vendor.clone().next();
    of_vendor
        .rev()
        .find(|t| t.version() <= (major, minor))
        .or(oldest)
}

/// On which targets a command or an option exists: the oldest release of
/// each vendor that has it, or `None` when no release of the vendor has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Availability {
    /// The first Redis target that has it.
    pub redis: Option<ServerTarget>,
    /// The first Valkey target that has it.
    pub valkey: Option<ServerTarget>,
}

impl Availability {
    /// On every target.
    pub const EVERYWHERE: Availability = Availability {
        redis: Some(ServerTarget::Redis7_0),
        valkey: Some(ServerTarget::Valkey7_2),
    };

    /// The first target of `vendor` that has it.
    pub fn first(self, vendor: Vendor) -> Option<ServerTarget> {
        match vendor {
            Vendor::Redis => self.redis,
            Vendor::Valkey => self.valkey,
        }
    }

    /// Whether `target` has it.
    pub fn on(self, target: ServerTarget) -> bool {
        self.first(target.vendor())
            .is_some_and(|first| target.at_least(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ServerTarget::ALL {
            assert_eq!(t.name().parse::<ServerTarget>(), Ok(*t));
            assert_eq!(t.to_string(), t.name());
        }
        assert_eq!("Valkey-8.0".parse(), Ok(ServerTarget::Valkey8_0));
        assert_eq!(ServerTarget::Redis7_4.display_name(), "Redis 7.4");
        assert_eq!(ServerTarget::default(), ServerTarget::Redis7_0);
        assert_eq!(ServerTarget::Redis7_4.source().0, "7.4.1");
        assert_eq!(ServerTarget::Redis8_4.source().0, "8.4");
        assert!(ServerTarget::Redis8_4.at_least(ServerTarget::Redis7_0));
    }

    #[test]
    fn unknown_names_suggest_the_closest() {
        let e = "redis-7.1".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.given, "redis-7.1");
        assert_eq!(e.suggestion, Some(ServerTarget::Redis7_0));
        let e = "redis-8.1".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Redis8_0));
        let e = "redis-9.0".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Redis8_4));
        let e = "redis-6.2".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Redis7_0));
        let e = "valkey 8".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Valkey8_0));
        let e = "redsi-7.0".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Redis7_0));
        let e = "redis-7.4.1".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Redis7_4));
        let e = "valkey8.0".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, Some(ServerTarget::Valkey8_0));
        let e = "dragonfly".parse::<ServerTarget>().unwrap_err();
        assert_eq!(e.suggestion, None);
        assert_eq!(
            e.to_string(),
            "unknown target `dragonfly`; the targets are redis-7.0, redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2, valkey-8.0"
        );
        assert!("".parse::<ServerTarget>().is_err());
    }

    #[test]
    fn availability() {
        let hexpire = Availability {
            redis: Some(ServerTarget::Redis7_4),
            valkey: None,
        };
        assert!(!hexpire.on(ServerTarget::Redis7_0));
        assert!(!hexpire.on(ServerTarget::Redis7_2));
        assert!(hexpire.on(ServerTarget::Redis7_4));
        assert!(!hexpire.on(ServerTarget::Valkey8_0));
        for t in ServerTarget::ALL {
            assert!(Availability::EVERYWHERE.on(*t));
        }
        assert!(ServerTarget::Valkey8_0.at_least(ServerTarget::Valkey7_2));
        assert!(!ServerTarget::Valkey8_0.at_least(ServerTarget::Redis7_4));
    }
}
