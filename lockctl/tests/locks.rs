//! `lockctl run`, `hold`, `status` and `unlock --force` through the real
//! binary, against a real `redis-server`.

mod common;

use common::{finish, json, lockctl, lockctl_at, read, run, spawn, wait_until};
use redlua_runtime::LockClient;
use redlua_test_support::RedisServer;
use std::time::{Duration, Instant};

/// A runtime for the library's side of a test (its background tasks keep
/// running while the test thread waits for processes).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A library client of the server at `url`, on `rt`.
fn library_client(rt: &tokio::runtime::Runtime, url: &str) -> LockClient {
    rt.block_on(LockClient::connect(url)).expect("client")
}

/// Whether key `name` exists.
fn exists(server: &RedisServer, name: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(name)
        .query::<bool>(&mut server.connection())
        .expect("EXISTS")
}

/// `lockctl status NAME` exit code.
fn status_code(server: &RedisServer, name: &str) -> Option<i32> {
    run(lockctl_at(&server.url()).args(["status", name])).code
}

/// A `sh -c` script for `run`.
fn sh(script: &str) -> [&str; 3] {
    ["sh", "-c", script]
}

#[test]
fn concurrent_runs_never_interleave() {
    let server = RedisServer::start();
    let log = server.dir().join("log");
    let script = format!(
        "echo \"start $$\" >> '{0}'; sleep 0.2; echo \"end $$\" >> '{0}'",
        log.display()
    );
    let children: Vec<_> = (0..4)
        .map(|_| {
            spawn(
                lockctl_at(&server.url())
                    .args(["run", "shared-file", "--"])
                    .args(sh(&script)),
            )
        })
        .collect();
    for child in children {
        let out = finish(child, Duration::from_secs(20));
        assert_eq!(out.code, Some(0), "{out:?}");
    }
    let text = read(&log);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    for pair in lines.chunks(2) {
        let start = pair[0].strip_prefix("start ").expect(&text);
        let end = pair[1].strip_prefix("end ").expect(&text);
        assert_eq!(start, end, "interleaved:\n{text}");
    }
    assert!(!exists(&server, "shared-file"), "released at the end");
}

#[test]
fn run_exits_with_the_commands_code() {
    let server = RedisServer::start();
    let url = server.url();
    let out = run(lockctl_at(&url)
        .args(["run", "codes", "--"])
        .args(sh("echo out; echo err >&2; exit 7")));
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(7), "out\n", "err\n")
    );
    // Without `--`, and a command killed by a signal: 128 + 15.
    let out = run(lockctl_at(&url)
        .args(["run", "codes"])
        .args(sh("kill -TERM $$")));
    assert_eq!(out.code, Some(143), "{out:?}");
    let out = run(lockctl_at(&url).args(["run", "codes", "--", "/nonexistent/command"]));
    assert_eq!(out.code, Some(127), "{out:?}");
    assert!(
        out.stderr.contains("cannot run `/nonexistent/command`"),
        "{}",
        out.stderr
    );
    let not_executable = server.dir().join("script.txt");
    std::fs::write(&not_executable, "echo hi\n").expect("write");
    let out = run(lockctl_at(&url)
        .args(["run", "codes", "--"])
        .arg(&not_executable));
    assert_eq!(out.code, Some(126), "{out:?}");
    // Every run released the lock.
    assert_eq!(status_code(&server, "codes"), Some(1));
}

#[test]
fn wait_gives_up_with_124() {
    let server = RedisServer::start();
    let rt = runtime();
    let client = rt
        .block_on(LockClient::connect(server.url()))
        .expect("client");
    let guard = rt
        .block_on(client.lock("busy").lock())
        .expect("library hold");

    let marker = server.dir().join("ran");
    let started = Instant::now();
    let out = run(lockctl_at(&server.url())
        .args(["run", "busy", "--wait", "300ms", "--"])
        .args(sh(&format!("touch '{}'", marker.display()))));
    let waited = started.elapsed();
    assert_eq!(out.code, Some(124), "{out:?}");
    assert!(
        out.stderr
            .contains("timed out after 300ms waiting for lock `busy`"),
        "{}",
        out.stderr
    );
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(!marker.exists(), "the command must not run");

    let out =
        run(lockctl_at(&server.url()).args(["hold", "busy", "--for", "1s", "--wait", "100ms"]));
    assert_eq!(out.code, Some(124), "{out:?}");
    rt.block_on(guard.unlock()).expect("unlock");
}

