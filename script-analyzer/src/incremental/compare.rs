//! How the old and the new statement of a unit are compared, and the
//! small reads of statements, findings and spans the comparison needs.

use crate::lints::maybe_false::{self};
use crate::lints::{self, Context};
use crate::scope::{Model, Resolution};
use crate::{Diagnostic, Options, Span, Target};
use full_moon::ast::{Ast, Stmt};
use full_moon::tokenizer::{Token, TokenReference, TokenType};
use full_moon::visitors::{Visit, Visitor, VisitorMut};
use std::collections::BTreeSet;

/// How many times each thing is found.
pub(super) type Counts<T> = std::collections::BTreeMap<T, usize>;

pub(super) fn counted<T: Ord>(found: Vec<T>) -> Counts<T> {
    let mut counts = Counts::new();
    for thing in found {
        *counts.entry(thing).or_default() += 1;
    }
    counts
}

/// `counts` with `old` taken away and `new` added; whether what is found
/// at all stays the same.
pub(super) fn recount<T: Ord + Clone>(counts: &mut Counts<T>, old: &[T], new: &[T]) -> bool {
    let before: Vec<T> = counts.keys().cloned().collect();
    for thing in old {
        if let Some(count) = counts.get_mut(thing) {
            *count -= 1;
            if *count == 0 {
                counts.remove(thing);
            }
        }
    }
    for thing in new {
        *counts.entry(thing.clone()).or_default() += 1;
    }
    counts.keys().eq(before.iter())
}

/// The reads of `KEYS` and `ARGV` of what `cx` checks: by index, or
/// dynamic (`None`).
pub(super) fn input_reads(cx: &Context<'_>) -> Vec<(&'static str, Option<u32>)> {
    lints::inputs::uses(cx)
        .into_iter()
        .filter_map(|u| match u.access {
            lints::inputs::Access::Index(n) => Some((u.table.name(), Some(n))),
            lints::inputs::Access::Dynamic(_) => Some((u.table.name(), None)),
            lints::inputs::Access::Invalid(_) => None,
        })
        .collect()
}

/// The names of the globals the script assigns.
pub(super) fn globals_assigned(model: &Model) -> BTreeSet<&str> {
    model
        .global_writes
        .iter()
        .map(|g| g.name.as_str())
        .collect()
}

/// The names of the variables `stmt` declares, in order.
pub(super) fn names_declared(model: &Model, stmt: &Stmt) -> Vec<String> {
    struct Names<'m>(&'m Model, Vec<String>);
    impl Visitor for Names<'_> {
        fn visit_token(&mut self, token: &Token) {
            let at = token.start_position().bytes();
            if let Some(Resolution::Local(var)) = self.0.resolve_offset(at)
                && let Some(variable) = self.0.variables.get(var)
                && variable.declared_at == at
            {
                self.1.push(variable.name.clone());
            }
        }
    }
    let mut names = Names(model, Vec::new());
    stmt.visit(&mut names);
    names.1
}

/// Whether two diagnostics are the same but for the lines and columns of
/// their places (those kept from an earlier version may be off by the
/// lines added or removed before them since; offsets are kept right).
pub(super) fn same(a: &Diagnostic, b: &Diagnostic) -> bool {
    let offsets = |span: &Span| (span.start.offset, span.end.offset);
    let target = |d: &Diagnostic| match d.target {
        Target::Script(span) => Ok(offsets(&span)),
        other => Err(other),
    };
    a.lint == b.lint
        && a.severity == b.severity
        && a.message == b.message
        && a.label == b.label
        && a.notes == b.notes
        && a.help == b.help
        && target(a) == target(b)
        && a.secondary.len() == b.secondary.len()
        && a.secondary
            .iter()
            .zip(&b.secondary)
            .all(|(x, y)| x.message == y.message && offsets(&x.span) == offsets(&y.span))
}

/// Whether `span` lies in `range`.
pub(super) fn within(span: Span, (start, end): (usize, usize)) -> bool {
    start <= span.start.offset && span.end.offset <= end
}

/// Whether `span` touches `range`.
pub(super) fn overlaps(span: Span, (start, end): (usize, usize)) -> bool {
    span.start.offset < end && span.end.offset > start
}

