//! The `redis.register_function(...)` statements of a library: the name,
//! flags and callback of each function, and the mistakes Redis refuses at
//! `FUNCTION LOAD` (bad names, duplicates, unknown flags, malformed calls).

use super::shebang::{NAME_RULE, valid_name};
use super::{Source, token_range};
use crate::calls::{string_value, unparen};
use crate::scope::{Model, offset};
use crate::{Diagnostic, Lint, Span, best_match};
use full_moon::ast::{
    Call, Expression, Field, FunctionArgs, FunctionBody, Index, LocalAssignment, Parameter, Prefix,
    Stmt, Suffix, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::TokenReference;
use std::collections::HashMap;

/// The flags `redis.register_function` accepts.
pub const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// The fields of the table form of `redis.register_function`.
const TABLE_FIELDS: &[&str] = &["function_name", "callback", "flags", "description"];

/// One registered function.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    /// Its name.
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// Its flags, as written.
    pub flags: Vec<String>,
    /// The callback, when the analyzer can see its body.
    pub callback: Option<Callback>,
}

/// The Lua function registered as a callback.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Callback {
    /// Index of the top-level statement that defines it (the registration
    /// itself for an inline function, else a `local function`).
    pub statement: usize,
    /// Bytes of the body: after the parameters' `)`, before `end`.
    pub body: (usize, usize),
    /// The first parameter (the keys) and the second (the arguments):
    /// the byte offset of each name's declaration.
    pub params: [Option<usize>; 2],
    /// For a callback given by name, where that local is declared.
    pub local: Option<usize>,
}

/// The registrations of a library, in source order, and what is wrong
/// with them.
pub(crate) struct Registrations {
    pub functions: Vec<Registration>,
    /// Indices of the top-level statements that are registrations.
    pub statements: Vec<usize>,
    pub diagnostics: Vec<Diagnostic>,
}

/// If `stmt` is a top-level `redis.register_function(...)` call, its arguments.
pub(crate) fn register_call<'s>(model: &Model, stmt: &'s Stmt) -> Option<&'s FunctionArgs> {
    let Stmt::FunctionCall(call) = stmt else {
        return None;
    };
    let Prefix::Name(name) = call.prefix() else {
        return None;
    };
    if name.token().to_string() != "redis" || !model.is_global(name) {
        return None;
    }
    let mut suffixes = call.suffixes();
    let Some(Suffix::Index(Index::Dot { name: member, .. })) = suffixes.next() else {
        return None;
    };
    if member.token().to_string() != "register_function" {
        return None;
    }
    let Some(Suffix::Call(Call::AnonymousCall(args))) = suffixes.next() else {
        return None;
    };
    suffixes.next().is_none().then_some(&**args)
}

/// Finds and checks every top-level registration.
pub(crate) fn find(src: &Source<'_>) -> Registrations {
    let mut finder = Finder {
        src,
        locals: local_functions(src),
        out: Registrations {
            functions: Vec::new(),
            statements: Vec::new(),
            diagnostics: Vec::new(),
        },
    };
    for (index, (stmt, _)) in src.ast.nodes().stmts_with_semicolon().enumerate() {
        if let Some(args) = register_call(src.model, stmt) {
            finder.out.statements.push(index);
            finder.registration(index, stmt, args);
        }
    }
    finder.out
}

