//! Parsing of the attributes' arguments:
//! `#[redis_script("path.lua", returns = T, codes, read_only, allow(lint, ...), target = "redis-7.4", crate = path)]`
//! and `#[redis_function("library.lua", name = "f", returns = T, allow(lint, ...), target = "redis-7.4", crate = path)]`.

use crate::errors::combine;
use proc_macro2::Span;
use redlua_analyzer::{Lint, ServerTarget, best_match};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, Type};

/// Which attribute is parsed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// `#[redis_script]`: an `EVAL` script.
    Script,
    /// `#[redis_function]`: one function of a Redis Functions library.
    Function,
}

impl Kind {
    /// The attribute's name, as users write it.
    pub fn attribute(self) -> &'static str {
        match self {
            Kind::Script => "redis_script",
            Kind::Function => "redis_function",
        }
    }

    /// What the struct stands for, in messages.
    pub fn what(self) -> &'static str {
        match self {
            Kind::Script => "script",
            Kind::Function => "function",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Kind::Script => "`#[redis_script(\"scripts/name.lua\")]`",
            Kind::Function => "`#[redis_function(\"scripts/library.lua\", name = \"function\")]`",
        }
    }

    fn options(self) -> &'static str {
        match self {
            Kind::Script => OPTIONS,
            Kind::Function => FUNCTION_OPTIONS,
        }
    }

    fn option_names(self) -> &'static [&'static str] {
        match self {
            Kind::Script => OPTION_NAMES,
            Kind::Function => FUNCTION_OPTION_NAMES,
        }
    }
}

/// The options of one `#[redis_script(...)]` or `#[redis_function(...)]`.
pub struct Attr {
    /// The Lua file's path, relative to `CARGO_MANIFEST_DIR`, as written.
    pub path: LitStr,
    /// `name = "f"`: the function of a library (`#[redis_function]` only).
    pub function: Option<LitStr>,
    /// `returns = T`.
    pub returns: Option<Type>,
    /// `codes`: `T` declares the script's reply codes (`ReplyCodes`), each
    /// `return` is checked against them; the flag's span.
    pub codes: Option<Span>,
    /// `read_only`.
    pub read_only: bool,
    /// `allow(...)`: the lints, with the span of their names.
    pub allow: Vec<(Lint, Span)>,
    /// `crate = path`.
    pub krate: Option<Path>,
    /// `target = "redis-7.4"`.
    pub target: Option<ServerTarget>,
}

const OPTIONS: &str = "`returns = Type`, `codes`, `read_only`, `allow(lint, ...)`, \
     `target = \"redis-7.4\"` or `crate = path`";

/// The option names, for "did you mean".
const OPTION_NAMES: &[&str] = &["returns", "codes", "read_only", "allow", "target", "crate"];

const FUNCTION_OPTIONS: &str = "`name = \"function\"`, `returns = Type`, `allow(lint, ...)`, \
     `target = \"redis-7.4\"` or `crate = path`";

/// The option names of `#[redis_function]`, for "did you mean".
const FUNCTION_OPTION_NAMES: &[&str] = &["name", "returns", "allow", "target", "crate"];

