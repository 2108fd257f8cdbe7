//! lockctl's errors: each one line on stderr, in the operator's words, with
//! a hint; the same as one JSON object with `--json`. Real sockets: a
//! listener that answers as a web server does, a port nothing listens on.

mod common;

use common::{json, lockctl_at, run};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// A listener on a free loopback port that answers every connection with an
/// HTTP error, as a web server does; its URL.
fn http_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    format!("redis://127.0.0.1:{port}/")
}

/// The one line of `stderr`, checked to be `lockctl: error: ... (hint: ...)`.
fn one_error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr:?}");
    let line = lines[0];
    assert!(line.starts_with("lockctl: error: "), "{line}");
    assert!(line.ends_with(')') && line.contains(" (hint: "), "{line}");
    line
}

#[test]
fn a_server_that_is_not_redis_is_named_as_such_in_one_line_with_a_hint() {
    let url = http_server();
    for args in [&["status", "x"][..], &["ls"], &["unlock", "--force", "x"]] {
        let out = run(lockctl_at(&url).args(args));
        assert_eq!(out.code, Some(125), "{args:?}: {out:?}");
        let line = one_error_line(&out.stderr);
        assert!(
            line.starts_with(&format!(
                "lockctl: error: {url} did not answer as Redis (hint: "
            )),
            "{line}"
        );
        assert!(!line.contains("Parse error"), "{line}");
        assert!(line.contains("PING"), "{line}");
    }
}

#[test]
fn a_url_without_a_scheme_says_what_a_redis_url_looks_like() {
    let out = run(lockctl_at("127.0.0.1:6380").args(["status", "x"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    let line = one_error_line(&out.stderr);
    assert!(
        line.starts_with(
            "lockctl: error: `127.0.0.1:6380` is not a Redis URL: expected redis://HOST:PORT/ or rediss://HOST:PORT/ (TLS) (hint: "
        ),
        "{line}"
    );
    assert!(!line.contains("InvalidClientConfig"), "{line}");
}

#[test]
fn every_failure_is_one_line_with_a_hint_and_one_json_object_with_json() {
    let http = http_server();
    let cases: Vec<(Vec<String>, u8)> = vec![
        // Nothing listens on port 1.
        (
            strings(&["--url", "redis://127.0.0.1:1/", "status", "x"]),
            125,
        ),
        (strings(&["--url", &http, "hold", "x", "--for", "1s"]), 125),
        (strings(&["--url", "localhost", "ls"]), 2),
        // No URL at all.
        (strings(&["status", "x"]), 2),
    ];
    for (args, code) in cases {
        let mut command = common::lockctl();
        command.env_remove("REDIS_URL").args(&args);
        let out = run(&mut command);
        assert_eq!(out.code, Some(i32::from(code)), "{args:?}: {out:?}");
        one_error_line(&out.stderr);

        let mut command = common::lockctl();
        command.env_remove("REDIS_URL").args(&args).arg("--json");
        let out = run(&mut command);
        assert_eq!(out.code, Some(i32::from(code)), "{args:?}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
        let report = json(&out.stderr);
        assert_eq!(report["exit_code"], code, "{report}");
        assert!(
            report["error"].as_str().is_some_and(|e| !e.contains('\n')),
            "{report}"
        );
        assert!(
            report["hint"].as_str().is_some_and(|h| !h.is_empty()),
            "{report}"
        );
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn a_refused_command_line_is_one_line_with_the_usage_and_the_subcommand_help_as_hint() {
    for (args, says, hint) in [
        (
            &["status"][..],
            "the following required arguments were not provided: <NAME>",
            "usage: lockctl status <NAME>; `lockctl status --help` explains it",
        ),
        (
            &["hold", "x", "--for", "5"],
            "invalid value '5' for '--for <DURATION>': `5` has no unit",
            "`lockctl hold --help` explains it",
        ),
        (
            &["statsu", "x"],
            "unrecognized subcommand 'statsu'",
            "a similar subcommand exists: 'status'",
        ),
        (
            &["run", "n", "--wiat", "5s", "--", "true"],
            "unexpected argument '--wiat' found",
            "a similar argument exists: '--wait'",
        ),
    ] {
        let out = run(common::lockctl().args(args));
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        let line = one_error_line(&out.stderr);
        assert!(
            line.starts_with(&format!("lockctl: error: {says}")),
            "{args:?}: {line}"
        );
        assert!(line.contains(hint), "{args:?}: {line}");

        let out = run(common::lockctl().arg("--json").args(args));
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
        let report = json(&out.stderr);
        assert_eq!(report["exit_code"], 2, "{report}");
        assert!(
            report["hint"].as_str().is_some_and(|h| h.contains(hint)),
            "{report}"
        );
    }
    // Help and version are printed as they are, with success.
    for args in [&["--help"][..], &["status", "--help"], &["--version"]] {
        let out = run(common::lockctl().args(args));
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        assert!(out.stderr.is_empty() && !out.stdout.is_empty(), "{out:?}");
    }
}
