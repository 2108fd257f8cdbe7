//! Code generation of `#[redis_script]`, and what `#[redis_function]`
//! shares with it (reading the struct and the file, passing fields).

use crate::attr::{Attr, Kind, combine};
use crate::diagnostics;
use crate::fields::{self, ScriptField, ScriptFields};
use crate::function;
use crate::returns;
use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use redlua_analyzer::{Declared, Options, ServerTarget};
use std::path::{Path, PathBuf};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Item, ItemStruct};

/// Expands `#[redis_script(attr)] item`.
///
/// Never fails: errors become `compile_error!`s, emitted next to the struct
/// (stripped of its `#[key]` / `#[arg]` attributes) so that they are the only
/// errors the user sees.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kind(Kind::Script, attr, item)
}

/// Expands `#[redis_function(attr)] item`, as [`expand`] does.
pub fn expand_function(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kind(Kind::Function, attr, item)
}

fn expand_kind(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(item)) => item,
        Ok(other) => {
            let (name, what) = match kind {
                Kind::Script => ("redis_script", "script"),
                Kind::Function => ("redis_function", "function"),
            };
            let error = syn::Error::new_spanned(
                item_keyword(&other),
                format!(
                    "`#[{name}]` goes on a struct whose fields are the {what}'s keys and \
                     arguments"
                ),
            );
            return with_errors(other.into_token_stream(), Some(error));
        }
        Err(e) => return with_errors(item, Some(e)),
    };
    let mut errors = None;
    let fields = fields::extract(&mut item).map_err(|e| combine(&mut errors, e));
    let attr = (|input: ParseStream<'_>| Attr::parse(input, kind))
        .parse2(attr)
        .map_err(|e| combine(&mut errors, e));
    let (Ok(fields), Ok(attr)) = (fields, attr) else {
        return with_errors(item.into_token_stream(), errors);
    };
    let (methods, warnings) = match kind {
        Kind::Script => {
            let script = load_and_check(&attr, &fields, &mut errors);
            add_struct_docs(&mut item, &attr, &fields);
            let methods = generate_impl(&item, &attr, &fields, &script);
            (methods, script.warnings)
        }
        Kind::Function => {
            let checked = function::load_and_check(&attr, &fields, &mut errors);
            function::add_struct_docs(&mut item, &attr, &fields, &checked);
            let methods = function::generate_impl(&item, &attr, &fields, &checked);
            (methods, checked.warnings)
        }
    };
    let manifest = track_manifest(&attr);
    with_errors(quote!(#item #methods #manifest #warnings), errors)
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

/// What the macro learned from the script file.
struct Script {
    /// The SHA1 of the source, or empty if the file could not be read.
    sha1: String,
    /// Whether the file could be read (else `SOURCE` is generated empty).
    readable: bool,
    /// `read_only`, or a `no-writes` shebang.
    read_only: bool,
    /// The items that make rustc print the analyzer's warnings.
    warnings: TokenStream,
}

/// Reads the script, computes its SHA1 and runs the analyzer on it; errors go
/// into `errors`, warnings into the result.
fn load_and_check(attr: &Attr, fields: &ScriptFields, errors: &mut Option<syn::Error>) -> Script {
    let written = attr.path.value();
    let mut script = Script {
        sha1: String::new(),
        readable: false,
        read_only: attr.read_only,
        warnings: TokenStream::new(),
    };
    let source = match read_script(&written) {
        Ok(source) => source,
        Err(message) => {
            combine(errors, syn::Error::new(attr.path.span(), message));
            return script;
        }
    };
    script.readable = true;
    script.sha1 = sha1_smol::Sha1::from(source.as_bytes())
        .digest()
        .to_string();
    let target = target_of(attr, errors);
    let options = Options {
        target,
        declared: Some(declared(fields)),
        read_only: attr.read_only,
        // Generated calls run on cluster connections too.
        cluster: true,
        allow: attr.allow.iter().map(|(lint, _)| *lint).collect(),
        returns: attr.returns.as_ref().map(returns::declared),
    };
    let report = redlua_analyzer::analyze(&source, &options);
    if report
        .info
        .shebang_flags
        .as_ref()
        .is_some_and(|flags| flags.iter().any(|f| f == "no-writes"))
    {
        script.read_only = true;
    }
    if let Some(e) = diagnostics::errors(&report.diagnostics, &attr.path, fields, &source) {
        combine(errors, e);
    }
    script.warnings = diagnostics::warnings(
        &report.diagnostics,
        &attr.path,
        fields,
        &source,
        "redis_script",
    );
    script
}

/// The target of the attribute's `target = ...`, else the crate-wide one;
/// a bad crate-wide setting is reported at the path.
pub(crate) fn target_of(attr: &Attr, errors: &mut Option<syn::Error>) -> ServerTarget {
    match attr.target {
        Some(target) => target,
        None => crate_target().unwrap_or_else(|message| {
            combine(errors, syn::Error::new(attr.path.span(), message));
            ServerTarget::default()
        }),
    }
}

/// The crate-wide target of `[package.metadata.redlua]` in the invoking
/// crate's `Cargo.toml`, else the default.
fn crate_target() -> Result<ServerTarget, String> {
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Ok(ServerTarget::default());
    };
    Ok(crate::manifest::target_in(Path::new(&dir))?.unwrap_or_default())
}

/// What the fields declare, for the analyzer.
pub(crate) fn declared(fields: &ScriptFields) -> Declared {
    Declared {
        keys: fields.fixed_keys(),
        keys_variadic: fields.keys_variadic(),
        args: fields.fixed_args(),
        args_variadic: fields.args_variadic(),
    }
}

/// The paths of the runtime items and of the redis crate that generated
/// code uses: `<crate>::__private` and `<crate>::__private::redis`.
pub(crate) fn runtime_paths(attr: &Attr) -> (TokenStream, TokenStream) {
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
pub(crate) fn include_source(attr: &Attr, readable: bool) -> TokenStream {
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

/// Reads `written` relative to `CARGO_MANIFEST_DIR`, or says why it cannot.
pub(crate) fn read_script(written: &str) -> Result<String, String> {
    let Some(manifest_dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Err(format!(
            "cannot locate `{written}`: CARGO_MANIFEST_DIR is not set (script paths are \
             relative to the crate's Cargo.toml, so the crate must be built by Cargo)"
        ));
    };
    if is_absolute(written) {
        let manifest_dir = Path::new(&manifest_dir);
        let relative = Path::new(written)
            .strip_prefix(manifest_dir)
            .ok()
            .map(|p| p.display().to_string().replace('\\', "/"));
        let help = match relative {
            Some(relative) if !relative.is_empty() => format!("write `\"{relative}\"`"),
            _ => "move the script into the crate, e.g. to `scripts/`, and write its path \
                  from there"
                .to_owned(),
        };
        return Err(format!(
            "the script path `{written}` is absolute; script paths are relative to the \
             directory of the crate's Cargo.toml (CARGO_MANIFEST_DIR), so that the crate \
             builds wherever it is checked out\n  = help: {help}"
        ));
    }
    let resolved = Path::new(&manifest_dir).join(written);
    let bytes = std::fs::read(&resolved).map_err(|e| {
        format!(
            "cannot read Lua script `{written}`: {e}\n  = note: script paths are relative to \
             the directory of the crate's Cargo.toml (CARGO_MANIFEST_DIR); this one resolves \
             to `{}`",
            display_path(&resolved)
        )
    })?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "Lua script `{written}` is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Whether `written` is an absolute path on any platform (`/x`, `\\x`,
/// `C:\\x`, `C:/x`): `include_str!` would join it to CARGO_MANIFEST_DIR.
fn is_absolute(written: &str) -> bool {
    let bytes = written.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    written.starts_with(['/', '\\']) || drive || Path::new(written).is_absolute()
}

/// `path` relative to the current directory (where Cargo runs the compiler:
/// the workspace root) when it is inside it, else as it is.
fn display_path(path: &Path) -> String {
    let relative: Option<PathBuf> = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
        .replace('\\', "/")
}

/// Appends a `# Script` section to the struct's documentation.
fn add_struct_docs(item: &mut ItemStruct, attr: &Attr, fields: &ScriptFields) {
    let path = attr.path.value();
    let lines = [
        String::new(),
        "# Redis script".to_owned(),
        String::new(),
        format!(
            "Generated by `#[redis_script]` from `{path}`: keys {}; arguments {}.",
            field_list(&fields.keys, "KEYS"),
            field_list(&fields.args, "ARGV")
        ),
        "Run it with `invoke` (async), `invoke_blocking` or `add_to_pipeline`.".to_owned(),
    ];
    push_docs(item, lines);
}

/// The fields with the index each takes: "`lock` (`KEYS[1]`), ...".
pub(crate) fn field_list(fields: &[ScriptField], array: &str) -> String {
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
pub(crate) fn push_docs(item: &mut ItemStruct, lines: impl IntoIterator<Item = String>) {
    for line in lines {
        let line = if line.is_empty() {
            line
        } else {
            format!(" {line}")
        };
        item.attrs.push(syn::parse_quote!(#[doc = #line]));
    }
}

/// The inherent `impl` with the constants and methods.
fn generate_impl(
    item: &ItemStruct,
    attr: &Attr,
    fields: &ScriptFields,
    script: &Script,
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
    let source = include_source(attr, script.readable);
    let sha1 = &script.sha1;
    let read_only = script.read_only;
    let key_count = fields.fixed_keys();
    let arg_count = fields.fixed_args();
    let call_body = call_body(
        fields,
        &quote!(#private::ScriptCall),
        &quote!(#private::ScriptDef),
        &quote!(Self::SCRIPT),
        &redis,
    );
    let command = if read_only { "EVALSHA_RO" } else { "EVALSHA" };

    let doc_source = format!(
        " The Lua source of `{written}`, included at compile time (editing the file rebuilds \
         the crate)."
    );
    let doc_sha1 = format!(
        " The lowercase hexadecimal SHA1 of [`SOURCE`](Self::SOURCE), computed at compile \
         time: the name of the script in Redis's script cache (`{sha1}`)."
    );
    let doc_script = format!(
        " The static description of the script ({name}, `{written}`), as the runtime uses it."
    );
    let doc_invoke = format!(
        " Runs `{written}` with `{command}` on an asynchronous connection and converts its \
         reply.\n\n If the server does not have the script cached (`NOSCRIPT`), it is loaded \
         with `SCRIPT LOAD` and the call is retried once.\n\n # Errors\n\n Connection and \
         server errors, errors raised by the script, and a reply that does not convert to the \
         result type.\n\n # Cancellation\n\n If the future is dropped before it completes, the \
         command may or may not have reached the server: the script may or may not have run \
         (at most once)."
    );
    let doc_invoke_blocking = format!(
        " Runs `{written}` with `{command}` on a blocking connection and converts its reply; \
         the blocking twin of `invoke`.\n\n # Errors\n\n Connection and server errors, \
         errors raised by the script, and a reply that does not convert to the result type."
    );
    let methods = call_methods(
        &private,
        &redis,
        &returns,
        &quote!(Self::SCRIPT),
        &MethodDocs {
            invoke: doc_invoke,
            invoke_blocking: doc_invoke_blocking,
            add_to_pipeline: " Adds this invocation to `pipe` and returns `pipe`.\n\n A pipeline \
                              cannot recover from `NOSCRIPT`: call \
                              [`load_blocking`](Self::load_blocking) (or `load`) on the same connection \
                              first."
                .to_owned(),
            load: " Loads the script into the server's script cache (`SCRIPT LOAD`, sent to \
                   every node of a cluster) and checks the SHA1 the server answers.\n\n Never \
                   required before [`invoke`](Self::invoke), which recovers from `NOSCRIPT` by \
                   itself; required before sending a pipeline.\n\n # Errors\n\n Connection and \
                   server errors (e.g. Lua compilation), or a SHA1 mismatch.\n\n # \
                   Cancellation\n\n If the future is dropped, the script may or may not be \
                   loaded; loading again is always safe."
                .to_owned(),
            load_blocking: " Loads the script into the server's script cache (`SCRIPT LOAD`, \
                            sent to every node of a cluster) and checks the SHA1 the server \
                            answers; the blocking twin of `load`.\n\n Required before sending a \
                            pipeline.\n\n # Errors\n\n Connection and server errors (e.g. Lua \
                            compilation), or a SHA1 mismatch."
                .to_owned(),
        },
    );

    quote! {
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #doc_source]
            pub const SOURCE: &'static str = #source;
            #[doc = #doc_sha1]
            pub const SHA1: &'static str = #sha1;
            /// The number of fixed keys (`KEYS`) the script takes, not counting a variadic tail.
            pub const KEY_COUNT: usize = #key_count;
            /// The number of fixed arguments (`ARGV`) the script takes, not counting a variadic tail.
            pub const ARG_COUNT: usize = #arg_count;
            #[doc = #doc_script]
            pub const SCRIPT: #private::ScriptDef = #private::ScriptDef {
                name: #name,
                path: #path,
                source: Self::SOURCE,
                sha1: Self::SHA1,
                read_only: #read_only,
            };

            /// An invocation of the script with this value's keys and arguments, in field order.
            pub fn call(&self) -> #private::ScriptCall {
                #call_body
            }

            #methods
        }
    }
}

/// The body of the generated `call()`: the call of `def` (a constant of the
/// runtime's `def_type`) with every field passed in order, as key or argument.
pub(crate) fn call_body(
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
pub(crate) struct MethodDocs {
    pub invoke: String,
    pub invoke_blocking: String,
    pub add_to_pipeline: String,
    pub load: String,
    pub load_blocking: String,
}

/// `invoke`, `invoke_blocking`, `add_to_pipeline`, `load` and
/// `load_blocking`, the same for scripts and functions: they call the
/// runtime's call (from `call()`) and `loader` (the constant that loads).
pub(crate) fn call_methods(
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
pub(crate) fn pass_field(field: &ScriptField, method: &str) -> TokenStream {
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
pub(crate) fn key_or_arg_trait(call: &TokenStream, redis: &TokenStream) -> TokenStream {
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

/// The keyword of an item that is not a struct, for the error's span.
fn item_keyword(item: &Item) -> TokenStream {
    match item {
        Item::Enum(e) => e.enum_token.into_token_stream(),
        Item::Union(u) => u.union_token.into_token_stream(),
        Item::Fn(f) => f.sig.fn_token.into_token_stream(),
        other => other.to_token_stream(),
    }
}

/// `tokens` followed by `compile_error!`s for `errors`.
pub(crate) fn with_errors(tokens: TokenStream, errors: Option<syn::Error>) -> TokenStream {
    let errors = errors.map(|e| e.to_compile_error());
    quote!(#tokens #errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(attr: &str, item: &str) -> String {
        expand(attr.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    #[test]
    fn expansion_includes_the_file_relative_to_the_manifest_dir() {
        // Run by Cargo, CARGO_MANIFEST_DIR is lock-macros/.
        let out = expand_str(
            r#""../scripts/counter.lua", returns = i64"#,
            "struct Count<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        let manifest_dir = env!("CARGO_MANIFEST_DIR");
        assert!(
            !out.contains(manifest_dir),
            "absolute path in expansion: {out}"
        );
        assert!(
            out.contains(
                r#"include_str ! (:: core :: concat ! (:: core :: env ! ("CARGO_MANIFEST_DIR") , "/" , "../scripts/counter.lua"))"#
            ),
            "{out}"
        );
        let source = std::fs::read(format!("{manifest_dir}/../scripts/counter.lua")).unwrap();
        let sha1 = sha1_smol::Sha1::from(&source).digest().to_string();
        assert!(
            out.contains(&format!("SHA1 : & 'static str = \"{sha1}\"")),
            "{out}"
        );
        assert!(out.contains("KEY_COUNT : usize = 1usize"), "{out}");
        assert!(out.contains("ARG_COUNT : usize = 2usize"), "{out}");
        assert!(out.contains("read_only : false"), "{out}");
        assert!(out.contains(":: redlua :: __private :: ScriptDef"), "{out}");
        // The helper attributes are gone from the struct.
        assert!(
            !out.contains("# [key]") && !out.contains("# [arg]"),
            "{out}"
        );
    }

    #[test]
    fn crate_option_changes_the_runtime_path() {
        let out = expand_str(
            r#""../scripts/counter.lua", crate = crate, allow(arity)"#,
            "struct Count { #[key] counter: String }",
        );
        assert!(out.contains("crate :: __private :: ScriptDef"), "{out}");
        assert!(!out.contains(":: redlua"), "{out}");
        let out = expand_str(
            r#""../scripts/counter.lua", crate = ::my::reexport, allow(arity)"#,
            "struct Count { #[key] counter: String }",
        );
        assert!(
            out.contains(":: my :: reexport :: __private :: ScriptCall"),
            "{out}"
        );
    }

    #[test]
    fn a_missing_file_still_emits_the_items() {
        let out = expand_str(r#""nope/missing.lua""#, "struct Nothing;");
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("cannot read Lua script `nope/missing.lua`"),
            "{out}"
        );
        assert!(out.contains("pub fn invoke_blocking"), "{out}");
        assert!(!out.contains("include_str"), "{out}");
    }

    #[test]
    fn absolute_paths_are_refused() {
        for path in ["/etc/x.lua", "\\\\server\\x.lua", "C:\\\\x.lua", "c:/x.lua"] {
            let out = expand_str(&format!("{path:?}"), "struct S;");
            assert!(out.contains("is absolute"), "{path}: {out}");
            assert!(!out.contains("include_str"), "{path}: {out}");
            assert!(!out.contains("cannot read"), "{path}: {out}");
        }
        // Inside the crate: the relative path is suggested.
        let inside = format!("{}/../scripts/counter.lua", env!("CARGO_MANIFEST_DIR"));
        let out = expand_str(&format!("{inside:?}"), "struct S;");
        assert!(
            out.contains("write `\\\"../scripts/counter.lua\\\"`"),
            "{out}"
        );
        assert!(!is_absolute("scripts/x.lua") && !is_absolute("./x.lua"));
    }

    #[test]
    fn the_target_option_decides_what_the_script_may_call() {
        let item = "struct Expire<'a> { #[key] hash: &'a str, #[arg] seconds: u64, #[arg] field: &'a str }";
        let out = expand_str(r#""../tests/ui/scripts/hexpire.lua""#, item);
        assert!(
            out.contains("`HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0"),
            "{out}"
        );
        // The target comes from lock-macros/Cargo.toml, which sets none: the
        // crate depends on that file.
        assert!(out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand_str(
            r#""../tests/ui/scripts/hexpire.lua", target = "redis-7.4""#,
            item,
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains(r#""/Cargo.toml""#), "{out}");
        let out = expand_str(
            r#""../tests/ui/scripts/hexpire.lua", target = "valkey-8.0""#,
            item,
        );
        assert!(
            out.contains(
                "`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"
            ),
            "{out}"
        );
    }

    #[test]
    fn warnings_become_deprecation_warnings_at_the_path() {
        let item = "struct Bump<'a> { #[key] counter: &'a str }";
        let out = expand_str(r#""../tests/ui/scripts/get_plus_one.lua""#, item);
        assert!(!out.contains("compile_error"), "{out}");
        // One `#[deprecated]` constant per warning, in an anonymous const
        // named after the lint, with the rendered message as its note.
        assert_eq!(out.matches("deprecated").count(), 1, "{out}");
        assert!(out.contains("const _ : () = { "), "{out}");
        assert!(out.contains("fn maybe_false ()"), "{out}");
        assert!(
            out.contains("`+` on `false` raises an error [maybe_false]"),
            "{out}"
        );
        assert!(
            out.contains("--> ../tests/ui/scripts/get_plus_one.lua:1:11"),
            "{out}"
        );
        assert!(
            out.contains("1 | local n = redis.call('GET', KEYS[1]) + 1"),
            "{out}"
        );
        assert!(
            out.contains("add `allow(maybe_false)` to `#[redis_script(...)]`"),
            "{out}"
        );
        // Allowed: gone.
        let out = expand_str(
            r#""../tests/ui/scripts/get_plus_one.lua", allow(maybe_false)"#,
            item,
        );
        assert!(!out.contains("deprecated"), "{out}");
        // A script without warnings emits none.
        let out = expand_str(
            r#""../scripts/counter.lua", returns = i64"#,
            "struct Count<'a> { #[key] counter: &'a str, #[arg] by: i64, #[arg] ttl: u64 }",
        );
        assert!(!out.contains("deprecated"), "{out}");
    }

    #[test]
    fn bad_options_are_reported() {
        for (attr, message) in [
            ("", "expected the path of a Lua script"),
            ("42", "as a string literal"),
            (r#""""#, "the script path is empty"),
            (
                r#""a.lua", read_only, read_only"#,
                "option `read_only` is given twice",
            ),
            (r#""a.lua", read_only = true"#, "`read_only` takes no value"),
            (
                r#""a.lua", retruns = i64"#,
                "unknown option `retruns`: did you mean `returns`?",
            ),
            (
                r#""a.lua", readonly"#,
                "unknown option `readonly`: did you mean `read_only`?",
            ),
            (
                r#""a.lua", cache = 1"#,
                "unknown option `cache`: expected `returns = Type`",
            ),
            (
                r#""a.lua", allow(literal_keys)"#,
                "unknown lint `literal_keys`: did you mean `literal_key`?",
            ),
            (
                r#""a.lua", allow(nope)"#,
                "unknown lint `nope`; the lints are `arity`",
            ),
            (
                r#""a.lua", allow(syntax)"#,
                "`syntax` lint cannot be allowed",
            ),
            (
                r#""a.lua", target = "redis-7.3""#,
                "unknown target `redis-7.3` (did you mean `redis-7.2`?); the targets are redis-7.0,",
            ),
            (
                r#""a.lua", target = redis_7_4"#,
                "expected the target as a string literal, one of redis-7.0,",
            ),
            (
                r#""a.lua", targte = "redis-7.4""#,
                "unknown option `targte`: did you mean `target`?",
            ),
        ] {
            let out = expand_str(attr, "struct S;");
            assert!(out.contains(message), "{attr}: {out}");
            assert!(out.contains("struct S"), "{attr}: {out}");
        }
    }
}
