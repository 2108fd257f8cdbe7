//! What a library's top level may not use: Redis runs it, at `FUNCTION
//! LOAD`, with no global but a reduced `redis` table (`register_function`,
//! `log` and constants; no `redis.call`, no `string`, `cjson`, `tonumber`...),
//! and refuses the library when it reaches for anything else.

use super::{Source, inside, token_range};
use crate::{Diagnostic, Lint, Span};
use full_moon::ast::{FunctionCall, Index, Prefix, Suffix, VarExpression};
use full_moon::tokenizer::TokenReference;
use full_moon::visitors::Visitor;

/// The members of `redis` that exist while a library loads.
pub(crate) const LOAD_TIME: &[&str] = &[
    "register_function",
    "log",
    "LOG_DEBUG",
    "LOG_VERBOSE",
    "LOG_NOTICE",
    "LOG_WARNING",
    "REDIS_VERSION",
    "REDIS_VERSION_NUM",
];

/// A `redis.<member>` read outside every function body.
pub(crate) struct LoadTimeMember {
    /// The member's name.
    pub member: String,
    /// Bytes of `redis.<member>`.
    pub range: (usize, usize),
    /// Bytes of the member's name.
    pub member_range: (usize, usize),
}

/// Every `redis.<member>` evaluated while the library loads.
pub(crate) fn members(src: &Source<'_>) -> Vec<LoadTimeMember> {
    let mut finder = Finder {
        src,
        found: Vec::new(),
    };
    finder.visit_ast(src.ast);
    finder.found
}

struct Finder<'s, 'a> {
    src: &'s Source<'a>,
    found: Vec<LoadTimeMember>,
}

impl Finder<'_, '_> {
    fn check<'x>(&mut self, prefix: &Prefix, mut suffixes: impl Iterator<Item = &'x Suffix>) {
        let Prefix::Name(name) = prefix else {
            return;
        };
        if name.token().to_string() != "redis" || !self.src.model.is_global(name) {
            return;
        }
        let Some(Suffix::Index(Index::Dot { name: member, .. })) = suffixes.next() else {
            return;
        };
        let start = name.token().start_position().bytes();
        if inside(&self.src.functions, start) {
            return;
        }
        let member_range = token_range(member);
        self.found.push(LoadTimeMember {
            member: name_text(member),
            range: (start, member_range.1),
            member_range,
        });
    }
}

fn name_text(token: &TokenReference) -> String {
    token.token().to_string()
}

impl Visitor for Finder<'_, '_> {
    fn visit_function_call(&mut self, node: &FunctionCall) {
        self.check(node.prefix(), node.suffixes());
    }

    fn visit_var_expression(&mut self, node: &VarExpression) {
        self.check(node.prefix(), node.suffixes());
    }
}

/// The globals read while the library loads, other than `redis` (and
/// `KEYS` / `ARGV`, an error of their own): none exists then. Byte ranges.
pub(crate) fn globals(src: &Source<'_>) -> Vec<(String, (usize, usize))> {
    src.model
        .global_reads
        .iter()
        .filter(|read| !matches!(read.name.as_str(), "redis" | "KEYS" | "ARGV"))
        .filter(|read| !inside(&src.functions, read.start))
        .map(|read| (read.name.clone(), (read.start, read.end)))
        .collect()
}

/// Errors for the members and globals Redis does not have while loading.
pub(crate) fn check(
    src: &Source<'_>,
    members: &[LoadTimeMember],
    globals: &[(String, (usize, usize))],
    out: &mut Vec<Diagnostic>,
) {
    for (name, (start, end)) in globals {
        out.push(
            Diagnostic::error(
                Lint::Library,
                Span::from_offsets(src.text, *start, *end),
                format!("`{name}` is not available while the library loads"),
            )
            .with_label("runs at FUNCTION LOAD, outside any function")
            .with_note(format!(
                "Redis refuses the library at FUNCTION LOAD: \"Script attempted to access \
                 nonexistent global variable '{name}'\""
            ))
            .with_help(
                "while a library loads, only `redis.register_function`, `redis.log` and the \
                 version constants exist: use other globals inside functions",
            ),
        );
    }
    for found in members {
        if LOAD_TIME.contains(&found.member.as_str()) {
            continue;
        }
        let member = &found.member;
        let span = Span::from_offsets(src.text, found.range.0, found.range.1);
        out.push(
            Diagnostic::error(
                Lint::Library,
                span,
                format!("`redis.{member}` is not available while the library loads"),
            )
            .with_label("runs at FUNCTION LOAD, outside any function")
            .with_note(format!(
                "Redis refuses the library at FUNCTION LOAD: \"Script attempted to access \
                 nonexistent global variable '{member}'\""
            ))
            .with_help(
                "a library's top level may only use `redis.register_function`, `redis.log` and \
                 the version constants: call Redis from inside a function's callback",
            ),
        );
    }
}
