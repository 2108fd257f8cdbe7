//! Production scripts of other projects, taken from their published packages
//! (see `tests/corpus/production/SOURCES`): each must analyze without a
//! single error, as the scripts run on standalone Redis, but for the real
//! bugs listed in `KNOWN_BUGS`, which must be reported; and each must be a
//! script a real `redis-server` compiles (`SCRIPT LOAD`). Warnings are
//! allowed, and printed.

mod support;

use redlua_analyzer::{Options, Severity, analyze};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{Conn, Reply, Server};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/production")
}

/// The projects (directories), sorted.
fn projects() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root())
        .expect("tests/corpus/production exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every script, as `project/file.lua` and its text.
fn scripts() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for dir in projects() {
        let project = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("readable project dir")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "lua"))
            .collect();
        files.sort();
        for file in files {
            let name = format!("{project}/{}", file.file_name().unwrap().to_string_lossy());
            let text = std::fs::read_to_string(&file).expect("readable script");
            found.push((name, text));
        }
    }
    assert!(found.len() >= 150, "the corpus shrank to {}", found.len());
    found
}

#[test]
fn every_project_has_its_licence_and_a_sources_entry() {
    let sources = std::fs::read_to_string(root().join("SOURCES")).expect("SOURCES exists");
    let dirs = projects();
    assert!(dirs.len() >= 8, "{dirs:?}");
    for dir in dirs {
        let project = dir.file_name().unwrap().to_string_lossy().into_owned();
        let header = format!("[{project}]");
        let entry = sources
            .split("\n\n")
            .find(|block| block.lines().next() == Some(header.as_str()))
            .unwrap_or_else(|| panic!("SOURCES has no {header} entry"));
        for field in [
            "repository:",
            "version:",
            "paths:",
            "licence:",
            "licence file:",
        ] {
            assert!(entry.contains(field), "{header} lacks `{field}`");
        }
        let licence_file = entry
            .lines()
            .find_map(|l| l.strip_prefix("licence file:"))
            .map(str::trim)
            .unwrap();
        let text = std::fs::read_to_string(dir.join(licence_file))
            .unwrap_or_else(|e| panic!("{project}/{licence_file}: {e}"));
        assert!(
            text.contains("Permission is hereby granted")
                || text.contains("Redistribution and use in source and binary forms")
                || text.contains("Permission to use, copy, modify")
                || (text.contains("Apache License") && text.contains("Version 2.0, January 2004")),
            "{project}/{licence_file} is not a permissive licence text"
        );
    }
}

/// The real bugs of the corpus (`KNOWN_BUGS`): `file:line lint`, each an
/// error the analyzer must report.
fn known_bugs() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("KNOWN_BUGS")).expect("KNOWN_BUGS exists");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (found, why) = l
                .split_once(" -- ")
                .unwrap_or_else(|| panic!("KNOWN_BUGS: `file:line lint -- why`: {l}"));
            assert!(!why.trim().is_empty(), "KNOWN_BUGS: say why: {l}");
            found.trim().to_owned()
        })
        .collect()
}

#[test]
fn production_scripts_have_no_errors_but_their_known_bugs() {
    let options = Options::default();
    let mut errors = Vec::new();
    let mut found = Vec::new();
    let mut warnings: BTreeMap<&'static str, usize> = BTreeMap::new();
    let known = known_bugs();
    for (name, source) in scripts() {
        let report = analyze(&source, &options);
        for d in &report.diagnostics {
            match d.severity {
                Severity::Error => {
                    let line = d.primary_span().map_or(0, |s| s.start.line);
                    let at = format!("{name}:{line} {}", d.lint.name());
                    if known.contains(&at) {
                        found.push(at);
                    } else {
                        errors.push(d.render(&name, &source));
                    }
                }
                _ => {
                    *warnings.entry(d.lint.name()).or_default() += 1;
                    eprintln!("{}", d.render(&name, &source));
                }
            }
        }
    }
    eprintln!("warnings by lint: {warnings:?}");
    assert!(
        errors.is_empty(),
        "{} false errors:\n\n{}",
        errors.len(),
        errors.join("\n\n")
    );
    let missed: Vec<&String> = known.iter().filter(|k| !found.contains(k)).collect();
    assert!(
        missed.is_empty(),
        "known bugs no longer reported: {missed:?}"
    );
}

/// The precision measure: the share of production scripts with at least one
/// warning (each such file is one a maintainer would have to look at), and
/// how many have an error (their known bugs). It is printed, not asserted
/// (`-- --nocapture` shows it).
#[test]
fn the_warning_rate_is_printed() {
    let options = Options::default();
    let scripts = scripts();
    let mut warned: BTreeMap<String, usize> = BTreeMap::new();
    let mut with_errors = 0;
    for (name, source) in &scripts {
        let report = analyze(source, &options);
        let project = name.split('/').next().unwrap_or("").to_owned();
        if report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Warning)
        {
            *warned.entry(project).or_default() += 1;
        }
        if report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            with_errors += 1;
        }
    }
    let files_warned: usize = warned.values().sum();
    eprintln!(
        "production scripts with a warning: {files_warned} of {} ({:.1}%) in {} projects; \
         with an error (known bugs): {with_errors}; warned by project: {warned:?}",
        scripts.len(),
        100.0 * files_warned as f64 / scripts.len() as f64,
        projects().len()
    );
}

#[test]
fn production_scripts_compile_on_redis() {
    let server = Server::start();
    let mut conn = Conn::new(server.port());
    let mut refused = Vec::new();
    for (name, source) in scripts() {
        match conn.call(&["SCRIPT", "LOAD", &source]) {
            Reply::Ok(sha) if sha.len() == 40 => {}
            other => refused.push(format!("{name}: {other:?}")),
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}
