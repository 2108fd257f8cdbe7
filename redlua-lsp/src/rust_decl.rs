//! The Rust declaration of a script: the `#[redis_script("path", ...)]`
//! struct, in the crate the script belongs to, that names it; for a Redis
//! Functions library, the `#[redis_function("path", name = "f", ...)]`
//! structs that name it, one per declared function. What it declares is
//! what the macro checks the script (or the function's body) against: its
//! `#[key]` and `#[arg]` fields (a `#[key(variadic)]` / `#[arg(variadic)]`
//! tail accepts more), `returns = Type`, `read_only`, `allow(lint, ...)`
//! and `target = "..."`.
//!
//! The crate's `src/`, `examples/`, `tests/` and `benches/` are searched
//! for `.rs` files that mention `redis_script` or `redis_function` and the
//! script's file name;
//! a file that does not parse is skipped. The declared result type is read
//! by the rules `#[redis_script]` applies (integers and `bool` are
//! integers, `String` and `Vec<u8>` strings, other lists arrays; `Option`,
//! `bool`, `redis::Value`, `()` and collections hold nil).

use redlua_analyzer::{Declared, Lint, Returns, ServerTarget};
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};
use syn::visit::Visit;
use syn::{Ident, LitStr, Token, Type};

/// The directories of a crate searched for declarations.
const SEARCHED: &[&str] = &["src", "examples", "tests", "benches"];

/// At most this many `.rs` files are read, and only those under 2 MiB.
const MAX_FILES: usize = 5_000;
const MAX_FILE_BYTES: u64 = 2 << 20;

/// A place in a Rust file: 1-based line, 0-based column in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
}

/// One script's declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// The struct's name.
    pub name: String,
    /// Where the struct's name is.
    pub place: Place,
    /// The `#[key]` fields' names and places, in order.
    pub keys: Vec<(String, Place)>,
    /// The `#[arg]` fields' names and places, in order.
    pub args: Vec<(String, Place)>,
    /// The counts the fields declare.
    pub declared: Declared,
    /// `returns = Type`.
    pub returns: Option<Returns>,
    /// `read_only`.
    pub read_only: bool,
    /// `allow(...)`: the lints it names that exist.
    pub allow: Vec<Lint>,
    /// `target = "..."`, when it names a target.
    pub target: Option<ServerTarget>,
    /// Where one more lint can be written into the attribute, if known.
    pub allow_at: Option<AllowAt>,
    /// `name = "f"` of a `#[redis_function]`: the library's function it
    /// declares (`None` for a `#[redis_script]`).
    pub function: Option<String>,
}

/// Where an `allow` of one more lint goes in a `#[redis_script]`
/// attribute, and what comes before the lint's name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowAt {
    /// Before the `)` of the attribute's `allow(...)`, or of the attribute
    /// itself when it has no `allow`.
    pub place: Place,
    /// What precedes the name: `", "` after a lint, `""` in an empty
    /// `allow()`, `", allow("` (with `")"` after the name) for an attribute
    /// without one.
    pub before: &'static str,
    /// What follows the name.
    pub after: &'static str,
}

/// The `#[redis_script]` declaration of `script` in the crate at
/// `crate_dir`, if one names it.
#[cfg(test)]
pub fn find(script: &Path, crate_dir: &Path) -> Option<Declaration> {
    find_all(script, crate_dir)
        .into_iter()
        .find(|declaration| declaration.function.is_none())
}

/// Every declaration of `script` in the crate at `crate_dir`:
/// `#[redis_script]` and `#[redis_function]` structs, in the order of
/// their files (by path) and of the structs in each.
pub fn find_all(script: &Path, crate_dir: &Path) -> Vec<Declaration> {
    let Ok(script) = std::fs::canonicalize(script) else {
        return Vec::new();
    };
    let Some(file_name) = script.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let file_name = file_name.to_string();
    let mut found = Vec::new();
    let mut files = Vec::new();
    for dir in SEARCHED {
        collect(&crate_dir.join(dir), &mut files);
    }
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if !(text.contains("redis_script") || text.contains("redis_function"))
            || !text.contains(&file_name)
        {
            continue;
        }
        let Ok(parsed) = syn::parse_file(&text) else {
            continue;
        };
        let mut finder = Finder {
            file: &file,
            crate_dir,
            script: &script,
            found: Vec::new(),
        };
        finder.visit_file(&parsed);
        found.append(&mut finder.found);
    }
    found
}

/// The `.rs` files under `dir`, depth first, up to [`MAX_FILES`].
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if files.len() >= MAX_FILES {
            return;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(&path, files);
        } else if kind.is_file()
            && path.extension().is_some_and(|e| e == "rs")
            && entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES)
        {
            files.push(path);
        }
    }
}

