//! `lockctl run` as operators expect of `consul lock` and `etcdctl lock`:
//! a lost lock stops the command (`--on-lost`, `--grace`, exit 123), the
//! command learns the lock's name, owner and fencing token from its
//! environment, and a misspelt option is a usage error before Redis is
//! contacted. Through the real binary, against a real `redis-server`.

mod common;

use common::{finish, json, lockctl, lockctl_at, read, run, spawn, wait_until};
use redlua_test_support::RedisServer;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The exit code of a run whose lock was lost.
const LOST: i32 = 123;

/// The head of a shell loop that ends on its own after 15 s (300 rounds of
/// 50 ms), so that a process a test failed to stop does not outlive it for
/// long.
const LOOP: &str = "for i in $(seq 300); do";

/// Output redirected away from the test's pipes: a process that outlives
/// lockctl (when a test fails) would keep them open and make the test hang
/// instead of failing.
const QUIET: &str = ">/dev/null 2>&1";

/// A `sh -c` script for `run`.
fn sh(script: &str) -> [&str; 3] {
    ["sh", "-c", script]
}

/// Whether key `name` exists.
fn exists(server: &RedisServer, name: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(name)
        .query::<bool>(&mut server.connection())
        .expect("EXISTS")
}

/// Starts `lockctl --json run NAME --watchdog-timeout 300ms ARGS...`: the
/// lock is renewed every 100 ms, so that its loss is noticed within about
/// 100 ms, whether the runtime learns of a removal at once or at the next
/// renewal.
fn start_run(server: &RedisServer, name: &str, args: &[&str]) -> Child {
    spawn(
        lockctl_at(&server.url())
            .args(["--json", "run", name, "--watchdog-timeout", "300ms"])
            .args(args),
    )
}

/// Breaks lock `name` with `lockctl unlock --force`.
fn break_lock(server: &RedisServer, name: &str) {
    let out = run(lockctl_at(&server.url()).args(["unlock", "--force", name]));
    assert_eq!(out.code, Some(0), "{out:?}");
}

/// Waits until `path` exists (a command wrote it).
fn wait_for_file(path: &Path) {
    wait_until(
        &format!("{} exists", path.display()),
        Duration::from_secs(10),
        || path.exists(),
    );
}

/// Asserts that nothing appends to `beat` any more: its size stays the same
/// for 500 ms (its writer appended every 50 ms).
fn assert_stopped(beat: &Path, what: &str) {
    let before = read(beat).len();
    assert!(before > 0, "{what}: it never beat");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(read(beat).len(), before, "{what} still runs");
}

/// The notes of a `--json` run, one per stderr line (the lines that are
/// not objects are the command's).
fn notes(stderr: &str) -> Vec<serde_json::Value> {
    stderr
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(json)
        .collect()
}

/// The note of `event`; fails when there is none.
fn note(stderr: &str, event: &str) -> serde_json::Value {
    notes(stderr)
        .into_iter()
        .find(|n| n["event"] == event)
        .unwrap_or_else(|| panic!("no `{event}` note: {stderr}"))
}

/// Paths in the server's directory.
fn files<const N: usize>(server: &RedisServer, names: [&str; N]) -> [PathBuf; N] {
    names.map(|name| server.dir().join(name))
}

/// A command whose shell starts a second shell in the background; both
/// write down the SIGTERM they get, in the files `outer` and `inner`. The
/// command writes `ready` once both traps are set, and exits with 7 on
/// SIGTERM.
fn two_shells(server: &RedisServer) -> (String, [PathBuf; 3]) {
    let [ready, outer, inner, second, second_ready] = files(
        server,
        ["ready", "outer", "inner", "second.sh", "second-ready"],
    );
    // Each shell says it is ready only once its trap is set, and the first
    // only once the second is: a signal sent after `ready` finds both traps.
    let second_script = format!(
        "trap 'echo TERM > {inner}; exit 0' TERM; touch {second_ready}; {LOOP} sleep 0.05; done",
        inner = inner.display(),
        second_ready = second_ready.display(),
    );
    std::fs::write(&second, second_script).expect("second.sh");
    let script = format!(
        "sh {second} {QUIET} & \
         trap 'echo TERM > {outer}; exit 7' TERM; \
         while [ ! -e {second_ready} ]; do sleep 0.01; done; \
         touch {ready}; {LOOP} sleep 0.05; done",
        second = second.display(),
        second_ready = second_ready.display(),
        outer = outer.display(),
        ready = ready.display(),
    );
    (script, [ready, outer, inner])
}

