//! The struct's fields: which are keys, which are arguments, in which order.

use crate::errors::combine;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, ItemStruct, Member, Meta, Type};

/// Whether a field goes to `KEYS` or to `ARGV`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// `#[key]`.
    Key,
    /// `#[arg]`.
    Arg,
}

impl Role {
    fn attr_name(self) -> &'static str {
        match self {
            Role::Key => "key",
            Role::Arg => "arg",
        }
    }
}

/// One `#[key]` or `#[arg]` field.
pub struct ScriptField {
    /// How to reach it: `self.<member>`.
    pub member: Member,
    /// Whether it is a variadic tail (`#[key(variadic)]`).
    pub variadic: bool,
    /// The span of the whole field, where declaration errors point.
    pub span: Span,
    /// The field's type, where type errors point.
    pub ty: Type,
}

impl ScriptField {
    /// The field's name for messages and docs (`lock`, or `0` in a tuple struct).
    pub fn name(&self) -> String {
        match &self.member {
            Member::Named(ident) => ident.to_string(),
            Member::Unnamed(index) => index.index.to_string(),
        }
    }
}

/// The keys and arguments of a script struct, in declaration order.
#[derive(Default)]
pub struct ScriptFields {
    /// The `#[key]` fields.
    pub keys: Vec<ScriptField>,
    /// The `#[arg]` fields.
    pub args: Vec<ScriptField>,
}

impl ScriptFields {
    /// The number of fixed (not variadic) keys.
    pub fn fixed_keys(&self) -> usize {
        self.keys.iter().filter(|f| !f.variadic).count()
    }

    /// The number of fixed (not variadic) arguments.
    pub fn fixed_args(&self) -> usize {
        self.args.iter().filter(|f| !f.variadic).count()
    }

    /// Whether the keys end with a variadic field.
    pub fn keys_variadic(&self) -> bool {
        self.keys.last().is_some_and(|f| f.variadic)
    }

    /// Whether the arguments end with a variadic field.
    pub fn args_variadic(&self) -> bool {
        self.args.last().is_some_and(|f| f.variadic)
    }
}

/// Reads the `#[key]` / `#[arg]` attributes of `item`'s fields and removes
/// them from `item` (they are helper attributes the compiler does not know).
///
/// On error, the attributes are still removed, so the struct can be emitted
/// as it is alongside the errors.
pub fn extract(item: &mut ItemStruct) -> Result<ScriptFields, syn::Error> {
    let mut fields = ScriptFields::default();
    let mut errors = None;
    for (index, field) in item.fields.iter_mut().enumerate() {
        let member = match &field.ident {
            Some(ident) => Member::Named(ident.clone()),
            None => Member::Unnamed(syn::Index {
                index: index as u32,
                span: field.ty.span(),
            }),
        };
        let (ours, others): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(&mut field.attrs)
            .into_iter()
            .partition(|a| a.path().is_ident("key") || a.path().is_ident("arg"));
        field.attrs = others;
        let mut role: Option<(Role, bool)> = None;
        for attr in &ours {
            match parse_role(attr) {
                Ok(found) => {
                    if let Some((first, _)) = role {
                        let message = if first == found.0 {
                            format!("duplicate `#[{}]` attribute", found.0.attr_name())
                        } else {
                            "a field is either a `#[key]` (passed in KEYS) or an `#[arg]` \
                             (passed in ARGV), not both"
                                .to_owned()
                        };
                        combine(&mut errors, syn::Error::new_spanned(attr, message));
                    } else {
                        role = Some(found);
                    }
                }
                Err(e) => combine(&mut errors, e),
            }
        }
        let span = field.span();
        let Some((role, variadic)) = role else {
            if ours.is_empty() {
                let name = match &member {
                    Member::Named(ident) => format!("field `{ident}`"),
                    Member::Unnamed(i) => format!("field {}", i.index),
                };
                combine(
                    &mut errors,
                    syn::Error::new(
                        span,
                        format!(
                            "{name} is neither a key nor an argument of the script: mark it \
                             `#[key]` (passed in KEYS) or `#[arg]` (passed in ARGV)"
                        ),
                    ),
                );
            }
            continue;
        };
        let list = match role {
            Role::Key => &mut fields.keys,
            Role::Arg => &mut fields.args,
        };
        if let Some(previous) = list.last().filter(|f| f.variadic) {
            combine(
                &mut errors,
                syn::Error::new(
                    previous.span,
                    format!(
                        "the variadic {what} `{}` must be the last `#[{attr}]` field, but `{}` \
                         follows it; move it after the fixed {what}s",
                        previous.name(),
                        match &member {
                            Member::Named(ident) => ident.to_string(),
                            Member::Unnamed(i) => i.index.to_string(),
                        },
                        what = if role == Role::Key { "key" } else { "argument" },
                        attr = role.attr_name(),
                    ),
                ),
            );
        }
        list.push(ScriptField {
            member,
            variadic,
            span,
            ty: field.ty.clone(),
        });
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(fields),
    }
}

