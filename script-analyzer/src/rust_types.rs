//! A Rust result type as the analyzer sees it (feature `rust-types`): the
//! kind of reply a declared `returns = T` takes, and whether it takes a nil
//! reply. The one reading of `T`, shared by `#[redis_script]` and the
//! language server.

use crate::{ReturnKind, Returns};
use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type, TypePath};

/// The declared result type `ty` as the analyzer sees it.
pub fn returns_of(ty: &Type) -> Returns {
    Returns {
        kind: kind(ty),
        nullable: holds_nil(ty),
        written: Some(written(ty)),
    }
}

/// The kind of reply `ty` takes.
///
/// Decided from the last path segment only (`i64`, `Option<String>`,
/// `Vec<T>`): type aliases and unknown types are not checked ([`ReturnKind::Any`]).
fn kind(ty: &Type) -> ReturnKind {
    match ty {
        Type::Paren(inner) => kind(&inner.elem),
        Type::Group(inner) => kind(&inner.elem),
        Type::Tuple(tuple) if !tuple.elems.is_empty() => ReturnKind::Array,
        Type::Array(_) => ReturnKind::Array,
        Type::Path(path) if path.qself.is_none() => {
            let Some((name, arg)) = last_segment(path) else {
                return ReturnKind::Any;
            };
            match name.as_str() {
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize" | "bool" | "NonZeroI64" | "NonZeroU64" => ReturnKind::Integer,
                "String" => ReturnKind::String,
                "Option" => arg.map_or(ReturnKind::Any, kind),
                "Vec" => match arg {
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

/// Whether redis-rs converts a nil reply into `ty` without an error:
/// `Option<T>` (`None`), `redis::Value` (`Nil`), `()`, `bool` (`false`),
/// and the collections (empty).
fn holds_nil(ty: &Type) -> bool {
    match ty {
        Type::Paren(inner) => holds_nil(&inner.elem),
        Type::Group(inner) => holds_nil(&inner.elem),
        Type::Tuple(tuple) => tuple.elems.is_empty(),
        Type::Path(path) if path.qself.is_none() => last_segment(path).is_some_and(|(name, _)| {
            matches!(
                name.as_str(),
                "Option"
                    | "Value"
                    | "bool"
                    | "Vec"
                    | "VecDeque"
                    | "HashSet"
                    | "BTreeSet"
                    | "HashMap"
                    | "BTreeMap"
            )
        }),
        _ => false,
    }
}

/// The last segment's name and its first type argument.
fn last_segment(path: &TypePath) -> Option<(String, Option<&Type>)> {
    let last = path.path.segments.last()?;
    let arg = match &last.arguments {
        PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    };
    Some((last.ident.to_string(), arg))
}

/// `ty` as written, for messages: `Option<i64>`, `(i64, String)`.
fn written(ty: &Type) -> String {
    let tokens = ty.to_token_stream().to_string();
    let mut out = String::with_capacity(tokens.len());
    for c in tokens.chars().filter(|c| *c != ' ') {
        out.push(c);
        if c == ',' {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn returns(ty: &str) -> Returns {
        returns_of(&syn::parse_str(ty).unwrap())
    }

    #[test]
    fn return_kinds_follow_the_last_segment() {
        let kind = |ty| returns(ty).kind;
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

    #[test]
    fn option_value_unit_bool_and_collections_hold_nil() {
        for ty in [
            "Option<i64>",
            "std::option::Option<String>",
            "redis::Value",
            "()",
            "bool",
            "Vec<u8>",
            "Vec<String>",
            "std::collections::HashMap<String, i64>",
        ] {
            assert!(returns(ty).nullable, "{ty}");
        }
        for ty in [
            "i64",
            "u32",
            "String",
            "(i64, String)",
            "[i64; 2]",
            "f64",
            "MyAlias",
        ] {
            assert!(!returns(ty).nullable, "{ty}");
        }
    }

    #[test]
    fn types_are_written_as_in_source() {
        assert_eq!(returns("i64").written.as_deref(), Some("i64"));
        assert_eq!(
            returns("Option < Vec < u8 > >").written.as_deref(),
            Some("Option<Vec<u8>>")
        );
        assert_eq!(
            returns("(i64, redis::Value)").written.as_deref(),
            Some("(i64, redis::Value)")
        );
    }
}
