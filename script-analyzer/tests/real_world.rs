//! The real-world bug corpus (`tests/corpus/real_world/`): Redis Lua script
//! bugs reported in public issue trackers, each a minimal script with the
//! line of its bug and the report it comes from (see the corpus README).
//!
//! The corpus measures how well the analyzer generalizes to bug forms no
//! lint was written against, so these tests never fail on a low score: they
//! check that the corpus is well formed (every entry loads, cites its
//! source and licence, parses as its manifest says, and sits in the half its
//! group hashes to or says why it does not), then print the recall of each half. A bug counts as
//! caught when the analyzer reports a warning or an error on a line of the
//! entry's `lines` range.
//!
//! `cargo test -p redlua-analyzer --test real_world -- --nocapture` prints
//! the scores. The held-out half is scored as a count only. The README and
//! the scripts guide state these figures; a test checks that they state
//! what is measured.

use redlua_analyzer::{Declared, Lint, Options, ServerTarget, analyze};
use std::path::{Path, PathBuf};

/// The two halves, as directory names.
const DEVELOPMENT: &str = "development";
const HELD_OUT: &str = "held_out";

/// The optional field that says why an entry sits in the half its group
/// does not hash to.
const PLACED: &str = "placed";

/// The optional field that says why a held-out entry cites the same report
/// as another held-out entry.
const SHARED_REPORT: &str = "shared_report";

/// The optional field naming the corrected script, and the one giving the
/// lines of the correction in it.
const FIXED: &str = "fixed";
const FIXED_LINES: &str = "fixed_lines";

/// The fields every entry must have, each a non-empty string.
const TEXT_FIELDS: &[&str] = &[
    "id", "group", "file", "class", "summary", "project", "source", "licence", "form",
];

/// One bug of the corpus.
struct Entry {
    id: String,
    group: String,
    /// The report it comes from.
    source: String,
    /// Why the entry shares its report with another entry of its half.
    shared_report: Option<String>,
    class: String,
    source_text: String,
    /// First and last line (1-based) where a finding counts as catching it.
    lines: (usize, usize),
    parses: bool,
    /// The corrected script, where the report has one.
    fixed: Option<Fixed>,
    declared: Option<Declared>,
    target: ServerTarget,
}

/// The corrected version of a bug's script.
struct Fixed {
    source_text: String,
    /// First and last line (1-based) of the correction: a finding there is
    /// a false alarm.
    lines: (usize, usize),
}

/// `key` = [first, last]: 1-based lines of `source_text`.
fn line_range(bug: &toml::Table, key: &str, source_text: &str, at: &str) -> (usize, usize) {
    let lines: Vec<usize> = bug
        .get(key)
        .and_then(toml::Value::as_array)
        .unwrap_or_else(|| panic!("{at}: `{key}` = [first, last] is missing"))
        .iter()
        .map(|l| {
            l.as_integer()
                .and_then(|l| usize::try_from(l).ok())
                .unwrap_or_else(|| panic!("{at}: `{key}` holds line numbers"))
        })
        .collect();
    let [first, last] = lines[..] else {
        panic!("{at}: `{key}` = [first, last]");
    };
    assert!(
        1 <= first && first <= last && last <= source_text.lines().count(),
        "{at}: `{key}` {first}..={last} are not lines of its script"
    );
    (first, last)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/real_world")
}

/// FNV-1a (64 bits): the hash that assigns a group to a half.
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The half a group belongs to: even hashes develop, odd ones are held out.
fn half_of(group: &str) -> &'static str {
    if fnv1a(group).is_multiple_of(2) {
        DEVELOPMENT
    } else {
        HELD_OUT
    }
}

fn text<'t>(table: &'t toml::Table, key: &str, at: &str) -> &'t str {
    let value = table
        .get(key)
        .and_then(toml::Value::as_str)
        .unwrap_or_else(|| panic!("{at}: `{key}` is missing or not a string"));
    assert!(!value.trim().is_empty(), "{at}: `{key}` is empty");
    value
}

