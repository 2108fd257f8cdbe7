//! Redis Functions libraries (Redis 7): a file starting with
//! `#!lua name=<library>` that registers functions with
//! `redis.register_function`.
//!
//! The library is checked the way Redis checks it at `FUNCTION LOAD` (its
//! first line, the registrations, what its top level may use), and every
//! function's body is analyzed like a script whose `KEYS` and `ARGV` are the
//! callback's first and second parameters, whatever they are named.
//!
//! ```
//! use redlua_analyzer::{Declared, LibraryOptions, Options, analyze_library};
//!
//! let source = "#!lua name=counters\n\
//!     redis.register_function('bump', function(keys, args)\n\
//!       return redis.call('INCRBY', keys[1], args[1])\n\
//!     end)\n\
//!     redis.register_function{function_name = 'peek', flags = {'no-writes'},\n\
//!       callback = function(keys) return redis.call('GET', keys[1]) end}\n";
//! let options = LibraryOptions {
//!     function: Some("bump".to_string()),
//!     options: Options { declared: Some(Declared::exact(1, 1)), ..Options::default() },
//! };
//! let report = analyze_library(source, &options);
//! assert!(report.is_ok(), "{:?}", report.diagnostics);
//! assert_eq!(report.name.as_deref(), Some("counters"));
//! let peek = report.function("peek").unwrap();
//! assert!(peek.read_only && !peek.info.writes);
//! assert!(report.function("bump").unwrap().info.writes);
//! ```

mod inputs;
mod load_time;
mod registrations;
mod rewrite;
mod shebang;

pub use registrations::FLAGS as FUNCTION_FLAGS;
pub use shebang::valid_name;

use crate::scope::{Model, Resolution};
use crate::{Diagnostic, Lint, Options, ScriptInfo, Severity, Span};
use full_moon::ast::{AnonymousFunction, Ast, FunctionBody, FunctionDeclaration, LocalFunction};
use full_moon::node::Node;
use full_moon::visitors::Visitor;
use registrations::{Callback, Registration};
use rewrite::{Rewrite, Rewritten, rename_word};
use std::collections::HashSet;

/// How to analyze a library.
#[derive(Debug, Clone, Default)]
pub struct LibraryOptions {
    /// The function the caller declares keys, arguments and a result type
    /// for (the `#[redis_function]` macro names one); `None` checks every
    /// function without declarations, as `lockctl lint` does.
    pub function: Option<String>,
    /// What is declared for [`function`](Self::function). Its `allow` list
    /// applies to the whole library; `read_only` is ignored: a function is
    /// read-only when it is registered with the `no-writes` flag.
    pub options: Options,
}

/// What the analyzer found about one registered function.
#[derive(Debug, Clone)]
pub struct FunctionReport {
    /// The function's name.
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// The flags it is registered with (`no-writes`, `allow-oom`, ...).
    pub flags: Vec<String>,
    /// Registered with `no-writes`: called with `FCALL_RO`, and checked to
    /// call no write command.
    pub read_only: bool,
    /// Whether the callback's body was analyzed (it is when given inline or
    /// as a `local function` defined above the registration).
    pub checked: bool,
    /// The names of the callback's first parameter (the keys) and second
    /// parameter (the arguments), when it has them.
    pub parameters: [Option<String>; 2],
    /// Diagnostics inside the function's body, and about the declared keys
    /// and arguments.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts about the body, as for a script: `keys_read` are the indices
    /// of the first parameter, `args_read` of the second.
    pub info: ScriptInfo,
}

/// The result of [`analyze_library`](crate::analyze_library).
#[derive(Debug, Clone, Default)]
pub struct LibraryReport {
    /// The library's name, from `#!lua name=<library>`.
    pub name: Option<String>,
    /// Diagnostics about the library as a whole: syntax, the first line,
    /// the registrations, the code that runs while it loads.
    pub diagnostics: Vec<Diagnostic>,
    /// The registered functions, in source order.
    pub functions: Vec<FunctionReport>,
}

impl LibraryReport {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionReport> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Every diagnostic, the library's and the functions', in source order.
    pub fn all_diagnostics(&self) -> Vec<&Diagnostic> {
        let mut all: Vec<&Diagnostic> = self
            .diagnostics
            .iter()
            .chain(self.functions.iter().flat_map(|f| &f.diagnostics))
            .collect();
        all.sort_by_key(|d| sort_key(d));
        all
    }

