//! `unknown_member`: a member of one of Redis's libraries that does not exist,
//! such as `redis.cal` or `os.time`.
//!
//! Reading one gives `nil`, so the script fails later with the less helpful
//! "attempt to call a nil value".
//!
//! Reading a missing field is no error in Lua, and scripts written for several
//! Lua versions test for a member before they use it: `(table.unpack or
//! unpack)(t)`, `if table.unpack then ... end`, `type(table.unpack)`. A member
//! the script tests anywhere like that is feature detection: none of its uses
//! is reported.

use super::{Context, RedisCall};
use crate::similar::best_match;
use crate::{Diagnostic, Lint, Report, sandbox};
use full_moon::ast::{
    BinOp, Call, Expression, FunctionArgs, FunctionCall, If, Index, Prefix, Repeat, Suffix, UnOp,
    Var, VarExpression, While,
};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};
use full_moon::visitors::Visitor;
use std::collections::BTreeSet;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    // A statement checked on its own: what the whole script tests.
    let tested = match cx.unit {
        Some(unit) => unit.tested_members.clone(),
        None => tested(cx),
    };
    let mut visitor = Members {
        cx,
        tested,
        found: Vec::new(),
    };
    cx.visit(&mut visitor);
    report.diagnostics.extend(visitor.found);
}

/// The `(library, member)` pairs the script (or the statement checked)
/// tests for existence.
fn tested(cx: &Context<'_>) -> BTreeSet<(String, String)> {
    tests(cx).into_iter().collect()
}

/// Each test of a library member's existence in the script (or the
/// statement checked): the `(library, member)` pair tested, in order.
pub(crate) fn tests(cx: &Context<'_>) -> Vec<(String, String)> {
    let mut tests = Tested {
        cx,
        members: Vec::new(),
    };
    cx.visit(&mut tests);
    tests.members
}

struct Members<'c, 'a> {
    cx: &'c Context<'a>,
    /// The `(library, member)` pairs the script tests for existence.
    tested: BTreeSet<(String, String)>,
    found: Vec<Diagnostic>,
}

impl Members<'_, '_> {
    fn check(&mut self, prefix: &Prefix, suffixes: &[&Suffix]) {
        let Prefix::Name(library_token) = prefix else {
            return;
        };
        let library_name = library_token.token().to_string();
        let Some(members) = sandbox::library(&library_name) else {
            return;
        };
        if !self.cx.model.is_global(library_token) {
            return;
        }
        let Some(Suffix::Index(index)) = suffixes.first() else {
            return;
        };
        let Some((member, token)) = member_name(index) else {
            return;
        };
        if members.contains(&member.as_str())
            || self
                .tested
                .contains(&(library_name.clone(), member.clone()))
        {
            return;
        }
        let span = self.cx.span_of(token);
        let mut diagnostic = Diagnostic::error(
            Lint::UnknownMember,
            span,
            format!("`{library_name}.{member}` does not exist in Redis scripts"),
        );
        diagnostic = match best_match(&member, members.iter().copied()) {
            Some(similar) => {
                diagnostic.with_label(format!("did you mean `{library_name}.{similar}`?"))
            }
            None => diagnostic.with_label(format!("not a member of `{library_name}`")),
        };
        if library_name == "os" {
            diagnostic = diagnostic.with_note(
                "Redis scripts have only `os.clock`, and only from Redis 7.4: a script must not depend on time",
            );
        }
        self.found.push(diagnostic);
    }
}

