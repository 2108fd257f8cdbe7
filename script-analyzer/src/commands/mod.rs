//! The command table of every supported Redis and Valkey release.
//!
//! The table is data, generated from the `src/commands/*.json` files of each
//! release a script may target ([`ServerTarget`]) by
//! `script-analyzer/tools/gen-commands`, at pinned commits. For every command
//! it holds the arity, the flags, the key specifications, the subcommands,
//! the tokens (options such as `NX` or `EX`, with the type of their
//! argument), and on which targets the command and each token exist. That is
//! what the analyzer needs to check a `redis.call`: does the command exist on
//! the target, may a script call it, does it write, does it accept this many
//! arguments, and which arguments are keys.
//!
//! The arity and flags are those of the oldest release that has the command;
//! [`Command::arity_on`] and [`Command::flags_on`] give a target's own
//! (blocking commands are `noscript` in Redis 7.0 only, `ZRANK` takes
//! `WITHSCORE` since 7.2).
//!
//! To add a target, add its release to `RELEASES` in
//! `script-analyzer/tools/gen-commands`, run it with clones of the Redis and
//! Valkey repositories (it needs `python3` and `git`) and commit
//! `commands/table.rs`; `tools/gen-commands --check` tells whether the
//! committed table is current.
//!
//! ```
//! use redlua_analyzer::commands::{self, ArgShape};
//!
//! let hset = commands::lookup("HSET").unwrap();
//! assert!(hset.is_write());
//! assert!(hset.accepts(4)); // HSET key field value
//! assert!(!hset.accepts(2)); // HSET key
//!
//! // In `ZUNIONSTORE dest 2 a b`, the keys are `dest`, `a` and `b`.
//! let zunionstore = commands::lookup("zunionstore").unwrap();
//! let args = ["dest", "2", "a", "b"].map(ArgShape::Literal);
//! assert_eq!(zunionstore.key_positions(&args), vec![0, 2, 3]);
//!
//! assert_eq!(commands::suggest("hincrbyy"), Some("hincrby"));
//!
//! // HEXPIRE came with Redis 7.4; Valkey 8.0 does not have it.
//! use redlua_analyzer::ServerTarget;
//! let hexpire = commands::lookup("hexpire").unwrap();
//! assert!(!hexpire.available_on(ServerTarget::Redis7_0));
//! assert!(hexpire.available_on(ServerTarget::Redis7_4));
//! assert!(!hexpire.available_on(ServerTarget::Valkey8_0));
//! // SET takes GET on every target, IFEQ since Redis 8.4.
//! let set = commands::lookup("set").unwrap();
//! assert!(set.token("get").unwrap().available_on(ServerTarget::Redis7_0));
//! let ifeq = set.token("IFEQ").unwrap();
//! assert!(!ifeq.available_on(ServerTarget::Redis8_2));
//! assert!(ifeq.available_on(ServerTarget::Redis8_4));
//! assert_eq!(ifeq.arg_type(), commands::ArgType::String);
//! ```

#[rustfmt::skip]
mod table;

use crate::target::{Availability, ServerTarget};
use std::fmt;

impl ServerTarget {
    /// The release whose command JSON files gave this target's facts, as
    /// its tag and commit in its repository (`("7.4.1", "74b289a…")`). A
    /// Redis 8 target gives its version and the commit of the Redis
    /// documentation whose command file it comes from.
    pub fn source(self) -> (&'static str, &'static str) {
        table::RELEASES
            .iter()
            .find(|(t, _, _)| *t == self)
            .map_or(("", ""), |(_, tag, commit)| (*tag, *commit))
    }
}

