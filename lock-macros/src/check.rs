//! Phase 2, validate: reads the Lua file and runs the analyzer on it with
//! what the struct declares, as a script or as one function of a library.
//!
//! Invariant: never stops early. Errors go into the collected errors and
//! the result still describes what could be learned (an unreadable file
//! gives `readable: false`), so that the items are generated all the same
//! and the user sees only the errors the macro reports.

use crate::attr::{Attr, Kind};
use crate::diagnostics;
use crate::errors::combine;
use crate::fields::ScriptFields;
use crate::input::Input;
use crate::source;
use proc_macro2::TokenStream;
use redlua_analyzer::{
    CodedReply, Declared, Diagnostic, LibraryOptions, LibraryReport, Options, ReturnedCode,
    best_match,
};

/// What the macro learned from the Lua file.
pub struct Checked {
    /// Whether the file could be read (else `SOURCE` is generated empty).
    pub readable: bool,
    /// Sent with `EVALSHA_RO` / `FCALL_RO`: `read_only` or a `no-writes`
    /// shebang (scripts), the `no-writes` flag (functions).
    pub read_only: bool,
    /// What the file is.
    pub code: Code,
    /// The items that make rustc print the analyzer's warnings.
    pub warnings: TokenStream,
    /// The line of each `redis.call` / `redis.pcall` (of the function's
    /// body, numbered in the library) whose command name is a literal, with
    /// that name upper-case, in source order.
    pub command_lines: Vec<(u32, String)>,
    /// With `codes`: the reply code of each `return` of the script that
    /// has one (error replies left out), to check against the type's.
    pub reply_codes: Vec<ReturnedCode>,
}

/// A script, or one function of a library.
pub enum Code {
    /// `#[redis_script]`.
    Script {
        /// The SHA1 of the source, or empty if the file could not be read.
        sha1: String,
    },
    /// `#[redis_function]`.
    Function {
        /// The library's name, from `#!lua name=`.
        library: String,
        /// The function's name.
        function: String,
        /// The names of the callback's parameters (keys, arguments), for
        /// the docs.
        params: [String; 2],
    },
}

/// Reads the file named by `input` and checks it; errors go into `errors`.
pub fn check(input: &Input, errors: &mut Option<syn::Error>) -> Checked {
    let Input { attr, fields, .. } = input;
    let mut checked = Checked {
        readable: false,
        read_only: attr.read_only,
        code: match input.kind {
            Kind::Script => Code::Script {
                sha1: String::new(),
            },
            Kind::Function => Code::Function {
                library: String::new(),
                function: function_name(attr),
                params: ["keys".to_owned(), "args".to_owned()],
            },
        },
        warnings: TokenStream::new(),
        command_lines: Vec::new(),
        reply_codes: Vec::new(),
    };
    let source = match source::read(&attr.path.value()) {
        Ok(source) => source,
        Err(message) => {
            combine(errors, syn::Error::new(attr.path.span(), message));
            return checked;
        }
    };
    checked.readable = true;
    let options = Options {
        target: source::target_of(attr, errors),
        declared: Some(declared(fields)),
        allow: attr.allow.iter().map(|(lint, _)| *lint).collect(),
        returns: attr
            .returns
            .as_ref()
            .map(redlua_analyzer::rust_types::returns_of),
        ..Options::default()
    };
    let found = match input.kind {
        Kind::Script => check_script(&source, options, attr, &mut checked, errors),
        Kind::Function => check_function(&source, options, attr, &mut checked, errors),
    };
    if let Some(e) = diagnostics::errors(&found, &attr.path, fields, &source) {
        combine(errors, e);
    }
    checked.warnings =
        diagnostics::warnings(&found, &attr.path, fields, &source, input.kind.attribute());
    checked
}

/// Analyzes a script; its diagnostics.
fn check_script(
    source: &str,
    options: Options,
    attr: &Attr,
    checked: &mut Checked,
    errors: &mut Option<syn::Error>,
) -> Vec<Diagnostic> {
    checked.code = Code::Script {
        sha1: sha1_smol::Sha1::from(source.as_bytes())
            .digest()
            .to_string(),
    };
    let options = Options {
        read_only: attr.read_only,
        // Generated calls run on cluster connections too.
        cluster: true,
        ..options
    };
    let report = redlua_analyzer::analyze(source, &options);
    if report
        .info
        .shebang_flags
        .as_ref()
        .is_some_and(|flags| flags.iter().any(|f| f == "no-writes"))
    {
        checked.read_only = true;
    }
    checked.command_lines = command_lines(&report.info);
    if let Some(span) = attr.codes {
        checked.reply_codes = reply_codes(&report.info, attr, span, errors);
    }
    report.diagnostics
}

