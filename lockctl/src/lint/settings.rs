//! What `lockctl lint` checks a script against.
//!
//! The target server is, from the first that says: the script's header
//! (`-- redlua: target=redis-7.4`), `--target`, the
//! `[package.metadata.redlua]` target of the crate the script is in (the
//! nearest `Cargo.toml` above it; standard input is in the current
//! directory), and redis-7.0. The header also declares the keys, arguments
//! and result type that the arity and return lints check (see
//! [`redlua_analyzer::header`]); a Redis Functions library takes only its
//! target from it, its functions declaring their own.

use redlua_analyzer::header::{self, HeaderError};
use redlua_analyzer::{Options, ServerTarget, manifest};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A script's options, and what is wrong with its header if anything (the
/// script is then checked without the header).
pub struct Settings {
    /// The options to analyze it with.
    pub options: Options,
    /// Its header's mistake.
    pub header_error: Option<HeaderError>,
}

/// The crate targets found so far, by directory.
#[derive(Default)]
pub struct CrateTargets {
    by_dir: HashMap<PathBuf, Result<Option<ServerTarget>, String>>,
}

impl CrateTargets {
    /// The `[package.metadata.redlua]` target of the crate `script` is in:
    /// `None` when no `Cargo.toml` is above it or it sets no target, or
    /// what is wrong with the setting (naming the file and line).
    pub fn of(&mut self, script: &Path) -> Result<Option<ServerTarget>, String> {
        let start = if script.as_os_str() == "-" {
            std::env::current_dir().unwrap_or_default()
        } else {
            let absolute = std::path::absolute(script).unwrap_or_else(|_| script.to_path_buf());
            absolute.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        if let Some(known) = self.by_dir.get(&start) {
            return known.clone();
        }
        let found = crate_target(&start);
        self.by_dir.insert(start, found.clone());
        found
    }
}

/// The target set by the nearest `Cargo.toml` in `dir` or above it.
fn crate_target(dir: &Path) -> Result<Option<ServerTarget>, String> {
    for ancestor in dir.ancestors() {
        let path = ancestor.join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            return manifest::target_of(&text)
                .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message));
        }
    }
    Ok(None)
}

/// The options for `source`, read from `path`, given `--target`; an error
/// when the crate's `Cargo.toml` sets a target it cannot read.
pub fn for_script(
    source: &str,
    path: &Path,
    library: bool,
    cli_target: Option<ServerTarget>,
    crates: &mut CrateTargets,
) -> Result<Settings, String> {
    let (found, header_error) = match header::parse(source) {
        Ok(found) => (found, None),
        Err(error) => (header::Header::default(), Some(error)),
    };
    let target = match found.target.or(cli_target) {
        Some(target) => target,
        None => crates.of(path)?.unwrap_or_default(),
    };
    let mut options = Options {
        target,
        ..Options::default()
    };
    if !library {
        found.apply(&mut options);
    }
    Ok(Settings {
        options,
        header_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::ReturnKind;

    const MANIFEST: &str =
        "[package]\nname = \"x\"\n\n[package.metadata.redlua]\ntarget = \"redis-7.4\"\n";

    #[test]
    fn the_nearest_cargo_toml_gives_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("crate/scripts/deep")).unwrap();
        std::fs::write(root.join("crate/Cargo.toml"), MANIFEST).unwrap();
        let mut crates = CrateTargets::default();
        let script = root.join("crate/scripts/deep/a.lua");
        assert_eq!(crates.of(&script), Ok(Some(ServerTarget::Redis7_4)));
        // Outside the crate, nothing.
        assert_eq!(crates.of(&root.join("a.lua")), Ok(None));
        // A nearer Cargo.toml without the setting hides the outer one.
        std::fs::write(
            root.join("crate/scripts/Cargo.toml"),
            "[package]\nname = \"y\"\n",
        )
        .unwrap();
        let mut crates = CrateTargets::default();
        assert_eq!(crates.of(&script), Ok(None));
    }

    #[test]
    fn a_bad_setting_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package.metadata.redlua]\ntarget = \"redis-9\"\n",
        )
        .unwrap();
        let message = CrateTargets::default()
            .of(&dir.path().join("a.lua"))
            .unwrap_err();
        let expected = format!(
            "{}:2: unknown target",
            dir.path().join("Cargo.toml").display()
        );
        assert!(message.starts_with(&expected), "{message}");
    }

    #[test]
    fn the_header_wins_then_the_command_line_then_the_crate() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), MANIFEST).unwrap();
        let script = dir.path().join("a.lua");
        let target = |source: &str, cli: Option<ServerTarget>| {
            for_script(source, &script, false, cli, &mut CrateTargets::default())
                .unwrap()
                .options
                .target
        };
        let plain = "return 1\n";
        let headed = "-- redlua: target=valkey-8.0\nreturn 1\n";
        assert_eq!(target(plain, None), ServerTarget::Redis7_4);
        assert_eq!(
            target(plain, Some(ServerTarget::Redis8_0)),
            ServerTarget::Redis8_0
        );
        assert_eq!(
            target(headed, Some(ServerTarget::Redis8_0)),
            ServerTarget::Valkey8_0
        );
        let elsewhere = for_script(
            plain,
            Path::new("/a.lua"),
            false,
            None,
            &mut CrateTargets::default(),
        );
        assert_eq!(elsewhere.unwrap().options.target, ServerTarget::Redis7_0);
    }

    #[test]
    fn a_library_takes_only_the_target_from_its_header() {
        let source = "#!lua name=l\n-- redlua: keys=1 returns=integer target=redis-8.0\n";
        let mut crates = CrateTargets::default();
        let library = for_script(source, Path::new("/l.lua"), true, None, &mut crates).unwrap();
        assert_eq!(library.options.target, ServerTarget::Redis8_0);
        assert_eq!(library.options.declared, None);
        let script = for_script(source, Path::new("/l.lua"), false, None, &mut crates).unwrap();
        assert_eq!(script.options.declared.map(|d| d.keys), Some(1));
        assert_eq!(
            script.options.returns.map(|r| r.kind),
            Some(ReturnKind::Integer)
        );
    }

    #[test]
    fn a_bad_header_is_reported_and_left_out() {
        let settings = for_script(
            "-- redlua: keys=one\nreturn 1\n",
            Path::new("/a.lua"),
            false,
            Some(ServerTarget::Redis7_2),
            &mut CrateTargets::default(),
        )
        .unwrap();
        assert_eq!(settings.header_error.map(|e| e.line), Some(1));
        assert_eq!(settings.options.declared, None);
        assert_eq!(settings.options.target, ServerTarget::Redis7_2);
    }
}
