//! The Lua file named by the attribute, and the server it must run on: the
//! file is read relative to `CARGO_MANIFEST_DIR` (never from an absolute
//! path, which would build only where the file is), and the target comes
//! from the attribute's `target = ...`, else from the invoking crate's
//! `Cargo.toml`, else the default.

use crate::attr::Attr;
use crate::errors::combine;
use redlua_analyzer::ServerTarget;
use std::path::{Path, PathBuf};

/// Reads `written` relative to `CARGO_MANIFEST_DIR`, or says why it cannot.
pub fn read(written: &str) -> Result<String, String> {
    let Some(manifest_dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Err(format!(
            "cannot locate `{written}`: CARGO_MANIFEST_DIR is not set (script paths are \
             relative to the crate's Cargo.toml, so the crate must be built by Cargo)"
        ));
    };
    if is_absolute(written) {
        let manifest_dir = Path::new(&manifest_dir);
        let relative = Path::new(written)
            .strip_prefix(manifest_dir)
            .ok()
            .map(|p| p.display().to_string().replace('\\', "/"));
        let help = match relative {
            Some(relative) if !relative.is_empty() => format!("write `\"{relative}\"`"),
            _ => "move the script into the crate, e.g. to `scripts/`, and write its path \
                  from there"
                .to_owned(),
        };
        return Err(format!(
            "the script path `{written}` is absolute; script paths are relative to the \
             directory of the crate's Cargo.toml (CARGO_MANIFEST_DIR), so that the crate \
             builds wherever it is checked out\n  = help: {help}"
        ));
    }
    let resolved = Path::new(&manifest_dir).join(written);
    let bytes = std::fs::read(&resolved).map_err(|e| {
        format!(
            "cannot read Lua script `{written}`: {e}\n  = note: script paths are relative to \
             the directory of the crate's Cargo.toml (CARGO_MANIFEST_DIR); this one resolves \
             to `{}`",
            display_path(&resolved)
        )
    })?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "Lua script `{written}` is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Whether `written` is an absolute path on any platform (`/x`, `\\x`,
/// `C:\\x`, `C:/x`): `include_str!` would join it to CARGO_MANIFEST_DIR.
fn is_absolute(written: &str) -> bool {
    let bytes = written.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    written.starts_with(['/', '\\']) || drive || Path::new(written).is_absolute()
}

/// `path` relative to the current directory (where Cargo runs the compiler:
/// the workspace root) when it is inside it, else as it is.
fn display_path(path: &Path) -> String {
    let relative: Option<PathBuf> = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
        .replace('\\', "/")
}

/// The target of the attribute's `target = ...`, else the crate-wide one;
/// a bad crate-wide setting is reported at the path.
pub fn target_of(attr: &Attr, errors: &mut Option<syn::Error>) -> ServerTarget {
    match attr.target {
        Some(target) => target,
        None => crate_target().unwrap_or_else(|message| {
            combine(errors, syn::Error::new(attr.path.span(), message));
            ServerTarget::default()
        }),
    }
}

/// The crate-wide target of `[package.metadata.redlua]` in the invoking
/// crate's `Cargo.toml`, else the default.
fn crate_target() -> Result<ServerTarget, String> {
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return Ok(ServerTarget::default());
    };
    Ok(crate::manifest::target_in(Path::new(&dir))?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_not_absolute() {
        assert!(!is_absolute("scripts/x.lua") && !is_absolute("./x.lua"));
        for path in ["/etc/x.lua", "\\\\server\\x.lua", "C:\\x.lua", "c:/x.lua"] {
            assert!(is_absolute(path), "{path}");
        }
    }
}
