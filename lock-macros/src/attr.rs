//! Parsing of the attribute's arguments:
//! `#[redis_script("path.lua", returns = T, read_only, allow(lint, ...), target = "redis-7.4", crate = path)]`.

use proc_macro2::Span;
use redlua_analyzer::{Lint, ServerTarget, best_match};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, Type};

/// The options of one `#[redis_script(...)]`.
pub struct Attr {
    /// The script's path, relative to `CARGO_MANIFEST_DIR`, as written.
    pub path: LitStr,
    /// `returns = T`.
    pub returns: Option<Type>,
    /// `read_only`.
    pub read_only: bool,
    /// `allow(...)`: the lints, with the span of their names.
    pub allow: Vec<(Lint, Span)>,
    /// `crate = path`.
    pub krate: Option<Path>,
    /// `target = "redis-7.4"`.
    pub target: Option<ServerTarget>,
}

const OPTIONS: &str =
    "`returns = Type`, `read_only`, `allow(lint, ...)`, `target = \"redis-7.4\"` or `crate = path`";

/// The option names, for "did you mean".
const OPTION_NAMES: &[&str] = &["returns", "read_only", "allow", "target", "crate"];

impl Parse for Attr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(
                "expected the path of a Lua script, relative to the crate's Cargo.toml: \
                 `#[redis_script(\"scripts/name.lua\")]`",
            ));
        }
        let path: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the path of a Lua script as a string literal: \
                 `#[redis_script(\"scripts/name.lua\")]`",
            )
        })?;
        if path.value().is_empty() {
            return Err(syn::Error::new(path.span(), "the script path is empty"));
        }
        let mut attr = Attr {
            path,
            returns: None,
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
                let ident: Ident = input
                    .parse()
                    .map_err(|e| syn::Error::new(e.span(), format!("expected {OPTIONS}")))?;
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
                "returns" => {
                    input.parse::<Token![=]>()?;
                    attr.returns = Some(input.parse()?);
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
                    let message = match best_match(other, OPTION_NAMES.iter().copied()) {
                        Some(similar) => {
                            format!("unknown option `{other}`: did you mean `{similar}`?")
                        }
                        None => format!("unknown option `{other}`: expected {OPTIONS}"),
                    };
                    return Err(syn::Error::new(span, message));
                }
            }
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
            .filter(|l| **l != Lint::Syntax)
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match Lint::from_name(&text) {
        Some(Lint::Syntax) => Err(syn::Error::new(
            name.span(),
            "the `syntax` lint cannot be allowed: Redis would refuse the script",
        )),
        Some(lint) => Ok(lint),
        None => {
            let names = Lint::ALL
                .iter()
                .filter(|l| **l != Lint::Syntax)
                .map(|l| l.name());
            let message = match best_match(&text, names) {
                Some(similar) => format!("unknown lint `{text}`: did you mean `{similar}`?"),
                None => format!("unknown lint `{text}`; the lints are {}", valid()),
            };
            Err(syn::Error::new(name.span(), message))
        }
    }
}

/// Adds `e` to the errors collected so far.
pub fn combine(errors: &mut Option<syn::Error>, e: syn::Error) {
    match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    }
}