macro_rules! bit_flags {
    (
        $(#[$meta:meta])*
        $ty:ident { $($(#[doc = $doc:literal])* $name:ident = $bit:literal => $text:literal,)* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $ty(u32);

        impl $ty {
            /// No flag set.
            pub const EMPTY: $ty = $ty(0);
            $(
                $(#[doc = $doc])*
                pub const $name: $ty = $ty(1 << $bit);
            )*

            /// Every flag of `self` and of `other`.
            pub const fn union(self, other: $ty) -> $ty {
                $ty(self.0 | other.0)
            }

            /// Whether every flag of `other` is set in `self`.
            pub const fn contains(self, other: $ty) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether any flag of `other` is set in `self`.
            pub const fn intersects(self, other: $ty) -> bool {
                self.0 & other.0 != 0
            }

            /// The names of the flags set, as Redis spells them.
            pub fn names(self) -> impl Iterator<Item = &'static str> {
                const ALL: &[($ty, &str)] = &[$(($ty::$name, $text),)*];
                ALL.iter()
                    .filter(move |(flag, _)| self.contains(*flag))
                    .map(|(_, text)| *text)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_set().entries(self.names()).finish()
            }
        }
    };
}

bit_flags! {
    /// A command's flags, as the command JSON files list them (and as
    /// `COMMAND` shows them, but for `may_replicate`, which Redis 7.0's
    /// `COMMAND` does not show).
    Flags {
        /// Changes data.
        WRITE = 0 => "write",
        /// Only reads data.
        READONLY = 1 => "readonly",
        /// May grow memory use; refused when over `maxmemory`.
        DENYOOM = 2 => "denyoom",
        /// Implemented by a module.
        MODULE = 3 => "module",
        /// An administrative command.
        ADMIN = 4 => "admin",
        /// A Pub/Sub command.
        PUBSUB = 5 => "pubsub",
        /// Not allowed from scripts.
        NOSCRIPT = 6 => "noscript",
        /// May block the client.
        BLOCKING = 7 => "blocking",
        /// Allowed while the database loads.
        LOADING = 8 => "loading",
        /// Allowed on a replica with stale data.
        STALE = 9 => "stale",
        /// Not shown by `MONITOR`.
        SKIP_MONITOR = 10 => "skip_monitor",
        /// Not shown by `SLOWLOG`.
        SKIP_SLOWLOG = 11 => "skip_slowlog",
        /// Allowed in a cluster's importing slot after `ASKING`.
        ASKING = 12 => "asking",
        /// Fast (O(1) or O(log N)).
        FAST = 13 => "fast",
        /// Allowed before authentication.
        NO_AUTH = 14 => "no_auth",
        /// May replicate (PUBLISH, SPUBLISH, PFCOUNT): scripts treat it as a write.
        MAY_REPLICATE = 15 => "may_replicate",
        /// Sentinel command.
        SENTINEL = 16 => "sentinel",
        /// Sentinel-only command.
        ONLY_SENTINEL = 17 => "only_sentinel",
        /// Key arguments are optional.
        NO_MANDATORY_KEYS = 18 => "no_mandatory_keys",
        /// Refused unless enabled in the configuration.
        PROTECTED = 19 => "protected",
        /// Refused while the database loads asynchronously.
        NO_ASYNC_LOADING = 20 => "no_async_loading",
        /// Not allowed inside `MULTI`.
        NO_MULTI = 21 => "no_multi",
        /// Which arguments are keys depends on the other arguments.
        MOVABLEKEYS = 22 => "movablekeys",
        /// Allowed while a script is busy.
        ALLOW_BUSY = 23 => "allow_busy",
        /// A module command that cannot run in a cluster.
        MODULE_NO_CLUSTER = 24 => "module_no_cluster",
        /// May touch keys other than its arguments (`SCAN`, `RANDOMKEY`).
        TOUCHES_ARBITRARY_KEYS = 25 => "touches_arbitrary_keys",
    }
}

bit_flags! {
    /// The flags of a [`KeySpec`], as listed by `COMMAND`.
    KeySpecFlags {
        /// Read-only access to the key.
        RO = 0 => "RO",
        /// Read-write access.
        RW = 1 => "RW",
        /// Overwrites the key.
        OW = 2 => "OW",
        /// Removes the key.
        RM = 3 => "RM",
        /// Returns or copies user data.
        ACCESS = 4 => "access",
        /// Updates data in the key.
        UPDATE = 5 => "update",
        /// Adds data to the key.
        INSERT = 6 => "insert",
        /// Deletes data from the key.
        DELETE = 7 => "delete",
        /// The argument is not a key, though it hashes like one.
        NOT_KEY = 8 => "not_key",
        /// The spec may not find every key.
        INCOMPLETE = 9 => "incomplete",
        /// The flags depend on the arguments.
        VARIABLE_FLAGS = 10 => "variable_flags",
    }
}

/// Where a key specification starts looking for keys. Argument indices count
/// the command name as index 0, as Redis does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BeginSearch {
    /// At this argument index.
    Index(i32),
    /// After the first argument equal (ignoring ASCII case) to `keyword`,
    /// searching forwards from index `start_from`, or backwards from the end
    /// when `start_from` is negative.
    Keyword {
        /// The keyword, as Redis spells it (`STREAMS`).
        keyword: &'static str,
        /// The index to search from; negative counts from the end.
        start_from: i32,
    },
    /// The command's own code finds the keys.
    Unknown,
}

/// How a key specification finds its keys from where the search began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindKeys {
    /// A range of arguments.
    Range {
        /// The last key, relative to the first; negative counts from the end
        /// of the arguments (`-1` is the last argument).
        last_key: i32,
        /// The distance between two keys.
        key_step: i32,
        /// When `last_key` is `-1` and this is not 0: the keys are the first
        /// `1/limit` of the remaining arguments (XREAD's streams, then IDs).
        limit: i32,
    },
    /// An argument tells how many keys follow (`EVAL`, `ZUNIONSTORE`).
    KeyNum {
        /// Where the number of keys is, relative to the first argument.
        key_num_index: i32,
        /// Where the first key is, relative to the first argument.
        first_key: i32,
        /// The distance between two keys.
        key_step: i32,
    },
    /// The command's own code finds the keys.
    Unknown,
}

/// One key specification of a command: where some of its keys are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    /// How the keys are accessed.
    pub flags: KeySpecFlags,
    /// Where the search starts.
    pub begin_search: BeginSearch,
    /// How keys are found from there.
    pub find_keys: FindKeys,
}

/// A Redis command or subcommand, as its JSON file describes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    name: &'static str,
    arity: i32,
    positional: u8,
    integers: &'static [u8],
    flags: Flags,
    since: Availability,
    revisions: &'static [Revision],
    key_specs: &'static [KeySpec],
    tokens: &'static [Token],
    subcommands: &'static [Command],
}

