//! Static analysis of Redis Lua scripts.
//!
//! `redlua-analyzer` reads a Redis Lua script (Lua 5.1, as embedded by Redis),
//! and reports what would go wrong when Redis runs it: syntax errors, `KEYS` /
//! `ARGV` indices that the caller does not supply, globals that Redis's sandbox
//! forbids, unknown Redis commands, wrong argument counts, commands, options
//! and shebang flags the target server lacks (see [`ServerTarget`]), writes
//! from read-only scripts, keys written as string literals, and non-integer
//! return values.
//!
//! It is the plain library behind the `#[redis_script]` macro and the
//! `lockctl lint` command: everything here is ordinary Rust, with no
//! procedural-macro or Redis connection involved.
//!
//! ```
//! use redlua_analyzer::{analyze, Options, Declared};
//!
//! let source = "return redis.call('GET', KEYS[1])";
//! let options = Options { declared: Some(Declared::exact(1, 0)), ..Options::default() };
//! let report = analyze(source, &options);
//! assert!(report.is_ok(), "{:?}", report.diagnostics);
//! assert!(report.info.keys_read.contains(&1));
//! ```

#![warn(missing_docs)]

mod calls;
pub mod commands;
mod diagnostic;
pub mod facts;
pub mod first_error;
pub mod globals;
pub mod header;
pub mod hover;
pub mod incremental;
pub mod library;
mod lint;
pub mod lints;
pub mod manifest;
mod node_range;
mod padding;
mod parse;
pub mod replies;
#[cfg(feature = "rust-types")]
pub mod rust_types;
mod sandbox;
mod scope;
mod similar;
pub mod target;

pub use diagnostic::{Diagnostic, Label, Position, Severity, Span, Target};
pub use library::{FunctionReport, LibraryOptions, LibraryReport};
pub use lint::{Level, Lint};
pub use lints::reply_codes::{CodedReply, ReturnedCode};
pub use parse::MAX_NESTING;
pub use similar::best_match;
pub use target::{ServerTarget, UnknownTarget, Vendor};

use std::collections::BTreeSet;

/// What the Rust side declares about a script's inputs.
///
/// `keys` and `args` count the fixed `KEYS` / `ARGV` entries. A variadic tail
/// (a trailing `Vec` field) means the script may read any index past the fixed
/// ones, and may read `KEYS` / `ARGV` dynamically (`#KEYS`, `ipairs(ARGV)`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Declared {
    /// Number of fixed keys (`KEYS[1]..=KEYS[keys]`).
    pub keys: usize,
    /// Whether a variadic list of keys follows the fixed ones.
    pub keys_variadic: bool,
    /// Number of fixed arguments (`ARGV[1]..=ARGV[args]`).
    pub args: usize,
    /// Whether a variadic list of arguments follows the fixed ones.
    pub args_variadic: bool,
}

impl Declared {
    /// Exactly `keys` keys and `args` arguments, no variadic tail.
    pub fn exact(keys: usize, args: usize) -> Self {
        Declared {
            keys,
            keys_variadic: false,
            args,
            args_variadic: false,
        }
    }
}

/// The Rust type a script's result is converted to, as far as the analyzer
/// can tell what the script may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnKind {
    /// An integer (`i64`, `u32`, `bool`, ...): the script must not return a
    /// table or a string literal.
    Integer,
    /// A string or bytes: the script must not return a table or number literal.
    String,
    /// A list (`Vec<T>`, tuples): the script must not return a scalar literal.
    Array,
    /// Anything else (`redis::Value`, `()`, `f64`, a type alias): not
    /// checked. `Option<T>` of the above is `T`'s kind, with
    /// [`Returns::nullable`] set.
    Any,
}