/// The entries of one half, checked for form.
fn load(half: &str) -> Vec<Entry> {
    let dir = root().join(half);
    let manifest = std::fs::read_to_string(dir.join("manifest.toml"))
        .unwrap_or_else(|e| panic!("{half}/manifest.toml: {e}"));
    let table: toml::Table = manifest
        .parse()
        .unwrap_or_else(|e| panic!("{half}/manifest.toml: {e}"));
    let bugs = table
        .get("bug")
        .and_then(toml::Value::as_array)
        .unwrap_or_else(|| panic!("{half}/manifest.toml has no [[bug]] entries"));
    let mut entries = Vec::new();
    for (index, bug) in bugs.iter().enumerate() {
        let at = format!("{half}/manifest.toml entry {}", index + 1);
        let bug = bug
            .as_table()
            .unwrap_or_else(|| panic!("{at}: not a table"));
        for field in TEXT_FIELDS {
            text(bug, field, &at);
        }
        let id = text(bug, "id", &at).to_owned();
        let at = format!("{half}/{id}");
        let group = text(bug, "group", &at).to_owned();
        if half_of(&group) != half {
            assert!(
                bug.get(PLACED).is_some(),
                "{at}: group `{group}` hashes to the other half, and `{PLACED}` does not say why it sits here"
            );
            text(bug, PLACED, &at);
        }
        let shared_report = bug
            .get(SHARED_REPORT)
            .map(|_| text(bug, SHARED_REPORT, &at).to_owned());
        let source = text(bug, "source", &at);
        assert!(
            source.starts_with("https://"),
            "{at}: `source` must be a link to the report, got `{source}`"
        );
        let form = text(bug, "form", &at);
        assert!(
            ["reduced", "paraphrase"].contains(&form),
            "{at}: `form` is `reduced` or `paraphrase`, got `{form}`"
        );
        let file = text(bug, "file", &at);
        let source_text = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{at}: cannot read {file}: {e}"));
        let (first, last) = line_range(bug, "lines", &source_text, &at);
        let fixed = bug.get(FIXED).map(|_| {
            let fixed_file = text(bug, FIXED, &at);
            let fixed_text = std::fs::read_to_string(dir.join(fixed_file))
                .unwrap_or_else(|e| panic!("{at}: cannot read {fixed_file}: {e}"));
            let lines = line_range(bug, FIXED_LINES, &fixed_text, &at);
            Fixed {
                source_text: fixed_text,
                lines,
            }
        });
        let parses = bug
            .get("parses")
            .and_then(toml::Value::as_bool)
            .unwrap_or_else(|| panic!("{at}: `parses` = true or false is missing"));
        let declared = bug.get("declared").map(|d| {
            let count = |key: &str| {
                d.get(key)
                    .and_then(toml::Value::as_integer)
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or_else(|| panic!("{at}: `declared` = {{ keys = N, args = N }}"))
            };
            Declared::exact(count("keys"), count("args"))
        });
        let target = match bug.get("target") {
            None => ServerTarget::default(),
            Some(t) => t
                .as_str()
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("{at}: `target` names a server target")),
        };
        entries.push(Entry {
            id,
            group,
            source: source.to_owned(),
            shared_report,
            class: text(bug, "class", &at).to_owned(),
            source_text,
            lines: (first, last),
            fixed,
            parses,
            declared,
            target,
        });
    }
    entries
}

/// The analyzer as `lockctl lint` runs it on a bare file (standalone
/// server), with the entry's declared counts and target when it has them.
fn options(entry: &Entry) -> Options {
    Options {
        declared: entry.declared,
        target: entry.target,
        ..Options::default()
    }
}

/// Whether the analyzer reports something on the bug's lines.
fn caught(entry: &Entry) -> bool {
    reports_on(&entry.source_text, entry.lines, entry)
}

