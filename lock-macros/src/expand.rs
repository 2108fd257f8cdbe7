//! Phase 3, generate: the struct with its docs, and one inherent `impl`
//! for both attributes. A script and a function differ only in what
//! [`Flavor`] says: their constants, the runtime types they call and the
//! wording of the docs; the fields are passed and the methods written once.

use crate::attr::Attr;
use crate::check::{Checked, Code};
use crate::errors::with_errors;
use crate::fields::{ScriptField, ScriptFields};
use crate::input::Input;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use redlua_analyzer::CodedReply;
use std::path::Path;
use syn::ItemStruct;
use syn::spanned::Spanned;

/// The tokens of a checked input: the struct (documented), the `impl`, the
/// manifest dependency, the warnings and the errors.
pub fn expand(input: Input, checked: &Checked, errors: Option<syn::Error>) -> TokenStream {
    let Input {
        mut item,
        attr,
        fields,
        ..
    } = input;
    let flavor = Flavor::of(&item, &attr, &fields, checked);
    push_docs(&mut item, flavor.struct_docs);
    let methods = generate_impl(&item, &attr, &fields, checked, &flavor.parts);
    let manifest = track_manifest(&attr);
    let warnings = &checked.warnings;
    let codes = codes_checks(&attr, checked);
    with_errors(quote!(#item #methods #manifest #warnings #codes), errors)
}

/// With `codes`: one `const` assertion per coded `return` of the script,
/// that the reply type declares its code in its shape (evaluated by rustc:
/// a code the type does not declare fails the build at `returns = Type`).
fn codes_checks(attr: &Attr, checked: &Checked) -> TokenStream {
    let Some(returns) = attr.returns.as_ref().filter(|_| attr.codes.is_some()) else {
        return TokenStream::new();
    };
    let (private, _) = runtime_paths(attr);
    let path = attr.path.value();
    let written = quote!(#returns).to_string().replace(' ', "");
    let checks = checked.reply_codes.iter().filter_map(|returned| {
        let (pair, lo, hi, len, shape) = match returned.reply {
            CodedReply::Integer { lo, hi } => (false, lo, hi, 0usize, codes_text(lo, hi)),
            CodedReply::Pair { lo, hi, len } => (
                true,
                lo,
                hi,
                len,
                format!(
                    "a table of {len} whose first element is {}",
                    codes_text(lo, hi)
                ),
            ),
            CodedReply::Error | CodedReply::Unknown(_) => return None,
        };
        let message = format!(
            "`{path}` line {}: the script returns {shape}, which `{written}` does not declare \
             in its `ReplyCodes::CODES`",
            returned.line
        );
        Some(quote_spanned! {returns.span()=>
            const _: () = ::core::assert!(
                #private::reply_declares(
                    <#returns as #private::ReplyCodes>::CODES, #pair, #lo, #hi, #len
                ),
                #message
            );
        })
    });
    quote!(#(#checks)*)
}

/// `1`, or `0 or 1`, or `-2 to 3`: the codes a return may give.
fn codes_text(lo: i64, hi: i64) -> String {
    match hi - lo {
        0 => format!("the code {lo}"),
        1 => format!("the code {lo} or {hi}"),
        _ => format!("a code from {lo} to {hi}"),
    }
}

/// When the target comes from `Cargo.toml` (no `target = ...` option), makes
/// the crate depend on that file, so that changing the setting re-checks the
/// script (Cargo does not rebuild for `[package.metadata]` edits otherwise).
fn track_manifest(attr: &Attr) -> TokenStream {
    let present = std::env::var_os("CARGO_MANIFEST_DIR")
        .is_some_and(|dir| Path::new(&dir).join("Cargo.toml").is_file());
    if attr.target.is_some() || !present {
        return TokenStream::new();
    }
    quote! {
        const _: &[u8] = ::core::include_bytes!(::core::concat!(
            ::core::env!("CARGO_MANIFEST_DIR"),
            "/Cargo.toml"
        ));
    }
}

/// What differs between a script and a function.
struct Flavor {
    /// The lines appended to the struct's documentation.
    struct_docs: Vec<String>,
    /// What goes into the `impl`.
    parts: Parts,
}

/// The kind-specific pieces of the `impl`.
struct Parts {
    /// The constants before `KEY_COUNT` (after `SOURCE`).
    head_consts: TokenStream,
    /// The constants after `ARG_COUNT`: the runtime's descriptions.
    tail_consts: TokenStream,
    /// The runtime's call type (`ScriptCall`) and description type
    /// (`ScriptDef`) under `__private`, and the constant `call()` starts from.
    call_type: &'static str,
    def_type: &'static str,
    def: TokenStream,
    /// The constant whose `load` loads the code.
    loader: TokenStream,
    /// Documentation of `SOURCE`, `KEY_COUNT`, `ARG_COUNT` and `call()`.
    doc_source: String,
    doc_key_count: &'static str,
    doc_arg_count: &'static str,
    doc_call: &'static str,
    /// Documentation of the methods.
    docs: MethodDocs,
}

impl Flavor {
    fn of(item: &ItemStruct, attr: &Attr, fields: &ScriptFields, checked: &Checked) -> Self {
        let (private, _) = runtime_paths(attr);
        let name = item.ident.to_string();
        let path = &attr.path;
        let written = path.value();
        let read_only = checked.read_only;
        match &checked.code {
            Code::Script { sha1 } => {
                let command = if read_only { "EVALSHA_RO" } else { "EVALSHA" };
                let doc_sha1 = format!(
                    " The lowercase hexadecimal SHA1 of [`SOURCE`](Self::SOURCE), computed at \
                     compile time: the name of the script in Redis's script cache (`{sha1}`)."
                );
                let doc_script = format!(
                    " The static description of the script ({name}, `{written}`), as the \
                     runtime uses it."
                );
                let calls = calls_const(checked, "script");
                Flavor {
                    struct_docs: vec![
                        String::new(),
                        "# Redis script".to_owned(),
                        String::new(),
                        format!(
                            "Generated by `#[redis_script]` from `{written}`: keys {}; \
                             arguments {}.",
                            field_list(&fields.keys, "KEYS"),
                            field_list(&fields.args, "ARGV")
                        ),
                        RUN_IT.to_owned(),
                    ],
                    parts: Parts {
                        head_consts: quote! {
                            #[doc = #doc_sha1]
                            pub const SHA1: &'static str = #sha1;
                        },
                        tail_consts: quote! {
                            #[doc = #doc_script]
                            pub const SCRIPT: #private::ScriptDef = #private::ScriptDef {
                                name: #name,
                                path: #path,
                                source: Self::SOURCE,
                                sha1: Self::SHA1,
                                read_only: #read_only,
                            };
                            #calls
                        },
                        call_type: "ScriptCall",
                        def_type: "ScriptDef",
                        def: quote!(Self::SCRIPT),
                        loader: quote!(Self::SCRIPT),
                        doc_source: format!(
                            " The Lua source of `{written}`, included at compile time (editing \
                             the file rebuilds the crate)."
                        ),
                        doc_key_count: " The number of fixed keys (`KEYS`) the script takes, \
                                        not counting a variadic tail.",
                        doc_arg_count: " The number of fixed arguments (`ARGV`) the script \
                                        takes, not counting a variadic tail.",
                        doc_call: " An invocation of the script with this value's keys and \
                                   arguments, in field order.",
                        docs: MethodDocs::script(&written, command),
                    },
                }
            }
            Code::Function {
                library,
                function,
                params: [keys, args],
            } => {
                let command = if read_only { "FCALL_RO" } else { "FCALL" };
                let calls = calls_const(checked, "function");
                let doc_library = format!(
                    " The library's description (`{library}`, `{written}`), as the runtime \
                     uses it."
                );
                let doc_function = format!(
                    " The function's description (`{function}` of `{library}`, for {name}), as \
                     the runtime uses it."
                );
                Flavor {
                    struct_docs: vec![
                        String::new(),
                        "# Redis function".to_owned(),
                        String::new(),
                        format!(
                            "Generated by `#[redis_function]` for function `{function}` of \
                             library `{library}` (`{written}`), called with `{command}`: keys \
                             {}; arguments {}.",
                            field_list(&fields.keys, keys),
                            field_list(&fields.args, args)
                        ),
                        RUN_IT.to_owned(),
                    ],
                    parts: Parts {
                        head_consts: quote! {
                            /// The library's name, from its first line `#!lua name=<library>`.
                            pub const LIBRARY_NAME: &'static str = #library;
                            /// The function's name in the library.
                            pub const FUNCTION_NAME: &'static str = #function;
                        },
                        tail_consts: quote! {
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
                            #calls
                        },
                        call_type: "FunctionCall",
                        def_type: "FunctionDef",
                        def: quote!(Self::FUNCTION),
                        loader: quote!(Self::LIBRARY),
                        doc_source: format!(
                            " The Lua source of the library `{written}`, included at compile \
                             time (editing the file rebuilds the crate)."
                        ),
                        doc_key_count: " The number of fixed keys the function takes, not \
                                        counting a variadic tail.",
                        doc_arg_count: " The number of fixed arguments the function takes, not \
                                        counting a variadic tail.",
                        doc_call: " A call of the function with this value's keys and \
                                   arguments, in field order.",
                        docs: MethodDocs::function(function, command),
                    },
                }
            }
        }
    }
}

/// The `CALLS` constant: where each command with a literal name is called,
/// by the line Redis reports when the call fails (`@user_script:<line>`,
/// `@user_function:<line>`).
fn calls_const(checked: &Checked, kind: &str) -> TokenStream {
    let doc = format!(
        " The line of each `redis.call` / `redis.pcall` of the {kind} whose command name is \
         a literal, with that name upper-case, in source order: the line Redis reports \
         (`@user_{kind}:<line>`) when the call fails, for instance when an ACL rule refuses \
         the command. A line with several calls has several entries; a call whose command \
         name is computed has none."
    );
    let calls = checked
        .command_lines
        .iter()
        .map(|(line, name)| quote!((#line, #name)));
    quote! {
        #[doc = #doc]
        pub const CALLS: &'static [(u32, &'static str)] = &[#(#calls),*];
    }
}

/// The last line of the struct's generated documentation.
const RUN_IT: &str = "Run it with `invoke` (async), `invoke_blocking` or `add_to_pipeline`.";

/// The fields with the index each takes: "`lock` (`KEYS[1]`), ...".
fn field_list(fields: &[ScriptField], array: &str) -> String {
    if fields.is_empty() {
        return "none".to_owned();
    }
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if f.variadic {
                format!("`{}` (`{array}[{}..]`)", f.name(), i + 1)
            } else {
                format!("`{}` (`{array}[{}]`)", f.name(), i + 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends documentation lines to the struct.
fn push_docs(item: &mut ItemStruct, lines: impl IntoIterator<Item = String>) {
    for line in lines {
        let line = if line.is_empty() {
            line
        } else {
            format!(" {line}")
        };
        item.attrs.push(syn::parse_quote!(#[doc = #line]));
    }
}

/// The paths of the runtime items and of the redis crate that generated
/// code uses: `<crate>::__private` and `<crate>::__private::redis`.
fn runtime_paths(attr: &Attr) -> (TokenStream, TokenStream) {
    let krate = match &attr.krate {
        Some(path) => quote!(#path),
        None => quote!(::redlua),
    };
    let private = quote!(#krate::__private);
    let redis = quote!(#private::redis);
    (private, redis)
}

/// The `include_str!` of the file, relative to `CARGO_MANIFEST_DIR`, or `""`
/// when it could not be read.
fn include_source(attr: &Attr, readable: bool) -> TokenStream {
    let path = &attr.path;
    if readable {
        quote!(::core::include_str!(::core::concat!(
            ::core::env!("CARGO_MANIFEST_DIR"),
            "/",
            #path
        )))
    } else {
        quote!("")
    }
}

/// The inherent `impl` with the constants and methods.
fn generate_impl(
    item: &ItemStruct,
    attr: &Attr,
    fields: &ScriptFields,
    checked: &Checked,
    parts: &Parts,
) -> TokenStream {
    let (private, redis) = runtime_paths(attr);
    let ident = &item.ident;
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let returns = match &attr.returns {
        Some(ty) => quote!(#ty),
        None => quote!(#redis::Value),
    };
    let source = include_source(attr, checked.readable);
    let key_count = fields.fixed_keys();
    let arg_count = fields.fixed_args();
    let Parts {
        head_consts,
        tail_consts,
        call_type,
        def_type,
        def,
        loader,
        doc_source,
        doc_key_count,
        doc_arg_count,
        doc_call,
        docs,
    } = parts;
    let call_type = syn::Ident::new(call_type, Span::call_site());
    let def_type = syn::Ident::new(def_type, Span::call_site());
    let call_type = quote!(#private::#call_type);
    let call_body = call_body(
        fields,
        &call_type,
        &quote!(#private::#def_type),
        def,
        &redis,
    );
    let methods = call_methods(&private, &redis, &returns, loader, docs);
    quote! {
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #doc_source]
            pub const SOURCE: &'static str = #source;
            #head_consts
            #[doc = #doc_key_count]
            pub const KEY_COUNT: usize = #key_count;
            #[doc = #doc_arg_count]
            pub const ARG_COUNT: usize = #arg_count;
            #tail_consts

            #[doc = #doc_call]
            pub fn call(&self) -> #call_type {
                #call_body
            }

            #methods
        }
    }
}

/// The body of the generated `call()`: the call of `def` (a constant of the
/// runtime's `def_type`) with every field passed in order, as key or argument.
fn call_body(
    fields: &ScriptFields,
    call_type: &TokenStream,
    def_type: &TokenStream,
    def: &TokenStream,
    redis: &TokenStream,
) -> TokenStream {
    let keys = fields.keys.iter().map(|f| pass_field(f, "key"));
    let args = fields.args.iter().map(|f| pass_field(f, "arg"));
    let key_or_arg = (!fields.keys.is_empty() || !fields.args.is_empty())
        .then(|| key_or_arg_trait(call_type, redis));
    quote! {
        #key_or_arg
        let __def: &'static #def_type = &#def;
        #[allow(unused_mut)]
        let mut __call = __def.call();
        #(#keys)*
        #(#args)*
        __call
    }
}

/// The documentation of the generated methods that [`call_methods`] emits.
struct MethodDocs {
    invoke: String,
    invoke_blocking: String,
    add_to_pipeline: &'static str,
    load: &'static str,
    load_blocking: &'static str,
}

/// The documentation of `load_blocking`, the same for both.
const LOAD_BLOCKING: &str = " Loads the script or library, as `load` does, on a blocking \
                             connection; required before sending a pipeline.\n\n # Errors\n\n \
                             Connection and server errors, or an answer that does not match \
                             (another SHA1 or library name).";

impl MethodDocs {
    /// The methods of a script, sent with `command` (`EVALSHA`).
    fn script(written: &str, command: &str) -> Self {
        MethodDocs {
            invoke: format!(
                " Runs `{written}` with `{command}` on an asynchronous connection and converts \
                 its reply.\n\n If the server does not have the script cached (`NOSCRIPT`), it \
                 is loaded with `SCRIPT LOAD` and the call is retried once.\n\n # Errors\n\n \
                 Connection and server errors, errors raised by the script, and a reply that \
                 does not convert to the result type.\n\n # Cancellation\n\n If the future is \
                 dropped before it completes, the command may or may not have reached the \
                 server: the script may or may not have run (at most once)."
            ),
            invoke_blocking: format!(
                " Runs `{written}` with `{command}` on a blocking connection and converts its \
                 reply; the blocking twin of `invoke`.\n\n # Errors\n\n Connection and \
                 server errors, errors raised by the script, and a reply that does not convert \
                 to the result type."
            ),
            add_to_pipeline: " Adds this invocation to `pipe` and returns `pipe`.\n\n A \
                              pipeline cannot recover from `NOSCRIPT`: call \
                              [`load_blocking`](Self::load_blocking) (or `load`) on the same \
                              connection first.",
            load: " Loads the script into the server's script cache (`SCRIPT LOAD`, sent to \
                   every node of a cluster) and checks the SHA1 the server answers.\n\n Never \
                   required before [`invoke`](Self::invoke), which recovers from `NOSCRIPT` by \
                   itself; required before sending a pipeline.\n\n # Errors\n\n Connection and \
                   server errors (e.g. Lua compilation), or a SHA1 mismatch.\n\n # \
                   Cancellation\n\n If the future is dropped, the script may or may not be \
                   loaded; loading again is always safe.",
            load_blocking: LOAD_BLOCKING,
        }
    }

    /// The methods of function `function`, called with `command` (`FCALL`).
    fn function(function: &str, command: &str) -> Self {
        MethodDocs {
            invoke: format!(
                " Calls function `{function}` with `{command}` on an asynchronous connection \
                 and converts its reply.\n\n If the server does not have the function (its \
                 functions were flushed, or it never loaded the library), the library is \
                 loaded with `FUNCTION LOAD REPLACE` and the call is retried once.\n\n # \
                 Errors\n\n Connection and server errors, errors raised by the function, and a \
                 reply that does not convert to the result type.\n\n # Cancellation\n\n If the \
                 future is dropped before it completes, the command may or may not have \
                 reached the server: the function may or may not have run (at most once)."
            ),
            invoke_blocking: format!(
                " Calls function `{function}` with `{command}` on a blocking connection and \
                 converts its reply; the blocking twin of `invoke`.\n\n # Errors\n\n \
                 Connection and server errors, errors raised by the function, and a reply that \
                 does not convert to the result type."
            ),
            add_to_pipeline: " Adds this call to `pipe` and returns `pipe`.\n\n A pipeline \
                              cannot load the library and retry: call \
                              [`load_blocking`](Self::load_blocking) (or `load`) on the same \
                              connection first.",
            load: " Loads (or replaces) the library with `FUNCTION LOAD REPLACE` (sent to every \
                   primary of a cluster) and checks the library name the server answers.\n\n \
                   Never required before [`invoke`](Self::invoke), which loads the library when \
                   the function is missing; required before sending a pipeline.\n\n # \
                   Errors\n\n Connection and server errors (e.g. a library the server refuses), \
                   or another library name in the answer.\n\n # Cancellation\n\n If the future \
                   is dropped, the library may or may not be loaded; loading again is always \
                   safe.",
            load_blocking: LOAD_BLOCKING,
        }
    }
}

/// `invoke`, `invoke_blocking`, `add_to_pipeline`, `load` and
/// `load_blocking`: they call the runtime's call (from `call()`) and
/// `loader` (the constant that loads).
fn call_methods(
    private: &TokenStream,
    redis: &TokenStream,
    returns: &TokenStream,
    loader: &TokenStream,
    docs: &MethodDocs,
) -> TokenStream {
    let MethodDocs {
        invoke,
        invoke_blocking,
        add_to_pipeline,
        load,
        load_blocking,
    } = docs;
    // The async methods exist with the runtime's `aio` feature only: the
    // runtime's `if_aio!` knows its features, this macro does not.
    quote! {
        #private::if_aio! {
            #[doc = #invoke]
            pub async fn invoke<C>(&self, con: &mut C) -> #redis::RedisResult<#returns>
            where
                C: #redis::aio::ConnectionLike + ?::core::marker::Sized,
            {
                self.call().invoke_async::<#returns, C>(con).await
            }

            #[doc = #load]
            pub async fn load<C>(con: &mut C) -> #redis::RedisResult<()>
            where
                C: #redis::aio::ConnectionLike + ?::core::marker::Sized,
            {
                #loader.load(con).await
            }
        }

        #[doc = #invoke_blocking]
        pub fn invoke_blocking<C>(&self, con: &mut C) -> #redis::RedisResult<#returns>
        where
            C: #redis::ConnectionLike + ?::core::marker::Sized,
        {
            self.call().invoke::<#returns, C>(con)
        }

        #[doc = #add_to_pipeline]
        pub fn add_to_pipeline<'p>(
            &self,
            pipe: &'p mut #redis::Pipeline,
        ) -> &'p mut #redis::Pipeline {
            self.call().add_to_pipeline(pipe)
        }

        #[doc = #load_blocking]
        pub fn load_blocking<C>(con: &mut C) -> #redis::RedisResult<()>
        where
            C: #redis::ConnectionLike + ?::core::marker::Sized,
        {
            #loader.load_blocking(con)
        }
    }
}

/// `KeyOrArg::key(&self.field, &mut __call);` (or `arg`), spanned at the
/// field's type, so that a type Redis cannot take (one without
/// `redis::ToRedisArgs`) is reported once, at the field, rather than at the
/// attribute. `KeyOrArg` is the trait [`key_or_arg_trait`] declares.
fn pass_field(field: &ScriptField, method: &str) -> TokenStream {
    let member = &field.member;
    // The field type's place, with the macro's own hygiene (`__call`, `self`).
    let span = Span::call_site().located_at(field.ty.span());
    let method = syn::Ident::new(method, span);
    quote_spanned! {span=>
        KeyOrArg::#method(&self.#member, &mut __call);
    }
}

/// A trait local to `call()` through which every field is passed, so that
/// the only bound a field's type must meet is one whose message says what is
/// wrong in the user's terms. `call` is the type of the call being built.
fn key_or_arg_trait(call: &TokenStream, redis: &TokenStream) -> TokenStream {
    quote! {
        #[diagnostic::on_unimplemented(
            message = "`{Self}` cannot be passed to Redis: it does not implement `redis::ToRedisArgs`",
            label = "the type of a `#[key]` or `#[arg]` field must implement `redis::ToRedisArgs`",
            note = "use a string, a number, bytes or a list of them, or implement `redis::ToRedisArgs` for the type"
        )]
        trait KeyOrArg {
            fn key(&self, call: &mut #call);
            fn arg(&self, call: &mut #call);
        }
        impl<T: #redis::ToRedisArgs> KeyOrArg for T {
            fn key(&self, call: &mut #call) {
                call.key(self);
            }
            fn arg(&self, call: &mut #call) {
                call.arg(self);
            }
        }
    }
}