/// `list` with its candidates in `range` replaced by `new`.
pub(super) fn replace_in(
    list: &mut Vec<maybe_false::Candidate>,
    range: (usize, usize),
    new: Vec<maybe_false::Candidate>,
) {
    let start =
        |c: &maybe_false::Candidate| c.diagnostic.primary_span().map_or(0, |s| s.start.offset);
    let at = list.partition_point(|c| start(c) < range.0);
    list.retain(|c| {
        !c.diagnostic
            .primary_span()
            .is_some_and(|s| within(s, range))
    });
    list.splice(at..at, new);
}

/// The starts of `stmt`'s tokens.
pub(super) fn token_starts(stmt: &Stmt) -> Vec<usize> {
    struct Starts(Vec<usize>);
    impl Visitor for Starts {
        fn visit_token(&mut self, token: &Token) {
            self.0.push(token.start_position().bytes());
        }
    }
    let mut starts = Starts(Vec::new());
    stmt.visit(&mut starts);
    starts.0
}

/// The function bodies in `stmt`, its own function's first.
pub(super) fn bodies(stmt: &Stmt) -> Vec<usize> {
    struct Bodies(Vec<usize>);
    impl Visitor for Bodies {
        fn visit_function_body(&mut self, body: &full_moon::ast::FunctionBody) {
            self.0.push(std::ptr::from_ref(body) as usize);
        }
    }
    let mut bodies = Bodies(Vec::new());
    stmt.visit(&mut bodies);
    bodies.0
}

/// Whether two function statements have the same kind, name and
/// parameters.
pub(super) fn same_head(old: &Stmt, new: &Stmt) -> bool {
    let head = |stmt: &Stmt| -> Option<(bool, String, String)> {
        match stmt {
            Stmt::LocalFunction(local) => Some((
                true,
                local.name().token().to_string(),
                local.body().parameters().to_string(),
            )),
            Stmt::FunctionDeclaration(decl) => Some((
                false,
                decl.name().to_string().trim().to_string(),
                decl.body().parameters().to_string(),
            )),
            _ => None,
        }
    };
    head(old).is_some() && head(old) == head(new)
}

/// Whether two option sets analyze alike.
pub(super) fn same_options(a: &Options, b: &Options) -> bool {
    a.declared == b.declared
        && a.read_only == b.read_only
        && a.cluster == b.cluster
        && a.allow == b.allow
        && a.returns == b.returns
        && a.target == b.target
}

/// `ast` (the parse of a unit's text alone) with its tokens placed where
/// the unit starts in the padded copy: byte `at`, line `line`, column 1.
pub(super) fn placed(ast: Ast, at: usize, line: usize) -> Option<Ast> {
    // A whitespace token before the first one stands for what precedes
    // the unit; positions are counted again, and the token dropped.
    let lines = line.checked_sub(1)?;
    let spaces = at.checked_sub(lines)?;
    let mut before = " ".repeat(spaces);
    before.push_str(&"\n".repeat(lines));
    struct Prepend(Option<Token>);
    impl VisitorMut for Prepend {
        fn visit_token_reference(&mut self, token: TokenReference) -> TokenReference {
            match self.0.take() {
                Some(first) => {
                    let mut leading = vec![first];
                    leading.extend(token.leading_trivia().cloned());
                    TokenReference::new(
                        leading,
                        token.token().clone(),
                        token.trailing_trivia().cloned().collect(),
                    )
                }
                None => token,
            }
        }
    }
    struct Strip(bool);
    impl VisitorMut for Strip {
        fn visit_token_reference(&mut self, token: TokenReference) -> TokenReference {
            if std::mem::replace(&mut self.0, false) {
                TokenReference::new(
                    token.leading_trivia().skip(1).cloned().collect(),
                    token.token().clone(),
                    token.trailing_trivia().cloned().collect(),
                )
            } else {
                token
            }
        }
    }
    let whitespace = Token::new(TokenType::Whitespace {
        characters: before.into(),
    });
    let ast = Prepend(Some(whitespace)).visit_ast(ast).update_positions();
    Some(Strip(true).visit_ast(ast))
}