impl Attr {
    /// Parses the arguments of the attribute `kind`.
    pub fn parse(input: ParseStream<'_>, kind: Kind) -> syn::Result<Self> {
        let example = kind.example();
        let what = match kind {
            Kind::Script => "a Lua script",
            Kind::Function => "a Lua library",
        };
        if input.is_empty() {
            return Err(input.error(format!(
                "expected the path of {what}, relative to the crate's Cargo.toml: {example}"
            )));
        }
        let path: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected the path of {what} as a string literal: {example}"),
            )
        })?;
        if path.value().is_empty() {
            return Err(syn::Error::new(path.span(), "the script path is empty"));
        }
        let mut attr = Attr {
            path,
            function: None,
            returns: None,
            codes: None,
            read_only: false,
            allow: Vec::new(),
            krate: None,
            target: None,
        };
        let mut seen: Vec<String> = Vec::new();
        let mut errors: Option<syn::Error> = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let (name, span) = if input.peek(Token![crate]) {
                let kw: Token![crate] = input.parse()?;
                ("crate".to_owned(), kw.span)
            } else {
                let ident: Ident = input.parse().map_err(|e| {
                    syn::Error::new(e.span(), format!("expected {}", kind.options()))
                })?;
                (ident.to_string(), ident.span())
            };
            if seen.contains(&name) {
                return Err(syn::Error::new(
                    span,
                    format!("option `{name}` is given twice"),
                ));
            }
            seen.push(name.clone());
            match name.as_str() {
                "name" if kind == Kind::Function => {
                    input.parse::<Token![=]>()?;
                    let function: LitStr = input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "expected the function's name as a string literal: `name = \"myfunc\"`",
                        )
                    })?;
                    attr.function = Some(function);
                }
                "read_only" if kind == Kind::Function => {
                    return Err(syn::Error::new(
                        span,
                        "a function is read-only when its library registers it with \
                         `flags = {'no-writes'}`: it is then called with FCALL_RO; \
                         remove `read_only`",
                    ));
                }
                "returns" => {
                    input.parse::<Token![=]>()?;
                    attr.returns = Some(input.parse()?);
                }
                "codes" if kind == Kind::Script => {
                    if input.peek(Token![=]) {
                        return Err(input.error(
                            "`codes` takes no value: the type of `returns = Type` lists the \
                             codes (`redlua::script::ReplyCodes`)",
                        ));
                    }
                    attr.codes = Some(span);
                }
                "read_only" => {
                    if input.peek(Token![=]) {
                        return Err(input.error(
                            "`read_only` takes no value: write `read_only` to invoke the \
                             script with EVALSHA_RO, or leave it out",
                        ));
                    }
                    attr.read_only = true;
                }
                "allow" => {
                    let content;
                    syn::parenthesized!(content in input);
                    let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                    for name in names {
                        match lint_from_ident(&name) {
                            Ok(lint) => attr.allow.push((lint, name.span())),
                            Err(e) => combine(&mut errors, e),
                        }
                    }
                }
                "crate" => {
                    input.parse::<Token![=]>()?;
                    attr.krate = Some(Path::parse_mod_style(input)?);
                }
                "target" => {
                    input.parse::<Token![=]>()?;
                    let literal: LitStr = input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!(
                                "expected the target as a string literal, one of {}: \
                                 `target = \"redis-7.4\"`",
                                ServerTarget::names()
                            ),
                        )
                    })?;
                    match literal.value().parse::<ServerTarget>() {
                        Ok(target) => attr.target = Some(target),
                        Err(e) => combine(&mut errors, syn::Error::new(literal.span(), e)),
                    }
                }
                other => {
                    let message = match best_match(other, kind.option_names().iter().copied()) {
                        Some(similar) => {
                            format!("unknown option `{other}`: did you mean `{similar}`?")
                        }
                        None => format!("unknown option `{other}`: expected {}", kind.options()),
                    };
                    return Err(syn::Error::new(span, message));
                }
            }
        }
        if let (Some(span), None) = (attr.codes, &attr.returns) {
            return Err(syn::Error::new(
                span,
                "`codes` checks the script's returns against the reply type: \
                 add `returns = Type`, a type with `redlua::script::ReplyCodes`",
            ));
        }
        if kind == Kind::Function && attr.function.is_none() {
            return Err(syn::Error::new(
                attr.path.span(),
                "which function of the library? add `name = \"function\"`: \
                 `#[redis_function(\"scripts/library.lua\", name = \"function\")]`",
            ));
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(attr),
        }
    }
}

/// The lint named by `name`, or an error listing the names that exist.
fn lint_from_ident(name: &Ident) -> syn::Result<Lint> {
    let text = name.to_string();
    let valid = || {
        Lint::ALL
            .iter()
            .filter(|l| l.can_be_allowed())
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match Lint::from_name(&text) {
        Some(lint) if !lint.can_be_allowed() => Err(syn::Error::new(
            name.span(),
            format!("the `{lint}` lint cannot be allowed: Redis would refuse the script"),
        )),
        Some(lint) => Ok(lint),
        None => {
            let names = Lint::ALL
                .iter()
                .filter(|l| l.can_be_allowed())
                .map(|l| l.name());
            let message = match best_match(&text, names) {
                Some(similar) => format!("unknown lint `{text}`: did you mean `{similar}`?"),
                None => format!("unknown lint `{text}`; the lints are {}", valid()),
            };
            Err(syn::Error::new(name.span(), message))
        }
    }
}