/// The coded returns of a script declared with `codes`; a return whose
/// code the analyzer cannot tell is an error at `codes`.
fn reply_codes(
    info: &redlua_analyzer::ScriptInfo,
    attr: &Attr,
    span: proc_macro2::Span,
    errors: &mut Option<syn::Error>,
) -> Vec<ReturnedCode> {
    let path = attr.path.value();
    let mut coded = Vec::new();
    for returned in &info.reply_codes {
        match &returned.reply {
            CodedReply::Integer { .. } | CodedReply::Pair { .. } => coded.push(returned.clone()),
            CodedReply::Error => {}
            CodedReply::Unknown(text) => combine(
                errors,
                syn::Error::new(
                    span,
                    format!(
                        "`{path}` line {}: `return {text}` has no code the analyzer can \
                         tell, so `codes` cannot check it: return a literal code \
                         (`return 1`, `return {{1, value}}`), a local set only to \
                         literal codes, or a local function's parameter passed a literal",
                        returned.line
                    ),
                ),
            ),
        }
    }
    coded
}

/// The line and upper-case name of each call with a literal command name.
fn command_lines(info: &redlua_analyzer::ScriptInfo) -> Vec<(u32, String)> {
    info.command_lines
        .iter()
        .filter_map(|(line, name)| Some((u32::try_from(*line).ok()?, name.to_ascii_uppercase())))
        .collect()
}

/// Analyzes the library and the named function in it; their diagnostics,
/// in source order. A function the library does not register is an error
/// at its name.
fn check_function(
    source: &str,
    options: Options,
    attr: &Attr,
    checked: &mut Checked,
    errors: &mut Option<syn::Error>,
) -> Vec<Diagnostic> {
    let name = function_name(attr);
    let options = LibraryOptions {
        function: Some(name.clone()),
        options,
    };
    let report = redlua_analyzer::analyze_library(source, &options);
    let mut params = ["keys".to_owned(), "args".to_owned()];
    let mut found: Vec<Diagnostic> = report.diagnostics.clone();
    match report.function(&name) {
        Some(function) => {
            checked.read_only = function.read_only;
            checked.command_lines = command_lines(&function.info);
            for (name, param) in params.iter_mut().zip(&function.parameters) {
                if let Some(param) = param {
                    name.clone_from(param);
                }
            }
            found.extend(function.diagnostics.iter().cloned());
        }
        None => {
            if let Some(literal) = &attr.function {
                combine(
                    errors,
                    syn::Error::new(literal.span(), unknown_function(&report, attr, &name)),
                );
            }
        }
    }
    checked.code = Code::Function {
        library: report.name.clone().unwrap_or_default(),
        function: name,
        params,
    };
    found.sort_by_key(|d| {
        d.primary_span()
            .map_or((1, 0), |span| (0, span.start.offset))
    });
    found
}

/// The `name = "..."` of a `#[redis_function]`.
fn function_name(attr: &Attr) -> String {
    attr.function
        .as_ref()
        .map(|f| f.value())
        .unwrap_or_default()
}

/// What the fields declare, for the analyzer.
fn declared(fields: &ScriptFields) -> Declared {
    Declared {
        keys: fields.fixed_keys(),
        keys_variadic: fields.keys_variadic(),
        args: fields.fixed_args(),
        args_variadic: fields.args_variadic(),
    }
}

/// The message for a function the library does not register.
fn unknown_function(report: &LibraryReport, attr: &Attr, name: &str) -> String {
    let path = attr.path.value();
    let library = match &report.name {
        Some(library) => format!("library `{library}` (`{path}`)"),
        None => format!("`{path}`"),
    };
    let names: Vec<&str> = report.functions.iter().map(|f| f.name.as_str()).collect();
    let mut message = format!("{library} registers no function `{name}`");
    if let Some(similar) = best_match(name, names.iter().copied()) {
        message.push_str(&format!(": did you mean `{similar}`?"));
    }
    if names.is_empty() {
        message.push_str("\n  = note: it registers no function the analyzer can see");
    } else {
        let list = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        message.push_str(&format!("\n  = note: its functions are {list}"));
    }
    message
}
