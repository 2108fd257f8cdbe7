//! The scripts guide's "Every lint" table (`docs/scripts.md`, rendered as
//! `redlua::guide::scripts`) lists every lint the analyzer has, and nothing
//! else, each with an example that the lint really catches.

use redlua_analyzer::{
    Declared, Level, LibraryOptions, Lint, Options, ReturnKind, Severity, analyze, analyze_library,
};
use std::collections::BTreeSet;
use std::path::Path;

/// One row of the table: the lint's name, its level, its example column.
struct Row {
    name: String,
    level: String,
    example: String,
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/scripts.md");
    let guide = std::fs::read_to_string(&path).expect("the scripts guide");
    let section = guide
        .split("\n# Every lint\n")
        .nth(1)
        .expect("docs/scripts.md has an `# Every lint` section");
    let section = section.split("\n#").next().unwrap();
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert_eq!(cells.len(), 3, "a row has three cells: {line}");
        let name = cells[0].trim().trim_matches('`').to_string();
        rows.push(Row {
            name,
            level: cells[1].trim().to_string(),
            example: cells[2].trim().to_string(),
        });
    }
    rows
}

#[test]
fn the_scripts_guide_names_every_lint_once_and_no_other() {
    let rows = rows();
    let listed: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a lint is listed twice: {listed:?}"
    );
    let known: BTreeSet<&str> = Lint::ALL.iter().map(|l| l.name()).collect();
    let missing: Vec<&&str> = known.difference(&unique).collect();
    let unknown: Vec<&&str> = unique.difference(&known).collect();
    assert!(
        missing.is_empty(),
        "lints missing from docs/scripts.md's table: {missing:?}"
    );
    assert!(
        unknown.is_empty(),
        "docs/scripts.md's table names lints that do not exist: {unknown:?}"
    );
    for row in &rows {
        let lint = Lint::from_name(&row.name).expect("checked above");
        assert!(
            row.level.starts_with(lint.level().describe()),
            "{}: level `{}` in the README, `{}` in the registry",
            row.name,
            row.level,
            lint.level().describe()
        );
        assert!(
            row.example.contains('`'),
            "{}: no example in `{}`",
            row.name,
            row.example
        );
    }
}

/// Ways to complete an example into a script: text before and after it.
const WRAPPERS: &[(&str, &str)] = &[
    ("", ""),
    ("return ", ""),
    ("", " return 1 end"),
    ("", " end"),
    ("repeat ", ""),
];

/// The options an example needs to be caught: the context the row names.
fn options_for(lint: Lint) -> Options {
    let mut options = Options {
        cluster: true,
        ..Options::default()
    };
    match lint {
        Lint::Arity | Lint::DynamicAccess => options.declared = Some(Declared::exact(0, 2)),
        Lint::WriteInReadOnly => options.read_only = true,
        Lint::ReturnType | Lint::NilReturn => options.returns = Some(ReturnKind::Integer.into()),
        _ => {}
    }
    options
}

#[test]
fn each_example_is_caught_by_its_lint() {
    let mut wrong = Vec::new();
    for row in rows() {
        let lint = Lint::from_name(&row.name).expect("checked above");
        // The first code span of the example column.
        let example = row.example.split('`').nth(1).expect("an example");
        // A fragment is completed into a script: as it is, returned, or
        // with the rest of its block.
        let caught = if lint == Lint::Library {
            // Library rules apply to Redis Functions libraries only.
            let library = analyze_library(example, &LibraryOptions::default());
            library.all_diagnostics().iter().any(|d| d.lint == lint)
        } else {
            WRAPPERS.iter().any(|(before, after)| {
                let script = format!("{before}{example}{after}");
                let report = analyze(&script, &options_for(lint));
                let found: Vec<_> = report
                    .diagnostics
                    .iter()
                    .filter(|d| d.lint == lint)
                    .collect();
                // At the declared level.
                let expected = match lint.level() {
                    Level::Error => Some(Severity::Error),
                    Level::Warning => Some(Severity::Warning),
                    _ => None,
                };
                if let Some(expected) = expected
                    && let Some(d) = found.iter().find(|d| d.severity != expected)
                {
                    wrong.push(format!(
                        "{}: {:?} for `{script}`, declared {expected:?}",
                        row.name, d.severity
                    ));
                }
                !found.is_empty()
            })
        };
        if !caught {
            let report = analyze(example, &options_for(lint));
            wrong.push(format!(
                "{}: `{example}` is not caught: {:?}",
                row.name,
                report
                    .diagnostics
                    .iter()
                    .map(|d| d.lint.name())
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
