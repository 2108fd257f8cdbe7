//! `unknown_member`: a member of one of Redis's libraries that does not exist,
//! such as `redis.cal` or `os.time`.
//!
//! Reading one gives `nil`, so the script fails later with the less helpful
//! "attempt to call a nil value".

use super::{Context, RedisCall};
use crate::similar::best_match;
use crate::{Diagnostic, Lint, Report, sandbox};
use full_moon::ast::FunctionCall;
use full_moon::ast::{Expression, Index, Prefix, Suffix, VarExpression};
use full_moon::tokenizer::{TokenReference, TokenType};
use full_moon::visitors::Visitor;

pub(crate) fn check(cx: &Context<'_>, _calls: &[RedisCall], report: &mut Report) {
    let mut visitor = Members {
        cx,
        found: Vec::new(),
    };
    visitor.visit_ast(cx.ast);
    report.diagnostics.extend(visitor.found);
}

struct Members<'c, 'a> {
    cx: &'c Context<'a>,
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
        if members.contains(&member.as_str()) {
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
    fn real_members_and_locals_pass() {
        let src = "redis.log(redis.LOG_WARNING, 'x'); redis.setresp(3)\n\
                   redis.set_repl(redis.REPL_ALL); local h = redis.sha1hex('a')\n\
                   local r = redis.pcall('GET', KEYS[1]); if type(r) == 'table' and r.err then return redis.error_reply(r.err) end\n\
                   local redis2 = {}; local function f() local redis = {} return redis.anything end\n\
                   return redis.status_reply(table.concat({h, string.rep('a', 2)}, math.floor(1.5)))";
        assert!(errors(src).is_empty(), "{:?}", errors(src));
    }
}