    /// True when no diagnostic, of the library or of a function, is an error.
    pub fn is_ok(&self) -> bool {
        self.all_diagnostics()
            .iter()
            .all(|d| d.severity != Severity::Error)
    }
}

fn sort_key(d: &Diagnostic) -> (u8, usize, usize) {
    match d.primary_span() {
        Some(span) => (0, span.start.offset, span.end.offset),
        None => (1, 0, 0),
    }
}

/// The parsed library, as the checks read it.
pub(crate) struct Source<'a> {
    pub text: &'a str,
    pub ast: &'a Ast,
    pub model: &'a Model,
    /// Byte ranges of every function body (code that does not run at load).
    pub functions: Vec<(usize, usize)>,
}

/// First and last byte of a node's tokens (without surrounding trivia).
pub(crate) fn token_range(node: &impl Node) -> (usize, usize) {
    let (mut start, mut end) = (usize::MAX, 0);
    for token in node.tokens() {
        start = start.min(token.token().start_position().bytes());
        end = end.max(token.token().end_position().bytes());
    }
    if start > end { (0, 0) } else { (start, end) }
}

/// Whether byte `at` lies in one of `ranges`.
pub(crate) fn inside(ranges: &[(usize, usize)], at: usize) -> bool {
    ranges.iter().any(|&(start, end)| start <= at && at < end)
}

/// Collects the ranges of function bodies.
struct Bodies(Vec<(usize, usize)>);

impl Bodies {
    fn add(&mut self, body: &FunctionBody) {
        let (open, _) = body.parameters_parentheses().tokens();
        let start = open.token().start_position().bytes();
        let end = body.end_token().token().end_position().bytes();
        self.0.push((start, end));
    }
}

impl Visitor for Bodies {
    fn visit_anonymous_function(&mut self, node: &AnonymousFunction) {
        self.add(node.body());
    }

    fn visit_function_declaration(&mut self, node: &FunctionDeclaration) {
        self.add(node.body());
    }

    fn visit_local_function(&mut self, node: &LocalFunction) {
        self.add(node.body());
    }
}

