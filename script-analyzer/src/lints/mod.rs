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

/// Runs every lint that is not allowed; the inference they read.
pub(crate) fn run_all<'a>(cx: &Context<'a>, report: &mut Report) -> Types<'a> {
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
    schedule::run(cx, &calls, &checks, done, report);
    types
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
