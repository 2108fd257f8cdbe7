//! Compile-time behavior of `#[redis_script]` and `#[redis_function]`: every
//! kind of error the macros report (`tests/ui/fail/*.rs`, with the expected
//! compiler output in the `.stderr` file next to each case) and code they
//! accept (`tests/ui/pass/*.rs`, built and run).
//!
//! The cases live in this crate, not in the `redlua` facade, because
//! trybuild builds them in a crate of its own that has every dependency and
//! dev-dependency of the crate under test, compiled again in a target
//! directory of its own: here that is the facade without its lock runtime,
//! and no TLS, metrics or test-support.
//!
//! Regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p redlua-macros --test ui`, then read
//! every changed `.stderr`: it is the error message users see.
//!
//! # How the cases find their `.lua` files
//!
//! `#[redis_script("path")]` resolves `path` against the `CARGO_MANIFEST_DIR`
//! of the crate being compiled. trybuild does not compile the cases in this
//! crate: it writes a throwaway crate to
//! `<target dir>/tests/trybuild/redlua-macros/`
//! (named by `cargo metadata`'s `target_directory`, so `CARGO_TARGET_DIR` and
//! `build.target-dir` move it) whose `Cargo.toml` lists the cases as binaries,
//! and builds it there; that directory is the cases' `CARGO_MANIFEST_DIR`, and
//! trybuild offers no way to change it.
//!
//! Rather than writing paths that climb out of the target directory (which
//! would break as soon as the target directory is elsewhere), the cases name
//! their scripts as they are in this crate, `tests/ui/scripts/x.lua`,
//! and this test copies `tests/ui/scripts/` into the throwaway crate at the
//! same relative place before trybuild builds it. The paths in the cases thus
//! mean the same thing from this crate's directory and from trybuild's crate, the
//! error messages show them exactly as written, and nothing depends on where
//! the target directory is. The copy is refreshed on every run (a copy rather
//! than a symbolic link, so it also works where links are not available).

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn ui() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = trybuild_project_dir();
    let scripts = project.join("tests").join("ui").join("scripts");
    if scripts.exists() {
        std::fs::remove_dir_all(&scripts)
            .unwrap_or_else(|e| panic!("cannot clear {}: {e}", scripts.display()));
    }
    copy_dir(&manifest_dir.join("tests/ui/scripts"), &scripts);

    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
    // The cases run when `cases` is dropped, after the copy above.
}

/// The directory trybuild builds this crate's cases in:
/// `<target_directory>/tests/trybuild/<crate name>/`, as trybuild computes it.
fn trybuild_project_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version=1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cannot run `cargo metadata`");
    assert!(
        output.status.success(),
        "`cargo metadata` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("`cargo metadata` printed invalid JSON");
    let target = metadata["target_directory"]
        .as_str()
        .expect("`cargo metadata` has no target_directory");
    Path::new(target)
        .join("tests")
        .join("trybuild")
        .join(env!("CARGO_PKG_NAME"))
}

/// Copies the files of `from` into `to` (created), recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("cannot list {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("cannot read a directory entry");
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|e| {
                panic!(
                    "cannot copy {} to {}: {e}",
                    path.display(),
                    target.display()
                )
            });
        }
    }
}