/// The member name of `.name` or `["name"]`, with the token to point at.
fn member_name(index: &Index) -> Option<(String, &TokenReference)> {
    match index {
        Index::Dot { name, .. } => Some((name.token().to_string(), name)),
        Index::Brackets { expression, .. } => match &**expression {
            Expression::String(token) => match token.token_type() {
                TokenType::StringLiteral { literal, .. } => Some((literal.to_string(), token)),
                _ => None,
            },
            _ => None,
        },
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Finds the library members the script tests for existence: the left side
/// of `or` / `and`, the operand of `not`, a condition, one side of a
/// comparison with `nil`, the argument of `type(...)`.
struct Tested<'c, 'a> {
    cx: &'c Context<'a>,
    members: Vec<(String, String)>,
}

impl Tested<'_, '_> {
    /// Records `expression` if it is `library.member` (in parentheses or not).
    fn tested(&mut self, expression: &Expression) {
        let var = match expression {
            Expression::Parentheses { expression, .. } => return self.tested(expression),
            Expression::Var(Var::Expression(var)) => var,
            _ => return,
        };
        let Prefix::Name(library) = var.prefix() else {
            return;
        };
        let suffixes: Vec<&Suffix> = var.suffixes().collect();
        if let ([Suffix::Index(index)], true) = (&suffixes[..], self.cx.model.is_global(library))
            && let Some((member, _)) = member_name(index)
        {
            self.members.push((library.token().to_string(), member));
        }
    }
}

/// Whether `expression` is the literal `nil`.
fn is_nil(expression: &Expression) -> bool {
    match expression {
        Expression::Symbol(token) => matches!(
            token.token_type(),
            TokenType::Symbol {
                symbol: Symbol::Nil
            }
        ),
        _ => false,
    }
}

impl Visitor for Tested<'_, '_> {
    fn visit_expression(&mut self, node: &Expression) {
        match node {
            Expression::BinaryOperator { lhs, binop, rhs } => match binop {
                BinOp::And(_) | BinOp::Or(_) => self.tested(lhs),
                BinOp::TwoEqual(_) | BinOp::TildeEqual(_) => {
                    if is_nil(rhs) {
                        self.tested(lhs);
                    } else if is_nil(lhs) {
                        self.tested(rhs);
                    }
                }
                _ => {}
            },
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.tested(expression),
            _ => {}
        }
    }

    fn visit_function_call(&mut self, node: &FunctionCall) {
        let Prefix::Name(name) = node.prefix() else {
            return;
        };
        if name.token().to_string() != "type" || !self.cx.model.is_global(name) {
            return;
        }
        let Some(Suffix::Call(call)) = node.suffixes().next() else {
            return;
        };
        let Call::AnonymousCall(args) = call else {
            return;
        };
        if let FunctionArgs::Parentheses { arguments, .. } = &**args
            && let Some(first) = arguments.iter().next()
        {
            self.tested(first);
        }
    }

    fn visit_if(&mut self, node: &If) {
        self.tested(node.condition());
        for else_if in node.else_if().into_iter().flatten() {
            self.tested(else_if.condition());
        }
    }

    fn visit_while(&mut self, node: &While) {
        self.tested(node.condition());
    }

    fn visit_repeat(&mut self, node: &Repeat) {
        self.tested(node.until());
    }
}

impl Visitor for Members<'_, '_> {
    fn visit_var_expression(&mut self, node: &VarExpression) {
        let suffixes: Vec<&Suffix> = node.suffixes().collect();
        self.check(node.prefix(), &suffixes);
    }

    fn visit_function_call(&mut self, node: &FunctionCall) {
        let suffixes: Vec<&Suffix> = node.suffixes().collect();
        self.check(node.prefix(), &suffixes);
    }
}

#[cfg(test)]
mod tests {
    use crate::Lint;
    use crate::lints::test_util::{lint, messages};

    fn errors(source: &str) -> Vec<String> {
        messages(Lint::UnknownMember, source, 1, 0)
    }

    #[test]
    fn misspelt_members_are_errors() {
        let d = &lint(
            Lint::UnknownMember,
            "return redis.cal('GET', KEYS[1])",
            1,
            0,
        )[0];
        assert_eq!(d.message, "`redis.cal` does not exist in Redis scripts");
        assert_eq!(d.label.as_deref(), Some("did you mean `redis.call`?"));
        let span = d.primary_span().unwrap();
        assert_eq!((span.start.column, span.end.column), (14, 17));
        assert_eq!(
            errors("local f = string.fromat"),
            ["`string.fromat` does not exist in Redis scripts"]
        );
        assert_eq!(errors("return redis['sha1hexx']('a')").len(), 1);
    }

    #[test]
    fn os_has_only_clock() {
        assert_eq!(
            errors("return os.time()"),
            ["`os.time` does not exist in Redis scripts"]
        );
        assert!(errors("return os.clock()").is_empty());
    }

    #[test]
    fn feature_detection_is_no_error() {
        for src in [
            "return (table.unpack or unpack)({1, 2})",
            "local unpack = table.unpack or unpack\nreturn unpack({1, 2})",
            "if table.unpack then return table.unpack({1}) end return unpack({1})",
            "local f = type(table.unpack) == 'function' and table.unpack or unpack",
            "if table.unpack ~= nil then return table.unpack({1}) end return 0",
            "local n = not string.pack and 1 or 2 return n",
            "while not math.type do break end return 0",
            "local f = (table.unpack) or unpack return f({1})",
        ] {
            assert!(errors(src).is_empty(), "{src}: {:?}", errors(src));
        }
    }

    #[test]
    fn feature_detection_needs_the_same_member() {
        // Testing one member does not excuse another, and a bare call still fails.
        assert_eq!(
            errors("local f = table.unpack or unpack return table.pack(f({1}))"),
            ["`table.pack` does not exist in Redis scripts"]
        );
        assert_eq!(
            errors("return table.unpack({1, 2})"),
            ["`table.unpack` does not exist in Redis scripts"]
        );
        // `x or table.unpack` tests `x`, not the member.
        assert_eq!(
            errors("local f = nil or table.unpack return f({1})"),
            ["`table.unpack` does not exist in Redis scripts"]
        );
    }

    #[test]
    fn real_members_and_locals_pass() {
        let src = "redis.log(redis.LOG_WARNING, 'x'); redis.setresp(3)\n\
                   redis.set_repl(redis.REPL_ALL); local h = redis.sha1hex('a')\n\
                   local r = redis.pcall('GET', KEYS[1]); if type(r) == 'table' and r.err then return redis.error_reply(r.err) end\n\
                   local redis2 = {}; local function f() local redis = {} return redis.anything end\n\
                   return redis.status_reply(table.concat({h, string.rep('a', 2)}, math.floor(1.5)))";
        assert!(errors(src).is_empty(), "{:?}", errors(src));
    }
}