/// Whether the analyzer reports something on the correction's lines of the
/// entry's corrected script (`None`: the entry has none).
fn false_alarm_on_fix(entry: &Entry) -> Option<bool> {
    let fixed = entry.fixed.as_ref()?;
    Some(reports_on(&fixed.source_text, fixed.lines, entry))
}

fn reports_on(source_text: &str, lines: (usize, usize), entry: &Entry) -> bool {
    let report = analyze(source_text, &options(entry));
    report.diagnostics.iter().any(|d| {
        d.primary_span()
            .is_some_and(|s| (lines.0..=lines.1).contains(&s.start.line))
    })
}

#[test]
fn the_corpus_loads_and_every_entry_cites_its_source() {
    let development = load(DEVELOPMENT);
    let held_out = load(HELD_OUT);
    assert!(
        development.len() + held_out.len() >= 40,
        "the corpus shrank to {} + {}",
        development.len(),
        held_out.len()
    );
    assert!(!development.is_empty() && !held_out.is_empty());
    let mut ids: Vec<&str> = development
        .iter()
        .chain(&held_out)
        .map(|e| e.id.as_str())
        .collect();
    ids.sort_unstable();
    let mut seen = std::collections::BTreeSet::new();
    for id in &ids {
        assert!(seen.insert(*id), "`{id}` is the id of two entries");
    }
    for entry in development.iter().chain(&held_out) {
        assert!(!entry.group.is_empty() && !entry.class.is_empty());
    }
}

#[test]
fn no_report_is_cited_in_both_halves() {
    let development: std::collections::BTreeSet<String> =
        load(DEVELOPMENT).into_iter().map(|e| e.source).collect();
    for entry in load(HELD_OUT) {
        assert!(
            !development.contains(&entry.source),
            "{}: its report is cited in both halves",
            entry.source
        );
    }
}

#[test]
fn no_report_is_cited_twice_in_the_held_out_half_unless_its_entries_say_why() {
    let mut by_source: std::collections::BTreeMap<String, Vec<Entry>> = Default::default();
    for entry in load(HELD_OUT) {
        by_source
            .entry(entry.source.clone())
            .or_default()
            .push(entry);
    }
    for (source, entries) in by_source.iter().filter(|(_, e)| e.len() > 1) {
        for entry in entries {
            assert!(
                entry.shared_report.is_some(),
                "{}: {source} is cited by {} held-out entries, and `{SHARED_REPORT}` does not say why",
                entry.id,
                entries.len()
            );
        }
    }
}

#[test]
fn no_bug_is_recorded_twice() {
    let mut seen = std::collections::BTreeSet::new();
    for entry in load(DEVELOPMENT).into_iter().chain(load(HELD_OUT)) {
        assert!(
            seen.insert((entry.source.clone(), entry.class.clone())),
            "{} ({}): recorded twice",
            entry.source,
            entry.class
        );
    }
}

#[test]
fn every_entry_parses_as_its_manifest_says() {
    for entry in load(DEVELOPMENT).iter().chain(&load(HELD_OUT)) {
        let report = analyze(&entry.source_text, &options(entry));
        let syntax = report.diagnostics.iter().any(|d| d.lint == Lint::Syntax);
        assert_eq!(
            !syntax,
            entry.parses,
            "{}: `parses = {}` but the analyzer {}",
            entry.id,
            entry.parses,
            if syntax {
                "reports a syntax error"
            } else {
                "parses it"
            }
        );
        if let Some(fixed) = &entry.fixed {
            let report = analyze(&fixed.source_text, &options(entry));
            assert!(
                !report.diagnostics.iter().any(|d| d.lint == Lint::Syntax),
                "{}: its corrected script does not parse",
                entry.id
            );
        }
    }
}

#[test]
fn the_split_is_by_the_hash_of_the_group() {
    // Fixed values of the hash, so that the split cannot drift.
    assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(half_of("a"), DEVELOPMENT);
}