/// The analysis itself, on the caller's thread.
pub(crate) fn analyze_here(source: &str, options: &LibraryOptions) -> LibraryReport {
    let mut report = LibraryReport::default();
    match shebang::library_name(source) {
        Ok((name, _)) => report.name = Some(name),
        Err(diagnostic) => report.diagnostics.push(*diagnostic),
    }
    let ast = match crate::parse::parse(source) {
        Ok(ast) => ast,
        Err(diagnostics) => {
            report.diagnostics.extend(diagnostics);
            return report;
        }
    };
    let model = Model::build(&ast);
    let mut bodies = Bodies(Vec::new());
    bodies.visit_ast(&ast);
    let src = Source {
        text: source,
        ast: &ast,
        model: &model,
        functions: bodies.0,
    };
    let found = registrations::find(&src);
    report.diagnostics.extend(found.diagnostics.iter().cloned());
    let members = load_time::members(&src);
    let load_time_globals = load_time::globals(&src);
    load_time::check(&src, &members, &load_time_globals, &mut report.diagnostics);
    inputs::check(&src, &mut report.diagnostics);
    if found.statements.is_empty() {
        let first_line = source.find('\n').unwrap_or(source.len());
        report.diagnostics.push(
            Diagnostic::error(
                Lint::Library,
                Span::from_offsets(source, 0, first_line),
                "the library registers no function",
            )
            .with_note("Redis refuses the library at FUNCTION LOAD: \"No functions registered\"")
            .with_help(
                "register one: `redis.register_function('name', function(keys, args) ... end)`",
            ),
        );
    }

    let statements: Vec<(usize, usize)> = ast
        .nodes()
        .stmts_with_semicolon()
        .map(|(stmt, semicolon)| {
            let (start, end) = token_range(stmt);
            let end = semicolon
                .as_ref()
                .map_or(end, |s| s.token().end_position().bytes());
            (start, end)
        })
        .collect();
    let callback_bodies: Vec<(usize, usize)> = found
        .functions
        .iter()
        .filter_map(|f| f.callback.map(|c| c.body))
        .collect();
    // Edits every rewrite shares: the first line, and the load-time
    // `redis.register_function` that are not blanked (inside an `if`, say),
    // read as `redis.log` so that the script lints know the member.
    let common = |rewrite: &mut Rewrite| {
        if source.starts_with("#!") {
            rewrite.blank(0, source.find('\n').unwrap_or(source.len()));
        }
        for member in &members {
            if member.member == "register_function" {
                let (start, end) = member.member_range;
                rewrite.rename(start, end, &format!("{:<17}", "log"));
            }
        }
    };

    // The top level, without the registrations: helpers and load-time code.
    let mut top = Rewrite::default();
    common(&mut top);
    for &index in &found.statements {
        if let Some(&(start, end)) = statements.get(index) {
            top.blank(start, end);
        }
    }
    let top = top.apply(source);
    let top_options = Options {
        allow: options.options.allow.clone(),
        ..Options::default()
    };
    // Statements that use what Redis refuses while loading: the library's
    // error says it all, the script lints on them would be noise.
    let refused: Vec<(usize, usize)> = members
        .iter()
        .filter(|m| !load_time::LOAD_TIME.contains(&m.member.as_str()))
        .map(|m| m.range.0)
        .chain(load_time_globals.iter().map(|(_, (start, _))| *start))
        .filter_map(|at| {
            statements
                .iter()
                .find(|&&(start, end)| start <= at && at < end)
                .copied()
        })
        .collect();
    let top_report = crate::analyze_here(&top.text, &top_options);
    for diagnostic in top_report.diagnostics {
        let diagnostic = top.diagnostic(source, diagnostic);
        let skip = diagnostic.primary_span().is_some_and(|s| {
            let at = s.start.offset;
            inside(&callback_bodies, at)
                || (diagnostic.lint != Lint::Syntax && inside(&refused, at))
        });
        if !skip {
            report.diagnostics.push(diagnostic);
        }
    }

    let callbacks: Vec<Callback> = found.functions.iter().filter_map(|f| f.callback).collect();
    let places = Places {
        statements: &statements,
        registering: &found.statements,
        callbacks: &callbacks,
    };
    for registration in &found.functions {
        report.functions.push(function_report(
            &src,
            registration,
            &places,
            options,
            &common,
        ));
    }
    report.diagnostics.sort_by_key(sort_key);
    report.diagnostics.dedup();
    report
}

/// Where the top-level statements, the registrations and the callbacks are.
struct Places<'p> {
    /// Byte ranges of the top-level statements.
    statements: &'p [(usize, usize)],
    /// Indices of the statements that register functions.
    registering: &'p [usize],
    /// Every analyzable callback.
    callbacks: &'p [Callback],
}