#[test]
fn a_broken_lock_sends_sigterm_to_the_command_and_what_it_started() {
    let server = RedisServer::start();
    let (script, [ready, outer, inner]) = two_shells(&server);
    let child = start_run(&server, "nightly", &["--", "sh", "-c", &script]);
    wait_for_file(&ready);
    break_lock(&server, "nightly");
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert_eq!(read(&outer), "TERM\n", "{out:?}");
    wait_until("the background shell ended", Duration::from_secs(5), || {
        read(&inner) == "TERM\n"
    });
    let lost = note(&out.stderr, "lost");
    assert_eq!(lost["name"], "nightly");
    assert_eq!(lost["on_lost"], "term");
    assert!(
        lost["message"]
            .as_str()
            .expect("message")
            .contains("sending it SIGTERM, and SIGKILL if it runs 10s more"),
        "{lost}"
    );
    assert!(
        notes(&out.stderr).iter().all(|n| n["event"] != "killed"),
        "{}",
        out.stderr
    );
    // The command's own exit code, from its trap.
    let ended = note(&out.stderr, "ended");
    assert_eq!(ended["exit_code"], 7, "{ended}");
    assert_eq!(
        ended["message"],
        "`sh` ended with exit code 7 after lock `nightly` was lost"
    );
}

