//! The lints, one per file. Each has a `check` function that reads the
//! [`Context`] and pushes its diagnostics into the [`Report`]; the
//! registry ([`Lint`]) declares each lint's name, level and
//! documentation, and an exhaustive `match` here maps it to its check.
//! The checks run on several threads, with the result of one running them
//! in order (see `schedule.rs`): a check appends to the report's diagnostics
//! and never reads them.

use crate::facts::Types;
pub use crate::lint::{Level, Lint};
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
pub(crate) mod inputs;
mod integer_condition;
mod invalid_expire;
mod lexical_comparison;
mod library_calls;
mod literal_key;
pub(crate) mod maybe_false;
mod nil_comparison;
mod nil_return;
mod non_integer_return;
mod number_string_comparison;
mod number_text;
mod pcall_unchecked;
pub(crate) mod reply_codes;
mod return_shape;
mod return_type;
mod scan_cursor;
mod schedule;
mod shebang_flag;
mod sparse_stores;
mod status_comparison;
mod table_comparison;
mod target_version;
mod typed;
mod undefined_global;
mod unknown_command;
pub(crate) mod unknown_member;
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
    /// When the checks look at one statement of the main chunk only (an
    /// editor's analysis of the statement it changed, in the
    /// `incremental` module): that statement, and what the rest of the
    /// script tells about it.
    pub(crate) unit: Option<&'a Unit<'a>>,
}

/// One top-level statement checked on its own, as part of its script:
/// the facts and names are the whole script's.
pub(crate) struct Unit<'a> {
    /// The statement.
    pub stmt: &'a full_moon::ast::Stmt,
    /// Its bytes in the source.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// The library members the whole script tests for existence
    /// (`unknown_member`).
    pub tested_members: &'a std::collections::BTreeSet<(String, String)>,
}

impl Context<'_> {
    /// Visits the tree: the whole script, or the one statement checked.
    pub(crate) fn visit(&self, visitor: &mut impl full_moon::visitors::Visitor) {
        match self.unit {
            Some(unit) => full_moon::visitors::Visit::visit(unit.stmt, visitor),
            None => visitor.visit_ast(self.ast),
        }
    }

    /// Whether byte `offset` is in what is checked (the whole script, or
    /// the one statement).
    pub(crate) fn in_scope(&self, offset: usize) -> bool {
        self.unit
            .is_none_or(|unit| unit.start <= offset && offset < unit.end)
    }

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

/// A lint's entry point.
type Check = fn(&Context<'_>, &[RedisCall], &mut Report);

/// The check of each lint ([`crate::lint`] declares them): exhaustive, so
/// that a declared lint without a check does not compile. `syntax` is the
/// parser's, `library` the Functions library analysis's.
fn check_of(lint: Lint) -> Option<Check> {
    Some(match lint {
        Lint::Syntax | Lint::Library => return None,
        Lint::Arity => arity::check,
        Lint::DynamicAccess => dynamic_access::check,
        Lint::GlobalAssignment => global_assignment::check,
        Lint::UndefinedGlobal => undefined_global::check,
        Lint::UnknownMember => unknown_member::check,
        Lint::UnknownCommand => unknown_command::check,
        Lint::CommandArity => command_arity::check,
        Lint::WriteInReadOnly => write_in_read_only::check,
        Lint::LiteralKey => literal_key::check,
        Lint::NonIntegerReturn => non_integer_return::check,
        Lint::ReturnType => return_type::check,
        Lint::NilReturn => nil_return::check,
        Lint::IntegerCondition => integer_condition::check,
        Lint::NilComparison => nil_comparison::check,
        Lint::TableComparison => table_comparison::check,
        Lint::StatusComparison => status_comparison::check,
        Lint::NumberStringComparison => number_string_comparison::check,
        Lint::ScanCursor => scan_cursor::check,
        Lint::MaybeFalse => maybe_false::check,
        Lint::ArgumentType => argument_type::check,
        Lint::NumberText => number_text::check,
        Lint::FlatReplyIndex => flat_reply_index::check,
        Lint::PcallUnchecked => pcall_unchecked::check,
        Lint::FractionalArgument => fractional_argument::check,
        Lint::ReturnShape => return_shape::check,
        Lint::CjsonEmptyTable => cjson_empty_table::check,
        Lint::CjsonNullCondition => cjson_null_condition::check,
        Lint::ArgvPattern => argv_pattern::check,
        Lint::UnpackReply => unpack_reply::check,
        Lint::LexicalComparison => lexical_comparison::check,
        Lint::InvalidExpire => invalid_expire::check,
        Lint::TargetVersion => target_version::check,
        Lint::ShebangFlag => shebang_flag::check,
    })
}

/// What [`run_all`] worked out besides the report.
pub(crate) struct Ran<'a> {
    /// The inference the checks read.
    pub types: Types<'a>,
    /// The script's `redis.call` sites.
    pub calls: Vec<RedisCall>,
    /// The diagnostics of each lint not allowed, in [`Lint::ALL`]'s order.
    pub outputs: Vec<(Lint, Vec<crate::Diagnostic>)>,
}

