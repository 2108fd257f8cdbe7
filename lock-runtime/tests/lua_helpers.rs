//! The Lua helpers that several lock scripts repeat stay alike.
//!
//! Each script in `scripts/` is sent on its own with `EVALSHA`, so scripts
//! cannot share code at run time: a helper that several need is written in
//! each. This test takes every copy of each helper out of every script that
//! has one, and fails when two copies differ, naming the scripts of each
//! version, or when a script expected to hold a copy has none.
//!
//! Copies are compared line by line, without indentation, and with each
//! script's own `KEYS` / `ARGV` indices numbered in order of first use
//! (`KEYS[3]` in one script and `KEYS[5]` in another are the same slot of
//! different layouts; using one key where the other copies use two is not).

use std::collections::BTreeMap;
use std::path::Path;

/// A helper repeated across scripts.
struct Helper {
    /// What it is, for messages.
    name: &'static str,
    /// A text that only the helper's first line holds.
    first: &'static str,
    /// Where the helper ends: the first line from there on that holds this
    /// text (the first line itself when it does).
    last: Last,
    /// The scripts that must hold a copy.
    scripts: &'static [&'static str],
}

enum Last {
    /// The first line holding this text.
    Holding(&'static str),
    /// The first line that is exactly `end` (the block's own, at its
    /// indentation).
    BlockEnd,
}

const HELPERS: &[Helper] = &[
    Helper {
        name: "the next fencing token (read the counter, go past it, store it)",
        first: "local last = redis.pcall('get', KEYS[",
        last: Last::Holding("string.format('%.0f', token)"),
        scripts: &[
            "fair_acquire.lua",
            "fair_force_release.lua",
            "fair_release.lua",
            "leased_acquire.lua",
            "lock_acquire.lua",
            "lock_force_release.lua",
            "rwlock_force_release.lua",
            "rwlock_read_acquire.lua",
            "rwlock_write_acquire.lua",
        ],
    },
    Helper {
        name: "whether a hash is a reentrant lock (one field `<uuid>:<thread-id>` -> count)",
        first: "if not (pair[1] and string.match(pair[1], ",
        last: Last::Holding("if not (pair[1] and string.match(pair[1], "),
        scripts: &[
            "fair_acquire.lua",
            "fair_force_release.lua",
            "lock_acquire.lua",
            "lock_force_release.lua",
        ],
    },
    Helper {
        name: "a retried release answers what its latch remembers (latch prologue)",
        first: "local earlier = ",
        last: Last::BlockEnd,
        scripts: &[
            "fair_release.lua",
            "lock_release.lua",
            "rwlock_read_release.lua",
            "rwlock_write_release.lua",
        ],
    },
    Helper {
        name: "a release's latch remembers its result (latch epilogue)",
        first: "~= 'undo' then",
        last: Last::BlockEnd,
        scripts: &[
            "fair_release.lua",
            "lock_release.lua",
            "rwlock_read_release.lua",
            "rwlock_write_release.lua",
        ],
    },
];

/// Every copy of `helper` in `source`, normalized.
fn copies(helper: &Helper, source: &str) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        if !line.contains(helper.first) || line.trim_start().starts_with("--") {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let end = (start..lines.len()).find(|&i| match helper.last {
            Last::Holding(text) => lines[i].contains(text),
            Last::BlockEnd => {
                i > start && lines[i].trim_end() == format!("{}end", " ".repeat(indent))
            }
        });
        let end = end.unwrap_or_else(|| {
            panic!(
                "{}: a copy starting `{}` has no end",
                helper.name,
                line.trim()
            )
        });
        found.push(normalize(&lines[start..=end]));
    }
    found
}

/// The lines without indentation, with `KEYS[n]` and `ARGV[n]` renumbered
/// in order of first use.
fn normalize(lines: &[&str]) -> String {
    let mut numbers: BTreeMap<String, usize> = BTreeMap::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = String::new();
    for line in lines {
        let mut rest = line.trim();
        while let Some(at) = ["KEYS[", "ARGV["]
            .iter()
            .filter_map(|array| rest.find(array).map(|i| (i, *array)))
            .min()
        {
            let (i, array) = at;
            out.push_str(&rest[..i + array.len()]);
            rest = &rest[i + array.len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                let slot = format!("{array}{}", &rest[..digits]);
                let next = counts.entry(array).or_default();
                let n = *numbers.entry(slot).or_insert_with(|| {
                    *next += 1;
                    *next
                });
                out.push_str(&format!("#{n}"));
                rest = &rest[digits..];
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

#[test]
fn helpers_repeated_across_lock_scripts_are_alike_in_every_copy() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut scripts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("scripts/")
        .map(|entry| entry.expect("scripts/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "lua"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let source = std::fs::read_to_string(&path).expect("a script");
            (name, source)
        })
        .collect();
    scripts.sort();
    let mut problems = Vec::new();
    for helper in HELPERS {
        // version -> the scripts holding it
        let mut versions: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        let mut holders = Vec::new();
        for (name, source) in &scripts {
            let found = copies(helper, source);
            if !found.is_empty() {
                holders.push(name.as_str());
            }
            for copy in found {
                let at = versions.entry(copy).or_default();
                if !at.contains(&name.as_str()) {
                    at.push(name);
                }
            }
        }
        for expected in helper.scripts {
            if !holders.contains(expected) {
                problems.push(format!(
                    "{}: no copy in {expected} (rewritten? then make it alike again, or \
                     update this list)",
                    helper.name
                ));
            }
        }
        if versions.len() > 1 {
            let mut message = format!(
                "{}: the copies differ ({} versions):",
                helper.name,
                versions.len()
            );
            for (text, holders) in &versions {
                message.push_str(&format!("\n  in {}:\n", holders.join(", ")));
                for line in text.lines() {
                    message.push_str(&format!("    {line}\n"));
                }
            }
            problems.push(message);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn keys_and_argv_are_renumbered_in_order_of_first_use() {
    assert_eq!(
        normalize(&["  set(KEYS[5], ARGV[2], KEYS[3], KEYS[5])"]),
        "set(KEYS[#1], ARGV[#1], KEYS[#2], KEYS[#1])\n"
    );
    assert_ne!(
        normalize(&["get(KEYS[2])", "set(KEYS[2])"]),
        normalize(&["get(KEYS[2])", "set(KEYS[3])"]),
    );
}
