//! `lockctl lint` on projects that keep their scripts as files: directories,
//! the crate's target, script headers, SARIF output and exit codes, through
//! the real binary.

mod common;

use common::{json, lockctl, run};
use std::path::{Path, PathBuf};

const CLEAN: &str = "return redis.call('GET', KEYS[1])\n";
const BROKEN: &str = "return redis.call('hincrbyy', KEYS[1], 'n', 1)\n";
/// A warning and no error: a key written as a literal (which runs on a
/// standalone server, not on a cluster).
const WARNS: &str = "local n = 1\nredis.call('SET', 'fixed', n)\nreturn n\n";
const HEXPIRE: &str = "return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])\n";

/// Writes `files` (relative paths) under a new temporary directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_directory_is_linted_recursively() {
    let dir = tree(&[
        ("a.lua", CLEAN),
        ("sub/deeper/broken.lua", BROKEN),
        ("sub/readme.txt", "not a script"),
        (".git/x.lua", BROKEN),
        ("node_modules/q/y.lua", BROKEN),
    ]);
    let out = run(lockctl().arg("lint").arg(dir.path()));
    assert_eq!(out.code, Some(1), "{out:?}");
    let broken = dir.path().join("sub/deeper/broken.lua");
    assert!(
        out.stdout.contains(&format!("--> {}:1:19", shown(&broken))),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("checked 2 files: 1 error, 0 warnings\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stderr, "");
    // JSON names each file found, in order.
    let out = run(lockctl().args(["lint", "--json"]).arg(dir.path()));
    let report = json(&out.stdout);
    let names: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [shown(&dir.path().join("a.lua")), shown(&broken)],
        "{report}"
    );
}

#[test]
fn a_directory_without_errors_exits_0() {
    let dir = tree(&[("a.lua", CLEAN), ("b/c.lua", CLEAN)]);
    let out = run(lockctl().arg("lint").arg(dir.path()));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "checked 2 files: 0 errors, 0 warnings\n");
}