/// Analyzes one function's body as a script.
fn function_report(
    src: &Source<'_>,
    registration: &Registration,
    places: &Places<'_>,
    options: &LibraryOptions,
    common: &dyn Fn(&mut Rewrite),
) -> FunctionReport {
    let read_only = registration.flags.iter().any(|f| f == "no-writes");
    let mut out = FunctionReport {
        name: registration.name.clone(),
        name_span: registration.name_span,
        flags: registration.flags.clone(),
        read_only,
        checked: false,
        parameters: [None, None],
        diagnostics: Vec::new(),
        info: ScriptInfo::default(),
    };
    let Some(callback) = registration.callback else {
        return out;
    };
    out.checked = true;
    for (slot, param) in out.parameters.iter_mut().zip(callback.params) {
        *slot = param.and_then(|at| {
            src.model
                .variables
                .iter()
                .find(|v| v.declared_at == at)
                .map(|v| v.name.clone())
        });
    }
    let source = src.text;
    let (body_start, body_end) = callback.body;
    let statements = places.statements;
    let mut rewrite = Rewrite::default();
    common(&mut rewrite);
    if let Some(&(start, _)) = statements.get(callback.statement) {
        rewrite.blank(start, body_start);
    }
    rewrite.blank(body_end, source.len());
    // The locals the body reads, by where they are declared.
    let mut referenced = HashSet::new();
    // The parameters become `KEYS` and `ARGV`; the globals `KEYS` and `ARGV`
    // (an error of their own) become nothing the arity checks count.
    let mut names: [Option<String>; 2] = [None, None];
    for token in src.ast.nodes().tokens() {
        let at = token.token().start_position().bytes();
        let end = token.token().end_position().bytes();
        match src.model.resolve(token) {
            Some(Resolution::Local(index)) => {
                let Some(variable) = src.model.variables.get(index) else {
                    continue;
                };
                if body_start <= at && at < body_end {
                    referenced.insert(variable.declared_at);
                }
                for (slot, (param, table)) in
                    callback.params.iter().zip(["KEYS", "ARGV"]).enumerate()
                {
                    if *param == Some(variable.declared_at) {
                        names[slot] = Some(variable.name.clone());
                        if at != variable.declared_at {
                            rewrite.rename(at, end, table);
                        }
                    }
                }
            }
            Some(Resolution::Global) => {
                let name = token.token().to_string();
                if name == "KEYS" || name == "ARGV" {
                    rewrite.rename(at, end, "_G  ");
                }
            }
            None => {}
        }
    }
    // Hidden from the body: the registrations, and the other callbacks
    // defined as local functions, unless the body calls them.
    let others = places.callbacks.iter().filter(|other| {
        other.statement != callback.statement
            && !other.local.is_some_and(|at| referenced.contains(&at))
    });
    let hidden = places
        .registering
        .iter()
        .copied()
        .chain(others.map(|other| other.statement));
    for index in hidden {
        if index != callback.statement
            && let Some(&(start, end)) = statements.get(index)
        {
            rewrite.blank(start, end);
        }
    }
    let rewritten: Rewritten = rewrite.apply(source);
    let mut function_options = if options.function.as_deref() == Some(&registration.name) {
        options.options.clone()
    } else {
        Options {
            allow: options.options.allow.clone(),
            ..Options::default()
        }
    };
    function_options.read_only = read_only;
    let report = crate::analyze_here(&rewritten.text, &function_options);
    // A `local function f` callback calling itself: `f` is blanked with the
    // header, which made it a global.
    let own_name = callback.local.and_then(|at| {
        src.model
            .variables
            .iter()
            .find(|v| v.declared_at == at)
            .map(|v| v.name.as_str())
    });
    for diagnostic in report.diagnostics {
        let mut diagnostic = rewritten.diagnostic(source, diagnostic);
        let keep = match diagnostic.primary_span() {
            Some(span)
                if diagnostic.lint == Lint::UndefinedGlobal
                    && own_name.is_some_and(|name| {
                        source.get(span.start.offset..span.end.offset) == Some(name)
                    }) =>
            {
                false
            }
            Some(span) => body_start <= span.start.offset && span.start.offset <= body_end,
            None => true,
        };
        if !keep {
            continue;
        }
        for (name, table) in names.iter().zip(["KEYS", "ARGV"]) {
            if let Some(name) = name {
                rename_texts(&mut diagnostic, table, name);
            }
        }
        diagnostic.message = diagnostic.message.replace("this script", "this function");
        if diagnostic.lint == Lint::WriteInReadOnly {
            // Read-only comes from the flag, not from the script's options.
            diagnostic
                .notes
                .retain(|note| !note.contains("EVALSHA_RO") && !note.contains("#!lua"));
            diagnostic.notes.insert(
                0,
                "the function is registered with the `no-writes` flag (called with FCALL_RO)"
                    .to_string(),
            );
        }
        out.diagnostics.push(diagnostic);
    }
    out.info = report.info;
    out.info.shebang_flags = None;
    out
}

/// Says `name` (the parameter) where a diagnostic says `table` (`KEYS`),
/// and "the function" where it says "the script".
fn rename_texts(diagnostic: &mut Diagnostic, table: &str, name: &str) {
    diagnostic.message = rename_word(&diagnostic.message, table, name)
        .replace("the script", "the function")
        .replace("The script", "The function");
    if let Some(label) = &mut diagnostic.label {
        *label = rename_word(label, table, name);
    }
    for label in &mut diagnostic.secondary {
        label.message = rename_word(&label.message, table, name);
    }
    for note in &mut diagnostic.notes {
        *note = rename_word(note, table, name);
    }
    if let Some(help) = &mut diagnostic.help {
        *help = rename_word(help, table, name).replace("the script", "the function");
    }
}

#[cfg(test)]
mod tests;
