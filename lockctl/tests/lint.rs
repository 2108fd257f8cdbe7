//! `lockctl lint` on broken and correct scripts, through the real binary.

mod common;

use common::{json, lockctl, run};
use std::path::PathBuf;

const BROKEN: &str = "local x = 1\nreturn redis.call('hincrbyy', KEYS[1], 'n', x)\n";
const CORRECT: &str = "#!lua flags=no-writes\nlocal n = #KEYS\nlocal v = redis.call('GET', KEYS[1])\nreturn {v, ARGV[2], n}\n";
const WRITES: &str = "redis.call('SET', KEYS[1], ARGV[1])\nredis.call('PUBLISH', KEYS[2], ARGV[2])\nreturn redis.call('GET', KEYS[1])\n";

/// A temporary directory holding the given scripts.
fn scripts(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write script");
            path
        })
        .collect();
    (dir, paths)
}

#[test]
fn a_broken_script_gets_rustc_style_diagnostics_and_exit_1() {
    let (_dir, paths) = scripts(&[("hits.lua", BROKEN.as_bytes())]);
    let out = run(lockctl().arg("lint").arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    let file = paths[0].display();
    let expected = format!(
        "error[unknown_command]: unknown Redis command `hincrbyy`\n \
         --> {file}:2:19\n  \
         |\n\
         2 | return redis.call('hincrbyy', KEYS[1], 'n', x)\n  \
         |                   ^^^^^^^^^^ did you mean `hincrby`?\n"
    );
    assert!(out.stdout.starts_with(&expected), "{}", out.stdout);
    assert!(out.stdout.contains("= note: "), "{}", out.stdout);
    assert!(
        out.stdout
            .ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        out.stdout
    );
    // Not a terminal: no colour.
    assert!(!out.stdout.contains('\x1b'), "{:?}", out.stdout);
}

#[test]
fn colour_is_used_when_asked_for() {
    let (_dir, paths) = scripts(&[("hits.lua", BROKEN.as_bytes())]);
    let out = run(lockctl().args(["lint", "--color", "always"]).arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("\x1b["), "{:?}", out.stdout);
    assert!(out.stdout.contains("hincrbyy"), "{:?}", out.stdout);
}

#[test]
fn correct_scripts_pass_with_exit_0() {
    let (_dir, paths) = scripts(&[
        ("get.lua", CORRECT.as_bytes()),
        ("set.lua", WRITES.as_bytes()),
    ]);
    let out = run(lockctl().arg("lint").args(&paths));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "checked 2 files: 0 errors, 0 warnings\n");
    assert_eq!(out.stderr, "");
}

#[test]
fn json_reports_diagnostics_inputs_commands_and_writes() {
    let (_dir, paths) = scripts(&[
        ("hits.lua", BROKEN.as_bytes()),
        ("get.lua", CORRECT.as_bytes()),
        ("set.lua", WRITES.as_bytes()),
    ]);
    let out = run(lockctl().args(["lint", "--json"]).args(&paths));
    assert_eq!(out.code, Some(1), "{out:?}");
    let report = json(&out.stdout);
    assert_eq!(report["errors"], 1);
    assert_eq!(report["warnings"], 0);
    let files = report["files"].as_array().expect("files");
    assert_eq!(files.len(), 3);

    let hits = &files[0];
    assert_eq!(hits["file"], paths[0].display().to_string());
    assert_eq!(hits["ok"], false);
    let d = &hits["diagnostics"][0];
    assert_eq!(d["lint"], "unknown_command");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["message"], "unknown Redis command `hincrbyy`");
    assert_eq!(
        (d["line"].clone(), d["column"].clone()),
        (2.into(), 19.into())
    );
    assert_eq!(d["end"], serde_json::json!({ "line": 2, "column": 29 }));
    assert_eq!(d["label"], "did you mean `hincrby`?");
    assert_eq!(
        hits["keys"],
        serde_json::json!({ "read": [1], "dynamic": false })
    );
    assert_eq!(hits["commands"], serde_json::json!(["hincrbyy"]));
    // What an unknown command replies is not known.
    assert_eq!(hits["returns"], serde_json::Value::Null);

    let get = &files[1];
    assert_eq!(get["ok"], true);
    assert_eq!(get["diagnostics"], serde_json::json!([]));
    assert_eq!(
        get["keys"],
        serde_json::json!({ "read": [1], "dynamic": true })
    );
    assert_eq!(
        get["argv"],
        serde_json::json!({ "read": [2], "dynamic": false })
    );
    assert_eq!(get["commands"], serde_json::json!(["get"]));
    assert_eq!(get["writes"], false);
    assert_eq!(get["shebang_flags"], serde_json::json!(["no-writes"]));
    assert_eq!(get["returns"], serde_json::json!(["array"]));

    let set = &files[2];
    assert_eq!(
        set["keys"],
        serde_json::json!({ "read": [1, 2], "dynamic": false })
    );
    assert_eq!(
        set["argv"],
        serde_json::json!({ "read": [1, 2], "dynamic": false })
    );
    assert_eq!(
        set["commands"],
        serde_json::json!(["get", "publish", "set"])
    );
    assert_eq!(set["writes"], true);
    // GET: a bulk string, or nil for a missing key.
    assert_eq!(set["returns"], serde_json::json!(["string", "nil"]));
}