#[test]
fn this_repositorys_scripts_lint_clean() {
    // scripts/expire_field.lua needs Redis 7.4, which its header declares.
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts");
    let out = run(lockctl().arg("lint").arg(&scripts));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.starts_with("checked "), "{}", out.stdout);
    assert!(
        out.stdout.ends_with(" files: 0 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_crates_target_is_honoured() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\n\n[package.metadata.redlua]\ntarget = \"redis-7.4\"\n",
        ),
        ("scripts/ttl.lua", HEXPIRE),
    ]);
    let script = dir.path().join("scripts/ttl.lua");
    let out = run(lockctl().args(["lint", "--json"]).arg(&script));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(json(&out.stdout)["files"][0]["target"], "redis-7.4");
    // --target wins over the crate's.
    let out = run(lockctl()
        .args(["lint", "--target", "redis-7.2"])
        .arg(&script));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains("the target is redis-7.2"),
        "{}",
        out.stdout
    );
    // Relative paths are found from the current directory.
    let out = run(lockctl()
        .current_dir(dir.path().join("scripts"))
        .args(["lint", "ttl.lua"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    // Standard input is in the current directory's crate.
    let mut child = lockctl()
        .current_dir(dir.path())
        .args(["lint", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("lockctl starts");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(HEXPIRE.as_bytes())
        .unwrap();
    let status = child.wait_with_output().expect("lockctl ends");
    assert_eq!(status.status.code(), Some(0), "{status:?}");
}

#[test]
fn without_a_crate_target_the_default_is_redis_7_0() {
    let dir = tree(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("ttl.lua", HEXPIRE),
    ]);
    let out = run(lockctl().arg("lint").arg(dir.path().join("ttl.lua")));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains("the target is redis-7.0"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_bad_crate_target_is_named_and_the_file_not_checked() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package.metadata.redlua]\ntarget = \"redis-7.3\"\n",
        ),
        ("ttl.lua", HEXPIRE),
    ]);
    let out = run(lockctl().arg("lint").arg(dir.path().join("ttl.lua")));
    assert_eq!(out.code, Some(1), "{out:?}");
    let manifest = dir.path().join("Cargo.toml");
    assert!(
        out.stderr.contains(&format!(
            "cannot check `{}`: {}:2: unknown target `redis-7.3`",
            shown(&dir.path().join("ttl.lua")),
            shown(&manifest)
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        out.stdout,
        "checked 0 files: 0 errors, 0 warnings, 1 file not checked\n"
    );
}

#[test]
fn a_header_declares_the_target_the_counts_and_the_result() {
    let dir = tree(&[
        (
            "ttl.lua",
            &format!("-- Expires a field.\n-- redlua: target=redis-7.4\n{HEXPIRE}"),
        ),
        (
            "arity.lua",
            "-- redlua: keys=1 args=1\nredis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[2])\n",
        ),
        (
            "result.lua",
            "-- redlua: returns=integer\nreturn redis.call('GET', KEYS[1])\n",
        ),
    ]);
    let lint = |name: &str| {
        let out = run(lockctl()
            .args(["lint", "--json"])
            .arg(dir.path().join(name)));
        (out.code, json(&out.stdout))
    };
    let (code, report) = lint("ttl.lua");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["files"][0]["target"], "redis-7.4");
    let (code, report) = lint("arity.lua");
    assert_eq!(code, Some(1), "{report}");
    let d = &report["files"][0]["diagnostics"][0];
    assert_eq!(d["lint"], "arity", "{report}");
    assert_eq!(d["line"], 3, "{report}");
    // Without the header, the same script is fine.
    let bare = tree(&[(
        "arity.lua",
        "redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[2])\n",
    )]);
    let out = run(lockctl().arg("lint").arg(bare.path().join("arity.lua")));
    assert_eq!(out.code, Some(0), "{out:?}");
    let (_, report) = lint("result.lua");
    let lints: Vec<&str> = report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["lint"].as_str().unwrap())
        .collect();
    assert!(
        !lints.is_empty(),
        "a nil or string result for an integer: {report}"
    );
}

#[test]
fn a_bad_header_is_an_error_at_its_line() {
    let dir = tree(&[("h.lua", "-- redlua: key=1\nreturn 1\n")]);
    let file = dir.path().join("h.lua");
    let out = run(lockctl().arg("lint").arg(&file));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.starts_with(
            "error[header]: invalid `-- redlua:` header: unknown header setting `key` (did you mean `keys`?)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("--> {}:1:12", shown(&file))),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        out.stdout
    );
    let out = run(lockctl().args(["lint", "--json"]).arg(&file));
    let report = json(&out.stdout);
    assert_eq!(report["files"][0]["ok"], false);
    assert_eq!(report["files"][0]["header_error"]["line"], 1);
    assert_eq!(report["errors"], 1);
}