struct Finder<'a> {
    file: &'a Path,
    crate_dir: &'a Path,
    script: &'a Path,
    found: Vec<Declaration>,
}

impl Finder<'_> {
    fn place(&self, span: proc_macro2::Span) -> Place {
        let start = span.start();
        Place {
            file: self.file.to_path_buf(),
            line: start.line,
            column: start.column,
        }
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        for attr in &item.attrs {
            let Some(kind) = attr.path().segments.last().map(|s| s.ident.to_string()) else {
                continue;
            };
            if kind != "redis_script" && kind != "redis_function" {
                continue;
            }
            let Ok(options) = attr.parse_args_with(Options::parse) else {
                continue;
            };
            // A function without its name is the macro's error to report.
            if (kind == "redis_function") != options.name.is_some() {
                continue;
            }
            let syn::Meta::List(list) = &attr.meta else {
                continue;
            };
            let named = std::fs::canonicalize(self.crate_dir.join(&options.path));
            if named.ok().as_deref() != Some(self.script) {
                continue;
            }
            let allow_at = match options.allow_close {
                Some((close, before)) => Some(AllowAt {
                    place: self.place(close),
                    before,
                    after: "",
                }),
                None => {
                    let trailing_comma = list.tokens.clone().into_iter().last().is_some_and(
                        |t| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','),
                    );
                    Some(AllowAt {
                        place: self.place(list.delimiter.span().close()),
                        before: if trailing_comma {
                            " allow("
                        } else {
                            ", allow("
                        },
                        after: ")",
                    })
                }
            };
            let mut declaration = self.declaration(item, options);
            declaration.allow_at = allow_at;
            self.found.push(declaration);
            return;
        }
    }
}

impl Finder<'_> {
    fn declaration(&self, item: &syn::ItemStruct, options: Options) -> Declaration {
        let mut keys = Vec::new();
        let mut args = Vec::new();
        let (mut keys_variadic, mut args_variadic) = (false, false);
        for (index, field) in item.fields.iter().enumerate() {
            let name = field
                .ident
                .as_ref()
                .map_or_else(|| index.to_string(), Ident::to_string);
            let place = self.place(
                field
                    .ident
                    .as_ref()
                    .map_or_else(|| syn::spanned::Spanned::span(&field.ty), Ident::span),
            );
            for attr in &field.attrs {
                let Some(role) = attr.path().get_ident().map(Ident::to_string) else {
                    continue;
                };
                let variadic = matches!(&attr.meta, syn::Meta::List(list)
                    if list.tokens.to_string().trim() == "variadic");
                match role.as_str() {
                    "key" if variadic => keys_variadic = true,
                    "key" => keys.push((name.clone(), place.clone())),
                    "arg" if variadic => args_variadic = true,
                    "arg" => args.push((name.clone(), place.clone())),
                    _ => {}
                }
            }
        }
        Declaration {
            name: item.ident.to_string(),
            place: self.place(item.ident.span()),
            declared: Declared {
                keys: keys.len(),
                keys_variadic,
                args: args.len(),
                args_variadic,
            },
            keys,
            args,
            returns: options
                .returns
                .as_ref()
                .map(redlua_analyzer::rust_types::returns_of),
            read_only: options.read_only,
            allow: options.allow,
            target: options.target,
            allow_at: None,
            function: options.name,
        }
    }
}

