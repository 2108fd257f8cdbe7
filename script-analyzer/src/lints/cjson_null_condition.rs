//! `cjson_null_condition`: `cjson.null`, or a value that may be it, used as a
//! condition or compared with `nil`.
//!
//! `cjson.decode` turns a JSON `null` into `cjson.null`, a userdata: it is
//! true as a condition and `~= nil`. So with `ARGV[1] = '{"ttl": null}'`,
//! `if cjson.decode(ARGV[1]).ttl then` is taken, and `if ttl == nil then`
//! is not.
//!
//! - `cjson.null` itself as a condition is always true: an error.
//! - A field of a decoded document (`cjson.decode(s).f`, `doc.f.g` where
//!   `local doc = cjson.decode(s)`, or a local initialized with such a field
//!   and never assigned again) used as a condition (`if`, `elseif`, `while`,
//!   `until`, `not`, the left operand of `and`, the operands of `and` / `or`
//!   within a condition) or compared with `nil`: a warning, since the JSON
//!   may never hold a null there. A condition that also compares the value
//!   with `cjson.null` passes.

use super::typed::each_comparison;
use super::{Context, RedisCall};
use crate::facts::{Key, index_key, unparenthesized};
use crate::{Diagnostic, Lint, Report, Span};
use full_moon::ast::{
    BinOp, Call, Expression, If, Index, LocalAssignment, Prefix, Repeat, Suffix, UnOp, Var, While,
};
use full_moon::visitors::{Visit, Visitor};
use std::collections::HashSet;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut locals = Locals {
        cx,
        documents: HashSet::new(),
        fields: HashSet::new(),
    };
    cx.visit(&mut locals);
    let mut conditions = Conditions {
        locals: &locals,
        reported: HashSet::new(),
        found: Vec::new(),
    };
    cx.visit(&mut conditions);
    each_comparison(cx, |cmp| {
        if !cmp.is_equality() {
            return;
        }
        let value = match (is_nil(cmp.lhs), is_nil(cmp.rhs)) {
            (false, true) => cmp.lhs,
            (true, false) => cmp.rhs,
            _ => return,
        };
        if !locals.is_field(value) {
            return;
        }
        let span = cx.span_of(cmp.whole);
        if !conditions.reported.insert(span.start.offset) {
            return;
        }
        let always = if cmp.op == "==" { "false" } else { "true" };
        conditions.found.push(
            Diagnostic::warning(
                Lint::CjsonNullCondition,
                span,
                format!(
                    "`{}` comes from `cjson.decode`: a JSON null is `cjson.null`, not nil, so `{} nil` is {always} for it",
                    value_text(cx, value),
                    cmp.op,
                ),
            )
            .with_label("a JSON null decodes to the userdata `cjson.null`")
            .with_help("also compare with `cjson.null`: `v == nil or v == cjson.null`"),
        );
    });
    conditions
        .found
        .sort_by_key(|d| d.primary_span().map(|s| s.start.offset));
    report.diagnostics.extend(conditions.found);
}

/// The source text of `expr`, closing brackets included.
fn value_text(cx: &Context<'_>, expr: &Expression) -> String {
    let text = crate::node_range::node_range(cx.source, expr)
        .and_then(|(start, end)| cx.source.get(start..end))
        .unwrap_or("this value");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 40 {
        let short: String = text.chars().take(37).collect();
        format!("{short}...")
    } else {
        text
    }
}

fn is_nil(expr: &Expression) -> bool {
    matches!(expr, Expression::Symbol(t) if t.token().to_string() == "nil")
}

/// The locals holding a decoded document or one of its fields.
struct Locals<'c, 'a> {
    cx: &'c Context<'a>,
    /// Declaring offsets of the locals initialized with `cjson.decode(...)`.
    documents: HashSet<usize>,
    /// Declaring offsets of the locals initialized with a field of one.
    fields: HashSet<usize>,
}

impl Locals<'_, '_> {
    /// The local `token` names, if it is never assigned after its declaration.
    fn constant_local(&self, token: &full_moon::tokenizer::TokenReference) -> Option<usize> {
        let variable = self.cx.model.local(token)?;
        (!variable.reassigned).then_some(variable.declared_at)
    }

    /// Whether `prefix(suffixes)` is `cjson.decode(...)`, `cjson` being the
    /// global library.
    fn is_decode(&self, prefix: &Prefix, suffixes: &[&Suffix]) -> bool {
        let Prefix::Name(library) = prefix else {
            return false;
        };
        if library.token().to_string() != "cjson" || !self.cx.model.is_global(library) {
            return false;
        }
        matches!(
            suffixes,
            [Suffix::Index(index), Suffix::Call(Call::AnonymousCall(_))]
                if matches!(index_key(index), Some(Key::Name(name)) if name == "decode")
        )
    }