#[test]
fn sarif_output_is_a_sarif_2_1_0_log() {
    let dir = tree(&[
        ("broken.lua", BROKEN),
        ("warns.lua", WARNS),
        ("bad_header.lua", "-- redlua: args=x\nreturn 1\n"),
    ]);
    let out = run(lockctl()
        .current_dir(dir.path())
        .args(["lint", "--format", "sarif", "."]));
    assert_eq!(out.code, Some(1), "{out:?}");
    let log = json(&out.stdout);
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run0 = &log["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "lockctl");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run0["results"].as_array().unwrap();
    let summary: Vec<(String, String, String, u64)> = results
        .iter()
        .map(|r| {
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[index]["id"], r["ruleId"], "{r}");
            let location = &r["locations"][0]["physicalLocation"];
            (
                location["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                r["ruleId"].as_str().unwrap().to_owned(),
                r["level"].as_str().unwrap().to_owned(),
                location["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    let expect = |uri: &str, rule: &str, level: &str, line: u64| {
        (uri.to_owned(), rule.to_owned(), level.to_owned(), line)
    };
    assert_eq!(
        summary,
        [
            expect("./bad_header.lua", "header", "error", 1),
            expect("./broken.lua", "unknown_command", "error", 1),
            expect("./warns.lua", "literal_key", "warning", 2),
        ],
        "{log}"
    );
    assert_eq!(run0["invocations"][0]["executionSuccessful"], true);
    // Only warnings: exit 0, and the results are still there.
    let out =
        run(lockctl()
            .current_dir(dir.path())
            .args(["lint", "--format", "sarif", "warns.lua"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        json(&out.stdout)["runs"][0]["results"][0]["level"],
        "warning"
    );
}

#[test]
fn sarif_reports_unreadable_files_as_notifications() {
    let dir = tree(&[("a.lua", CLEAN)]);
    let out = run(lockctl().current_dir(dir.path()).args([
        "lint",
        "--format",
        "sarif",
        "a.lua",
        "missing.lua",
    ]));
    assert_eq!(out.code, Some(1), "{out:?}");
    let log = json(&out.stdout);
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let note = &invocation["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert!(
        note["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("cannot read `missing.lua`"),
        "{log}"
    );
    assert_eq!(out.stderr, "");
}

#[test]
fn exit_codes_are_0_clean_1_errors_2_usage() {
    let dir = tree(&[
        ("clean.lua", CLEAN),
        ("warns.lua", WARNS),
        ("broken.lua", BROKEN),
    ]);
    let code = |args: &[&str]| run(lockctl().current_dir(dir.path()).arg("lint").args(args)).code;
    assert_eq!(code(&["clean.lua"]), Some(0));
    assert_eq!(code(&["warns.lua"]), Some(0), "warnings do not fail");
    assert_eq!(code(&["clean.lua", "broken.lua"]), Some(1));
    assert_eq!(code(&["missing.lua"]), Some(1));
    assert_eq!(code(&["--format", "json", "broken.lua"]), Some(1));
    assert_eq!(code(&["--bogus", "clean.lua"]), Some(2));
    assert_eq!(code(&["--format", "xml", "clean.lua"]), Some(2));
    assert_eq!(code(&["--target", "redis-6.0", "clean.lua"]), Some(2));
    assert_eq!(code(&[]), Some(2), "no file");
    let out = run(lockctl().current_dir(dir.path()).args([
        "--json",
        "lint",
        "--format",
        "sarif",
        "clean.lua",
    ]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--json asks for JSON"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    // `lockctl lint --help` states them.
    let help = run(lockctl().args(["lint", "--help"])).stdout;
    assert!(help.contains("Exit status:"), "{help}");
    assert!(help.contains("0  no errors (warnings allowed)"), "{help}");
}

#[test]
fn the_pre_commit_hook_runs_lockctl_lint_on_lua_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let hooks = std::fs::read_to_string(root.join(".pre-commit-hooks.yaml"))
        .expect(".pre-commit-hooks.yaml at the repository root");
    let lines: Vec<&str> = hooks.lines().map(str::trim).collect();
    for expected in [
        "- id: lockctl-lint",
        "entry: lockctl lint",
        "files: \\.lua$",
        "language: system",
    ] {
        assert!(lines.contains(&expected), "`{expected}` in:\n{hooks}");
    }
    // The hook's entry works as pre-commit calls it: the staged files last.
    let dir = tree(&[("a.lua", CLEAN), ("b.lua", BROKEN)]);
    let entry = lines
        .iter()
        .find_map(|l| l.strip_prefix("entry: "))
        .unwrap();
    let mut words = entry.split_whitespace().skip(1);
    let paths: Vec<PathBuf> = ["a.lua", "b.lua"]
        .iter()
        .map(|f| dir.path().join(f))
        .collect();
    let out = run(lockctl().args(words.by_ref()).args(&paths));
    assert_eq!(out.code, Some(1), "{out:?}");
    let out = run(lockctl()
        .args(entry.split_whitespace().skip(1))
        .arg(&paths[0]));
    assert_eq!(out.code, Some(0), "{out:?}");
}
