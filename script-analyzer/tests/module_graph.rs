//! The analyzer's modules import each other without a cycle: each layer
//! (parsing, calls, the value-fact engine, the lint registry, the lints)
//! only uses the layers below it.
//!
//! A module's imports are the `crate::...` and `super::...` paths in its
//! source (tests excluded), resolved to the deepest module file they name.
//! A module depends on its children too (`mod flow;`). A module using its
//! own parent (`super::Types` in `facts/eval.rs`) is not an edge: a folder
//! is one layer, with its `mod.rs` as its face.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of `src`, as its path (`facts::flow`), and its file.
fn modules() -> BTreeMap<String, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable src directory") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path
                .strip_prefix(&root)
                .expect("under src")
                .with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            found.insert(parts.join("::"), path);
        }
    }
    found
}

/// The module a path written in `from` names: the longest known prefix.
fn resolve(modules: &BTreeMap<String, PathBuf>, from: &str, path: &str) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = Vec::new();
    match segments.first().copied() {
        Some("crate") => {
            segments.remove(0);
        }
        Some("super") => {
            base = from.split("::").filter(|s| !s.is_empty()).collect();
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop();
            }
        }
        _ => return None,
    }
    let mut best = None;
    for i in 0..=segments.len() {
        let candidate = [base.clone(), segments[..i].to_vec()].concat().join("::");
        if modules.contains_key(&candidate) {
            best = Some(candidate);
        }
    }
    best
}

/// The paths a source mentions, `crate::a::b` and `super::{a, b}` alike.
fn paths(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = source.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = source[from..].find(start) {
            let begin = from + at;
            from = begin + start.len();
            // Only a path's first segment: not `foo_crate::`.
            if begin > 0 && (bytes[begin - 1].is_ascii_alphanumeric() || bytes[begin - 1] == b'_') {
                continue;
            }
            let rest = &source[begin..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(':');
            if rest[end..].starts_with('{') {
                // `super::{a, b::c}`: one path per item.
                let close = rest[end..].find('}').map_or(rest.len(), |c| end + c);
                for item in rest[end + 1..close].split(',') {
                    let item = item.split_whitespace().next().unwrap_or("");
                    if !item.is_empty() {
                        found.push(format!("{path}::{item}"));
                    }
                }
            } else {
                found.push(path.to_string());
            }
        }
    }
    found
}

/// The imports of each module.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut edges = BTreeMap::new();
    for (name, file) in &modules {
        let source = std::fs::read_to_string(file).expect("readable module");
        // Tests may use anything.
        let source = source.split("#[cfg(test)]").next().unwrap_or("");
        let mut targets = BTreeSet::new();
        for path in paths(source) {
            let Some(target) = resolve(&modules, name, &path) else {
                continue;
            };
            let ancestor = target.is_empty() || name.starts_with(&format!("{target}::"));
            if target != *name && !ancestor {
                targets.insert(target);
            }
        }
        // A module is made of its children (`mod flow;`, `pub use value::Ty`).
        for child in modules.keys() {
            let parent = child.rsplit_once("::").map_or("", |(parent, _)| parent);
            if parent == name && !child.is_empty() && child != name {
                targets.insert(child.clone());
            }
        }
        edges.insert(name.clone(), targets);
    }
    edges
}

/// A cycle through `start`, if there is one.
fn cycle_from(edges: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in edges.get(&node).into_iter().flatten() {
            if next == start {
                return Some([path.clone(), vec![start.to_string()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_itself_through_others() {
    let edges = graph();
    assert!(edges.contains_key("facts::flow"), "{:?}", edges.keys());
    assert!(
        edges["lints"].contains("facts"),
        "the lints use the value facts: {:?}",
        edges["lints"]
    );
    let cycles: Vec<String> = edges
        .keys()
        .filter_map(|m| cycle_from(&edges, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_engine_imports_nothing_from_the_lints() {
    let edges = graph();
    for (module, targets) in &edges {
        if module == "facts" || module.starts_with("facts::") {
            let lints: Vec<&String> = targets
                .iter()
                .filter(|t| *t == "lints" || t.starts_with("lints::"))
                .collect();
            assert!(lints.is_empty(), "{module} imports {lints:?}");
        }
    }
}