/// Runs every lint that is not allowed; the inference they read.
pub(crate) fn run_all<'a>(cx: &Context<'a>, report: &mut Report) -> Ran<'a> {
    let (calls, escapes) = crate::calls::redis_calls_escaping(&cx.tree());
    crate::calls::record_info(&calls, escapes, report);
    let checks: Vec<(Lint, Check)> = Lint::ALL
        .iter()
        .filter_map(|&lint| Some((lint, check_of(lint)?)))
        .collect();
    // The checks that read no types run while they are inferred.
    let (types, done) = schedule::beside(cx, &calls, &checks, report, || {
        Types::build(cx.source, cx.ast, cx.model, &calls, cx.options.declared)
    });
    let cx = &Context {
        types: &types,
        ..*cx
    };
    report.info.returns = chunk_returns::reply_kinds(cx);
    report.info.reply_codes = reply_codes::returned_codes(cx);
    let outputs = schedule::run(cx, &calls, &checks, done, report);
    Ran {
        types,
        calls,
        outputs,
    }
}

/// The lints that look at the main chunk's `return`s (and what they
/// return) rather than at each statement: an editor's analysis of one
/// changed statement keeps what they found.
pub(crate) const MAIN_CHUNK: &[Lint] = &[
    Lint::NonIntegerReturn,
    Lint::ReturnType,
    Lint::NilReturn,
    Lint::ReturnShape,
];

/// Runs, on the one statement `cx` checks (its `unit`), every lint that
/// is not allowed but those of [`MAIN_CHUNK`] and `maybe_false` (see
/// [`maybe_false::candidates`]): the diagnostics of each, in
/// [`Lint::ALL`]'s order, those in the statement only. `calls` are the
/// statement's `redis.call` sites (a lint that reads the call a reply came
/// from, which may be elsewhere, asks the facts: [`Types::call_at`]).
pub(crate) fn run_unit(
    cx: &Context<'_>,
    calls: &[RedisCall],
) -> Vec<(Lint, Vec<crate::Diagnostic>)> {
    let Some(unit) = cx.unit else {
        return Vec::new();
    };
    let mut outputs = Vec::new();
    for &lint in Lint::ALL {
        let Some(check) = check_of(lint) else {
            continue;
        };
        if MAIN_CHUNK.contains(&lint) || lint == Lint::MaybeFalse || cx.allowed(lint) {
            continue;
        }
        let mut report = Report::default();
        check(cx, calls, &mut report);
        // Only what is about the statement: a declared input the script
        // never reads is the whole script's.
        report.diagnostics.retain(|d| match d.target {
            crate::Target::Script(span) => {
                unit.start <= span.start.offset && span.end.offset <= unit.end
            }
            _ => false,
        });
        outputs.push((lint, report.diagnostics));
    }
    outputs
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
