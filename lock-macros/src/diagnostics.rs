//! Turning the analyzer's diagnostics into compile errors and warnings
//! spanned at the Rust code they are about.

use crate::errors::combine;
use crate::fields::ScriptFields;
use proc_macro_warning::FormattedWarning;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use redlua_analyzer::{Diagnostic, Lint, Severity, Target};
use syn::LitStr;

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