#[test]
fn a_sigterm_sent_to_lockctl_reaches_the_command_and_what_it_started() {
    let server = RedisServer::start();
    let (script, [ready, outer, inner]) = two_shells(&server);
    let child = start_run(&server, "forwarded", &["--", "sh", "-c", &script]);
    wait_for_file(&ready);
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(7), "the command's own exit code: {out:?}");
    assert_eq!(read(&outer), "TERM\n", "{out:?}");
    wait_until("the background shell ended", Duration::from_secs(5), || {
        read(&inner) == "TERM\n"
    });
    assert!(!exists(&server, "forwarded"), "released");
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_the_grace() {
    let server = RedisServer::start();
    let [ready, beat] = files(&server, ["ready", "beat"]);
    // `trap '' TERM` is inherited: neither the shell nor its `sleep`s end on
    // SIGTERM.
    let script = format!(
        "exec {QUIET}; trap '' TERM; touch {ready}; {LOOP} echo . >> {beat}; sleep 0.05; done",
        ready = ready.display(),
        beat = beat.display(),
    );
    let child = start_run(
        &server,
        "stubborn",
        &["--grace", "700ms", "--", "sh", "-c", &script],
    );
    wait_for_file(&ready);
    let broken = Instant::now();
    break_lock(&server, "stubborn");
    let out = finish(child, Duration::from_secs(10));
    let took = broken.elapsed();
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert!(
        took >= Duration::from_millis(700),
        "before the grace: {took:?}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    let killed = note(&out.stderr, "killed");
    assert_eq!(killed["grace_ms"], 700, "{killed}");
    assert!(
        killed["message"]
            .as_str()
            .expect("message")
            .starts_with("`sh` did not end within 700ms of SIGTERM; sending it SIGKILL"),
        "{killed}"
    );
    assert_stopped(&beat, "the command");
}

#[test]
fn what_the_command_started_and_that_ignores_sigterm_is_killed_after_the_grace() {
    let server = RedisServer::start();
    let [ready, beat] = files(&server, ["ready", "beat"]);
    // The command ends on SIGTERM; the loop it started in the background
    // ignores it.
    let script = format!(
        "(trap '' TERM; {LOOP} echo . >> {beat}; sleep 0.05; done) {QUIET} & \
         touch {ready}; wait",
        ready = ready.display(),
        beat = beat.display(),
    );
    let child = start_run(
        &server,
        "leftover",
        &["--grace", "700ms", "--", "sh", "-c", &script],
    );
    wait_for_file(&ready);
    let broken = Instant::now();
    break_lock(&server, "leftover");
    let out = finish(child, Duration::from_secs(10));
    let took = broken.elapsed();
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert!(
        took >= Duration::from_millis(700),
        "before the grace: {took:?}"
    );
    let killed = note(&out.stderr, "killed");
    assert!(
        killed["message"]
            .as_str()
            .expect("message")
            .starts_with("what `sh` started did not end within 700ms of SIGTERM"),
        "{killed}"
    );
    assert_stopped(&beat, "the background loop");
}

#[test]
fn on_lost_kill_sends_sigkill_at_once() {
    let server = RedisServer::start();
    let [ready, told, beat] = files(&server, ["ready", "told", "beat"]);
    let script = format!(
        "trap 'echo TERM > {told}' TERM; touch {ready}; \
         {LOOP} echo . >> {beat}; sleep 0.05; done",
        told = told.display(),
        ready = ready.display(),
        beat = beat.display(),
    );
    let child = start_run(
        &server,
        "brittle",
        &[
            "--on-lost",
            "kill",
            "--grace",
            "1m",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    wait_for_file(&ready);
    let broken = Instant::now();
    break_lock(&server, "brittle");
    let out = finish(child, Duration::from_secs(10));
    assert!(broken.elapsed() < Duration::from_secs(5), "no grace");
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert_eq!(note(&out.stderr, "lost")["on_lost"], "kill");
    assert_eq!(
        note(&out.stderr, "ended")["exit_code"],
        128 + libc::SIGKILL,
        "{}",
        out.stderr
    );
    assert_stopped(&beat, "the command");
    assert!(!told.exists(), "SIGKILL, no SIGTERM first");
}

#[test]
fn on_lost_ignore_lets_the_command_finish() {
    let server = RedisServer::start();
    let [ready, go, told, finished] = files(&server, ["ready", "go", "told", "finished"]);
    let script = format!(
        "trap 'echo TERM > {told}' TERM; touch {ready}; \
         {LOOP} [ -e {go} ] && break; sleep 0.05; done; echo done > {finished}; exit 5",
        told = told.display(),
        ready = ready.display(),
        go = go.display(),
        finished = finished.display(),
    );
    // lockctl's notes go to a file, read while it runs.
    let log = server.dir().join("notes");
    let child = lockctl_at(&server.url())
        .args(["--json", "run", "lenient", "--watchdog-timeout", "300ms"])
        .args([
            "--on-lost",
            "ignore",
            "--grace",
            "0s",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("notes file"))
        .spawn()
        .expect("lockctl starts");
    wait_for_file(&ready);
    break_lock(&server, "lenient");
    wait_until("lockctl noticed the loss", Duration::from_secs(10), || {
        read(&log).contains(r#""event":"lost""#)
    });
    // Time for a SIGTERM or SIGKILL to land, were one sent.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&go, "").expect("go");
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert_eq!(read(&finished), "done\n", "{out:?}");
    assert!(!told.exists(), "no SIGTERM");
    let out = common::Run {
        stderr: read(&log),
        ..out
    };
    let lost = note(&out.stderr, "lost");
    assert_eq!(lost["on_lost"], "ignore");
    assert_eq!(note(&out.stderr, "ended")["exit_code"], 5, "{}", out.stderr);
    assert!(
        lost["message"]
            .as_str()
            .expect("message")
            .contains("letting it run (--on-lost ignore)"),
        "{lost}"
    );
}

#[test]
fn the_command_finds_the_lock_s_name_owner_and_token_in_its_environment() {
    let server = RedisServer::start();
    let mut con = server.connection();
    let mut tokens = Vec::new();
    for round in 0..2 {
        let [ready, go, env] = files(
            &server,
            [
                &format!("ready-{round}")[..],
                &format!("go-{round}"),
                &format!("env-{round}"),
            ],
        );
        let script = format!(
            "printf '%s\\n' \"$REDLUA_LOCK_NAME\" \"$REDLUA_LOCK_OWNER\" \"$REDLUA_LOCK_TOKEN\" \
             > {env}; touch {ready}; {LOOP} [ -e {go} ] && break; sleep 0.05; done",
            env = env.display(),
            ready = ready.display(),
            go = go.display(),
        );
        let child = spawn(
            lockctl_at(&server.url())
                .args(["run", "jobs:nightly", "--"])
                .args(sh(&script)),
        );
        wait_for_file(&ready);
        // What Redis holds while the command runs.
        let holders: Vec<String> = redis::cmd("HKEYS")
            .arg("jobs:nightly")
            .query(&mut con)
            .expect("HKEYS");
        let token: u64 = redis::cmd("GET")
            .arg("redisson_lock_token:{jobs:nightly}")
            .query(&mut con)
            .expect("GET the token counter");
        std::fs::write(&go, "").expect("go");
        let out = finish(child, Duration::from_secs(10));
        assert_eq!(out.code, Some(0), "{out:?}");
        let seen = read(&env);
        let seen: Vec<&str> = seen.lines().collect();
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert_eq!(
            seen,
            [
                "jobs:nightly".to_string(),
                holders[0].clone(),
                token.to_string()
            ],
            "round {round}"
        );
        tokens.push(token);
    }
    assert!(tokens[1] > tokens[0], "{tokens:?}");
}

/// Connections the server has accepted so far.
fn connections(con: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(con)
        .expect("INFO stats");
    info.lines()
        .find_map(|line| line.strip_prefix("total_connections_received:"))
        .expect("total_connections_received")
        .trim()
        .parse()
        .expect("a number")
}

#[test]
fn a_misspelt_option_is_a_usage_error_before_redis_is_contacted() {
    let server = RedisServer::start();
    let marker = server.dir().join("ran");
    let touch = format!("touch {}", marker.display());
    let cases: [(&[&str], &str); 8] = [
        (
            &["run", "t", "--wiat", "5s", "--", "sh", "-c", &touch],
            "--wiat",
        ),
        (&["run", "t", "--wiat", "5s", "sh", "-c", &touch], "--wiat"),
        (
            &["run", "t", "--on-lost", "kil", "--", "sh", "-c", &touch],
            "kil",
        ),
        (&["hold", "t", "--for", "1s", "--wiat", "5s"], "--wiat"),
        (&["status", "t", "--jsn"], "--jsn"),
        (&["ls", "--cuont", "10"], "--cuont"),
        (&["unlock", "--force", "t", "--url-", "x"], "--url-"),
        (&["lint", "--targte", "redis-7.4", "x.lua"], "--targte"),
    ];
    let mut con = server.connection();
    for url in [server.url().as_str(), "redis://127.0.0.1:1/"] {
        for (args, wrong) in cases {
            let before = connections(&mut con);
            let out = run(lockctl_at(url).args(args));
            assert_eq!(out.code, Some(2), "{url} {args:?}: {out:?}");
            assert!(out.stderr.contains(wrong), "{args:?}: {}", out.stderr);
            assert!(!out.stderr.contains("connect"), "{args:?}: {}", out.stderr);
            assert_eq!(connections(&mut con), before, "{url} {args:?}");
        }
    }
    assert!(!marker.exists(), "the command must not run");
    assert!(!exists(&server, "t"));
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).expect("KEYS");
    assert!(keys.is_empty(), "{keys:?}");
    // After the command, an option is the command's.
    let out = run(lockctl_at(&server.url()).args(["run", "t", "echo", "--wiat"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "--wiat\n");
    let out = run(lockctl().args(["run", "--help"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    for text in [
        "--on-lost <ACTION>",
        "--grace <DURATION>",
        "[default: term]",
        "[default: 10s]",
        "REDLUA_LOCK_NAME",
        "REDLUA_LOCK_OWNER",
        "REDLUA_LOCK_TOKEN",
        "exits with 123",
    ] {
        assert!(out.stdout.contains(text), "{text}: {}", out.stdout);
    }
}
