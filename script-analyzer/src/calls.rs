//! Finding `redis.call` / `redis.pcall` sites.
//!
//! A site is `redis.call(...)`, `redis.pcall(...)` or `redis['call'](...)`
//! where `redis` is the global; `pcall(redis.call, ...)`; or a call through a
//! local alias that is never assigned again (`local rcall = redis.call`).
//! Other uses of `redis.call` as a value (stored in a table, passed to a
//! function, an alias assigned twice) are not followed; they only make
//! [`ScriptInfo::writes`](crate::ScriptInfo::writes) true, since such calls
//! could run any command.

use crate::commands::{self, ArgShape};
use crate::scope::Model;
use crate::{Report, Span};
use full_moon::ast::Ast;
use full_moon::ast::{
    Call, Expression, FunctionArgs, FunctionCall, Index, LocalAssignment, Prefix, Suffix, Var,
    VarExpression,
};
use full_moon::node::Node;
use full_moon::tokenizer::{StringLiteralQuoteType, TokenReference, TokenType};
use full_moon::visitors::Visitor;
use std::collections::{HashMap, HashSet};

/// The parsed script and its names: what finding the sites needs.
#[derive(Clone, Copy)]
pub(crate) struct Tree<'a> {
    /// The script text.
    pub source: &'a str,
    /// The parsed script.
    pub ast: &'a Ast,
    /// Which names are locals, upvalues or globals.
    pub model: &'a Model,
}

impl Tree<'_> {
    /// The span of a node (or token) of the tree.
    pub fn span_of(&self, node: &impl Node) -> Span {
        crate::node_range::node_span(self.source, node)
    }
}

/// One argument of a `redis.call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallArg {
    /// A string literal (its value, unescaped) or number literal (its text,
    /// as Redis receives it: `0x10` is `16`).
    Literal(String, Span),
    /// `KEYS[n]` with a literal `n`.
    Key(u32, Span),
    /// Any other single expression.
    Expr(Span),
    /// A call or `...` in last position: expands to any number of values.
    Spread(Span),
}

impl CallArg {
    /// Where the argument is.
    pub fn span(&self) -> Span {
        match self {
            CallArg::Literal(_, span)
            | CallArg::Key(_, span)
            | CallArg::Expr(span)
            | CallArg::Spread(span) => *span,
        }
    }

    /// The literal's value, if the argument is a literal.
    pub fn literal(&self) -> Option<&str> {
        match self {
            CallArg::Literal(value, _) => Some(value),
            _ => None,
        }
    }

    /// What [`Command::key_positions`](crate::commands::Command::key_positions)
    /// needs to know about the argument.
    pub fn shape(&self) -> ArgShape<'_> {
        match self {
            CallArg::Literal(value, _) => ArgShape::Literal(value),
            CallArg::Key(..) | CallArg::Expr(_) => ArgShape::Value,
            CallArg::Spread(_) => ArgShape::Spread,
        }
    }
}

/// A `redis.call(...)` or `redis.pcall(...)` site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisCall {
    /// `pcall` rather than `call`.
    pub pcall: bool,
    /// The span of the whole call.
    pub span: Span,
    /// The span of the function called: `redis.call`, or an alias's name.
    pub callee: Span,
    /// The first argument, then the others.
    pub args: Vec<CallArg>,
}

impl RedisCall {
    /// The command name, when it is a literal.
    pub fn command_name(&self) -> Option<&str> {
        self.args.first()?.literal()
    }

    /// The command called, when its name is a literal Redis knows.
    pub fn command(&self) -> Option<&'static commands::Command> {
        commands::lookup(self.command_name()?)
    }

    /// The command or, when the command has subcommands and the second
    /// argument is a literal naming one, that subcommand. `None` when the
    /// name is not a literal Redis knows.
    pub fn resolved_command(&self) -> Option<&'static commands::Command> {
        let command = self.command()?;
        let sub = self.args.get(1).and_then(CallArg::literal);
        Some(sub.and_then(|s| command.subcommand(s)).unwrap_or(command))
    }

    /// Whether an argument can expand to any number of values.
    pub fn has_spread(&self) -> bool {
        self.args.iter().any(|a| matches!(a, CallArg::Spread(_)))
    }

    /// The shapes of the arguments after the command name.
    pub fn arg_shapes(&self) -> Vec<ArgShape<'_>> {
        self.args.iter().skip(1).map(CallArg::shape).collect()
    }
}

/// All `redis.call` / `redis.pcall` sites of the script, in source order.
pub(crate) fn redis_calls(cx: &Tree<'_>) -> Vec<RedisCall> {
    scan(cx).calls
}

