//! Production-style scripts must analyze without a single error, and must be
//! scripts Redis really runs: each is loaded into, and run on, a throwaway
//! `redis-server`.

mod support;

use redlua_analyzer::{Options, analyze};
use std::path::{Path, PathBuf};
use support::{Conn, Reply, Server};

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/corpus exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "corpus shrank: {files:?}");
    files
        .into_iter()
        .map(|p| {
            let source = std::fs::read_to_string(&p).expect("readable script");
            (p, source)
        })
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn corpus_has_no_errors() {
    let options = Options {
        declared: None,
        ..Options::default()
    };
    let mut failures = Vec::new();
    for (path, source) in corpus() {
        let report = analyze(&source, &options);
        let name = format!("tests/corpus/{}", file_name(&path));
        for d in report.errors() {
            failures.push(d.render(&name, &source));
        }
        assert!(!report.info.commands.is_empty(), "{name}: no command found");
    }
    assert!(
        failures.is_empty(),
        "false errors:\n\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn corpus_info_is_right() {
    let info = |file: &str| {
        let (_, source) = corpus()
            .into_iter()
            .find(|(p, _)| file_name(p) == file)
            .unwrap_or_else(|| panic!("{file} missing"));
        analyze(&source, &Options::default()).info
    };
    let stats = info("read_only_stats.lua");
    assert!(!stats.writes);
    assert_eq!(stats.shebang_flags, Some(vec!["no-writes".to_string()]));
    let names: Vec<&str> = stats.commands.iter().map(String::as_str).collect();
    assert_eq!(
        names,
        ["hgetall", "llen", "object", "xlen", "xrevrange", "zcount"]
    );
    // The publish command's name is ARGV[4]: it may write anything.
    assert!(info("redisson_lock_release.lua").writes);
    assert!(info("redlock_unlock.lua").writes);
    // Calls through `local rcall = redis.call` are seen.
    let job = info("job_queue_move_to_active.lua");
    assert!(
        job.commands.contains("lmove") && job.commands.contains("xadd"),
        "{job:?}"
    );
}

/// How each corpus script is run: its keys, then its arguments.
const RUNS: &[(&str, &[&str], &[&str])] = &[
    ("redisson_lock_acquire.lua", &["lock"], &["30000", "u:1"]),
    ("redisson_lock_acquire.lua", &["lock"], &["30000", "u:1"]),
    (
        "redisson_lock_renew.lua",
        &["lock", "gone"],
        &["30000", "u:1", "u:2"],
    ),
    (
        "redisson_lock_release.lua",
        &["lock", "ch", "latch:1"],
        &["0", "30000", "u:1", "PUBLISH", "1000"],
    ),
    (
        "redisson_lock_release.lua",
        &["lock", "ch", "latch:2"],
        &["0", "30000", "u:1", "SPUBLISH", "1000"],
    ),
    (
        "redisson_rwlock_read_acquire.lua",
        &["rw", "{rw}:u:1:rwlock_timeout"],
        &["30000", "u:1", "u:1:write"],
    ),
    (
        "redisson_rwlock_read_acquire.lua",
        &["rw", "{rw}:u:1:rwlock_timeout"],
        &["30000", "u:1", "u:1:write"],
    ),
    (
        "redisson_rwlock_read_release.lua",
        &["rw", "ch", "{rw}:u:1:rwlock_timeout", "{rw}"],
        &["0", "u:1"],
    ),
    (
        "redisson_rwlock_read_release.lua",
        &["rw", "ch", "{rw}:u:1:rwlock_timeout", "{rw}"],
        &["0", "u:1"],
    ),
    (
        "redisson_rwlock_write_acquire.lua",
        &["rw"],
        &["30000", "u:1:write"],
    ),
    (
        "redisson_rwlock_write_release.lua",
        &["rw", "ch"],
        &["1", "30000", "u:1:write"],
    ),
    (
        "job_queue_move_to_active.lua",
        &[
            "q:wait", "q:active", "q:prio", "q:events", "q:", "q:limit", "q:paused",
        ],
        &[
            "token",
            "30000",
            "1700000000000",
            r#"{"limiter":{"max":5,"duration":1000}}"#,
        ],
    ),
    ("token_bucket.lua", &["bucket"], &["10", "5", "1"]),
    (
        "sidekiq_enqueue.lua",
        &["queues", "queue:default", "stat"],
        &["default", r#"{"class":"A","created_at":1}"#],
    ),
    ("redlock_unlock.lua", &["redlock"], &["token"]),
    (
        "sliding_window.lua",
        &["window"],
        &["1000", "5", "1700000000000", "r1"],
    ),
    (
        "pcall_error_reply.lua",
        &["counter", "audit"],
        &["5", "100"],
    ),
    ("multi_key_unpack.lua", &["a", "b", "c", "d"], &["60"]),
    (
        "read_only_stats.lua",
        &["q:wait", "q:active", "q:prio", "q:events", "stat"],
        &[],
    ),
    (
        "stream_consumer_claim.lua",
        &["stream", "dead"],
        &["g", "c1", "0", "10", "3", "1-0"],
    ),
    (
        "leaderboard_union.lua",
        &["week", "d1", "d2"],
        &["10", "60"],
    ),
    ("compat_unpack.lua", &["compat"], &["a", "b"]),
    (
        "typed_idioms.lua",
        &["typed:n", "typed:h", "typed:s"],
        &["1500", "2"],
    ),
    (
        "library_idioms.lua",
        &["lib:tags", "lib:archive", "lib:json"],
        &["a.", "2500"],
    ),
    (
        "library_idioms.lua",
        &["lib:tags", "lib:archive", "lib:json"],
        &["zz", "100"],
    ),
    (
        "typed_idioms.lua",
        &["typed:n", "typed:h", "typed:s"],
        &["", ""],
    ),
    (
        "idempotent_counter.lua",
        &["seen", "count", "users", "days"],
        &["r1", "u1", "3", "60"],
    ),
];

#[test]
fn corpus_runs_on_redis() {
    let server = Server::start();
    let mut conn = Conn::new(server.port());
    assert_eq!(
        conn.call(&["RPUSH", "q:wait", "job-1"]),
        Reply::Ok("1".into())
    );
    assert_eq!(
        conn.call(&["MSET", "a", "1", "b", "2"]),
        Reply::Ok("OK".into())
    );
    let scripts = corpus();
    for (path, source) in &scripts {
        let reply = conn.call(&["SCRIPT", "LOAD", source]);
        assert!(
            matches!(reply, Reply::Ok(_)),
            "{}: {reply:?}",
            file_name(path)
        );
    }
    for (file, keys, args) in RUNS {
        let (_, source) = scripts
            .iter()
            .find(|(p, _)| file_name(p) == *file)
            .unwrap_or_else(|| panic!("{file} missing"));
        let numkeys = keys.len().to_string();
        let mut command = vec!["EVAL", source.as_str(), numkeys.as_str()];
        command.extend_from_slice(keys);
        command.extend_from_slice(args);
        let reply = conn.call(&command);
        assert!(matches!(reply, Reply::Ok(_)), "{file}: {reply:?}");
    }
    // Every corpus script is run at least once.
    for (path, _) in &scripts {
        let name = file_name(path);
        assert!(
            RUNS.iter().any(|(f, _, _)| *f == name),
            "{name} is never run"
        );
    }
    // Spot checks of results.
    assert_eq!(
        conn.call(&["HGET", "lock", "u:1"]),
        Reply::Ok("(nil)".into())
    );
    assert_eq!(conn.call(&["GET", "latch:2"]), Reply::Ok("1".into()));
    assert_eq!(
        conn.call(&["LRANGE", "q:active", "0", "-1"]),
        Reply::Ok("[job-1]".into())
    );
}
