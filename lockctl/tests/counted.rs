//! lockctl and semaphores: `run --permits N` as a cross-machine `sem` /
//! `parallel -j N` (never more than N commands at once, the same exit code,
//! signal and loss behaviour as `run` on a lock), `unlock --force --permit`
//! for one leased permit, and what `status` and `ls` show of semaphores and
//! count-down latches. Through the real binary, against a real
//! `redis-server`.

mod common;

use common::{finish, json, lockctl_at, read, run, spawn, wait_until};
use redlua_test_support::RedisServer;
use std::time::{Duration, Instant};

/// The exit code of a run whose permit was lost.
const LOST: i32 = 123;

/// A command that appends to `log` a `+` line when it starts and a `-`
/// line when it ends, each with the time in ns, around `seconds` of sleep:
/// the observer (outside Redis) counts overlaps from the log.
fn worker(log: &std::path::Path, seconds: &str) -> String {
    format!(
        "echo \"+ $(date +%s%N)\" >> {log}; sleep {seconds}; echo \"- $(date +%s%N)\" >> {log}",
        log = log.display()
    )
}

/// The most lines `+` open at once in `log` (a start, then its end).
fn most_at_once(log: &str) -> usize {
    let mut events: Vec<(u128, i32)> = log
        .lines()
        .filter_map(|line| {
            let (sign, at) = line.split_once(' ')?;
            Some((at.parse().ok()?, if sign == "+" { 1 } else { -1 }))
        })
        .collect();
    // Ends before starts at the same instant.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

#[test]
fn run_with_permits_runs_at_most_n_commands_at_once_across_processes() {
    let server = RedisServer::start();
    let url = server.url();
    let log = server.dir().join("log");
    let children: Vec<_> = (0..6)
        .map(|_| {
            spawn(lockctl_at(&url).args([
                "run",
                "--permits",
                "2",
                "encoders",
                "--",
                "sh",
                "-c",
                &worker(&log, "0.3"),
            ]))
        })
        .collect();
    let started = Instant::now();
    for child in children {
        let out = finish(child, Duration::from_secs(20));
        assert_eq!(out.code, Some(0), "{out:?}");
    }
    let log = read(&log);
    assert_eq!(log.lines().count(), 12, "{log}");
    assert_eq!(most_at_once(&log), 2, "{log}");
    // Three rounds of two, woken by releases (not by 5 s polls).
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    // Every permit came back.
    let available: String = redis::cmd("GET")
        .arg("encoders")
        .query(&mut server.connection())
        .unwrap();
    assert_eq!(available, "2");
    let out = run(lockctl_at(&url).args(["run", "--permits", "3", "encoders", "--", "true"]));
    assert_eq!(out.code, Some(2), "a pool of another size: {out:?}");
    assert!(out.stderr.contains("a pool of 2 permits, not 3"), "{out:?}");
}

#[test]
fn a_permit_given_back_by_force_stops_the_command_and_exits_lost() {
    let server = RedisServer::start();
    let url = server.url();
    let ready = server.dir().join("ready");
    let env = server.dir().join("env");
    let script = format!(
        "echo \"$REDLUA_LOCK_NAME $REDLUA_LOCK_OWNER $REDLUA_LOCK_TOKEN\" > {env}; \
         trap 'exit 7' TERM; touch {ready}; for i in $(seq 300); do sleep 0.05; done",
        env = env.display(),
        ready = ready.display()
    );
    let child = spawn(lockctl_at(&url).args([
        "--json",
        "run",
        "--permits",
        "1",
        "gpu",
        "--watchdog-timeout",
        "600ms",
        "--",
        "sh",
        "-c",
        &script,
    ]));
    wait_until("the command runs", Duration::from_secs(10), || {
        ready.exists()
    });
    let told = read(&env);
    let fields: Vec<&str> = told.split_whitespace().collect();
    assert_eq!(fields.len(), 3, "{told}");
    assert_eq!(fields[0], "gpu");
    assert_eq!(fields[1].len(), 32, "the permit's id: {told}");
    assert!(fields[2].parse::<u64>().unwrap() > 0, "a token: {told}");

    // status shows the permit and its expiry.
    let out = run(lockctl_at(&url).args(["status", "gpu"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("leased semaphore `gpu`: 0 available, 1 taken"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(fields[1]), "{}", out.stdout);
    assert!(out.stdout.contains("expires in"), "{}", out.stdout);
    let out = run(lockctl_at(&url).args(["status", "--json", "gpu"]));
    let state = json(&out.stdout);
    assert_eq!(state["state"], "leased_semaphore");
    assert_eq!(state["permits"][0]["id"], fields[1]);

    let out = run(lockctl_at(&url).args(["unlock", "--force", "gpu", "--permit", fields[1]]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(LOST), "{out:?}");
    assert!(
        out.stderr.contains("permit of semaphore `gpu` was lost"),
        "{}",
        out.stderr
    );
    // Given back once: the pool is whole, not more.
    let available: String = redis::cmd("GET")
        .arg("gpu")
        .query(&mut server.connection())
        .unwrap();
    assert_eq!(available, "1");
    let out = run(lockctl_at(&url).args(["unlock", "--force", "gpu", "--permit", fields[1]]));
    assert_eq!(out.code, Some(1), "not taken any more: {out:?}");
}

#[test]
fn run_with_permits_passes_the_exit_code_and_signals_on() {
    let server = RedisServer::start();
    let url = server.url();
    let out =
        run(lockctl_at(&url).args(["run", "--permits", "2", "jobs", "--", "sh", "-c", "exit 9"]));
    assert_eq!(out.code, Some(9), "{out:?}");
    let ready = server.dir().join("ready");
    let script = format!(
        "trap 'exit 5' TERM; touch {}; for i in $(seq 300); do sleep 0.05; done",
        ready.display()
    );
    let child =
        spawn(lockctl_at(&url).args(["run", "--permits", "2", "jobs", "--", "sh", "-c", &script]));
    wait_until("the command runs", Duration::from_secs(10), || {
        ready.exists()
    });
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(5), "{out:?}");
    let available: String = redis::cmd("GET")
        .arg("jobs")
        .query(&mut server.connection())
        .unwrap();
    assert_eq!(available, "2", "the permit came back");
    // Options of the locks do not go with --permits.
    let out = run(lockctl_at(&url).args(["run", "--permits", "2", "--read", "jobs", "--", "true"]));
    assert_eq!(out.code, Some(2), "{out:?}");
}

#[test]
fn status_and_ls_show_semaphores_and_counts() {
    let server = RedisServer::start();
    let url = server.url();
    let mut con = server.connection();
    // A bare count (a plain semaphore or a latch), and other integers.
    redis::cmd("SET")
        .arg("pool")
        .arg(3)
        .query::<()>(&mut con)
        .unwrap();
    redis::cmd("SET")
        .arg("data:1")
        .arg(5)
        .query::<()>(&mut con)
        .unwrap();
    let out = run(lockctl_at(&url).args(["status", "pool"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.starts_with("count `pool`: 3"), "{}", out.stdout);

    let child =
        spawn(lockctl_at(&url).args(["run", "--permits", "2", "encoders", "--", "sleep", "3"]));
    wait_until("a permit is taken", Duration::from_secs(10), || {
        run(lockctl_at(&url).args(["status", "encoders"]))
            .stdout
            .contains("1 taken")
    });
    // ls lists leased semaphores; bare counts only with --counters.
    let out = run(lockctl_at(&url).args(["ls"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("encoders  leased semaphore  1 available  1 taken"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("pool"), "{}", out.stdout);
    let out = run(lockctl_at(&url).args(["ls", "--counters", "--json"]));
    let mut names: Vec<String> = out
        .stdout
        .lines()
        .map(|l| json(l)["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["data:1", "encoders", "pool"], "{}", out.stdout);
    let out = finish(child, Duration::from_secs(10));
    assert_eq!(out.code, Some(0), "{out:?}");
    // Nothing taken any more: the set is gone, so ls lists no semaphore.
    let out = run(lockctl_at(&url).args(["ls"]));
    assert_eq!(out.code, Some(1), "{out:?}");
}