/// The declared result type of a script, as far as the analyzer checks it:
/// its [`ReturnKind`], and whether it can hold a nil reply.
///
/// A script's `false`, `nil`, a bare `return` and a nil command reply
/// (GET of a missing key) all reach the caller as a nil reply, which
/// `Option<T>` takes as `None`, and `i64` or `String` fail to convert at
/// run time ([`Lint::NilReturn`]).
///
/// ```
/// use redlua_analyzer::{analyze, Options, ReturnKind, Returns};
///
/// let source = "return redis.call('GET', KEYS[1])";
/// // `returns = String`: a missing key fails to convert (a warning).
/// let plain = Options { returns: Some(Returns::of(ReturnKind::String)), ..Options::default() };
/// assert_eq!(analyze(source, &plain).diagnostics.len(), 1);
/// // `returns = Option<String>`: `None` for a missing key.
/// let option = Options { returns: Some(Returns::nullable(ReturnKind::String)), ..Options::default() };
/// assert!(analyze(source, &option).diagnostics.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Returns {
    /// What the type holds, once not nil.
    pub kind: ReturnKind,
    /// The type holds a nil reply: `Option<T>`, `redis::Value`, `()`, and
    /// the types redis-rs converts nil into (`bool` gives `false`, `Vec<T>`
    /// and the other collections an empty one).
    pub nullable: bool,
    /// The Rust type as written (`"i64"`), for messages; `None` words them
    /// after [`kind`](Self::kind).
    pub written: Option<String>,
}

impl Returns {
    /// A type of kind `kind` that cannot hold nil (`i64`, `String`).
    pub fn of(kind: ReturnKind) -> Returns {
        Returns {
            kind,
            nullable: false,
            written: None,
        }
    }

    /// A type of kind `kind` that holds nil too (`Option<i64>`).
    pub fn nullable(kind: ReturnKind) -> Returns {
        Returns {
            nullable: true,
            ..Returns::of(kind)
        }
    }

    /// The same, with the Rust type as written, for messages.
    pub fn written(self, rust_type: impl Into<String>) -> Returns {
        Returns {
            written: Some(rust_type.into()),
            ..self
        }
    }
}

impl From<ReturnKind> for Returns {
    /// [`Returns::of`]: a type that cannot hold nil.
    fn from(kind: ReturnKind) -> Returns {
        Returns::of(kind)
    }
}

/// How to analyze a script.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The declared keys and arguments; `None` skips the arity checks that
    /// need them (as `lockctl lint` does for a bare file).
    pub declared: Option<Declared>,
    /// The script is run with `EVALSHA_RO`: it must not call write commands.
    /// A `#!lua flags=no-writes` shebang implies it.
    pub read_only: bool,
    /// The script may run on Redis Cluster. Findings about cluster
    /// portability (a key written as a literal, [`Lint::LiteralKey`]) are
    /// errors then, and warnings on a standalone server (the default), where
    /// such scripts run correctly.
    pub cluster: bool,
    /// Lints switched off for this script.
    pub allow: Vec<Lint>,
    /// The declared result type, if known.
    pub returns: Option<Returns>,
    /// The server the script must run on: commands, options and shebang
    /// flags it lacks are errors. Defaults to [`ServerTarget::Redis7_0`].
    pub target: ServerTarget,
}

/// What the analyzer learned about a script, errors or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptInfo {
    /// The `KEYS` indices read with a literal index (1-based).
    pub keys_read: BTreeSet<u32>,
    /// The `ARGV` indices read with a literal index (1-based).
    pub args_read: BTreeSet<u32>,
    /// `KEYS` is read with a computed index, its length, or as a whole.
    pub keys_dynamic: bool,
    /// `ARGV` is read with a computed index, its length, or as a whole.
    pub args_dynamic: bool,
    /// The Redis commands called with a literal name, lower-case.
    pub commands: BTreeSet<String>,
    /// Each `redis.call` / `redis.pcall` site whose command name is a
    /// literal: the line Redis reports for it (`@user_script:<line>`, the
    /// line of the call's opening parenthesis) and the name, lower-case; in
    /// source order, one entry per site (a line may have several). Sites
    /// with a computed name have none.
    pub command_lines: Vec<(usize, String)>,
    /// The script may write: it calls a write command, or a command whose name
    /// is computed at run time.
    pub writes: bool,
    /// The flags of a `#!lua flags=...` shebang, if any.
    pub shebang_flags: Option<Vec<String>>,
    /// The replies the script may give, as the type inference sees them and
    /// as Redis sends them: `"integer"`, `"string"`, `"status"`, `"error"`,
    /// `"array"`, `"nil"`, in that order. `None` when some returned value
    /// is not known.
    pub returns: Option<Vec<String>>,
    /// The reply code of each `return` of the main chunk, in source order:
    /// what a reply type that declares its codes (`#[redis_script(...,
    /// returns = T, codes)]`) is checked against.
    pub reply_codes: Vec<ReturnedCode>,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Errors and warnings, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts about the script.
    pub info: ScriptInfo,
}

