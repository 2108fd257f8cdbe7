//! End to end through a real editor-protocol client: pytest-lsp starts the
//! `redlua-lsp` binary and speaks to it over stdio as an editor does
//! (`tests/client/test_editor.py`: diagnostics with their codes and
//! ranges, hover, completion, a quick fix, a change).
//!
//! The client is installed by `tools/ensure-lsp-client` (a virtual
//! environment under the target directory); when it cannot be installed,
//! this test fails, it never skips.

use std::path::Path;
use std::process::Command;

#[test]
fn pytest_lsp_drives_the_server_over_stdio() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.parent().expect("the workspace root");
    let ensure = Command::new(root.join("tools/ensure-lsp-client"))
        .output()
        .expect("tools/ensure-lsp-client runs");
    let ensure_out = String::from_utf8_lossy(&ensure.stdout);
    assert!(
        ensure.status.success(),
        "tools/ensure-lsp-client failed: the end-to-end client cannot be installed\n{ensure_out}\n{}",
        String::from_utf8_lossy(&ensure.stderr)
    );
    let python = ensure_out.lines().last().expect("the venv's python");
    let output = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"])
        .arg(crate_dir.join("tests/client"))
        .env("REDLUA_LSP", env!("CARGO_BIN_EXE_redlua-lsp"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("pytest runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    // Every test ran and passed: none skipped, none missing.
    let summary = report
        .lines()
        .rev()
        .find(|line| line.contains(" in ") && line.contains("passed"))
        .unwrap_or_else(|| panic!("no summary line:\n{report}"));
    assert!(summary.starts_with("3 passed in "), "{summary}\n{report}");
}