/// Top-level `local function f` and `local f = function` definitions: the
/// declaration offset of the name, the statement index and the body.
fn local_functions<'a>(src: &Source<'a>) -> HashMap<usize, (usize, &'a FunctionBody)> {
    let mut found = HashMap::new();
    for (index, stmt) in src.ast.nodes().stmts().enumerate() {
        match stmt {
            Stmt::LocalFunction(local) => {
                found.insert(offset(local.name()), (index, local.body()));
            }
            Stmt::LocalAssignment(local) => {
                for (name, expr) in local_pairs(local) {
                    if let Expression::Function(function) = unparen(expr) {
                        found.insert(offset(name), (index, function.body()));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn local_pairs(local: &LocalAssignment) -> impl Iterator<Item = (&TokenReference, &Expression)> {
    local.names().iter().zip(local.expressions().iter())
}

struct Finder<'s, 'a> {
    src: &'s Source<'a>,
    locals: HashMap<usize, (usize, &'a FunctionBody)>,
    out: Registrations,
}

impl<'a> Finder<'_, 'a> {
    fn span(&self, node: &impl Node) -> Span {
        let (start, end) = token_range(node);
        Span::from_offsets(self.src.text, start, end)
    }

    fn error(&mut self, node: &impl Node, message: impl Into<String>, redis: &str) {
        let span = self.span(node);
        self.out
            .diagnostics
            .push(
                Diagnostic::error(Lint::Library, span, message).with_note(format!(
                    "Redis refuses the library at FUNCTION LOAD: \"{redis}\""
                )),
            );
    }

    fn registration(&mut self, index: usize, stmt: &'a Stmt, args: &'a FunctionArgs) {
        match args {
            FunctionArgs::TableConstructor(table) => self.table_form(index, table.fields()),
            FunctionArgs::Parentheses { arguments, .. } => {
                let arguments: Vec<&Expression> = arguments.iter().collect();
                match arguments.as_slice() {
                    [single] => match unparen(single) {
                        Expression::TableConstructor(table) => {
                            self.table_form(index, table.fields())
                        }
                        _ => self.error(
                            *single,
                            "`redis.register_function` with one argument takes a table: \
                             `{function_name = 'f', callback = function(keys, args) ... end}`",
                            "calling redis.register_function with a single argument is only \
                             applicable to Lua table (representing named arguments).",
                        ),
                    },
                    [name, callback] => {
                        let callback = self.callback(index, callback);
                        self.add(name, Vec::new(), callback);
                    }
                    _ => self.error(
                        stmt,
                        format!(
                            "`redis.register_function` takes a name and a callback, or a table; \
                             here it gets {} arguments",
                            arguments.len()
                        ),
                        "wrong number of arguments to redis.register_function",
                    ),
                }
            }
            FunctionArgs::String(token) => self.error(
                token,
                "`redis.register_function` needs a callback: \
                 `redis.register_function('name', function(keys, args) ... end)`",
                "calling redis.register_function with a single argument is only applicable to \
                 Lua table (representing named arguments).",
            ),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn table_form(&mut self, index: usize, fields: impl IntoIterator<Item = &'a Field>) {
        let mut name = None;
        let mut callback = None;
        let mut flags = Vec::new();
        let mut whole: Option<Span> = None;
        for field in fields {
            let span = self.span(field);
            whole = Some(match whole {
                Some(w) => Span {
                    start: w.start,
                    end: span.end,
                },
                None => span,
            });
            let (key, value) = match field {
                Field::NameKey { key, value, .. } => (key.token().to_string(), value),
                Field::ExpressionKey { key, value, .. } => match unparen(key) {
                    Expression::String(token) => (string_value(token).unwrap_or_default(), value),
                    _ => {
                        self.warn(
                            key,
                            "a computed field name: this registration is not checked",
                        );
                        continue;
                    }
                },
                _ => {
                    self.error(
                        field,
                        "the table form of `redis.register_function` takes named fields only",
                        "unknown argument given to redis.register_function",
                    );
                    continue;
                }
            };
            match key.as_str() {
                "function_name" => name = Some(value),
                "callback" => callback = Some(self.callback(index, value)),
                "flags" => flags = self.flags(value),
                "description" => {}
                other => {
                    let span = self.span(field);
                    let mut d = Diagnostic::error(
                        Lint::Library,
                        span,
                        format!("unknown field `{other}` of `redis.register_function`"),
                    )
                    .with_note(
                        "Redis refuses the library at FUNCTION LOAD: \"unknown argument given \
                         to redis.register_function\"",
                    );
                    d = match best_match(other, TABLE_FIELDS.iter().copied()) {
                        Some(similar) => d.with_label(format!("did you mean `{similar}`?")),
                        None => d.with_help(
                            "the fields are `function_name`, `callback`, `flags` and `description`",
                        ),
                    };
                    self.out.diagnostics.push(d);
                }
            }
        }
        let at = whole.unwrap_or_default();
        match (name, callback) {
            (Some(name), Some(callback)) => self.add(name, flags, callback),
            (None, _) => self.out.diagnostics.push(
                Diagnostic::error(
                    Lint::Library,
                    at,
                    "`redis.register_function` needs a `function_name` field",
                )
                .with_note(
                    "Redis refuses the library at FUNCTION LOAD: \"redis.register_function must \
                     get a function name argument\"",
                ),
            ),
            (Some(_), None) => self.out.diagnostics.push(
                Diagnostic::error(
                    Lint::Library,
                    at,
                    "`redis.register_function` needs a `callback` field",
                )
                .with_note(
                    "Redis refuses the library at FUNCTION LOAD: \"redis.register_function must \
                     get a callback argument\"",
                ),
            ),
        }
    }

    fn warn(&mut self, node: &impl Node, message: &str) {
        let span = self.span(node);
        self.out
            .diagnostics
            .push(Diagnostic::warning(Lint::Library, span, message));
    }

    /// The flags of `flags = {...}`.
    fn flags(&mut self, value: &Expression) -> Vec<String> {
        let Expression::TableConstructor(table) = unparen(value) else {
            self.error(
                value,
                "`flags` must be a table of strings: `flags = {'no-writes'}`",
                "flags argument to redis.register_function must be a table representing \
                 function flags",
            );
            return Vec::new();
        };
        let mut flags = Vec::new();
        for field in table.fields() {
            let flag = match field {
                Field::NoKey(Expression::String(token)) => string_value(token),
                _ => None,
            };
            let Some(flag) = flag else {
                self.warn(field, "a flag that is not a string literal is not checked");
                continue;
            };
            if FLAGS.contains(&flag.as_str()) {
                flags.push(flag);
                continue;
            }
            let span = self.span(field);
            let mut d = Diagnostic::error(
                Lint::Library,
                span,
                format!("unknown function flag `{flag}`"),
            )
            .with_note("Redis refuses the library at FUNCTION LOAD: \"unknown flag given\"");
            d = match best_match(&flag, FLAGS.iter().copied()) {
                Some(similar) => d.with_label(format!("did you mean `{similar}`?")),
                None => d.with_help(format!(
                    "the flags are {}",
                    FLAGS
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            self.out.diagnostics.push(d);
        }
        flags
    }

    /// The callback `expr`, registered by statement `index`.
    fn callback(&mut self, index: usize, expr: &'a Expression) -> Option<Callback> {
        let mut declared = None;
        let body = match unparen(expr) {
            Expression::Function(function) => Some((index, function.body())),
            Expression::Var(Var::Name(name)) => {
                let variable = self.src.model.local(name).filter(|v| !v.reassigned);
                declared = variable.map(|v| v.declared_at);
                let local = variable.and_then(|v| self.locals.get(&v.declared_at).copied());
                if local.is_none() {
                    self.warn(
                        expr,
                        "this callback is not checked: give the function inline, or as a \
                         `local function` defined above",
                    );
                }
                local
            }
            Expression::FunctionCall(_) | Expression::Var(_) => {
                self.warn(
                    expr,
                    "this callback is not checked: give the function inline, or as a \
                     `local function` defined above",
                );
                None
            }
            _ => {
                self.error(
                    expr,
                    "the callback of `redis.register_function` must be a function",
                    "second argument to redis.register_function must be a function",
                );
                None
            }
        }?;
        let (statement, body) = body;
        let (_, close) = body.parameters_parentheses().tokens();
        let start = close.token().end_position().bytes();
        let end = body.end_token().token().start_position().bytes();
        let mut params = [None, None];
        for (slot, parameter) in params.iter_mut().zip(body.parameters().iter()) {
            if let Parameter::Name(name) = parameter {
                *slot = Some(offset(name));
            }
        }
        Some(Callback {
            statement,
            body: (start, end.max(start)),
            params,
            local: declared,
        })
    }

    /// Records a function named by `name`, checking the name.
    fn add(&mut self, name: &Expression, flags: Vec<String>, callback: Option<Callback>) {
        let Expression::String(token) = unparen(name) else {
            self.warn(
                name,
                "a function name that is not a string literal: this function is not checked",
            );
            return;
        };
        let value = string_value(token).unwrap_or_default();
        let span = self.span(token);
        if !valid_name(&value) {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Lint::Library,
                    span,
                    format!("invalid function name `{value}`"),
                )
                .with_label("not a valid function name")
                .with_help(NAME_RULE),
            );
            return;
        }
        if let Some(first) = self.out.functions.iter().find(|f| f.name == value) {
            let first = first.name_span;
            self.out.diagnostics.push(
                Diagnostic::error(
                    Lint::Library,
                    span,
                    format!("function `{value}` is registered twice"),
                )
                .with_label("registered again here")
                .with_secondary(first, "first registered here")
                .with_note(
                    "Redis refuses the library at FUNCTION LOAD: \"Function already exists in \
                     the library\"",
                ),
            );
            return;
        }
        self.out.functions.push(Registration {
            name: value,
            name_span: span,
            flags,
            callback,
        });
    }
}