impl Report {
    /// True when no diagnostic is an error.
    pub fn is_ok(&self) -> bool {
        !self
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }
}

/// Stack for the analysis thread: parsing and the lints recurse once per
/// syntax level, and a debug build of full_moon needs over 10 KiB a level.
const STACK_SIZE: usize = 64 << 20;

/// Whether the script may not write: so declared, or run with the
/// `no-writes` shebang flag.
fn read_only(options: &Options, info: &ScriptInfo) -> bool {
    options.read_only
        || info
            .shebang_flags
            .as_ref()
            .is_some_and(|flags| flags.iter().any(|f| f == "no-writes"))
}

/// Analyzes a Redis Lua script.
///
/// Never panics, whatever `source` holds: input that cannot be parsed (or is
/// nested deeper than [`MAX_NESTING`] levels, which Redis refuses too) yields a
/// `syntax` diagnostic. The work runs on a thread of its own with a large
/// stack, so that deep (but accepted) nesting cannot overflow the caller's.
pub fn analyze(source: &str, options: &Options) -> Report {
    on_large_stack(|| analyze_here(source, options), internal_error)
}

/// Analyzes a Redis Functions library (`#!lua name=<library>` and
/// `redis.register_function` calls): the library as Redis checks it at
/// `FUNCTION LOAD`, and each function's body as a script whose `KEYS` and
/// `ARGV` are the callback's two parameters. See [`library`].
///
/// Never panics, whatever `source` holds, and runs on a thread of its own
/// with a large stack, as [`analyze`] does.
pub fn analyze_library(source: &str, options: &LibraryOptions) -> LibraryReport {
    on_large_stack(
        || library::analyze_here(source, options),
        || LibraryReport {
            diagnostics: internal_error().diagnostics,
            ..LibraryReport::default()
        },
    )
}

/// Runs `work` on a thread with a [`STACK_SIZE`] stack; `crashed` makes the
/// result if it panics.
fn on_large_stack<R: Send>(work: impl Fn() -> R + Sync, crashed: impl FnOnce() -> R) -> R {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("redlua-analyzer".to_string())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, &work);
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| crashed()),
            // No thread to be had: the nesting guard still bounds the depth.
            Err(_) => work(),
        }
    })
}

/// The report for a bug in the analyzer itself, rather than a crash.
fn internal_error() -> Report {
    Report {
        diagnostics: vec![
            Diagnostic::error(
                Lint::Syntax,
                Span::default(),
                "internal error in redlua-analyzer while reading this script",
            )
            .with_note("please report this with the script that caused it"),
        ],
        info: ScriptInfo::default(),
    }
}

pub(crate) fn analyze_here(source: &str, options: &Options) -> Report {
    analyze_here_then(source, options, |report, _| report)
}

/// The analysis of [`analyze_here`], given to `then` with the inference
/// it was made of (`None` when the script does not parse). The tree is
/// dropped after `then` returns.
pub(crate) fn analyze_here_then<R>(
    source: &str,
    options: &Options,
    then: impl FnOnce(Report, Option<(&full_moon::ast::Ast, &facts::Types<'_>)>) -> R,
) -> R {
    let mut report = Report::default();
    let ast = match parse::parse(source) {
        Ok(ast) => ast,
        Err(diagnostics) => {
            report.diagnostics = diagnostics;
            return then(report, None);
        }
    };
    report.info.shebang_flags = parse::shebang_flags(source);
    let read_only = read_only(options, &report.info);
    let model = scope::Model::build(&ast);
    let no_types = facts::Types::default();
    let cx = lints::Context {
        source,
        ast: &ast,
        model: &model,
        types: &no_types,
        options,
        read_only,
        unit: None,
    };
    let types = lints::run_all(&cx, &mut report).types;
    report.diagnostics.sort_by_key(|d| match d.primary_span() {
        // Places in the script first, in order; then the Rust side.
        Some(span) => (0, span.start.offset, span.end.offset),
        None => (1, 0, 0),
    });
    then(report, Some((&ast, &types)))
}

/// The README's code blocks, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