/// `#[key]` → `(Key, false)`, `#[arg(variadic)]` → `(Arg, true)`.
fn parse_role(attr: &Attribute) -> syn::Result<(Role, bool)> {
    let role = if attr.path().is_ident("key") {
        Role::Key
    } else {
        Role::Arg
    };
    let usage = || format!("expected `#[{0}]` or `#[{0}(variadic)]`", role.attr_name());
    match &attr.meta {
        Meta::Path(_) => Ok((role, false)),
        Meta::List(list) => {
            let ident: syn::Ident = list
                .parse_args()
                .map_err(|e| syn::Error::new(e.span(), usage()))?;
            if ident == "variadic" {
                Ok((role, true))
            } else {
                Err(syn::Error::new(ident.span(), usage()))
            }
        }
        Meta::NameValue(_) => Err(syn::Error::new_spanned(attr, usage())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(item: &str) -> Result<ScriptFields, String> {
        let mut item: ItemStruct = syn::parse_str(item).unwrap();
        extract(&mut item).map_err(|e| {
            e.into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    #[test]
    fn keys_and_args_keep_their_order() {
        let f = fields(
            "struct S { #[arg] a: i64, #[key] k1: String, #[key] k2: String, \
             #[arg(variadic)] rest: Vec<i64> }",
        )
        .unwrap();
        let names = |v: &[ScriptField]| v.iter().map(ScriptField::name).collect::<Vec<_>>();
        assert_eq!(names(&f.keys), ["k1", "k2"]);
        assert_eq!(names(&f.args), ["a", "rest"]);
        assert_eq!((f.fixed_keys(), f.keys_variadic()), (2, false));
        assert_eq!((f.fixed_args(), f.args_variadic()), (1, true));
    }

    #[test]
    fn tuple_and_unit_structs() {
        let f = fields("struct S(#[key] String, #[arg] i64);").unwrap();
        assert_eq!(f.keys[0].name(), "0");
        assert_eq!(f.args[0].name(), "1");
        let f = fields("struct S;").unwrap();
        assert!(f.keys.is_empty() && f.args.is_empty());
    }

    #[test]
    fn every_field_error_is_reported() {
        let err = fields(
            "struct S { plain: i64, #[key] #[arg] both: i64, #[key] #[key] twice: i64, \
             #[arg(many)] odd: i64, #[arg = 1] eq: i64, \
             #[key(variadic)] rest: Vec<String>, #[key] after: String }",
        )
        .err()
        .expect("errors");
        for message in [
            "field `plain` is neither a key nor an argument",
            "either a `#[key]` (passed in KEYS) or an `#[arg]`",
            "duplicate `#[key]` attribute",
            "expected `#[arg]` or `#[arg(variadic)]`",
            "the variadic key `rest` must be the last `#[key]` field, but `after` follows it",
        ] {
            assert!(err.contains(message), "missing {message:?} in:\n{err}");
        }
    }
}