/// The options of a `#[redis_script]` attribute that the checks use.
struct Options {
    path: String,
    returns: Option<Type>,
    read_only: bool,
    allow: Vec<Lint>,
    target: Option<ServerTarget>,
    /// The `)` of `allow(...)`, and what goes before one more name there.
    allow_close: Option<(proc_macro2::Span, &'static str)>,
    /// `name = "f"` (`#[redis_function]`).
    name: Option<String>,
}

impl Options {
    /// `"path"`, then options; an option it does not know ends the list
    /// (the macro reports it; the rest is taken as declared).
    fn parse(input: ParseStream<'_>) -> syn::Result<Options> {
        let path: LitStr = input.parse()?;
        let mut options = Options {
            path: path.value(),
            returns: None,
            read_only: false,
            allow: Vec::new(),
            target: None,
            allow_close: None,
            name: None,
        };
        while input.parse::<Token![,]>().is_ok() && !input.is_empty() {
            if input.peek(Token![crate]) {
                input.parse::<Token![crate]>()?;
                input.parse::<Token![=]>()?;
                input.parse::<syn::Path>()?;
                continue;
            }
            let name: Ident = input.parse()?;
            match name.to_string().as_str() {
                "returns" => {
                    input.parse::<Token![=]>()?;
                    options.returns = Some(input.parse()?);
                }
                "read_only" => options.read_only = true,
                "allow" => {
                    let content;
                    let paren = syn::parenthesized!(content in input);
                    let names = content.parse_terminated(<Ident as Parse>::parse, Token![,])?;
                    let before = if names.is_empty() {
                        ""
                    } else if names.trailing_punct() {
                        " "
                    } else {
                        ", "
                    };
                    options.allow_close = Some((paren.span.close(), before));
                    options.allow = names
                        .iter()
                        .filter_map(|n| Lint::from_name(&n.to_string()))
                        .collect();
                }
                "target" => {
                    input.parse::<Token![=]>()?;
                    let target: LitStr = input.parse()?;
                    options.target = target.value().parse().ok();
                }
                "name" => {
                    input.parse::<Token![=]>()?;
                    let name: LitStr = input.parse()?;
                    options.name = Some(name.value());
                }
                _ => break,
            }
        }
        // Whatever follows is left unread.
        let _ = input.step(|cursor| {
            let mut rest = *cursor;
            while let Some((_, next)) = rest.token_tree() {
                rest = next;
            }
            Ok(((), rest))
        });
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::ReturnKind;

    fn declared(item: &str) -> Option<Declaration> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("s.lua"), "return 1").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), item).unwrap();
        find(&dir.path().join("s.lua"), dir.path())
    }

    #[test]
    fn fields_variadic_tails_and_options() {
        let found = declared(
            "#[redlua::redis_script(\"s.lua\", read_only, returns = Option<String>, \
             target = \"valkey-8.0\", allow(arity, no_such_lint))]\n\
             struct S { #[key] a: String, #[key(variadic)] rest: Vec<String>, #[arg] b: i64, c: u8 }",
        )
        .unwrap();
        assert_eq!(found.name, "S");
        assert_eq!(
            found.declared,
            Declared {
                keys: 1,
                keys_variadic: true,
                args: 1,
                args_variadic: false
            }
        );
        assert_eq!(
            found.returns,
            Some(Returns::nullable(ReturnKind::String).written("Option<String>"))
        );
        assert!(found.read_only);
        assert_eq!(found.allow, [Lint::Arity]);
        assert_eq!(found.target, Some(ServerTarget::Valkey8_0));
        assert_eq!(found.place.line, 2);
    }

    /// `item` with `lint` written where [`Declaration::allow_at`] says.
    fn allowing(item: &str, lint: &str) -> String {
        let at = declared(item).unwrap().allow_at.unwrap();
        let line_start: usize = item
            .split_inclusive('\n')
            .take(at.place.line - 1)
            .map(str::len)
            .sum();
        let column: usize = item[line_start..]
            .chars()
            .take(at.place.column)
            .map(char::len_utf8)
            .sum();
        let mut out = item.to_string();
        out.insert_str(
            line_start + column,
            &format!("{}{lint}{}", at.before, at.after),
        );
        out
    }

    #[test]
    fn one_more_lint_goes_into_allow_or_a_new_allow() {
        let tail = "\nstruct S { #[key] a: String }";
        let cases = [
            (
                "#[redis_script(\"s.lua\", allow(arity))]",
                "#[redis_script(\"s.lua\", allow(arity, literal_key))]",
            ),
            (
                "#[redis_script(\"s.lua\", allow(arity,))]",
                "#[redis_script(\"s.lua\", allow(arity, literal_key))]",
            ),
            (
                "#[redis_script(\"s.lua\", allow())]",
                "#[redis_script(\"s.lua\", allow(literal_key))]",
            ),
            (
                "#[redis_script(\"s.lua\", returns = i64)]",
                "#[redis_script(\"s.lua\", returns = i64, allow(literal_key))]",
            ),
            (
                "/// \u{e9}t\u{e9}\n#[redis_script(\n    \"s.lua\",\n)]",
                "/// \u{e9}t\u{e9}\n#[redis_script(\n    \"s.lua\",\n allow(literal_key))]",
            ),
        ];
        for (attr, expected) in cases {
            let written = allowing(&format!("{attr}{tail}"), "literal_key");
            assert_eq!(written, format!("{expected}{tail}"));
            assert_eq!(
                declared(&written).unwrap().allow.last(),
                Some(&Lint::LiteralKey)
            );
        }
    }

    #[test]
    fn another_path_or_broken_code_declares_nothing() {
        assert_eq!(
            declared("#[redis_script(\"other/s.lua\")] struct S { #[key] a: String }"),
            None
        );
        assert_eq!(
            declared("#[redis_script(\"s.lua\")] struct S { #[key] a: String "),
            None
        );
        let tuple =
            declared("#[redis_script(\"s.lua\", returns = (i64, i64))] struct T(#[arg] i64);")
                .unwrap();
        assert_eq!(tuple.declared, Declared::exact(0, 1));
        assert_eq!(
            tuple.returns.map(|r| (r.kind, r.nullable)),
            Some((ReturnKind::Array, false))
        );
    }
}
