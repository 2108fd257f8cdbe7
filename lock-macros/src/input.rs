//! Phase 1, parse: the one input model of both attributes, read from the
//! attribute's arguments ([`crate::attr`]) and the struct's fields
//! ([`crate::fields`]).
//!
//! Invariant: whatever goes wrong, the struct is given back stripped of its
//! `#[key]` / `#[arg]` attributes, so that it can be emitted as written next
//! to the errors.

use crate::attr::{Attr, Kind};
use crate::errors::{combine, with_errors};
use crate::fields::{self, ScriptFields};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::{Item, ItemStruct};

/// A `#[redis_script]` or `#[redis_function]` struct, with its options.
pub struct Input {
    /// Which attribute it is.
    pub kind: Kind,
    /// The struct, without its `#[key]` / `#[arg]` attributes.
    pub item: ItemStruct,
    /// The attribute's options.
    pub attr: Attr,
    /// The keys and arguments, in field order.
    pub fields: ScriptFields,
}

impl Input {
    /// Parses `#[<kind>(attr)] item`; on error, the tokens to emit instead:
    /// the item as it can be emitted, followed by every error found.
    pub fn parse(kind: Kind, attr: TokenStream, item: TokenStream) -> Result<Self, TokenStream> {
        let mut item = match syn::parse2::<Item>(item.clone()) {
            Ok(Item::Struct(item)) => item,
            Ok(other) => {
                let error = syn::Error::new_spanned(
                    item_keyword(&other),
                    format!(
                        "`#[{}]` goes on a struct whose fields are the {}'s keys and arguments",
                        kind.attribute(),
                        kind.what()
                    ),
                );
                return Err(with_errors(other.into_token_stream(), Some(error)));
            }
            Err(e) => return Err(with_errors(item, Some(e))),
        };
        let mut errors = None;
        let fields = fields::extract(&mut item).map_err(|e| combine(&mut errors, e));
        let attr = (|input: ParseStream<'_>| Attr::parse(input, kind))
            .parse2(attr)
            .map_err(|e| combine(&mut errors, e));
        match (fields, attr) {
            (Ok(fields), Ok(attr)) => Ok(Input {
                kind,
                item,
                attr,
                fields,
            }),
            _ => Err(with_errors(item.into_token_stream(), errors)),
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
