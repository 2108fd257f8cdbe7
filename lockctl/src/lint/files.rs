//! Which files `lockctl lint` checks.
//!
//! A path named on the command line is checked whatever its name; `-` is
//! standard input. A directory is searched recursively for files whose name
//! ends in `.lua`, in name order. The search skips hidden directories (a
//! name starting with `.`, such as `.git`), `node_modules`, and symbolic
//! links to directories (so that a link cannot make it loop).

use std::path::{Path, PathBuf};

/// Directories the search does not enter, besides hidden ones.
const SKIPPED: &[&str] = &["node_modules"];

/// A file to check, or a path that could not be searched.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// A file to read and check.
    Script(PathBuf),
    /// A directory that could not be listed, and why.
    Unreadable(PathBuf, String),
}

/// The files the command-line paths name, in order.
pub fn expand(paths: &[PathBuf]) -> Vec<Found> {
    let mut found = Vec::new();
    for path in paths {
        if path.as_os_str() != "-" && path.is_dir() {
            search(path, &mut found);
        } else {
            found.push(Found::Script(path.clone()));
        }
    }
    found
}

/// Adds the `.lua` files under `dir`, sorted by name, directories' files
/// where the directory sorts.
fn search(dir: &Path, found: &mut Vec<Found>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            found.push(Found::Unreadable(dir.to_path_buf(), error.to_string()));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(error) => found.push(Found::Unreadable(dir.to_path_buf(), error.to_string())),
        }
    }
    paths.sort();
    for path in paths {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue; // gone since it was listed
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.as_deref().unwrap_or("");
        if metadata.is_dir() {
            if !name.starts_with('.') && !SKIPPED.contains(&name) {
                search(&path, found);
            }
        } else if name.ends_with(".lua") && !path.is_dir() {
            found.push(Found::Script(path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "return 1\n").unwrap();
    }

    #[test]
    fn directories_are_searched_recursively_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in [
            "b.lua",
            "a/z.lua",
            "a/deep/y.lua",
            "notes.txt",
            "c.LUA.bak",
            ".git/hooks/x.lua",
            "node_modules/bull/lib/commands/m.lua",
        ] {
            touch(&root.join(name));
        }
        let found = expand(&[
            root.to_path_buf(),
            PathBuf::from("-"),
            root.join("notes.txt"),
        ]);
        let expected: Vec<Found> = [
            root.join("a/deep/y.lua"),
            root.join("a/z.lua"),
            root.join("b.lua"),
            PathBuf::from("-"),
            root.join("notes.txt"),
        ]
        .into_iter()
        .map(Found::Script)
        .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_link_to_a_directory_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("sub/a.lua"));
        std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("sub/a.lua"), root.join("link.lua")).unwrap();
        let found = expand(&[root.to_path_buf()]);
        assert_eq!(
            found,
            vec![
                Found::Script(root.join("link.lua")),
                Found::Script(root.join("sub/a.lua"))
            ]
        );
    }

    #[test]
    fn a_missing_path_is_left_to_the_reader() {
        let found = expand(&[PathBuf::from("/nonexistent/x.lua")]);
        assert_eq!(
            found,
            vec![Found::Script(PathBuf::from("/nonexistent/x.lua"))]
        );
    }
}