/// A target on which a command's arity or flags differ from those of the
/// oldest release that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Revision {
    target: ServerTarget,
    arity: i32,
    flags: Flags,
}

/// The type of the argument a token introduces, as the command JSON files
/// name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgType {
    /// The token alone (`NX`, `WITHSCORES`).
    PureToken,
    /// An integer (`EX 10`).
    Integer,
    /// A floating-point number.
    Double,
    /// A string.
    String,
    /// A key name.
    Key,
    /// A glob-style pattern (`MATCH user:*`).
    Pattern,
    /// A Unix time in seconds.
    UnixTime,
    /// Several arguments in a row (`LIMIT offset count`).
    Block,
    /// One of several alternatives.
    OneOf,
}

/// A literal word a command recognises among its arguments (`NX`, `EX`,
/// `WITHSCORES`), and the targets that accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token {
    name: &'static str,
    arg: ArgType,
    since: Availability,
}

impl Token {
    /// The token, upper case (`"EX"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The type of the argument it introduces.
    pub fn arg_type(&self) -> ArgType {
        self.arg
    }

    /// The targets that accept it.
    pub fn since(&self) -> Availability {
        self.since
    }

    /// Whether `target` accepts it.
    pub fn available_on(&self, target: ServerTarget) -> bool {
        self.since.on(target)
    }
}

/// What the analyzer knows about one argument of a command, to find which
/// arguments are keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgShape<'a> {
    /// A string or number literal with this value.
    Literal(&'a str),
    /// One value not known before run time.
    Value,
    /// Any number of values not known before run time (`unpack(ARGV)` or a
    /// call in last position); the arguments after it are not known either.
    Spread,
}

/// The command named `name` (any ASCII case), if some target has it (see
/// [`Command::available_on`] for a given one).
///
/// `name` is a top-level command (`"OBJECT"`); use [`Command::subcommand`]
/// for `OBJECT ENCODING`.
pub fn lookup(name: &str) -> Option<&'static Command> {
    let lower = name.to_ascii_lowercase();
    table::COMMANDS
        .binary_search_by(|c| c.name.cmp(lower.as_str()))
        .ok()
        .map(|i| &table::COMMANDS[i])
}

/// Every top-level command of every target, sorted by name.
pub fn all() -> &'static [Command] {
    table::COMMANDS
}

/// The known command closest to the unknown `name`, for a "did you mean"
/// hint, or `None` when nothing is close.
pub fn suggest(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    crate::similar::best_match(&lower, table::COMMANDS.iter().map(|c| c.name))
}

