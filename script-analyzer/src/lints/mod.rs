//! The lints, one per file. Each has a `check` function that reads the
//! [`Context`] and pushes its diagnostics into the [`Report`].

use crate::facts::Types;
use crate::scope::Model;
use crate::{Options, Report, Span};
use full_moon::ast::Ast;
use full_moon::node::Node;

mod argument_type;
mod argv_pattern;
mod arity;
mod chunk_returns;
mod cjson_empty_table;
mod cjson_null_condition;
mod command_arity;
mod dynamic_access;
mod flat_reply_index;
mod fractional_argument;
mod global_assignment;
mod inputs;
mod integer_condition;
mod invalid_expire;
mod lexical_comparison;
mod library_calls;
mod literal_key;
mod maybe_false;
mod nil_comparison;
mod nil_return;
mod non_integer_return;
mod number_string_comparison;
mod number_text;
mod pcall_unchecked;
mod return_shape;
mod return_type;
mod scan_cursor;
mod shebang_flag;
mod status_comparison;
mod target_version;
mod typed;
mod undefined_global;
mod unknown_command;
mod unknown_member;
mod unpack_reply;
mod write_in_read_only;

pub use crate::calls::{CallArg, RedisCall};

/// Everything a lint may read.
pub struct Context<'a> {
    /// The script text.
    pub source: &'a str,
    /// The parsed script.
    pub ast: &'a Ast,
    /// Which names are locals, upvalues or globals.
    pub model: &'a Model,
    /// The inferred types of expressions and locals.
    pub types: &'a Types<'a>,
    /// What the caller asked for.
    pub options: &'a Options,
    /// `options.read_only`, or a `no-writes` shebang.
    pub read_only: bool,
}

impl Context<'_> {
    /// The span of a node (or token) of the tree. Only a tree that failed
    /// to parse has nodes without a position, and no lint sees one.
    pub fn span_of(&self, node: &impl Node) -> Span {
        crate::node_range::node_span(self.source, node)
    }

    /// The parsed script and its names.
    pub(crate) fn tree(&self) -> crate::calls::Tree<'_> {
        crate::calls::Tree {
            source: self.source,
            ast: self.ast,
            model: self.model,
        }
    }

    /// Whether `lint` was switched off by the caller.
    pub fn allowed(&self, lint: Lint) -> bool {
        lint.can_be_allowed() && self.options.allow.contains(&lint)
    }
}

macro_rules! lints {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal,)*) => {
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
        }
    };
}

