//! lockctl for operators, through the real binary: `ls`, holder identity,
//! invalid names, per-subcommand help, exit codes, `lint` after a syntax
//! error, and a pseudo-terminal where colour and Ctrl-C matter.

mod common;

use common::{finish, json, lockctl, lockctl_at, pty, run, spawn, wait_until};
use redlua_runtime::LockClient;
use redlua_test_support::RedisServer;
use std::time::Duration;

/// A runtime for the library's side of a test.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The keys matching `pattern` (the test's own look, not lockctl's).
fn keys(server: &RedisServer, pattern: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(pattern)
        .query(&mut server.connection())
        .expect("KEYS");
    keys.sort();
    keys
}

/// `PTTL key`.
fn pttl(server: &RedisServer, key: &str) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query(&mut server.connection())
        .expect("PTTL")
}

/// How many times the server ran `command`, from `INFO commandstats`.
fn calls(server: &RedisServer, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut server.connection())
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn ls_walks_a_large_keyspace_with_scan_and_lists_only_locks() {
    // KEYS is disabled on this server: lockctl must not need it.
    let server = RedisServer::start_with(["--rename-command", "KEYS", "KEYS_FOR_TESTS"]);
    let url = server.url();
    let mut con = server.connection();
    let mut pipe = redis::pipe();
    for i in 0..5000 {
        pipe.set(format!("data:{i}"), i).ignore();
    }
    for i in 0..300 {
        pipe.hset(format!("profile:{i}"), "name", "bob").ignore();
    }
    pipe.hset("jobs:fake", "owner", "not a count").ignore();
    pipe.query::<()>(&mut con).expect("fill the keyspace");

    let rt = runtime();
    let client = rt
        .block_on(LockClient::connect(url.as_str()))
        .expect("client");
    let library = rt.block_on(client.lock("jobs:a").lock()).expect("lock");
    let again = rt.block_on(library.reenter()).expect("reenter");
    let reader = rt
        .block_on(client.read_write_lock("catalog").read().lock())
        .expect("read lock");
    let hold = spawn(lockctl_at(&url).args(["hold", "jobs:b", "--for", "20s"]));
    wait_until("lockctl holds jobs:b", Duration::from_secs(10), || {
        run(lockctl_at(&url).args(["status", "jobs:b"])).code == Some(0)
    });

    let scans_before = calls(&server, "scan");
    let out = run(lockctl_at(&url).args(["ls", "--count", "100"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let names: Vec<&str> = lines
        .iter()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split("  ").next().unwrap_or_default())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["catalog", "jobs:a", "jobs:b"], "{}", out.stdout);
    assert!(
        out.stdout
            .contains(&format!("{} (2 holds)", library.owner())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("read/write lock, mode read"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("pid {}", hold.id())),
        "lockctl's holder says who it is: {}",
        out.stdout
    );
    assert!(
        out.stderr.contains("3 locks among 305 hashes matching `*`"),
        "{}",
        out.stderr
    );
    // Many small SCAN calls (COUNT 100 over ~5300 keys), not one KEYS.
    let scans = calls(&server, "scan") - scans_before;
    assert!(scans >= 20, "{scans} SCAN calls");
    assert_eq!(calls(&server, "keys"), 0);

    // A pattern, as JSON: one object per line.
    let out = run(lockctl_at(&url).args(["ls", "--json", "jobs:*"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut objects: Vec<serde_json::Value> = out.stdout.lines().map(json).collect();
    objects.sort_by_key(|o| o["name"].as_str().unwrap_or_default().to_string());
    assert_eq!(objects.len(), 2, "{}", out.stdout);
    assert_eq!(objects[0]["name"], "jobs:a");
    assert_eq!(objects[0]["holders"][0]["count"], 2);
    assert_eq!(
        objects[0]["holders"][0]["identity"],
        serde_json::Value::Null
    );
    assert_eq!(objects[0]["token"], library.token());
    assert_eq!(objects[1]["name"], "jobs:b");
    assert_eq!(
        objects[1]["holders"][0]["identity"]["pid"],
        u64::from(hold.id())
    );
    assert!(objects[1]["ttl_ms"].as_u64().expect("ttl") > 0);

    // Nothing matches: exit 1, nothing on stdout.
    let out = run(lockctl_at(&url).args(["ls", "nothing:*"]));
    assert_eq!((out.code, out.stdout.as_str()), (Some(1), ""), "{out:?}");

    // Ctrl-C-free ending: SIGTERM ends the hold, released.
    common_signal(&hold, libc::SIGTERM);
    let out = finish(hold, Duration::from_secs(10));
    assert_eq!(out.code, Some(128 + libc::SIGTERM), "{out:?}");
    rt.block_on(again.unlock()).expect("unlock");
    rt.block_on(library.unlock()).expect("unlock");
    rt.block_on(reader.unlock()).expect("unlock");
    let out = run(lockctl_at(&url).args(["ls"]));
    assert_eq!(out.code, Some(1), "{out:?}");
}

/// Sends `signal` to a lockctl started by `spawn`.
fn common_signal(child: &std::process::Child, signal: i32) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

#[test]
fn holders_say_who_they_are_in_a_key_with_the_locks_expiry() {
    let server = RedisServer::start();
    let url = server.url();
    // A short watchdog: the identity must outlive several renewals.
    let hold = spawn(lockctl_at(&url).args([
        "hold",
        "nightly",
        "--for",
        "2s",
        "--watchdog-timeout",
        "300ms",
    ]));
    wait_until("the identity is written", Duration::from_secs(10), || {
        !keys(&server, "{nightly}:redlua_holder:*").is_empty()
    });
    let identity = keys(&server, "{nightly}:redlua_holder:*").remove(0);
    for _ in 0..10 {
        let (lock_ttl, identity_ttl) = (pttl(&server, "nightly"), pttl(&server, &identity));
        assert!(lock_ttl > 0 && lock_ttl <= 300, "{lock_ttl}");
        assert!(
            identity_ttl > 0 && identity_ttl <= 300,
            "the identity expires, never after the lock's lease: {identity_ttl}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = run(lockctl_at(&url).args(["status", "nightly"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    for part in [
        format!("pid {}", hold.id()),
        "program `lockctl hold --for 2s`".to_string(),
        "since 20".to_string(),
    ] {
        assert!(out.stdout.contains(&part), "{part}: {}", out.stdout);
    }
    let out = finish(hold, Duration::from_secs(10));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        keys(&server, "*redlua_holder*").is_empty(),
        "removed on release"
    );

    // `run` describes its command.
    let out = run(lockctl_at(&url).args(["run", "job", "--"]).args([
        "sh",
        "-c",
        &format!("{} status job", env!("CARGO_BIN_EXE_lockctl")),
    ]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains("program `lockctl run -- sh -c "),
        "{}",
        out.stdout
    );
    assert!(keys(&server, "*redlua_holder*").is_empty());
}

#[test]
fn invalid_names_and_bad_options_are_usage_errors() {
    let server = RedisServer::start();
    let url = server.url();
    for args in [
        &["status", "a{b"][..],
        &["unlock", "--force", "a{b"],
        &["status", "{}x"],
        &["hold", "a{b", "--for", "1s"],
        &["run", "a{b", "--", "true"],
    ] {
        let out = run(lockctl_at(&url).args(args));
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(out.stderr.contains("invalid lock name"), "{out:?}");
    }
    // Too short a watchdog: refused before connecting (no server needed).
    for url in [url.as_str(), "redis://127.0.0.1:1/"] {
        let out =
            run(lockctl_at(url).args(["run", "x", "--watchdog-timeout", "1ms", "--", "true"]));
        assert_eq!(out.code, Some(2), "{out:?}");
        assert!(out.stderr.contains("at least 30ms"), "{out:?}");
    }
    // A bad URL is a usage error; an unreachable server is 125, for every
    // subcommand that needs one.
    let out = run(lockctl_at("nonsense://x").args(["status", "x"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    for args in [
        &["status", "x"][..],
        &["ls"],
        &["unlock", "--force", "x"],
        &["hold", "x", "--for", "1s"],
    ] {
        let out = run(lockctl_at("redis://127.0.0.1:1/").args(args));
        assert_eq!(out.code, Some(125), "{args:?}: {out:?}");
        let out = run(lockctl_at("redis://127.0.0.1:1/").arg("--json").args(args));
        assert_eq!(out.code, Some(125), "{args:?}: {out:?}");
        assert_eq!(json(&out.stderr)["exit_code"], 125, "{out:?}");
    }
    // ls: a bad --count.
    let out = run(lockctl_at(&url).args(["ls", "--count", "0"]));
    assert_eq!(out.code, Some(2), "{out:?}");
}

#[test]
fn each_subcommand_help_shows_what_it_takes_and_exit_codes_appear_once() {
    let top = run(lockctl().arg("--help"));
    assert_eq!(top.code, Some(0));
    assert_eq!(
        top.stdout.matches("Exit codes:").count(),
        1,
        "{}",
        top.stdout
    );
    assert!(top.stdout.contains("  ls "), "{}", top.stdout);
    for (subcommand, takes, not) in [
        ("lint", &["--color", "--json"][..], &["--url", "--wait"][..]),
        ("status", &["--url", "--json"], &["--color", "--wait"]),
        (
            "ls",
            &["--url", "--count", "[PATTERN]"],
            &["--color", "--wait"],
        ),
        (
            "run",
            &["--url", "--wait", "--lease"],
            &["--color", "--count"],
        ),
        (
            "hold",
            &["--url", "--for", "--wait"],
            &["--color", "--lease"],
        ),
        ("unlock", &["--url", "--force"], &["--color", "--wait"]),
    ] {
        let out = run(lockctl().args([subcommand, "--help"]));
        assert_eq!(out.code, Some(0), "{out:?}");
        assert!(
            !out.stdout.contains("Exit codes"),
            "{subcommand}: {}",
            out.stdout
        );
        assert!(
            !out.stdout.contains("--watchdog-timeout"),
            "{subcommand}: {}",
            out.stdout
        );
        for option in takes {
            assert!(
                out.stdout.contains(option),
                "{subcommand} {option}: {}",
                out.stdout
            );
        }
        for option in not {
            assert!(
                !out.stdout.contains(option),
                "{subcommand} {option}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn lint_reports_the_first_syntax_error_not_its_fallout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("goto.lua");
    std::fs::write(&path, "local x = 1\ngoto done\nreturn KEYS[1]\n::done::\n").expect("write");
    let out = run(lockctl().arg("lint").arg(&path));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stdout.matches("error[syntax]").count(),
        1,
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("`goto` is Lua 5.2 syntax"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("7 more syntax errors are after this one not shown"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("checked 1 file: 1 error, 0 warnings"),
        "{}",
        out.stdout
    );
    let out = run(lockctl().args(["--json", "lint"]).arg(&path));
    let report = json(&out.stdout);
    assert_eq!(report["errors"], 1);
    assert_eq!(report["files"][0]["hidden_syntax_errors"], 7);
    assert_eq!(report["files"][0]["diagnostics"][0]["line"], 2);
}

#[test]
fn on_a_terminal_lint_is_coloured_unless_no_color() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.lua");
    std::fs::write(&path, "return redis.call('hincrbyy', KEYS[1], 'n', 1)\n").expect("write");
    let mut command = lockctl();
    command.arg("lint").arg(&path);
    let (code, output) = pty::spawn(command).finish(Duration::from_secs(10));
    assert_eq!(code, Some(1), "{output:?}");
    assert!(
        output.contains("\x1b["),
        "coloured on a terminal: {output:?}"
    );
    assert!(output.contains("hincrbyy"), "{output:?}");
    let mut command = lockctl();
    command.env("NO_COLOR", "1").arg("lint").arg(&path);
    let (code, output) = pty::spawn(command).finish(Duration::from_secs(10));
    assert_eq!(code, Some(1), "{output:?}");
    assert!(!output.contains("\x1b["), "NO_COLOR: {output:?}");
}

#[test]
fn ctrl_c_on_a_terminal_ends_a_hold_and_a_run_once_and_releases() {
    let server = RedisServer::start();
    let url = server.url();

    let mut command = lockctl_at(&url);
    command.args(["hold", "desk", "--for", "60s"]);
    let mut terminal = pty::spawn(command);
    terminal.wait_for("holding it for 1m", Duration::from_secs(10));
    terminal.type_bytes(b"\x03");
    let (code, output) = terminal.finish(Duration::from_secs(10));
    assert_eq!(code, Some(128 + libc::SIGINT), "{output:?}");
    assert!(
        output.contains("released lock `desk` early (SIGINT)"),
        "{output:?}"
    );
    assert_eq!(run(lockctl_at(&url).args(["status", "desk"])).code, Some(1));

    // CMD shares lockctl's terminal: Ctrl-C reaches it directly, and
    // lockctl does not send it a second SIGINT.
    let log = server.dir().join("ints");
    let script = format!(
        "trap 'echo int >> {0}; exit 3' INT; echo ready; while :; do sleep 0.05; done",
        log.display()
    );
    let mut command = lockctl_at(&url);
    command.args(["run", "desk", "--", "sh", "-c", &script]);
    let mut terminal = pty::spawn(command);
    terminal.wait_for("ready", Duration::from_secs(10));
    terminal.type_bytes(b"\x03");
    let (code, output) = terminal.finish(Duration::from_secs(10));
    assert_eq!(code, Some(3), "CMD's own exit code: {output:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(common::read(&log), "int\n", "one SIGINT, not two");
    assert_eq!(run(lockctl_at(&url).args(["status", "desk"])).code, Some(1));
    assert!(keys(&server, "*redlua_holder*").is_empty());
}
