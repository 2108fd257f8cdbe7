//! The VS Code extension in `editors/vscode/`: its manifest has what VS Code
//! and its packager need, its version is the server's, the script it names
//! starts `redlua-lsp` for Lua files with the setting it declares, and
//! Microsoft's packager (vsce, run by `editors/vscode/package`, which
//! installs Node.js when it is missing) makes a `.vsix` of it with the
//! language client inside.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode")
}

fn manifest() -> Value {
    let path = extension_dir().join("package.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn text_at<'a>(manifest: &'a Value, pointer: &str) -> &'a str {
    manifest
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("package.json has no string at {pointer}"))
}

#[test]
fn the_manifest_has_the_fields_vs_code_and_its_packager_need() {
    let manifest = manifest();
    // A lower-case name without spaces, as the marketplace takes it.
    let name = text_at(&manifest, "/name");
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    assert!(!text_at(&manifest, "/publisher").is_empty());
    assert!(!text_at(&manifest, "/description").is_empty());
    assert_eq!(text_at(&manifest, "/version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(text_at(&manifest, "/license"), "MIT OR Apache-2.0");
    let engine = text_at(&manifest, "/engines/vscode");
    assert!(engine.starts_with('^'), "{engine}");
    // The language client's major version needs VS Code 1.82 or later.
    let client = text_at(&manifest, "/dependencies/vscode-languageclient");
    assert!(client.starts_with("^9."), "{client}");
    let minor: u32 = engine
        .trim_start_matches("^1.")
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("engines.vscode is not ^1.N.x: {engine}"));
    assert!(minor >= 82, "{engine}");
    let events = manifest["activationEvents"]
        .as_array()
        .expect("activationEvents is a list");
    assert!(events.iter().any(|e| e == "onLanguage:lua"), "{events:?}");
}

#[test]
fn main_starts_the_server_with_the_declared_setting() {
    let manifest = manifest();
    let main = text_at(&manifest, "/main");
    let script_path = extension_dir().join(main);
    let script = std::fs::read_to_string(&script_path)
        .unwrap_or_else(|e| panic!("main {} cannot be read: {e}", script_path.display()));
    let setting = manifest
        .pointer("/contributes/configuration/properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get("redlua.server.path"))
        .expect("the redlua.server.path setting");
    assert_eq!(setting["default"], "redlua-lsp");
    assert_eq!(setting["type"], "string");
    for needed in [
        "require('vscode-languageclient/node')",
        "getConfiguration('redlua').get('server.path', 'redlua-lsp')",
        "language: 'lua'",
        "function activate(",
        "function deactivate(",
        "module.exports = { activate, deactivate }",
    ] {
        assert!(script.contains(needed), "{main} lacks `{needed}`");
    }
    // VS Code's packager wants a README next to the manifest.
    assert!(extension_dir().join("README.md").is_file());
}

#[test]
fn vsce_packages_the_extension_with_its_script_and_language_client() {
    let package = Command::new(extension_dir().join("package"))
        .output()
        .expect("editors/vscode/package runs");
    let out = String::from_utf8_lossy(&package.stdout);
    assert!(
        package.status.success(),
        "editors/vscode/package failed:\n{out}\n{}",
        String::from_utf8_lossy(&package.stderr)
    );
    let vsix = PathBuf::from(out.lines().last().expect("the package's path"));
    assert_eq!(
        vsix.file_name().and_then(|n| n.to_str()),
        Some(format!("redlua-{}.vsix", env!("CARGO_PKG_VERSION")).as_str())
    );
    // The entries of the package (a zip), listed by Python's zipfile.
    let listing = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(&vsix)
        .output()
        .expect("python3 lists the package");
    assert!(listing.status.success(), "{listing:?}");
    let listing = String::from_utf8_lossy(&listing.stdout);
    let entries: Vec<&str> = listing.lines().collect();
    for needed in [
        "extension.vsixmanifest",
        "[Content_Types].xml",
        "extension/package.json",
        "extension/extension.js",
        "extension/README.md",
        "extension/LICENSE.txt",
        "extension/node_modules/vscode-languageclient/node.js",
        "extension/node_modules/vscode-languageclient/package.json",
    ] {
        assert!(
            entries.contains(&needed),
            "{needed} is not in the package:\n{listing}"
        );
    }
}