lints! {
    /// The script is not valid Lua 5.1 (cannot be allowed).
    Syntax => "syntax",
    /// `KEYS[n]` / `ARGV[n]` past the declared fields, a declared field the
    /// script never reads, or an index that is not a positive integer.
    Arity => "arity",
    /// `KEYS` / `ARGV` read with a computed index, by length or as a whole,
    /// without a variadic field to match.
    DynamicAccess => "dynamic_access",
    /// Assigning a global variable (Redis forbids it).
    GlobalAssignment => "global_assignment",
    /// Reading a global that Redis's Lua sandbox does not provide.
    UndefinedGlobal => "undefined_global",
    /// A member of a sandbox library that does not exist (`redis.cal`, `os.time`).
    UnknownMember => "unknown_member",
    /// `redis.call` with a literal command name Redis does not have.
    UnknownCommand => "unknown_command",
    /// `redis.call` with a literal argument count the command does not accept.
    CommandArity => "command_arity",
    /// A write command in a read-only script.
    WriteInReadOnly => "write_in_read_only",
    /// A key passed as a string literal instead of through `KEYS`.
    LiteralKey => "literal_key",
    /// The main chunk returning a non-integer number (Redis truncates it).
    NonIntegerReturn => "non_integer_return",
    /// A result the declared `returns` type cannot hold.
    ReturnType => "return_type",
    /// A reply of nil (`return false`, `return nil`, a bare `return`, no
    /// `return` at all, a GET reply that may be `false`) where the declared
    /// `returns` type cannot hold nil (`i64`, not `Option<i64>`); without a
    /// declared type, a returned `false` (it arrives as nil, not 0; a
    /// warning).
    NilReturn => "nil_return",
    /// A command's integer reply used as a condition (`if redis.call('EXISTS',
    /// k) then`): 0 is true in Lua.
    IntegerCondition => "integer_condition",
    /// A reply compared with `nil` (`redis.call('GET', k) == nil`): a nil
    /// reply arrives as `false`.
    NilComparison => "nil_comparison",
    /// A status reply compared with a string (`redis.call('SET', k, v) ==
    /// 'OK'`): it is a table `{ok = 'OK'}`.
    StatusComparison => "status_comparison",
    /// A number compared with a string (`redis.call('INCR', k) == '1'`,
    /// `tonumber(x) > ARGV[1]`): never equal, and `<` raises.
    NumberStringComparison => "number_string_comparison",
    /// A SCAN cursor compared with a number (`until cursor == 0`): the
    /// cursor is a string.
    ScanCursor => "scan_cursor",
    /// A reply that may be `false` (GET, HGET, or `tonumber` of one) used in
    /// arithmetic, `..`, `<` or as a command argument (a warning).
    MaybeFalse => "maybe_false",
    /// A `redis.call` argument that is never a string or a number: a table,
    /// a boolean, nil.
    ArgumentType => "argument_type",
    /// A number of 1e14 or more turned into text (`tostring`, `..`,
    /// `cjson.encode` write 14 significant digits: `1.7e+15`), or an
    /// integer past 2^53, which Lua's doubles do not hold exactly.
    NumberText => "number_text",
    /// A flat reply (HGETALL, CONFIG GET, WITHSCORES) indexed by a field
    /// name: `redis.call('HGETALL', k).name` is always nil; under RESP3, a
    /// map, set or double table indexed by another name than its one field.
    FlatReplyIndex => "flat_reply_index",
    /// A `redis.pcall` result used without checking `err` (a warning).
    PcallUnchecked => "pcall_unchecked",
    /// A number that may be fractional where an integer is needed
    /// (`EXPIRE k ARGV[1]/1000`, `string.format('%d', x / 2)`; a warning).
    FractionalArgument => "fractional_argument",
    /// A returned table Redis converts into something else: a `nil` element
    /// cuts the array, string keys are dropped (`return {count = n}` is `[]`).
    ReturnShape => "return_shape",
    /// `cjson.encode({})`: an empty table encodes as the object `{}`, not
    /// the array `[]` (a warning).
    CjsonEmptyTable => "cjson_empty_table",
    /// `cjson.null` used as a condition (always true), or a field of a
    /// `cjson.decode` result tested as a condition or compared with `nil`,
    /// where a JSON null is the userdata `cjson.null` (a warning).
    CjsonNullCondition => "cjson_null_condition",
    /// `KEYS[n]` / `ARGV[n]` used as a Lua pattern in `string.find`, `match`,
    /// `gmatch`, `gsub` without escaping (a warning).
    ArgvPattern => "argv_pattern",
    /// `unpack` of a command's array reply, which may be empty or too long
    /// to unpack (a warning).
    UnpackReply => "unpack_reply",
    /// A string reply compared with `<`, `>` against `ARGV[n]` or a numeric
    /// string: compared as text, `'10' < '9'` (a warning).
    LexicalComparison => "lexical_comparison",
    /// An expire time SET, SETEX, PSETEX or GETEX always refuses
    /// (`SET k v EX 0`, a fractional literal).
    InvalidExpire => "invalid_expire",
    /// A command, subcommand or option the target lacks (`HEXPIRE` before
    /// Redis 7.4, on any Valkey).
    TargetVersion => "target_version",
    /// A `#!lua flags=...` flag the target does not know
    /// (`allow-key-locking`).
    ShebangFlag => "shebang_flag",
    /// A Redis Functions library Redis refuses at `FUNCTION LOAD` (no
    /// `#!lua name=` line, a bad or duplicate name, an unknown flag,
    /// `redis.call` or another global at load time) or that uses `KEYS` / `ARGV`, which do
    /// not exist in functions (cannot be allowed).
    Library => "library",
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

/// A lint's entry point.
type Check = fn(&Context<'_>, &[RedisCall], &mut Report);

/// Runs every lint that is not allowed.
pub(crate) fn run_all(cx: &Context<'_>, report: &mut Report) {
    let calls = crate::calls::redis_calls(&cx.tree());
    let types = Types::build(cx.source, cx.ast, cx.model, &calls);
    let cx = &Context {
        types: &types,
        ..*cx
    };
    let checks: &[(Lint, Check)] = &[
        (Lint::Arity, arity::check),
        (Lint::DynamicAccess, dynamic_access::check),
        (Lint::GlobalAssignment, global_assignment::check),
        (Lint::UndefinedGlobal, undefined_global::check),
        (Lint::UnknownMember, unknown_member::check),
        (Lint::UnknownCommand, unknown_command::check),
        (Lint::CommandArity, command_arity::check),
        (Lint::WriteInReadOnly, write_in_read_only::check),
        (Lint::LiteralKey, literal_key::check),
        (Lint::NonIntegerReturn, non_integer_return::check),
        (Lint::ReturnType, return_type::check),
        (Lint::NilReturn, nil_return::check),
        (Lint::IntegerCondition, integer_condition::check),
        (Lint::NilComparison, nil_comparison::check),
        (Lint::StatusComparison, status_comparison::check),
        (
            Lint::NumberStringComparison,
            number_string_comparison::check,
        ),
        (Lint::ScanCursor, scan_cursor::check),
        (Lint::MaybeFalse, maybe_false::check),
        (Lint::ArgumentType, argument_type::check),
        (Lint::NumberText, number_text::check),
        (Lint::FlatReplyIndex, flat_reply_index::check),
        (Lint::PcallUnchecked, pcall_unchecked::check),
        (Lint::FractionalArgument, fractional_argument::check),
        (Lint::ReturnShape, return_shape::check),
        (Lint::CjsonEmptyTable, cjson_empty_table::check),
        (Lint::CjsonNullCondition, cjson_null_condition::check),
        (Lint::ArgvPattern, argv_pattern::check),
        (Lint::UnpackReply, unpack_reply::check),
        (Lint::LexicalComparison, lexical_comparison::check),
        (Lint::InvalidExpire, invalid_expire::check),
        (Lint::TargetVersion, target_version::check),
        (Lint::ShebangFlag, shebang_flag::check),
    ];
    crate::calls::record_info(&cx.tree(), &calls, report);
    report.info.returns = chunk_returns::reply_kinds(cx);
    for (lint, check) in checks {
        let before = report.diagnostics.len();
        check(cx, &calls, report);
        if cx.allowed(*lint) {
            report.diagnostics.truncate(before);
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers for the lints' tests.
    use crate::{Declared, Diagnostic, Lint, Options, analyze};

    /// The diagnostics of `lint` on `source` with `options`.
    pub fn lint_with(lint: Lint, source: &str, options: &Options) -> Vec<Diagnostic> {
        analyze(source, options)
            .diagnostics
            .into_iter()
            .filter(|d| d.lint == lint)
            .collect()
    }

    /// The diagnostics of `lint` on `source`, declaring `keys` keys and `args` args.
    pub fn lint(lint: Lint, source: &str, keys: usize, args: usize) -> Vec<Diagnostic> {
        let options = Options {
            declared: Some(Declared::exact(keys, args)),
            ..Options::default()
        };
        lint_with(lint, source, &options)
    }

    /// The text under the caret of each diagnostic of `lint` on `source`.
    pub fn marked(lint: Lint, source: &str, keys: usize, args: usize) -> Vec<String> {
        self::lint(lint, source, keys, args)
            .into_iter()
            .filter_map(|d| d.primary_span())
            .map(|span| source[span.start.offset..span.end.offset].to_owned())
            .collect()
    }

    /// The messages of `lint` on `source`.
    pub fn messages(lint: Lint, source: &str, keys: usize, args: usize) -> Vec<String> {
        self::lint(lint, source, keys, args)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }
}