#[test]
fn an_unreadable_file_is_named_and_the_others_are_still_linted() {
    let (dir, paths) = scripts(&[("hits.lua", BROKEN.as_bytes())]);
    let missing = dir.path().join("missing.lua");
    let out = run(lockctl().arg("lint").arg(&missing).arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("cannot read `{}`", missing.display())),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("error[unknown_command]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("checked 1 file: 1 error, 0 warnings, 1 file unreadable\n"),
        "{}",
        out.stdout
    );

    // A readable, correct file next to a missing one: still exit 1.
    let (_dir2, good) = scripts(&[("get.lua", CORRECT.as_bytes())]);
    let out = run(lockctl()
        .args(["lint", "--json"])
        .arg(&good[0])
        .arg(&missing));
    assert_eq!(out.code, Some(1), "{out:?}");
    let report = json(&out.stdout);
    assert_eq!(report["unreadable"], 1);
    assert_eq!(report["files"][0]["ok"], true);
    assert_eq!(report["files"][1]["file"], missing.display().to_string());
    assert!(
        report["files"][1]["error"]
            .as_str()
            .expect("error")
            .contains("cannot read")
    );
}

#[test]
fn non_utf8_bytes_are_decoded_lossily() {
    let (_dir, paths) = scripts(&[(
        "bytes.lua",
        b"return redis.call('GET', KEYS[1]) -- caf\xe9\n",
    )]);
    let out = run(lockctl().arg("lint").arg(&paths[0]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let (_dir, paths) = scripts(&[("bad.lua", b"return 1 \xff\xfe\n")]);
    let out = run(lockctl().arg("lint").arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("error[syntax]"), "{}", out.stdout);
    assert!(out.stdout.contains('\u{fffd}'), "{}", out.stdout);
}

#[test]
fn lint_reads_standard_input_and_needs_no_server() {
    use std::io::Write;
    let mut child = lockctl()
        .args(["lint", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("lockctl starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"return redis.call('GETT', KEYS[1])\n")
        .expect("write");
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("--> <stdin>:1:19"), "{stdout}");
}

const HEXPIRE: &str = "return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])\n";
const LOCKING: &str = "#!lua flags=allow-key-locking\nreturn 1\n";

#[test]
fn the_target_decides_which_commands_exist() {
    let (_dir, paths) = scripts(&[("ttl.lua", HEXPIRE.as_bytes())]);
    // The default target is Redis 7.0, which has no HEXPIRE.
    let out = run(lockctl().arg("lint").arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    let expected = format!(
        "error[target_version]: `HEXPIRE` needs Redis 7.4 or later; the target is redis-7.0\n \
         --> {}:1:19\n",
        paths[0].display()
    );
    assert!(out.stdout.starts_with(&expected), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "= help: to run on Redis 7.4 instead, set `target = \"redis-7.4\"` in `#[redis_script(...)]`"
        ),
        "{}",
        out.stdout
    );
    let out = run(lockctl()
        .args(["lint", "--target", "redis-7.4"])
        .arg(&paths[0]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "checked 1 file: 0 errors, 0 warnings\n");
    let out = run(lockctl()
        .args(["lint", "--target", "valkey-8.0", "--json"])
        .arg(&paths[0]));
    assert_eq!(out.code, Some(1), "{out:?}");
    let report = json(&out.stdout);
    assert_eq!(report["target"], "valkey-8.0");
    let d = &report["files"][0]["diagnostics"][0];
    assert_eq!(d["lint"], "target_version");
    assert_eq!(
        d["message"],
        "`HEXPIRE` does not exist in Valkey (Redis 7.4 has it); the target is valkey-8.0"
    );
}

#[test]
fn unknown_shebang_flags_are_errors_on_every_target() {
    let (_dir, paths) = scripts(&[("locking.lua", LOCKING.as_bytes())]);
    for target in ["redis-7.0", "redis-7.4", "valkey-8.0"] {
        let out = run(lockctl()
            .args(["lint", "--json", "--target", target])
            .arg(&paths[0]));
        assert_eq!(out.code, Some(1), "{target}: {out:?}");
        let report = json(&out.stdout);
        let d = &report["files"][0]["diagnostics"][0];
        assert_eq!(d["lint"], "shebang_flag", "{target}");
        assert_eq!(d["message"], "unknown shebang flag `allow-key-locking`");
        assert_eq!(
            (d["line"].clone(), d["column"].clone()),
            (1.into(), 13.into())
        );
    }
}

#[test]
fn an_unknown_target_is_a_usage_error() {
    let (_dir, paths) = scripts(&[("ttl.lua", HEXPIRE.as_bytes())]);
    let out = run(lockctl()
        .args(["lint", "--target", "redis-8.1"])
        .arg(&paths[0]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains(
            "unknown target `redis-8.1` (did you mean `redis-8.0`?); the targets are \
             redis-7.0, redis-7.2, redis-7.4, redis-8.0, redis-8.2, redis-8.4, valkey-7.2, \
             valkey-8.0"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_header_allow_switches_a_lint_off_as_the_attribute_does() {
    let literal = "redis.call('SET', 'fixed', 1)\nreturn 1\n";
    let allowed = format!("-- redlua: allow=literal_key\n{literal}");
    let (_dir, paths) = scripts(&[
        ("literal.lua", literal.as_bytes()),
        ("allowed.lua", allowed.as_bytes()),
    ]);
    let out = run(lockctl().arg("lint").arg(&paths[0]));
    assert!(
        out.stdout.contains("warning[literal_key]"),
        "{}",
        out.stdout
    );
    let out = run(lockctl().arg("lint").arg(&paths[1]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .ends_with("checked 1 file: 0 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );
}
