//! The lint registry: every lint the analyzer has, declared once with its
//! name (as `allow(...)` and diagnostics spell it), its level and its
//! documentation.
//!
//! Invariants: [`Lint::ALL`] lists every lint once, in the order the
//! analyzer runs them; each lint's checks report at its declared
//! [`Level`] only. The lints themselves (`lints/*.rs`) map each [`Lint`]
//! to its check with an exhaustive `match`, so a lint declared here and
//! not implemented does not compile; the README's table and the macro's
//! documentation are tied to this list by tests.

/// How a lint reports what it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Always an error.
    Error,
    /// Always a warning.
    Warning,
    /// An error where the finding is certain, a warning where it is not.
    ErrorOrWarning,
    /// An error when the script may run on a cluster
    /// ([`Options::cluster`](crate::Options::cluster)), else a warning.
    ErrorOnCluster,
}

impl Level {
    /// The level as the README's table words it: `"error or warning"`.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::ErrorOrWarning => "error or warning",
            Level::ErrorOnCluster => "error on a cluster, else warning",
        }
    }
}

macro_rules! lints {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal, $level:ident,)*) => {
        /// The checks the analyzer runs. Each has a snake_case name, used in
        /// `#[redis_script(..., allow(name))]` and in diagnostics.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Lint {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Lint {
            /// Every lint, in a fixed order.
            pub const ALL: &'static [Lint] = &[$(Lint::$variant,)*];

            /// The lint's snake_case name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Lint::$variant => $name,)*
                }
            }

            /// How the lint reports.
            pub fn level(self) -> Level {
                match self {
                    $(Lint::$variant => Level::$level,)*
                }
            }

            /// What the lint finds: its documentation, as one paragraph.
            pub fn documentation(self) -> String {
                let lines: &[&str] = match self {
                    $(Lint::$variant => &[$($doc),*],)*
                };
                lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ")
            }
        }
    };
}