#[test]
fn recall_of_each_half_is_printed() {
    let development = load(DEVELOPMENT);
    let mut missed = Vec::new();
    let mut hits = 0;
    // Per class: (caught, bugs).
    let mut classes: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for entry in &development {
        let class = classes.entry(entry.class.as_str()).or_default();
        class.1 += 1;
        if caught(entry) {
            hits += 1;
            class.0 += 1;
        } else {
            missed.push(format!("{} ({})", entry.id, entry.class));
        }
    }
    eprintln!(
        "real-world bugs, development half: caught {hits} of {} ({:.0}%)",
        development.len(),
        percent(hits, development.len())
    );
    for (class, (caught, bugs)) in &classes {
        eprintln!("  {class}: {caught} of {bugs}");
    }
    for id in &missed {
        eprintln!("  missed: {id}");
    }
    print_fixes("development", &development);
    let held_out = load(HELD_OUT);
    let held_hits = held_out.iter().filter(|e| caught(e)).count();
    eprintln!(
        "real-world bugs, held-out half: caught {held_hits} of {} ({:.0}%)",
        held_out.len(),
        percent(held_hits, held_out.len())
    );
    print_fixes("held-out", &held_out);
}

/// Prints how many corrected scripts of a half draw a finding on their
/// corrected lines (a count only).
fn print_fixes(half: &str, entries: &[Entry]) {
    let checked: Vec<bool> = entries.iter().filter_map(false_alarm_on_fix).collect();
    let alarms = checked.iter().filter(|alarm| **alarm).count();
    eprintln!(
        "corrected versions, {half} half: a finding on the corrected lines of {alarms} of {}",
        checked.len()
    );
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    100.0 * part as f64 / whole as f64
}

/// The figures the README and the scripts guide state.
struct Scores {
    development: usize,
    development_hits: usize,
    held_out: usize,
    held_out_hits: usize,
    /// Held-out corrected scripts, and those with a finding on their
    /// corrected lines.
    held_out_fixes: usize,
    held_out_fix_alarms: usize,
}

fn scores() -> Scores {
    let development = load(DEVELOPMENT);
    let held_out = load(HELD_OUT);
    let fixes: Vec<bool> = held_out.iter().filter_map(false_alarm_on_fix).collect();
    Scores {
        development: development.len(),
        development_hits: development.iter().filter(|e| caught(e)).count(),
        held_out: held_out.len(),
        held_out_hits: held_out.iter().filter(|e| caught(e)).count(),
        held_out_fixes: fixes.len(),
        held_out_fix_alarms: fixes.iter().filter(|alarm| **alarm).count(),
    }
}

/// A document's text with every run of whitespace made one space, so that
/// a sentence matches wherever its lines break.
fn flattened(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_readme_and_the_scripts_guide_state_the_measured_scores() {
    let s = scores();
    let stated = [
        (
            "../README.md",
            format!(
                "they find {} of {} at their line",
                s.held_out_hits, s.held_out
            ),
        ),
        (
            "../docs/scripts.md",
            format!("holds {} Redis Lua bugs", s.development + s.held_out),
        ),
        (
            "../docs/scripts.md",
            format!(
                "a development half ({}) and a held-out half ({})",
                s.development, s.held_out
            ),
        ),
        (
            "../docs/scripts.md",
            format!(
                "for {} of the {} held-out bugs and {} of the {} others",
                s.held_out_hits, s.held_out, s.development_hits, s.development
            ),
        ),
        (
            "../docs/scripts.md",
            format!(
                "a finding on the corrected lines of {} of the {} corrected scripts",
                s.held_out_fix_alarms, s.held_out_fixes
            ),
        ),
    ];
    for (document, sentence) in stated {
        assert!(
            flattened(document).contains(&sentence),
            "{document} does not say \"{sentence}\": its figures must be the measured ones \
             (`cargo test -p redlua-analyzer --test real_world -- --nocapture` prints them)"
        );
    }
}