impl Command {
    /// The name in lower case; a subcommand's is `container|sub`
    /// (`"object|encoding"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The name as written in a call, upper case, a subcommand's with a space
    /// (`"OBJECT ENCODING"`).
    pub fn display_name(&self) -> String {
        self.name.replace('|', " ").to_ascii_uppercase()
    }

    /// The arity as Redis reports it: it counts the command name (and a
    /// subcommand's name); positive means exactly, negative at least. This
    /// is the oldest release's; see [`Command::arity_on`].
    pub fn arity(&self) -> i32 {
        self.arity
    }

    /// The arity on `target`.
    pub fn arity_on(&self, target: ServerTarget) -> i32 {
        self.revision(target).map_or(self.arity, |r| r.arity)
    }

    /// The command's flags in the oldest release that has it; see
    /// [`Command::flags_on`].
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// The command's flags on `target`.
    pub fn flags_on(&self, target: ServerTarget) -> Flags {
        self.revision(target).map_or(self.flags, |r| r.flags)
    }

    fn revision(&self, target: ServerTarget) -> Option<&'static Revision> {
        self.revisions.iter().find(|r| r.target == target)
    }

    /// The targets that have the command.
    pub fn since(&self) -> Availability {
        self.since
    }

    /// Whether `target` has the command.
    pub fn available_on(&self, target: ServerTarget) -> bool {
        self.since.on(target)
    }

    /// The tokens the command recognises on some target, sorted.
    pub fn tokens(&self) -> &'static [Token] {
        self.tokens
    }

    /// How many arguments come first, each in its place, before any option
    /// (2 for `SET key value`): values, not tokens, whatever they spell.
    /// Counted after the command's name (and a subcommand's).
    pub fn positional(&self) -> usize {
        usize::from(self.positional)
    }

    /// Whether the argument at `place` (0: the first after the command's
    /// name, or a subcommand's) takes an integer, as the command's JSON
    /// types its leading arguments (`integer` or `unix-time`) on every
    /// target that has the command: EXPIRE's seconds, LRANGE's start and
    /// stop, LPOP's count. Arguments after a token are not covered (see
    /// [`Command::token`]).
    ///
    /// ```
    /// let expire = redlua_analyzer::commands::lookup("expire").unwrap();
    /// assert!(!expire.takes_integer(0)); // the key
    /// assert!(expire.takes_integer(1)); // the seconds
    /// ```
    pub fn takes_integer(&self, place: usize) -> bool {
        u8::try_from(place).is_ok_and(|p| self.integers.contains(&p))
    }

    /// The token `name` (any ASCII case), if the command has it on some target.
    pub fn token(&self, name: &str) -> Option<&'static Token> {
        self.tokens
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// The key specifications.
    pub fn key_specs(&self) -> &'static [KeySpec] {
        self.key_specs
    }

    /// The subcommands (`OBJECT ENCODING`, `XINFO STREAM`, ...), sorted by name.
    pub fn subcommands(&self) -> &'static [Command] {
        self.subcommands
    }

    /// The subcommand `name` (`"encoding"`, any ASCII case) of this command.
    pub fn subcommand(&self, name: &str) -> Option<&'static Command> {
        let prefix_len = self.name.len() + 1;
        self.subcommands.iter().find(|sub| {
            sub.name
                .get(prefix_len..)
                .is_some_and(|s| s.eq_ignore_ascii_case(name))
        })
    }

    /// Whether scripts treat the command as a write: it has the `write` or
    /// the `may_replicate` flag (PUBLISH, SPUBLISH, PFCOUNT). A read-only
    /// script (`EVAL_RO`, `#!lua flags=no-writes`) may not call it.
    pub fn is_write(&self) -> bool {
        self.flags
            .intersects(Flags::WRITE.union(Flags::MAY_REPLICATE))
    }

    /// Whether the command, or one of its subcommands, is a write: what to
    /// assume when the subcommand is not known.
    pub fn may_write(&self) -> bool {
        self.is_write() || self.subcommands.iter().any(Command::is_write)
    }

    /// Whether scripts may call the command (it has no `noscript` flag) in
    /// the oldest release that has it.
    pub fn allowed_in_scripts(&self) -> bool {
        !self.flags.contains(Flags::NOSCRIPT)
    }

    /// Whether scripts may call the command on `target` (`BLPOP` is
    /// `noscript` in Redis 7.0 only).
    pub fn allowed_in_scripts_on(&self, target: ServerTarget) -> bool {
        !self.flags_on(target).contains(Flags::NOSCRIPT)
    }

    /// Whether the command accepts `argc` words in all, counting the command
    /// name (and a subcommand's name): the number of arguments given to
    /// `redis.call`.
    pub fn accepts(&self, argc: usize) -> bool {
        self.accepts_arity(self.arity, argc)
    }

    /// [`Command::accepts`] on `target`.
    pub fn accepts_on(&self, target: ServerTarget, argc: usize) -> bool {
        self.accepts_arity(self.arity_on(target), argc)
    }

    fn accepts_arity(&self, arity: i32, argc: usize) -> bool {
        let least = arity.unsigned_abs() as usize;
        if arity >= 0 {
            argc == least
        } else {
            argc >= least
        }
    }

    /// Which of `args` are keys, as 0-based indices into `args`, sorted.
    ///
    /// `args` are the arguments after the command's name. When this command
    /// has subcommands and `args[0]` is a literal naming one, the
    /// subcommand's key specifications are used.
    ///
    /// Only positions that are keys whatever the unknown values turn out to
    /// be are returned: nothing past a [`ArgShape::Spread`], and nothing for a
    /// key count that is not a literal. A [`ArgShape::Value`] is assumed not
    /// to be a keyword such as `STREAMS` (it would make the call malformed).
    pub fn key_positions(&self, args: &[ArgShape<'_>]) -> Vec<usize> {
        if let Some(ArgShape::Literal(sub)) = args.first()
            && let Some(sub) = self.subcommand(sub)
        {
            return sub.key_positions(args);
        }
        let known = args
            .iter()
            .position(|a| *a == ArgShape::Spread)
            .unwrap_or(args.len());
        let open = known < args.len();
        // In Redis's numbering, the command name is argument 0 and the known
        // arguments are 1..=known.
        let argc = known as i64 + 1;
        let shape = |i: i64| -> Option<ArgShape<'_>> {
            usize::try_from(i - 1)
                .ok()
                .filter(|&i| i < known)
                .map(|i| args[i])
        };
        let mut keys = Vec::new();
        for spec in self.key_specs {
            if spec.flags.contains(KeySpecFlags::NOT_KEY) {
                continue;
            }
            let first = match spec.begin_search {
                BeginSearch::Index(i) => i64::from(i),
                BeginSearch::Keyword {
                    keyword,
                    start_from,
                } => {
                    let is_keyword = |i: i64| matches!(shape(i), Some(ArgShape::Literal(s)) if s.eq_ignore_ascii_case(keyword));
                    let start = i64::from(start_from);
                    let found = if start > 0 {
                        // Redis searches up to the last argument but one.
                        (start..argc - 1).find(|&i| is_keyword(i))
                    } else if open {
                        // Searching back from an unknown end.
                        None
                    } else {
                        (2..=argc + start).rev().find(|&i| is_keyword(i))
                    };
                    match found {
                        Some(i) => i + 1,
                        None => continue,
                    }
                }
                BeginSearch::Unknown => continue,
            };
            let (start, last, step) = match spec.find_keys {
                FindKeys::Range {
                    last_key,
                    key_step,
                    limit,
                } => {
                    let last_key = i64::from(last_key);
                    // With a spread, `argc` is the least the call can have;
                    // more arguments only move the last key further.
                    let last = if last_key >= 0 {
                        first + last_key
                    } else if limit <= 0 {
                        argc + last_key
                    } else {
                        first + (argc - first) / i64::from(limit) + last_key
                    };
                    (first, last, i64::from(key_step))
                }
                FindKeys::KeyNum {
                    key_num_index,
                    first_key,
                    key_step,
                } => {
                    let Some(ArgShape::Literal(count)) = shape(first + i64::from(key_num_index))
                    else {
                        continue;
                    };
                    let Ok(count) = count.parse::<i64>() else {
                        continue;
                    };
                    let start = first + i64::from(first_key);
                    let step = i64::from(key_step);
                    (
                        start,
                        start.saturating_add(count.saturating_sub(1).saturating_mul(step)),
                        step,
                    )
                }
                FindKeys::Unknown => continue,
            };
            if step < 1 {
                continue;
            }
            let mut i = start.max(1);
            while i <= last {
                if shape(i).is_none() {
                    break;
                }
                // `shape(i)` is `Some`, so `1 <= i <= known`.
                keys.push((i - 1) as usize);
                i += step;
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

#[cfg(test)]
mod tests;