#[test]
fn status_shows_holds_made_by_the_library() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let lock = client.lock("orders:42");
    let first = rt.block_on(lock.lock()).expect("hold");
    let second = rt.block_on(first.reenter()).expect("re-entered hold");
    assert_eq!(first.owner(), second.owner());

    let out = run(lockctl_at(&url).args(["status", "orders:42"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("lock `orders:42`: held\n  kind:    lock\n  ttl:     "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("holders: {} (2 holds)", first.owner())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("\n  token:   {}\n", first.token())),
        "{}",
        out.stdout
    );

    let out = run(lockctl_at(&url).args(["status", "--json", "orders:42"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let status = json(&out.stdout);
    assert_eq!(status["state"], "held");
    assert_eq!(status["kind"], "lock");
    assert_eq!(
        status["holders"],
        serde_json::json!([{ "owner": first.owner().to_string(), "count": 2, "mode": null, "identity": null }])
    );
    let ttl = status["ttl_ms"].as_u64().expect("ttl");
    assert!(ttl > 20_000 && ttl <= 30_000, "{ttl}");
    assert_eq!(status["token"], first.token());

    rt.block_on(second.unlock()).expect("unlock");
    rt.block_on(first.unlock()).expect("unlock");
    let out = run(lockctl_at(&url).args(["status", "orders:42"]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(1), "lock `orders:42`: free\n")
    );
    let out = run(lockctl_at(&url).args(["status", "--json", "orders:42"]));
    assert_eq!(json(&out.stdout)["state"], "free");
}

#[test]
fn status_reads_read_write_locks_and_refuses_other_keys() {
    let server = RedisServer::start();
    let url = server.url();
    let mut con = server.connection();
    // Redisson's read/write layout: a writer that also reads (downgrade).
    let () = redis::cmd("HSET")
        .arg("docs")
        .arg(&["mode", "write", "c1:7:write", "1", "c1:7", "2"])
        .query(&mut con)
        .expect("HSET");
    let () = redis::cmd("PEXPIRE")
        .arg("docs")
        .arg(10_000)
        .query(&mut con)
        .expect("PEXPIRE");
    let out = run(lockctl_at(&url).args(["status", "docs"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains("kind:    read/write lock, mode write"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("c1:7 (write, 1 hold)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("c1:7 (read, 2 holds)"),
        "{}",
        out.stdout
    );
    let status = json(&run(lockctl_at(&url).args(["--json", "status", "docs"])).stdout);
    assert_eq!(status["kind"], "read_write");
    assert_eq!(status["mode"], "write");
    assert_eq!(
        status["holders"],
        serde_json::json!([
            { "owner": "c1:7", "count": 1, "mode": "write", "identity": null },
            { "owner": "c1:7", "count": 2, "mode": "read", "identity": null },
        ])
    );

    let () = redis::cmd("SET")
        .arg("plain")
        .arg("x")
        .query(&mut con)
        .expect("SET");
    let out = run(lockctl_at(&url).args(["status", "plain"]));
    assert_eq!(out.code, Some(3), "{out:?}");
    assert_eq!(
        out.stdout,
        "key `plain` is not a lock: it holds a string, not a hash\n"
    );
    let status = json(&run(lockctl_at(&url).args(["status", "plain", "--json"])).stdout);
    assert_eq!(
        (status["state"].clone(), status["type"].clone()),
        ("not_a_lock".into(), "string".into())
    );

    let () = redis::cmd("HSET")
        .arg("user:1")
        .arg(&["name", "ann"])
        .query(&mut con)
        .expect("HSET");
    assert_eq!(status_code(&server, "user:1"), Some(3));
}

#[test]
fn unlock_force_breaks_a_library_hold_and_wakes_a_waiting_run() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let guard = rt.block_on(client.lock("stuck").lock()).expect("hold");

    let marker = server.dir().join("ran");
    let mut waiter = spawn(
        lockctl_at(&url)
            .args(["run", "stuck", "--"])
            .args(sh(&format!("echo ran > '{}'", marker.display()))),
    );
    // The waiter subscribed to the lock's channel: it waits for a wake-up.
    let mut con = server.connection();
    wait_until(
        "the waiting run subscribed",
        Duration::from_secs(10),
        || {
            let (_, n): (String, u64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{stuck}")
                .query(&mut con)
                .expect("PUBSUB NUMSUB");
            n == 1
        },
    );
    assert!(waiter.try_wait().expect("try_wait").is_none(), "it waits");

    let broken_at = Instant::now();
    let out = run(lockctl_at(&url).args(["unlock", "--force", "stuck"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!(
            "broke lock `stuck`, held by {} (1 hold); its waiters were woken\n",
            guard.owner()
        )
    );
    // The library's holder knows within a round trip, not at its next
    // renewal (10 s away).
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), guard.lost()).await })
        .expect("the holder's guard says lost within a second of the break");
    assert!(guard.is_lost());
    // Woken, not polling: the library's lease had 30 s left.
    let out = finish(waiter, Duration::from_secs(10));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        broken_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        broken_at.elapsed()
    );
    assert_eq!(read(&marker), "ran\n");
    assert!(matches!(
        rt.block_on(guard.unlock()),
        Err(redlua_runtime::Error::LockLost { .. })
    ));

    let out = run(lockctl_at(&url).args(["--json", "unlock", "--force", "stuck"]));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(json(&out.stdout)["broken"], false);
    let () = redis::cmd("SET")
        .arg("plain")
        .arg("x")
        .query(&mut con)
        .expect("SET");
    let out = run(lockctl_at(&url).args(["unlock", "--force", "plain"]));
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("not a lock"), "{}", out.stderr);
    assert!(exists(&server, "plain"), "left alone");
}

#[test]
fn a_lost_lock_terminates_the_command() {
    let server = RedisServer::start();
    let ready = server.dir().join("ready");
    let told = server.dir().join("told");
    let script = format!(
        "trap \"echo TERM > '{}'; exit 0\" TERM; touch '{}'; while :; do sleep 0.05; done",
        told.display(),
        ready.display()
    );
    let child = spawn(
        lockctl_at(&server.url())
            .args(["run", "fragile", "--watchdog-timeout", "300ms", "--"])
            .args(sh(&script)),
    );
    wait_until("the command started", Duration::from_secs(10), || {
        ready.exists()
    });
    let () = redis::cmd("DEL")
        .arg("fragile")
        .query(&mut server.connection())
        .expect("DEL");
    let out = finish(child, Duration::from_secs(5));
    assert_eq!(out.code, Some(123), "{out:?}");
    assert_eq!(read(&told), "TERM\n");
    assert!(
        out.stderr
            .contains("lock `fragile` was lost while `sh` ran"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_lease_shorter_than_the_command_ends_it() {
    let server = RedisServer::start();
    let started = Instant::now();
    let out = run(lockctl_at(&server.url()).args([
        "--json", "run", "short", "--lease", "300ms", "--", "sleep", "5",
    ]));
    assert_eq!(out.code, Some(123), "{out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let note = json(out.stderr.lines().next().expect("a note"));
    assert_eq!(
        (note["event"].clone(), note["name"].clone()),
        ("lost".into(), "short".into())
    );
}

#[test]
fn signals_are_forwarded_to_the_command() {
    let server = RedisServer::start();
    for (signal, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGHUP, "HUP"),
        (libc::SIGINT, "INT"),
    ] {
        let ready = server.dir().join(format!("ready-{name}"));
        let told = server.dir().join(format!("told-{name}"));
        let script = format!(
            "trap \"echo {name} > '{}'; exit 3\" {name}; touch '{}'; while :; do sleep 0.05; done",
            told.display(),
            ready.display()
        );
        let child = spawn(
            lockctl_at(&server.url())
                .args(["run", "sig", "--"])
                .args(sh(&script)),
        );
        wait_until("the command started", Duration::from_secs(10), || {
            ready.exists()
        });
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        // SAFETY: kill(2) on the pid of our own child, which has not been
        // reaped yet.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let out = finish(child, Duration::from_secs(5));
        assert_eq!(out.code, Some(3), "{name}: {out:?}");
        assert_eq!(read(&told), format!("{name}\n"));
        assert!(!exists(&server, "sig"), "{name}: released");
    }
}

#[test]
fn a_signal_while_waiting_gives_up_without_running_the_command() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let guard = rt.block_on(client.lock("queue").lock()).expect("hold");
    let marker = server.dir().join("ran");
    let child = spawn(
        lockctl_at(&url)
            .args(["run", "queue", "--"])
            .args(sh(&format!("touch '{}'", marker.display()))),
    );
    let mut con = server.connection();
    wait_until("the run waits", Duration::from_secs(10), || {
        let (_, n): (String, u64) = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg("redisson_lock__channel:{queue}")
            .query(&mut con)
            .expect("PUBSUB NUMSUB");
        n == 1
    });
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = finish(child, Duration::from_secs(5));
    assert_eq!(out.code, Some(143), "{out:?}");
    assert!(
        out.stderr.contains("SIGTERM while waiting for `queue`"),
        "{}",
        out.stderr
    );
    assert!(!marker.exists(), "the command must not run");
    // The library's hold is untouched.
    let out = run(lockctl_at(&url).args(["--json", "status", "queue"]));
    assert_eq!(
        json(&out.stdout)["holders"][0]["owner"],
        guard.owner().to_string()
    );
    rt.block_on(guard.unlock()).expect("unlock");
}

#[test]
fn hold_says_when_it_acquired_and_released() {
    let server = RedisServer::start();
    let url = server.url();
    let child = spawn(lockctl_at(&url).args(["hold", "demo", "--for", "600ms"]));
    wait_until("the hold started", Duration::from_secs(10), || {
        exists(&server, "demo")
    });
    assert_eq!(status_code(&server, "demo"), Some(0));
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(
        lines[0].starts_with("acquired lock `demo` as "),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("; holding it for 600ms"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("released lock `demo` after "),
        "{}",
        lines[1]
    );
    assert!(!exists(&server, "demo"));

    let out = run(lockctl_at(&url).args(["hold", "demo", "--for", "100ms", "--json"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let events: Vec<serde_json::Value> = out.stdout.lines().map(json).collect();
    assert_eq!(events.len(), 2, "{}", out.stdout);
    assert_eq!(
        (events[0]["event"].clone(), events[0]["for_ms"].clone()),
        ("acquired".into(), 100.into())
    );
    assert_eq!(events[1]["event"], "released");
    assert_eq!(events[0]["owner"], events[1]["owner"]);
    assert!(events[1]["held_ms"].as_u64().expect("held_ms") >= 100);

    // Interrupted: released early, 128 + SIGINT.
    let child = spawn(lockctl_at(&url).args(["hold", "demo", "--for", "1m"]));
    wait_until("the hold started", Duration::from_secs(10), || {
        exists(&server, "demo")
    });
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = finish(child, Duration::from_secs(5));
    assert_eq!(out.code, Some(130), "{out:?}");
    assert!(
        out.stdout.contains("released lock `demo` early (SIGINT)"),
        "{}",
        out.stdout
    );
    assert!(!exists(&server, "demo"));
}

#[test]
fn usage_errors_and_help() {
    let out = run(lockctl().args(["status", "x"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("set REDIS_URL"), "{}", out.stderr);
    let out = run(lockctl().args(["run", "x", "--wait", "30", "--", "true"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("has no unit"), "{}", out.stderr);
    let out = run(lockctl().args(["unlock", "x"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    let out = run(lockctl().arg("--help"));
    assert_eq!(out.code, Some(0), "{out:?}");
    for line in [
        "Exit codes:",
        "  123  ",
        "  124  ",
        "  125  ",
        "  127  ",
        "128+N",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
    // An unreachable server fails at once.
    let out = run(lockctl_at("redis://127.0.0.1:1/").args(["run", "x", "--", "true"]));
    assert_eq!(out.code, Some(125), "{out:?}");
    assert!(
        out.stderr
            .contains("cannot connect to redis://127.0.0.1:1/"),
        "{}",
        out.stderr
    );
}

#[test]
fn read_runs_overlap_and_a_write_run_waits_for_them() {
    let server = RedisServer::start();
    let url = server.url();
    let dir = server.dir();
    // Each reader waits (up to 5 s) inside its hold until the other one is
    // inside too: both succeed only if the holds overlap.
    let reader = |me: &str, other: &str| {
        format!(
            "touch '{0}/{me}'; i=0; while [ ! -e '{0}/{other}' ]; do \
             i=$((i+1)); [ $i -gt 100 ] && exit 9; sleep 0.05; done; \
             sleep 0.3; echo {me} >> '{0}/log'",
            dir.display()
        )
    };
    let readers = [
        spawn(
            lockctl_at(&url)
                .args(["run", "catalog", "--read", "--"])
                .args(sh(&reader("r1", "r2"))),
        ),
        spawn(
            lockctl_at(&url)
                .args(["run", "catalog", "--read", "--"])
                .args(sh(&reader("r2", "r1"))),
        ),
    ];
    wait_until("both readers are in", Duration::from_secs(10), || {
        dir.join("r1").exists() && dir.join("r2").exists()
    });
    let out = run(lockctl_at(&url).args(["status", "catalog"]));
    assert!(
        out.stdout.contains("kind:    read/write lock, mode read"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches("(read, 1 hold)").count(),
        2,
        "{}",
        out.stdout
    );
    // The writer waits until both readers are done.
    let writer = run(lockctl_at(&url)
        .args(["run", "catalog", "--write", "--wait", "10s", "--"])
        .args(sh(&format!("echo w >> '{}/log'", dir.display()))));
    assert_eq!(writer.code, Some(0), "{writer:?}");
    for child in readers {
        let out = finish(child, Duration::from_secs(10));
        assert_eq!(out.code, Some(0), "{out:?}");
    }
    let log = read(&dir.join("log"));
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert_eq!(lines[2], "w", "the writer ran last:\n{log}");
    assert!(!exists(&server, "catalog"));
}

#[test]
fn unlock_force_breaks_a_read_write_lock_and_wakes_its_waiters() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let guard = rt
        .block_on(client.read_write_lock("docs").write().lock())
        .expect("write hold");

    let marker = server.dir().join("ran");
    let waiter = spawn(
        lockctl_at(&url)
            .args(["run", "docs", "--read", "--"])
            .args(sh(&format!("echo ran > '{}'", marker.display()))),
    );
    let mut con = server.connection();
    wait_until(
        "the waiting reader subscribed",
        Duration::from_secs(10),
        || {
            let (_, n): (String, u64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_rwlock:{docs}")
                .query(&mut con)
                .expect("PUBSUB NUMSUB");
            n == 1
        },
    );
    let out = run(lockctl_at(&url).args(["unlock", "--force", "docs"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!(
            "broke read/write lock `docs` (mode write), held by {} (write, 1 hold); \
             its waiters were woken\n",
            guard.owner()
        )
    );
    let out = finish(waiter, Duration::from_secs(5));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(read(&marker), "ran\n");

    // Holding the write side in lockctl and a read side in the library.
    let out = run(lockctl_at(&url).args(["hold", "docs", "--write", "--for", "100ms", "--json"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        json(out.stdout.lines().next().expect("event"))["kind"],
        "write lock"
    );
    let out = run(lockctl_at(&url).args(["hold", "docs", "--for", "1s", "--prefer-writers"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("--prefer-writers needs --read or --write"),
        "{}",
        out.stderr
    );
}

#[test]
fn status_shows_a_fair_lock_s_queue_and_unlock_force_wakes_its_head() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let guard = rt.block_on(client.fair_lock("fair").lock()).expect("hold");
    let lock = client.fair_lock("fair");
    let waiter = rt.spawn(async move {
        let guard = lock.lock().await.expect("the waiter's lock()");
        (Instant::now(), guard)
    });
    let mut con = server.connection();
    wait_until("the waiter queued", Duration::from_secs(10), || {
        redis::cmd("LLEN")
            .arg("redisson_lock_queue:{fair}")
            .query::<u64>(&mut con)
            .expect("LLEN")
            == 1
    });
    let queued: Vec<String> = redis::cmd("LRANGE")
        .arg("redisson_lock_queue:{fair}")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .expect("LRANGE");
    let out = run(lockctl_at(&url).args(["status", "fair"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!("queue:   {}", queued[0])),
        "{}",
        out.stdout
    );
    let out = run(lockctl_at(&url).args(["--json", "status", "fair"]));
    assert_eq!(json(&out.stdout)["waiting"][0], queued[0].as_str());

    let broken_at = Instant::now();
    let out = run(lockctl_at(&url).args(["unlock", "--force", "fair"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    // The head is woken on its own channel, not left to poll (30 s lease).
    let (acquired, second) = rt.block_on(waiter).expect("waiter");
    assert!(
        acquired.duration_since(broken_at) < Duration::from_secs(3),
        "{:?}",
        acquired.duration_since(broken_at)
    );
    assert_eq!(second.owner().to_string(), queued[0]);
    rt.block_on(second.unlock()).expect("unlock");
    assert!(
        rt.block_on(guard.unlock()).is_err(),
        "the broken hold is gone"
    );
}

/// The owners queued on fair lock `name`, head first.
fn fair_queue(con: &mut redis::Connection, name: &str) -> Vec<String> {
    redis::cmd("LRANGE")
        .arg(format!("redisson_lock_queue:{{{name}}}"))
        .arg(0)
        .arg(-1)
        .query(con)
        .expect("LRANGE")
}

#[test]
fn a_fair_run_takes_its_turn_in_the_queue() {
    let server = RedisServer::start();
    let url = server.url();
    let rt = runtime();
    let client = library_client(&rt, &url);
    let lock = client.fair_lock("turns");
    let guard = rt.block_on(lock.lock()).expect("hold");

    // The run queues first, then a library waiter.
    let log = server.dir().join("log");
    let waiting_run = spawn(
        lockctl_at(&url)
            .args(["run", "turns", "--fair", "--"])
            .args(sh(&format!("echo run >> '{}'", log.display()))),
    );
    let mut con = server.connection();
    wait_until("the run queued", Duration::from_secs(10), || {
        fair_queue(&mut con, "turns").len() == 1
    });
    let later = rt.spawn({
        let lock = client.fair_lock("turns");
        let log = log.clone();
        async move {
            let guard = lock.lock().await.expect("the library waiter");
            std::fs::write(&log, read(&log) + "library\n").expect("log");
            guard.unlock().await.expect("unlock");
        }
    });
    wait_until("the library waiter queued", Duration::from_secs(10), || {
        fair_queue(&mut con, "turns").len() == 2
    });

    // Served in order: the run, then the library waiter.
    rt.block_on(guard.unlock()).expect("unlock");
    let out = finish(waiting_run, Duration::from_secs(10));
    assert_eq!(out.code, Some(0), "{out:?}");
    rt.block_on(later).expect("the library waiter");
    assert_eq!(read(&log), "run\nlibrary\n");
    assert!(fair_queue(&mut con, "turns").is_empty());
    assert!(!exists(&server, "turns"), "released at the end");

    // --fair is a kind of its own: not with --read, nor --prefer-writers.
    let out = run(lockctl_at(&url).args(["hold", "turns", "--fair", "--read", "--for", "1s"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    let out =
        run(lockctl_at(&url).args(["hold", "turns", "--fair", "--prefer-writers", "--for", "1s"]));
    assert_eq!(out.code, Some(2), "{out:?}");
}