    /// Whether `expr` is a decoded document: `cjson.decode(...)` or a local
    /// holding one.
    fn is_document(&self, expr: &Expression) -> bool {
        match unparenthesized(expr) {
            Expression::FunctionCall(call) => {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                self.is_decode(call.prefix(), &suffixes)
            }
            Expression::Var(Var::Name(token)) => self
                .constant_local(token)
                .is_some_and(|at| self.documents.contains(&at)),
            _ => false,
        }
    }

    /// Whether `expr` is a field of a decoded document, or a local holding one.
    fn is_field(&self, expr: &Expression) -> bool {
        match unparenthesized(expr) {
            Expression::Var(Var::Name(token)) => self
                .constant_local(token)
                .is_some_and(|at| self.fields.contains(&at)),
            Expression::Var(Var::Expression(var)) => {
                let suffixes: Vec<&Suffix> = var.suffixes().collect();
                self.is_index_chain(var.prefix(), &suffixes)
            }
            _ => false,
        }
    }

    /// Whether `prefix` then `suffixes` index into a decoded document (or a
    /// field of one) and end with an index.
    fn is_index_chain(&self, prefix: &Prefix, suffixes: &[&Suffix]) -> bool {
        // Where the indexing starts: after `cjson.decode(...)`, or at once.
        let (base, rest) = if suffixes.len() >= 2 && self.is_decode(prefix, &suffixes[..2]) {
            (true, &suffixes[2..])
        } else {
            let base = match prefix {
                Prefix::Name(token) => self
                    .constant_local(token)
                    .is_some_and(|at| self.documents.contains(&at) || self.fields.contains(&at)),
                Prefix::Expression(expr) => self.is_document(expr) || self.is_field(expr),
                _ => false,
            };
            (base, suffixes)
        };
        base && !rest.is_empty() && rest.iter().all(|s| matches!(s, Suffix::Index(_)))
    }
}

impl Visitor for Locals<'_, '_> {
    fn visit_local_assignment(&mut self, node: &LocalAssignment) {
        for (name, expr) in node.names().iter().zip(node.expressions().iter()) {
            let Some(at) = self.constant_local(name) else {
                continue;
            };
            if self.is_document(expr) {
                self.documents.insert(at);
            } else if self.is_field(expr) {
                self.fields.insert(at);
            }
        }
    }
}

/// Walks the conditions and reports the decoded values in them.
struct Conditions<'l, 'c, 'a> {
    locals: &'l Locals<'c, 'a>,
    /// Start offsets already reported.
    reported: HashSet<usize>,
    found: Vec<Diagnostic>,
}

impl Conditions<'_, '_, '_> {
    /// `expr` is a whole condition.
    fn whole(&mut self, expr: &Expression) {
        if !mentions_cjson_null(expr) {
            self.condition(expr);
        } else {
            // Checked against `cjson.null` somewhere: only a bare
            // `cjson.null` operand is still wrong.
            self.only_null(expr);
        }
    }

    fn only_null(&mut self, expr: &Expression) {
        match unparenthesized(expr) {
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_) | BinOp::Or(_),
                rhs,
            } => {
                self.only_null(lhs);
                self.only_null(rhs);
            }
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.only_null(expression),
            leaf if is_cjson_null(self.locals.cx, leaf) => self.leaf(leaf),
            _ => {}
        }
    }

    /// `expr` is used for its truth.
    fn condition(&mut self, expr: &Expression) {
        match unparenthesized(expr) {
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_) | BinOp::Or(_),
                rhs,
            } => {
                self.condition(lhs);
                self.condition(rhs);
            }
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.condition(expression),
            leaf => self.leaf(leaf),
        }
    }

    fn leaf(&mut self, expr: &Expression) {
        let cx = self.locals.cx;
        let span: Span = cx.span_of(expr);
        let diagnostic = if is_cjson_null(cx, expr) {
            Diagnostic::error(
                Lint::CjsonNullCondition,
                span,
                "`cjson.null` is a userdata, always true as a condition",
            )
            .with_label("always true")
            .with_help("compare a value with it instead: `if v == cjson.null then`")
        } else if self.locals.is_field(expr) {
            Diagnostic::warning(
                Lint::CjsonNullCondition,
                span,
                format!(
                    "`{}` comes from `cjson.decode`: a JSON null is `cjson.null`, which is true as a condition",
                    value_text(cx, expr)
                ),
            )
            .with_label("true for a JSON null too")
            .with_help("test `v and v ~= cjson.null` when the JSON may hold null")
        } else {
            return;
        };
        if self.reported.insert(span.start.offset) {
            self.found.push(diagnostic);
        }
    }
}

