//! Every public async method of the runtime says, in a `# Cancellation`
//! section of its documentation, what happens when its future is dropped:
//! a caller of `select!` or `timeout` needs to know what a dropped acquire,
//! release or wait leaves behind. The test reads the sources.

use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The public async functions of `text` whose doc comment (with the
/// attributes between it and the function) has no `# Cancellation`
/// heading: `line: signature`.
fn undocumented(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut missing = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let line = line.trim_start();
        if !line.starts_with("pub async fn ") {
            continue;
        }
        let documented = lines[..at]
            .iter()
            .rev()
            .map(|l| l.trim_start())
            .take_while(|l| l.starts_with("///") || l.starts_with("#["))
            .any(|l| l.trim() == "/// # Cancellation");
        if !documented {
            missing.push(format!("{}: {}", at + 1, line));
        }
    }
    missing
}

#[test]
fn every_public_async_method_says_what_dropping_its_future_does() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        checked += text.matches("pub async fn ").count();
        for gap in undocumented(&text) {
            missing.push(format!("{}:{gap}", file.display()));
        }
    }
    assert!(checked > 50, "only {checked} public async functions found");
    assert!(
        missing.is_empty(),
        "public async functions without a `# Cancellation` section:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_function_without_the_section_is_found() {
    let text = "/// Does it.\npub async fn it() {}\n\n/// Does it.\n///\n/// # Cancellation\n///\n/// Nothing.\n#[inline]\npub async fn that() {}\n";
    assert_eq!(undocumented(text), ["2: pub async fn it() {}"]);
}
