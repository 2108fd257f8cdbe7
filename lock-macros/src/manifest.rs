//! The crate-wide default target: `target = "..."` under
//! `[package.metadata.redlua]` in the invoking crate's `Cargo.toml`, read
//! by [`redlua_analyzer::manifest`].

use redlua_analyzer::manifest::target_of;
use std::path::Path;

/// The target set in `dir/Cargo.toml`, `None` when it sets none (or there is
/// no `Cargo.toml`), or a message saying what is wrong, naming the file and
/// line.
pub fn target_in(dir: &Path) -> Result<Option<redlua_analyzer::ServerTarget>, String> {
    let path = dir.join("Cargo.toml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    target_of(&text).map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlua_analyzer::ServerTarget;

    #[test]
    fn files_are_read_from_the_directory() {
        let dir = std::env::temp_dir().join(format!("redlua-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(target_in(&dir), Ok(None), "no Cargo.toml");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package.metadata.redlua]\ntarget = \"nope\"\n",
        )
        .unwrap();
        let message = target_in(&dir).unwrap_err();
        assert!(
            message.starts_with(&format!(
                "{}:2: unknown target `nope`",
                dir.join("Cargo.toml").display()
            )),
            "{message}"
        );
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package.metadata.redlua]\ntarget = \"valkey-7.2\"\n",
        )
        .unwrap();
        assert_eq!(target_in(&dir), Ok(Some(ServerTarget::Valkey7_2)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