impl Visitor for Conditions<'_, '_, '_> {
    fn visit_if(&mut self, node: &If) {
        self.whole(node.condition());
        for else_if in node.else_if().into_iter().flatten() {
            self.whole(else_if.condition());
        }
    }

    fn visit_while(&mut self, node: &While) {
        self.whole(node.condition());
    }

    fn visit_repeat(&mut self, node: &Repeat) {
        self.whole(node.until());
    }

    fn visit_expression(&mut self, node: &Expression) {
        match node {
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.whole(expression),
            // `x and a or b` picks by `x`; `x and x ~= cjson.null` checks it.
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_),
                ..
            } if mentions_cjson_null(node) => self.only_null(lhs),
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_),
                ..
            } => self.condition(lhs),
            _ => {}
        }
    }
}

/// `cjson.null`, the global library's.
fn is_cjson_null(cx: &Context<'_>, expr: &Expression) -> bool {
    let Expression::Var(Var::Expression(var)) = unparenthesized(expr) else {
        return false;
    };
    let Prefix::Name(library) = var.prefix() else {
        return false;
    };
    let suffixes: Vec<&Suffix> = var.suffixes().collect();
    library.token().to_string() == "cjson"
        && cx.model.is_global(library)
        && matches!(suffixes.as_slice(), [Suffix::Index(index)]
            if matches!(index_key(index), Some(Key::Name(name)) if name == "null"))
}

/// Whether `cjson.null` appears anywhere in `expr`.
fn mentions_cjson_null(expr: &Expression) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        fn visit_index(&mut self, index: &Index) {
            if matches!(index_key(index), Some(Key::Name(name)) if name == "null") {
                self.0 = true;
            }
        }
    }
    let mut finder = Finder(false);
    expr.visit(&mut finder);
    finder.0
}

#[cfg(test)]
mod tests {
    use crate::lints::test_util::lint;
    use crate::{Lint, Severity};

    fn found(source: &str) -> Vec<(Severity, String)> {
        lint(Lint::CjsonNullCondition, source, 1, 1)
            .into_iter()
            .map(|d| (d.severity, d.message))
            .collect()
    }

    #[test]
    fn cjson_null_as_a_condition_is_an_error() {
        assert_eq!(
            found("if cjson.null then return 1 end return 0"),
            [(
                Severity::Error,
                "`cjson.null` is a userdata, always true as a condition".to_string()
            )]
        );
        assert_eq!(
            found("local v = not cjson.null return v and 1 or 0").len(),
            1
        );
    }

    #[test]
    fn decoded_fields_as_conditions_are_warnings() {
        assert_eq!(
            found("if cjson.decode(ARGV[1]).ttl then return 1 end return 0"),
            [(
                Severity::Warning,
                "`cjson.decode(ARGV[1]).ttl` comes from `cjson.decode`: a JSON null is `cjson.null`, which is true as a condition"
                    .to_string()
            )]
        );
        let source = "local doc = cjson.decode(ARGV[1])\n\
            local ttl = doc.opts.ttl\n\
            if ttl then redis.call('PEXPIRE', KEYS[1], ttl) end\n\
            while doc['n'] do break end\n\
            return 1";
        assert_eq!(found(source).len(), 2, "{:?}", found(source));
    }

    #[test]
    fn decoded_fields_compared_with_nil_are_warnings() {
        assert_eq!(
            found("local doc = cjson.decode(ARGV[1]) if doc.ttl == nil then return 0 end return 1"),
            [(
                Severity::Warning,
                "`doc.ttl` comes from `cjson.decode`: a JSON null is `cjson.null`, not nil, so `== nil` is false for it"
                    .to_string()
            )]
        );
        assert_eq!(
            found("local t = cjson.decode(ARGV[1]).t return t ~= nil and 1 or 0").len(),
            1
        );
        assert_eq!(
            found("local job = cjson.decode(ARGV[1]) if job['class'] == nil then return 0 end return 1"),
            [(
                Severity::Warning,
                "`job['class']` comes from `cjson.decode`: a JSON null is `cjson.null`, not nil, so `== nil` is false for it"
                    .to_string()
            )]
        );
    }

    #[test]
    fn checked_and_other_values_pass() {
        for source in [
            // Compared with cjson.null: the fix.
            "local doc = cjson.decode(ARGV[1]) if doc.ttl and doc.ttl ~= cjson.null then return 1 end return 0",
            "local doc = cjson.decode(ARGV[1]) if doc.ttl == cjson.null then return 0 end return 1",
            // The document itself, not a field.
            "local doc = cjson.decode(ARGV[1]) if doc then return 1 end return 0",
            // Not from cjson.decode.
            "local t = {a = 1} if t.a then return 1 end return 0",
            "local doc = cmsgpack.unpack(ARGV[1]) if doc.ttl then return 1 end return 0",
            // A local assigned again may hold anything.
            "local doc = cjson.decode(ARGV[1]) doc = {} if doc.ttl then return 1 end return 0",
            // A method call on a field, or a field used as a value.
            "local doc = cjson.decode(ARGV[1]) return doc.name",
            // A local named cjson.
            "local cjson = {null = false} if cjson.null then return 1 end return 0",
        ] {
            assert!(found(source).is_empty(), "{source}: {:?}", found(source));
        }
    }
}