lints! {
    /// The script is not valid Lua 5.1 (cannot be allowed).
    Syntax => "syntax", Error,
    /// `KEYS[n]` / `ARGV[n]` past the declared fields, a declared field the
    /// script never reads, or an index that is not a positive integer.
    Arity => "arity", Error,
    /// `KEYS` / `ARGV` read with a computed index, by length or as a whole,
    /// without a variadic field to match.
    DynamicAccess => "dynamic_access", Error,
    /// Assigning a global variable (Redis forbids it).
    GlobalAssignment => "global_assignment", Error,
    /// Reading a global that Redis's Lua sandbox does not provide.
    UndefinedGlobal => "undefined_global", Error,
    /// A member of a sandbox library that does not exist (`redis.cal`, `os.time`).
    UnknownMember => "unknown_member", Error,
    /// `redis.call` with a literal command name Redis does not have.
    UnknownCommand => "unknown_command", Error,
    /// `redis.call` with a literal argument count the command does not accept.
    CommandArity => "command_arity", Error,
    /// A write command in a read-only script.
    WriteInReadOnly => "write_in_read_only", Error,
    /// A key passed as a string literal instead of through `KEYS`.
    LiteralKey => "literal_key", ErrorOnCluster,
    /// The main chunk returning a non-integer number (Redis truncates it).
    NonIntegerReturn => "non_integer_return", ErrorOrWarning,
    /// A result the declared `returns` type cannot hold.
    ReturnType => "return_type", Error,
    /// A reply of nil (`return false`, `return nil`, a bare `return`, no
    /// `return` at all, a GET reply that may be `false`) where the declared
    /// `returns` type cannot hold nil (`i64`, not `Option<i64>`); without a
    /// declared type, a returned `false`, or a boolean the main chunk makes
    /// (`return redis.call('EXISTS', k) == 1`, through a local, a field, a
    /// loop's flag), as its `false` arrives as nil, not 0 (a warning).
    NilReturn => "nil_return", ErrorOrWarning,
    /// A command's integer reply used as a condition (`if redis.call('EXISTS',
    /// k) then`): 0 is true in Lua; or compared with `true` / `false`.
    IntegerCondition => "integer_condition", Error,
    /// A reply, or an element of one, compared with `nil`
    /// (`redis.call('GET', k) == nil`, `type(v) == 'nil'`): a nil reply
    /// arrives as `false`.
    NilComparison => "nil_comparison", Error,
    /// A value compared with a table constructor (`v == {}`): a table is
    /// equal only to itself, so the comparison never holds.
    TableComparison => "table_comparison", Error,
    /// A status reply compared with a string, a number or `true`
    /// (`redis.call('SET', k, v) == 'OK'`): it is a table `{ok = 'OK'}`.
    StatusComparison => "status_comparison", Error,
    /// A number compared with a string (`redis.call('INCR', k) == '1'`,
    /// `tonumber(x) > ARGV[1]`): never equal, and `<` raises; so does a
    /// reply with a number in place of its nil (`(redis.call('GET', k) or
    /// 0) > n`), a string whenever the reply is there.
    NumberStringComparison => "number_string_comparison", Error,
    /// A SCAN cursor compared with a number (`until cursor == 0`): the
    /// cursor is a string. Or a scan loop whose cursor advances only inside
    /// the loop over the page: an empty page never advances it.
    ScanCursor => "scan_cursor", Error,
    /// A reply that may be `false` (GET, HGET, or `tonumber` of one), or an
    /// input past the declared counts (nil), used in arithmetic, `..`, `<`,
    /// `#`, `cjson.decode`, a `string` function (`string.format`'s values
    /// too) or as a command argument (a warning).
    MaybeFalse => "maybe_false", Warning,
    /// A `redis.call` argument that is never a string or a number: a table,
    /// a boolean, nil.
    ArgumentType => "argument_type", Error,
    /// A number of 1e14 or more turned into text (`tostring`, `..`,
    /// `cjson.encode` write 14 significant digits: `1.7e+15`), or an
    /// integer past 2^53, which Lua's doubles do not hold exactly (a
    /// literal, arithmetic, `tonumber` of text, the INCR reply of a key the
    /// script seeds past it); `tonumber`
    /// of an input encoded by `cjson.encode` (cut to 14 digits); on a 7.2
    /// target, a number argument of 1e8 or more (sent as `3e+8` before 7.2.5).
    NumberText => "number_text", ErrorOrWarning,
    /// A flat reply (HGETALL, CONFIG GET, WITHSCORES) indexed by a field
    /// name: `redis.call('HGETALL', k).name` is always nil; under RESP3, a
    /// map, set or double table indexed by another name than its one field;
    /// every element of a flat reply used as a number in a loop.
    FlatReplyIndex => "flat_reply_index", Error,
    /// A `redis.pcall` result used without checking `err` (a warning).
    PcallUnchecked => "pcall_unchecked", Warning,
    /// A number that may be fractional where an integer is needed
    /// (`EXPIRE k ARGV[1]/1000`, `string.format('%d', x / 2)`; a warning).
    FractionalArgument => "fractional_argument", Warning,
    /// A returned table Redis converts into something else: a `nil` element
    /// cuts the array, string keys are dropped (`return {count = n}` is `[]`,
    /// and so is a table given string keys and no element on some path),
    /// a table stored at a loop's index on some rounds only has holes.
    ReturnShape => "return_shape", ErrorOrWarning,
    /// `cjson.encode` of a list that may be empty, which encodes as the
    /// object `{}`, not the array `[]` (a warning): an empty literal
    /// (`cjson.encode({})`), a table filled in a loop or a branch, or a
    /// command's list reply (LRANGE, SMEMBERS) written in place or held in
    /// a local or a table's field, with no `#t == 0` test on the path;
    /// whole, or as a member of a table written in the call; a document
    /// `cjson.decode` gave, encoded again (its empty arrays come back `{}`).
    CjsonEmptyTable => "cjson_empty_table", Warning,
    /// `cjson.null` used as a condition (always true), or a field of a
    /// `cjson.decode` result tested as a condition or compared with `nil`,
    /// where a JSON null is the userdata `cjson.null` (a warning).
    CjsonNullCondition => "cjson_null_condition", ErrorOrWarning,
    /// `KEYS[n]` / `ARGV[n]` (or a string built from one, or text from a
    /// reply) used as a Lua pattern in `string.find`, `match`, `gmatch`,
    /// `gsub` without escaping (a warning).
    ArgvPattern => "argv_pattern", Warning,
    /// `unpack` of a command's array reply (or of a table filled in a loop
    /// over one), which may be empty or too long to unpack (a warning).
    UnpackReply => "unpack_reply", Warning,
    /// A string reply compared with `<`, `>` against `ARGV[n]` or a numeric
    /// string: compared as text, `'10' < '9'` (a warning).
    LexicalComparison => "lexical_comparison", Warning,
    /// An expire time SET, SETEX, PSETEX or GETEX always refuses
    /// (`SET k v EX 0`, a fractional literal).
    InvalidExpire => "invalid_expire", ErrorOrWarning,
    /// A command, subcommand or option the target lacks (`HEXPIRE` before
    /// Redis 7.4, on any Valkey).
    TargetVersion => "target_version", Error,
    /// A `#!lua flags=...` flag the target does not know
    /// (`allow-key-locking`).
    ShebangFlag => "shebang_flag", Error,
    /// A Redis Functions library Redis refuses at `FUNCTION LOAD` (no
    /// `#!lua name=` line, a bad or duplicate name, an unknown flag,
    /// `redis.call` or another global at load time) or that uses `KEYS` / `ARGV`, which do
    /// not exist in functions (cannot be allowed).
    Library => "library", Error,
}

impl Lint {
    /// Whether `allow(...)` may switch the lint off: not `syntax` and
    /// `library`, whose errors Redis refuses the script or library for.
    pub fn can_be_allowed(self) -> bool {
        !matches!(self, Lint::Syntax | Lint::Library)
    }

    /// The lint with this name (`"literal_key"`; `-` is accepted for `_`).
    pub fn from_name(name: &str) -> Option<Lint> {
        let name = name.replace('-', "_");
        Lint::ALL.iter().copied().find(|l| l.name() == name)
    }
}

impl std::fmt::Display for Lint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lint_has_a_unique_name_and_documentation() {
        let mut names: Vec<&str> = Lint::ALL.iter().map(|l| l.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Lint::ALL.len());
        for lint in Lint::ALL {
            assert_eq!(Lint::from_name(lint.name()), Some(*lint));
            assert!(!lint.documentation().is_empty(), "{lint}");
        }
        assert_eq!(Lint::from_name("maybe-false"), Some(Lint::MaybeFalse));
        assert_eq!(Lint::MaybeFalse.level(), Level::Warning);
    }
}