/// The same, and whether `redis.call` is also used as a value that is not
/// followed (then the script may write whatever its calls say).
pub(crate) fn redis_calls_escaping(cx: &Tree<'_>) -> (Vec<RedisCall>, bool) {
    let scan = scan(cx);
    (scan.calls, scan.escapes)
}

/// The sites in `stmt`, a statement of the script `cx` holds, in source
/// order.
pub(crate) fn redis_calls_in(cx: &Tree<'_>, stmt: &full_moon::ast::Stmt) -> Vec<RedisCall> {
    let mut finder = CallFinder {
        cx,
        aliases: HashMap::new(),
        followed: HashSet::new(),
        calls: Vec::new(),
        escapes: false,
    };
    full_moon::visitors::Visit::visit(stmt, &mut finder);
    finder.calls.sort_by_key(|c| c.span.start.offset);
    finder.calls
}

/// Fills `report.info.commands`, `report.info.command_lines` and
/// `report.info.writes`, from the script's `calls` and whether
/// `redis.call` `escapes` ([`redis_calls_escaping`]).
pub(crate) fn record_info(calls: &[RedisCall], escapes: bool, report: &mut Report) {
    let info = &mut report.info;
    for call in calls {
        let Some(name) = call.command_name() else {
            // A computed command name could be anything.
            info.writes = true;
            continue;
        };
        let name = name.to_ascii_lowercase();
        // Lua numbers a call by its `(`, which must be on the line where
        // the callee ends.
        info.command_lines
            .push((call.callee.end.line, name.clone()));
        info.commands.insert(name);
        if let Some(command) = call.command() {
            let sub = call.args.get(1).and_then(CallArg::literal);
            let writes = match sub.and_then(|s| command.subcommand(s)) {
                Some(sub) => sub.is_write(),
                None => command.may_write(),
            };
            info.writes |= writes;
        }
    }
    if escapes {
        info.writes = true;
    }
}

/// What one walk over the tree finds.
struct Scan {
    calls: Vec<RedisCall>,
    /// `redis.call` is used as a value somewhere we do not follow.
    escapes: bool,
}

fn scan(cx: &Tree<'_>) -> Scan {
    let mut finder = CallFinder {
        cx,
        aliases: HashMap::new(),
        followed: HashSet::new(),
        calls: Vec::new(),
        escapes: false,
    };
    finder.visit_ast(cx.ast);
    finder.calls.sort_by_key(|c| c.span.start.offset);
    Scan {
        calls: finder.calls,
        escapes: finder.escapes,
    }
}

fn name_of(token: &TokenReference) -> Option<&str> {
    match token.token_type() {
        TokenType::Identifier { identifier } => Some(identifier.as_str()),
        _ => None,
    }
}

/// The value of a string literal token.
pub(crate) fn string_value(token: &TokenReference) -> Option<String> {
    let TokenType::StringLiteral {
        literal,
        quote_type,
        ..
    } = token.token_type()
    else {
        return None;
    };
    Some(match quote_type {
        StringLiteralQuoteType::Brackets => {
            // A long string drops a newline right after its opening bracket.
            let body = literal.as_str();
            let body = body
                .strip_prefix("\r\n")
                .or_else(|| body.strip_prefix("\n\r"))
                .or_else(|| body.strip_prefix('\n'))
                .or_else(|| body.strip_prefix('\r'))
                .unwrap_or(body);
            body.to_string()
        }
        _ => unescape(literal.as_str()),
    })
}

/// Lua 5.1's escapes in a quoted string.
fn unescape(raw: &str) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        if b != b'\\' || i >= bytes.len() {
            out.push(b);
            continue;
        }
        let e = bytes[i];
        i += 1;
        match e {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'0'..=b'9' => {
                let mut value = u32::from(e - b'0');
                let mut digits = 1;
                while digits < 3 && i < bytes.len() && bytes[i].is_ascii_digit() {
                    value = value * 10 + u32::from(bytes[i] - b'0');
                    i += 1;
                    digits += 1;
                }
                // Lua refuses escapes past 255; keep the low byte rather
                // than fail.
                out.push((value & 0xff) as u8);
            }
            // `\` before a newline, a quote, a backslash, or any other
            // character stands for that character in Lua 5.1.
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The text Redis receives for a number literal: Lua converts numbers with
/// `%.14g`, so integers print without a fraction and hex is decimal.
fn number_text(token: &TokenReference) -> Option<String> {
    let TokenType::Number { text } = token.token_type() else {
        return None;
    };
    let text = text.as_str();
    let value = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as f64),
        None => text.parse::<f64>().ok(),
    };
    Some(match value {
        Some(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 => {
            format!("{}", v as i64)
        }
        _ => text.to_string(),
    })
}

