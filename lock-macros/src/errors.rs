//! Errors gathered across the phases: every problem is reported at once, as
//! `compile_error!`s emitted next to the struct, so that they are the only
//! errors the user sees.

use proc_macro2::TokenStream;
use quote::quote;

/// Adds `e` to the errors collected so far.
pub fn combine(errors: &mut Option<syn::Error>, e: syn::Error) {
    match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    }
}

/// `tokens` followed by `compile_error!`s for `errors`.
pub fn with_errors(tokens: TokenStream, errors: Option<syn::Error>) -> TokenStream {
    let errors = errors.map(|e| e.to_compile_error());
    quote!(#tokens #errors)
}
