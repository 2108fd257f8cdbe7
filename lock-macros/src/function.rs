//! Code generation of `#[redis_function]`: one typed call of one function
//! of a Redis Functions library.

use crate::attr::{Attr, combine};
use crate::diagnostics;
use crate::expand::{
    MethodDocs, call_body, call_methods, declared, field_list, include_source, push_docs,
    read_script, runtime_paths, target_of,
};
use crate::fields::ScriptFields;
use crate::returns;
use proc_macro2::TokenStream;
use quote::quote;
use redlua_analyzer::{Diagnostic, LibraryOptions, Options, best_match};
use syn::ItemStruct;

/// What the macro learned from the library file.
pub struct Checked {
    /// Whether the file could be read (else `SOURCE` is generated empty).
    readable: bool,
    /// The library's name, from `#!lua name=`.
    library: String,
    /// The function's name.
    function: String,
    /// Registered with `no-writes`: called with `FCALL_RO`.
    read_only: bool,
    /// The names of the callback's parameters, for the docs.
    params: [String; 2],
    /// The items that make rustc print the analyzer's warnings.
    pub warnings: TokenStream,
}

/// Reads the library and runs the analyzer on it; errors go into `errors`,
/// warnings into the result.
pub fn load_and_check(
    attr: &Attr,
    fields: &ScriptFields,
    errors: &mut Option<syn::Error>,
) -> Checked {
    let name = attr
        .function
        .as_ref()
        .map(|f| f.value())
        .unwrap_or_default();
    let mut checked = Checked {
        readable: false,
        library: String::new(),
        function: name.clone(),
        read_only: false,
        params: ["keys".to_owned(), "args".to_owned()],
        warnings: TokenStream::new(),
    };
    let source = match read_script(&attr.path.value()) {
        Ok(source) => source,
        Err(message) => {
            combine(errors, syn::Error::new(attr.path.span(), message));
            return checked;
        }
    };
    checked.readable = true;
    let target = target_of(attr, errors);
    let options = LibraryOptions {
        function: Some(name.clone()),
        options: Options {
            target,
            declared: Some(declared(fields)),
            allow: attr.allow.iter().map(|(lint, _)| *lint).collect(),
            returns: attr.returns.as_ref().map(returns::declared),
            ..Options::default()
        },
    };
    let report = redlua_analyzer::analyze_library(&source, &options);
    checked.library = report.name.clone().unwrap_or_default();
    let mut found: Vec<Diagnostic> = report.diagnostics.clone();
    match report.function(&name) {
        Some(function) => {
            checked.read_only = function.read_only;
            for (name, param) in checked.params.iter_mut().zip(&function.parameters) {
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
    found.sort_by_key(|d| {
        d.primary_span()
            .map_or((1, 0), |span| (0, span.start.offset))
    });
    if let Some(e) = diagnostics::errors(&found, &attr.path, fields, &source) {
        combine(errors, e);
    }
    checked.warnings = diagnostics::warnings(&found, &attr.path, fields, &source, "redis_function");
    checked
}

/// The message for a function the library does not register.
fn unknown_function(report: &redlua_analyzer::LibraryReport, attr: &Attr, name: &str) -> String {
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

/// Appends a `# Redis function` section to the struct's documentation.
pub fn add_struct_docs(
    item: &mut ItemStruct,
    attr: &Attr,
    fields: &ScriptFields,
    checked: &Checked,
) {
    let path = attr.path.value();
    let command = if checked.read_only {
        "FCALL_RO"
    } else {
        "FCALL"
    };
    let [keys, args] = &checked.params;
    push_docs(
        item,
        [
            String::new(),
            "# Redis function".to_owned(),
            String::new(),
            format!(
                "Generated by `#[redis_function]` for function `{}` of library `{}` (`{path}`), \
                 called with `{command}`: keys {}; arguments {}.",
                checked.function,
                checked.library,
                field_list(&fields.keys, keys),
                field_list(&fields.args, args)
            ),
            "Run it with `invoke` (async), `invoke_blocking` or `add_to_pipeline`.".to_owned(),
        ],
    );
}

/// The inherent `impl` with the constants and methods.
pub fn generate_impl(
    item: &ItemStruct,
    attr: &Attr,
    fields: &ScriptFields,
    checked: &Checked,
) -> TokenStream {
    let (private, redis) = runtime_paths(attr);
    let ident = &item.ident;
    let name = ident.to_string();
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let path = &attr.path;
    let written = path.value();
    let returns = match &attr.returns {
        Some(ty) => quote!(#ty),
        None => quote!(#redis::Value),
    };
    let source = include_source(attr, checked.readable);
    let library = &checked.library;
    let function = &checked.function;
    let read_only = checked.read_only;
    let key_count = fields.fixed_keys();
    let arg_count = fields.fixed_args();
    let call_body = call_body(
        fields,
        &quote!(#private::FunctionCall),
        &quote!(#private::FunctionDef),
        &quote!(Self::FUNCTION),
        &redis,
    );
    let command = if read_only { "FCALL_RO" } else { "FCALL" };

    let doc_source = format!(
        " The Lua source of the library `{written}`, included at compile time (editing the \
         file rebuilds the crate)."
    );
    let doc_library =
        format!(" The library's description (`{library}`, `{written}`), as the runtime uses it.");
    let doc_function = format!(
        " The function's description (`{function}` of `{library}`, for {name}), as the runtime \
         uses it."
    );
    let doc_invoke = format!(
        " Calls function `{function}` with `{command}` on an asynchronous connection and \
         converts its reply.\n\n If the server does not have the function (its functions were \
         flushed, or it never loaded the library), the library is loaded with `FUNCTION LOAD \
         REPLACE` and the call is retried once.\n\n # Errors\n\n Connection and server errors, \
         errors raised by the function, and a reply that does not convert to the result \
         type.\n\n # Cancellation\n\n If the future is dropped before it completes, the command \
         may or may not have reached the server: the function may or may not have run (at \
         most once)."
    );
    let doc_invoke_blocking = format!(
        " Calls function `{function}` with `{command}` on a blocking connection and converts \
         its reply; the blocking twin of `invoke`.\n\n # Errors\n\n Connection and server \
         errors, errors raised by the function, and a reply that does not convert to the result \
         type."
    );

    let methods = call_methods(
        &private,
        &redis,
        &returns,
        &quote!(Self::LIBRARY),
        &MethodDocs {
            invoke: doc_invoke,
            invoke_blocking: doc_invoke_blocking,
            add_to_pipeline: " Adds this call to `pipe` and returns `pipe`.\n\n A pipeline cannot \
                              load the library and retry: call \
                              [`load_blocking`](Self::load_blocking) (or `load`) on the same connection \
                              first."
                .to_owned(),
            load: " Loads (or replaces) the library with `FUNCTION LOAD REPLACE` (sent to every \
                   primary of a cluster) and checks the library name the server answers.\n\n \
                   Never required before [`invoke`](Self::invoke), which loads the library when \
                   the function is missing; required before sending a pipeline.\n\n # \
                   Errors\n\n Connection and server errors (e.g. a library the server refuses), \
                   or another library name in the answer.\n\n # Cancellation\n\n If the future \
                   is dropped, the library may or may not be loaded; loading again is always \
                   safe."
                .to_owned(),
            load_blocking: " Loads (or replaces) the function's library; the blocking twin \
                            of `load`.\n\n Required before sending a pipeline.\n\n # Errors\n\n \
                            Connection and server errors, or a library name the server answers \
                            differently."
                .to_owned(),
        },
    );

    quote! {
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #doc_source]
            pub const SOURCE: &'static str = #source;
            /// The library's name, from its first line `#!lua name=<library>`.
            pub const LIBRARY_NAME: &'static str = #library;
            /// The function's name in the library.
            pub const FUNCTION_NAME: &'static str = #function;
            /// The number of fixed keys the function takes, not counting a variadic tail.
            pub const KEY_COUNT: usize = #key_count;
            /// The number of fixed arguments the function takes, not counting a variadic tail.
            pub const ARG_COUNT: usize = #arg_count;
            #[doc = #doc_library]
            pub const LIBRARY: #private::LibraryDef = #private::LibraryDef {
                name: Self::LIBRARY_NAME,
                path: #path,
                source: Self::SOURCE,
            };
            #[doc = #doc_function]
            pub const FUNCTION: #private::FunctionDef = #private::FunctionDef {
                name: #name,
                function: Self::FUNCTION_NAME,
                library: &Self::LIBRARY,
                read_only: #read_only,
            };

            /// A call of the function with this value's keys and arguments, in field order.
            pub fn call(&self) -> #private::FunctionCall {
                #call_body
            }

            #methods
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::expand::expand_function;

    fn expand(attr: &str, item: &str) -> String {
        expand_function(attr.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    const LIB: &str = r#""../scripts/counters_lib.lua""#;

    #[test]
    fn expansion_describes_the_function() {
        let out = expand(
            &format!("{LIB}, name = \"bump\", returns = i64"),
            "struct Bump<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("LIBRARY_NAME : & 'static str = \"counters\""),
            "{out}"
        );
        assert!(
            out.contains("FUNCTION_NAME : & 'static str = \"bump\""),
            "{out}"
        );
        assert!(out.contains("read_only : false"), "{out}");
        assert!(
            out.contains(":: redlua :: __private :: FunctionCall"),
            "{out}"
        );
        assert!(out.contains("called with `FCALL`"), "{out}");
        let out = expand(
            &format!("{LIB}, name = \"total\", crate = crate"),
            "struct Total { #[key(variadic)] counters: Vec<String> }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("read_only : true"), "{out}");
        assert!(out.contains("crate :: __private :: FunctionDef"), "{out}");
        assert!(
            out.contains("`counters` (`counters[1..]`)"),
            "the docs name the parameter: {out}"
        );
    }

    #[test]
    fn an_unknown_function_gets_a_did_you_mean() {
        let out = expand(&format!("{LIB}, name = \"bmup\""), "struct S;");
        assert!(
            out.contains(
                "library `counters` (`../scripts/counters_lib.lua`) registers no function `bmup`: did you mean `bump`?"
            ),
            "{out}"
        );
        assert!(out.contains("its functions are `bump`, `total`"), "{out}");
        // Still emits the items, so that only this error shows.
        assert!(out.contains("pub fn invoke_blocking"), "{out}");
    }

    #[test]
    fn function_options_are_checked() {
        for (attr, message) in [
            (
                LIB.to_string(),
                "which function of the library? add `name = \\\"function\\\"`",
            ),
            (
                format!("{LIB}, name = \"bump\", read_only"),
                "a function is read-only when its library registers it",
            ),
            (
                format!("{LIB}, nmae = \"bump\""),
                "unknown option `nmae`: did you mean `name`?",
            ),
            (
                format!("{LIB}, name = bump"),
                "expected the function's name as a string literal",
            ),
            ("".to_string(), "expected the path of a Lua library"),
            (
                format!("{LIB}, name = \"bump\", allow(library)"),
                "the `library` lint cannot be allowed",
            ),
        ] {
            let out = expand(&attr, "struct S;");
            assert!(out.contains(message), "{attr}: {out}");
        }
    }

    #[test]
    fn the_target_option_decides_what_the_function_may_call() {
        let lib = r#""../tests/ui/scripts/library_hexpire.lua", name = "expire_field""#;
        let item =
            "struct Touch<'a> { #[key] hash: &'a str, #[arg] seconds: u64, #[arg] field: &'a str }";
        // No target: the crate's (lock-macros/Cargo.toml sets none), so the
        // default redis-7.0, and the crate depends on its Cargo.toml.
        let out = expand(lib, item);
        assert!(
            out.contains("`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0"),
            "{out}"
        );
        assert!(out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand(&format!(r#"{lib}, target = "redis-7.4""#), item);
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand(&format!(r#"{lib}, target = "valkey-8.0""#), item);
        assert!(
            out.contains(
                "`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"
            ),
            "{out}"
        );
        let out = expand(&format!(r#"{lib}, target = "redis-7.3""#), item);
        assert!(out.contains("unknown target `redis-7.3`"), "{out}");
    }

    #[test]
    fn warnings_become_deprecation_warnings_at_the_path() {
        let lib = r#""../tests/ui/scripts/library_warning.lua", name = "bump""#;
        let item = "struct Bump<'a> { #[key] counter: &'a str, #[arg] by: i64 }";
        let out = expand(lib, item);
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("deprecated"), "{out}");
        assert!(out.contains("[maybe_false]"), "{out}");
        assert!(
            out.contains("add `allow(maybe_false)` to `#[redis_function(...)]`"),
            "{out}"
        );
        let out = expand(&format!("{lib}, allow(maybe_false)"), item);
        assert!(!out.contains("deprecated"), "{out}");
    }

    #[test]
    fn declared_fields_are_checked_against_the_function() {
        let out = expand(
            &format!("{LIB}, name = \"bump\""),
            "struct Bump { #[key] counter: String, #[arg] by: i64 }",
        );
        assert!(out.contains("args[2]"), "{out}");
        assert!(out.contains("--> ../scripts/counters_lib.lua:7:"), "{out}");
    }
}
