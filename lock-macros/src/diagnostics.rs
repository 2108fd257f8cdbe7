//! Turning the analyzer's diagnostics into compile errors and warnings
//! spanned at the Rust code they are about.

use crate::attr::combine;
use crate::fields::ScriptFields;
use proc_macro_warning::FormattedWarning;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use redlua_analyzer::{Diagnostic, Lint, ReturnKind, Severity, Target};
use syn::{GenericArgument, LitStr, PathArguments, Type};

/// What the analyzer may check about a result of Rust type `ty`.
///
/// Decided from the last path segment only (`i64`, `Option<String>`,
/// `Vec<T>`): type aliases and unknown types are not checked ([`ReturnKind::Any`]).
pub fn return_kind(ty: &Type) -> ReturnKind {
    match ty {
        Type::Paren(inner) => return_kind(&inner.elem),
        Type::Group(inner) => return_kind(&inner.elem),
        Type::Tuple(tuple) if !tuple.elems.is_empty() => ReturnKind::Array,
        Type::Array(_) => ReturnKind::Array,
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return ReturnKind::Any;
            };
            let name = last.ident.to_string();
            let first_arg = || match &last.arguments {
                PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                    GenericArgument::Type(t) => Some(t),
                    _ => None,
                }),
                _ => None,
            };
            match name.as_str() {
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize" | "bool" | "NonZeroI64" | "NonZeroU64" => ReturnKind::Integer,
                "String" => ReturnKind::String,
                "Option" => first_arg().map_or(ReturnKind::Any, return_kind),
                "Vec" => match first_arg() {
                    Some(Type::Path(p)) if p.path.is_ident("u8") => ReturnKind::String,
                    _ => ReturnKind::Array,
                },
                "VecDeque" | "HashSet" | "BTreeSet" => ReturnKind::Array,
                _ => ReturnKind::Any,
            }
        }
        _ => ReturnKind::Any,
    }
}

/// The compile errors for the analyzer's errors, all combined into one, or
/// `None` when there is no error. Of syntax errors, only the first is
/// reported. Warnings are emitted by [`warnings`].
pub fn errors(
    diagnostics: &[Diagnostic],
    path: &LitStr,
    fields: &ScriptFields,
    source: &str,
) -> Option<syn::Error> {
    let file = path.value();
    let mut all = None;
    let mut syntax_reported = false;
    for diagnostic in diagnostics.iter().filter(|d| d.severity == Severity::Error) {
        // After a syntax error the parser recovers as best it can, and what
        // it reports next is mostly fallout of the first error: show only
        // the first one, like the Lua compiler in Redis does.
        if diagnostic.lint == Lint::Syntax {
            if syntax_reported {
                continue;
            }
            syntax_reported = true;
        }
        combine(
            &mut all,
            syn::Error::new(
                span_of(diagnostic, path, fields),
                message(diagnostic, &file, source),
            ),
        );
    }
    all
}

/// Items that make rustc print each of the analyzer's warnings as a
/// compiler warning, spanned where an error would be (the script's path).
///
/// A stable procedural macro cannot emit a warning itself: each warning is
/// the use of a `#[deprecated]` constant whose note is the analyzer's
/// message (see the `proc-macro-warning` crate), inside an anonymous
/// `const _` so that nothing is added to the user's namespace. rustc shows it
/// as `use of deprecated constant `_::<lint>::_w`: <message>`, under the
/// `deprecated` lint: `#![deny(warnings)]` makes it an error, and
/// `allow(<lint>)` in the attribute removes it. `attribute` is how the user
/// wrote the attribute (`redis_script`), for the hint.
pub fn warnings(
    diagnostics: &[Diagnostic],
    path: &LitStr,
    fields: &ScriptFields,
    source: &str,
    attribute: &str,
) -> TokenStream {
    let file = path.value();
    let items = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|diagnostic| {
            let span = span_of(diagnostic, path, fields);
            let lint = diagnostic.lint.name();
            let note = format!(
                "{}\n  = help: if this is intended, add `allow({lint})` to `#[{attribute}(...)]`",
                message(diagnostic, &file, source)
            );
            let warning = FormattedWarning::new_deprecated(lint, note, span);
            quote_spanned!(span=> const _: () = { #warning };)
        });
    quote!(#(#items)*)
}

/// Where on the Rust side `diagnostic` is shown: the field it is about, or
/// the script's path.
fn span_of(diagnostic: &Diagnostic, path: &LitStr, fields: &ScriptFields) -> Span {
    match diagnostic.target {
        Target::Script(_) => path.span(),
        Target::Key(i) => fields.keys.get(i).map_or(path.span(), |f| f.span),
        Target::Arg(i) => fields.args.get(i).map_or(path.span(), |f| f.span),
    }
}

/// The analyzer's rendering of `diagnostic`, made to read well after rustc's
/// own `error: ` prefix.
///
/// The analyzer renders `error[lint]: message` followed by the quoted line;
/// rustc prefixes every compile error with `error: `, so the headline becomes
/// `message [lint]` instead of repeating the severity.
fn message(diagnostic: &Diagnostic, file: &str, source: &str) -> String {
    let rendered = diagnostic.render(file, source);
    let prefix = format!(
        "{}[{}]: ",
        diagnostic.severity.as_str(),
        diagnostic.lint.name()
    );
    match rendered.strip_prefix(&prefix) {
        Some(rest) => {
            let (headline, body) = rest.split_once('\n').unwrap_or((rest, ""));
            let mut out = format!("{headline} [{}]", diagnostic.lint.name());
            if !body.is_empty() {
                out.push('\n');
                out.push_str(body);
            }
            out
        }
        None => rendered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(ty: &str) -> ReturnKind {
        return_kind(&syn::parse_str(ty).unwrap())
    }

    #[test]
    fn return_kinds_follow_the_last_segment() {
        assert_eq!(kind("i64"), ReturnKind::Integer);
        assert_eq!(kind("::core::primitive::u32"), ReturnKind::Integer);
        assert_eq!(kind("bool"), ReturnKind::Integer);
        assert_eq!(kind("Option<i64>"), ReturnKind::Integer);
        assert_eq!(kind("std::string::String"), ReturnKind::String);
        assert_eq!(kind("Vec<u8>"), ReturnKind::String);
        assert_eq!(kind("Option<Vec<u8>>"), ReturnKind::String);
        assert_eq!(kind("Vec<String>"), ReturnKind::Array);
        assert_eq!(kind("(i64, String)"), ReturnKind::Array);
        assert_eq!(kind("()"), ReturnKind::Any);
        assert_eq!(kind("redis::Value"), ReturnKind::Any);
        assert_eq!(kind("f64"), ReturnKind::Any);
        assert_eq!(kind("MyAlias"), ReturnKind::Any);
    }
}