/// Strips parentheses around an expression.
pub(crate) fn unparen(mut expr: &Expression) -> &Expression {
    while let Expression::Parentheses { expression, .. } = expr {
        expr = expression;
    }
    expr
}

/// If the field index is `.name` or `['name']`, the name.
fn index_name(index: &Index) -> Option<String> {
    match index {
        Index::Dot { name, .. } => name_of(name).map(str::to_string),
        Index::Brackets { expression, .. } => match unparen(expression) {
            Expression::String(token) => string_value(token),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `prefix` + `suffix` is `redis.call` (`Some(false)`) or
/// `redis.pcall` (`Some(true)`) on the global `redis`.
fn redis_function(cx: &Tree<'_>, prefix: &Prefix, suffix: Option<&Suffix>) -> Option<bool> {
    let Prefix::Name(name) = prefix else {
        return None;
    };
    if name_of(name) != Some("redis") || !cx.model.is_global(name) {
        return None;
    }
    let Some(Suffix::Index(index)) = suffix else {
        return None;
    };
    match index_name(index)?.as_str() {
        "call" => Some(false),
        "pcall" => Some(true),
        _ => None,
    }
}

/// If `expr` is exactly `redis.call` or `redis.pcall`, which.
fn redis_function_value(cx: &Tree<'_>, expr: &Expression) -> Option<bool> {
    let Expression::Var(Var::Expression(var)) = unparen(expr) else {
        return None;
    };
    let mut suffixes = var.suffixes();
    let pcall = redis_function(cx, var.prefix(), suffixes.next())?;
    suffixes.next().is_none().then_some(pcall)
}

/// Finds the calls in one walk of the tree, in source order. An alias
/// (`local f = redis.call`, never assigned again) is recorded where it is
/// declared, before any use of it: a name resolves to a local declared
/// before it in the text.
struct CallFinder<'c, 'a> {
    cx: &'c Tree<'a>,
    /// Byte offset of an alias's declaring name -> pcall.
    aliases: HashMap<usize, bool>,
    /// Offsets of `redis.call` values whose uses are followed.
    followed: HashSet<usize>,
    calls: Vec<RedisCall>,
    escapes: bool,
}

impl CallFinder<'_, '_> {
    /// Handles a prefix with suffixes, from a call or a var expression.
    fn chain<'s>(
        &mut self,
        whole: &impl Node,
        prefix: &Prefix,
        suffixes: impl IntoIterator<Item = &'s Suffix>,
    ) {
        let cx = self.cx;
        let suffixes: Vec<&Suffix> = suffixes.into_iter().collect();
        // `redis.call(...)`
        if let Some(pcall) = redis_function(cx, prefix, suffixes.first().copied()) {
            let callee_end = suffixes
                .first()
                .and_then(|s| crate::node_range::node_range(cx.source, *s));
            match suffixes.get(1) {
                Some(Suffix::Call(Call::AnonymousCall(args))) => {
                    let callee = match (prefix.start_position(), callee_end) {
                        (Some(s), Some((_, e))) => Span::from_offsets(self.cx.source, s.bytes(), e),
                        _ => Span::default(),
                    };
                    let end = args.end_position().map_or(0, |p| p.bytes());
                    let start = prefix.start_position().map_or(0, |p| p.bytes());
                    self.push(pcall, start, end, callee, self.arguments(args, 0));
                }
                None => {
                    // `redis.call` as a value.
                    let start = whole.start_position().map(|p| p.bytes());
                    if !start.is_some_and(|s| self.followed.contains(&s)) {
                        self.escapes = true;
                    }
                }
                // `redis.call:x()`, `redis.call.x`: not a Redis call.
                Some(_) => {}
            }
            return;
        }
        let Prefix::Name(name) = prefix else {
            return;
        };
        // `redis[name]` with a computed name could be `redis.call`.
        if name_of(name) == Some("redis")
            && cx.model.is_global(name)
            && let Some(Suffix::Index(index)) = suffixes.first()
            && index_name(index).is_none()
        {
            self.escapes = true;
        }
        let Some(Suffix::Call(Call::AnonymousCall(args))) = suffixes.first() else {
            return;
        };
        // `rcall(...)` through an alias.
        if let Some(variable) = cx.model.local(name)
            && let Some(&pcall) = self.aliases.get(&variable.declared_at)
        {
            let callee = self.cx.span_of(name);
            let end = args.end_position().map_or(0, |p| p.bytes());
            self.push(
                pcall,
                callee.start.offset,
                end,
                callee,
                self.arguments(args, 0),
            );
            return;
        }
        // `pcall(redis.call, ...)`
        if name_of(name) == Some("pcall")
            && cx.model.is_global(name)
            && let FunctionArgs::Parentheses { arguments, .. } = &**args
            && let Some(first) = arguments.iter().next()
            && redis_function_value(cx, first).is_some()
        {
            if let Some((start, _)) = first.range() {
                self.followed.insert(start.bytes());
            }
            let callee = self.cx.span_of(first);
            let start = self.cx.span_of(name).start.offset;
            let end = args.end_position().map_or(0, |p| p.bytes());
            self.push(true, start, end, callee, self.arguments(args, 1));
        }
    }

    fn push(&mut self, pcall: bool, start: usize, end: usize, callee: Span, args: Vec<CallArg>) {
        self.calls.push(RedisCall {
            pcall,
            span: Span::from_offsets(self.cx.source, start, end),
            callee,
            args,
        });
    }

    /// The arguments of a call, skipping the first `skip`.
    fn arguments(&self, args: &FunctionArgs, skip: usize) -> Vec<CallArg> {
        match args {
            FunctionArgs::Parentheses { arguments, .. } => {
                let count = arguments.len();
                arguments
                    .iter()
                    .enumerate()
                    .skip(skip)
                    .map(|(i, expr)| self.argument(expr, i + 1 == count))
                    .collect()
            }
            FunctionArgs::String(token) if skip == 0 => {
                let span = self.cx.span_of(token);
                vec![match string_value(token) {
                    Some(value) => CallArg::Literal(value, span),
                    None => CallArg::Expr(span),
                }]
            }
            FunctionArgs::TableConstructor(table) if skip == 0 => {
                vec![CallArg::Expr(self.cx.span_of(&**table))]
            }
            _ => Vec::new(),
        }
    }

    fn argument(&self, expr: &Expression, last: bool) -> CallArg {
        let cx = self.cx;
        let span = self.cx.span_of(expr);
        match expr {
            Expression::FunctionCall(_) if last => return CallArg::Spread(span),
            Expression::Symbol(token) if last && token.to_string() == "..." => {
                return CallArg::Spread(span);
            }
            _ => {}
        }
        match unparen(expr) {
            Expression::String(token) => string_value(token).map(|v| CallArg::Literal(v, span)),
            Expression::Number(token) => number_text(token).map(|v| CallArg::Literal(v, span)),
            Expression::Var(Var::Expression(var)) => {
                key_index(cx, var).map(|n| CallArg::Key(n, span))
            }
            _ => None,
        }
        .unwrap_or(CallArg::Expr(span))
    }
}

/// If `var` is `KEYS[n]` on the global `KEYS` with a positive integer `n`.
fn key_index(cx: &Tree<'_>, var: &VarExpression) -> Option<u32> {
    let Prefix::Name(name) = var.prefix() else {
        return None;
    };
    if name_of(name) != Some("KEYS") || !cx.model.is_global(name) {
        return None;
    }
    let mut suffixes = var.suffixes();
    let Some(Suffix::Index(Index::Brackets { expression, .. })) = suffixes.next() else {
        return None;
    };
    if suffixes.next().is_some() {
        return None;
    }
    let Expression::Number(token) = unparen(expression) else {
        return None;
    };
    number_text(token)?.parse::<u32>().ok().filter(|&n| n >= 1)
}

impl Visitor for CallFinder<'_, '_> {
    fn visit_local_assignment(&mut self, node: &LocalAssignment) {
        // Before the initializers are visited: a `redis.call` initializing
        // an alias is followed, not an escape.
        for (name, expr) in node.names().iter().zip(node.expressions().iter()) {
            let Some(pcall) = redis_function_value(self.cx, expr) else {
                continue;
            };
            let Some(variable) = self.cx.model.local(name) else {
                continue;
            };
            if variable.reassigned {
                continue;
            }
            self.aliases.insert(variable.declared_at, pcall);
            if let Some((start, _)) = expr.range() {
                self.followed.insert(start.bytes());
            }
        }
    }

    fn visit_function_call(&mut self, node: &FunctionCall) {
        self.chain(node, node.prefix(), node.suffixes());
    }

    fn visit_var_expression(&mut self, node: &VarExpression) {
        self.chain(node, node.prefix(), node.suffixes());
    }

    fn visit_expression(&mut self, node: &Expression) {
        // The `redis` table itself as a value (`local r = redis`): its
        // `call` may then be called out of sight.
        if let Expression::Var(Var::Name(name)) = node
            && name_of(name) == Some("redis")
            && self.cx.model.is_global(name)
        {
            self.escapes = true;
        }
    }
}

#[cfg(test)]
mod tests;
