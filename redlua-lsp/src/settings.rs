//! What a document is checked against: its target server, and what its
//! header declares (keys, arguments, result type), as `lockctl lint` decides
//! it for a file on disk.
//!
//! When a `#[redis_script("path")]` struct of the script's crate names the
//! file ([`crate::rust_decl`]), its fields, `returns`, `read_only` and
//! `allow` are what the script is checked against, as the macro checks it;
//! otherwise its header's `keys`, `args` and `returns`.
//!
//! The target is, from the first that says: the struct's `target = "..."`,
//! the script's header (`-- redlua: target=redis-7.4`), the
//! `[package.metadata.redlua]` target of the nearest `Cargo.toml` above the
//! file, and redis-7.0. A Redis
//! Functions library (`#!lua name=...`) takes only its target and `allow`
//! from its header (a `-- redlua:` comment line after `#!lua`): its
//! functions declare their own inputs, in the `#[redis_function("path",
//! name = "f")]` structs that name the library, each checked against its
//! function's body as the macro checks it.

use crate::rust_decl::Declaration;
use redlua_analyzer::header::{self, Header, HeaderError};
use redlua_analyzer::{Options, ServerTarget, manifest};
use std::path::{Path, PathBuf};

/// The crate-wide setting found for a file: the manifest it came from, and
/// the target, or why the manifest cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateTarget {
    /// The nearest `Cargo.toml` above the file, if any.
    pub manifest: Option<PathBuf>,
    /// Its target (`None`: it sets none), or the error reading it.
    pub target: Result<Option<ServerTarget>, String>,
}

impl Default for CrateTarget {
    /// No `Cargo.toml`: no crate-wide target.
    fn default() -> Self {
        CrateTarget {
            manifest: None,
            target: Ok(None),
        }
    }
}

/// The settings of one analysis.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The analyzer's options.
    pub options: Options,
    /// The header, as read (empty when it has an error).
    pub header: Header,
    /// The header's error, if it has one.
    pub header_error: Option<HeaderError>,
    /// The manifest's error, if the nearest `Cargo.toml` cannot be read.
    pub manifest_error: Option<String>,
    /// Whether the script is a Redis Functions library.
    pub library: bool,
    /// The Rust struct that declares the script, if one does.
    pub rust: Option<Declaration>,
    /// For a library: the Rust structs that declare its functions.
    pub functions: Vec<Declaration>,
}

/// The nearest `Cargo.toml` at or above `dir`, and its target.
pub fn crate_target(dir: &Path) -> CrateTarget {
    for ancestor in dir.ancestors() {
        let path = ancestor.join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let target = manifest::target_of(&text)
                .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message));
            return CrateTarget {
                manifest: Some(path),
                target,
            };
        }
    }
    CrateTarget::default()
}

/// The settings for `source`, given its crate's target and its Rust
/// declaration.
pub fn for_source(source: &str, crate_target: &CrateTarget, rust: &[Declaration]) -> Settings {
    let library = is_library(source);
    let (found, header_error) = match header::parse(source) {
        Ok(found) => (found, None),
        Err(error) => (Header::default(), Some(error)),
    };
    let (crate_wide, manifest_error) = match &crate_target.target {
        Ok(target) => (*target, None),
        Err(message) => (None, Some(message.clone())),
    };
    let mut options = Options {
        target: found.target.or(crate_wide).unwrap_or_default(),
        ..Options::default()
    };
    if library {
        options.allow = found.allow.clone().unwrap_or_default();
    } else {
        found.apply(&mut options);
    }
    let functions: Vec<Declaration> = rust
        .iter()
        .filter(|d| library && d.function.is_some())
        .cloned()
        .collect();
    let rust = rust.iter().find(|d| !library && d.function.is_none());
    if let Some(declaration) = rust {
        options.declared = Some(declaration.declared);
        options.returns = declaration.returns.clone();
        options.read_only = declaration.read_only;
        options.allow = declaration.allow.clone();
        if let Some(target) = declaration.target {
            options.target = target;
        }
    }
    Settings {
        options,
        header: found,
        header_error,
        manifest_error,
        library,
        rust: rust.cloned(),
        functions,
    }
}

/// Whether `source` is a Redis Functions library: `#!lua name=...` first.
pub fn is_library(source: &str) -> bool {
    let first = source.lines().next().unwrap_or("");
    first.starts_with("#!lua") && first.split_whitespace().any(|w| w.starts_with("name="))
}

/// The local path of a `file:` URI, percent-decoded; `None` for another
/// scheme, or one that does not decode to UTF-8.
pub fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            i += 3;
            continue;
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

/// The `file:` URI of an absolute path, percent-encoding what a URI path
/// may not hold.
pub fn file_uri(path: &Path) -> Option<lsp_types::Uri> {
    let text = path.to_str()?;
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte);
        if keep {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_to_paths() {
        assert_eq!(
            file_path("file:///tmp/a%20b/s.lua"),
            Some(PathBuf::from("/tmp/a b/s.lua"))
        );
        assert_eq!(
            file_path("file://localhost/x.lua"),
            Some(PathBuf::from("/x.lua"))
        );
        assert_eq!(file_path("untitled:Untitled-1"), None);
        assert_eq!(file_path("file:///%ff"), None);
        let uri = file_uri(Path::new("/tmp/a b/é.lua")).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9.lua");
        assert_eq!(
            file_path(uri.as_str()),
            Some(PathBuf::from("/tmp/a b/é.lua"))
        );
    }

    #[test]
    fn the_header_target_wins_over_the_crate() {
        let crate_wide = CrateTarget {
            manifest: None,
            target: Ok(Some(ServerTarget::Redis7_4)),
        };
        let plain = for_source("return 1", &crate_wide, &[]);
        assert_eq!(plain.options.target, ServerTarget::Redis7_4);
        let headed = for_source(
            "-- redlua: target=valkey-8.0 keys=1\nreturn 1",
            &crate_wide,
            &[],
        );
        assert_eq!(headed.options.target, ServerTarget::Valkey8_0);
        assert_eq!(headed.options.declared.map(|d| d.keys), Some(1));
        let broken = for_source("-- redlua: key=1\nreturn 1", &crate_wide, &[]);
        assert!(broken.header_error.is_some());
        assert_eq!(broken.options.target, ServerTarget::Redis7_4);
    }
}
