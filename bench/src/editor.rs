//! The language server's diagnostics latency: the time from an edit of a
//! 5,000-line script (the generated script of [`crate::expansion`]) to the
//! diagnostics of the edited text, through the server's stdio transport
//! (`redlua_lsp::transport::run`, on pipes), as an editor sees it: from
//! before the change is written to the server's input until the
//! diagnostics of that version are read back. The quiet time the server
//! waits after an edit (for a burst of edits to end) is part of it.
//!
//! Each round edits one line in the middle of the script, alternately
//! breaking and mending a command name, then waits for the diagnostics of
//! that version; the rounds are 300 ms apart, as keystrokes after a pause.
//! The load average when the rounds start and end is reported with the
//! times: the figures are only as quiet as the machine.

use crate::metrics::{Figure, Measured};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::json;
use std::io::BufReader;
use std::time::{Duration, Instant};

const URI: &str = "file:///redlua-bench/editor/big.lua";
const LINES: usize = 5_000;

/// Runs `rounds` edits and reports the median, 90th percentile and slowest
/// latency.
pub fn run(rounds: usize) -> Result<Measured, String> {
    let text = crate::expansion::generated(LINES);
    let (input, mut to_server) = std::io::pipe().map_err(|e| e.to_string())?;
    let (from_server, output) = std::io::pipe().map_err(|e| e.to_string())?;
    let server =
        std::thread::spawn(move || redlua_lsp::transport::run(BufReader::new(input), output));
    let mut from_server = BufReader::new(from_server);
    let mut send = |message: Message| message.write(&mut to_server).map_err(|e| e.to_string());
    send(Message::Request(Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({ "capabilities": {} }),
    )))?;
    send(notification("initialized", json!({})))?;
    let started = Instant::now();
    send(notification(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": URI, "languageId": "lua", "version": 1, "text": text } }),
    ))?;
    let (open_ms, _) = diagnostics_of(&mut from_server, 1, started)?;
    // The first line of the function in the middle of the script.
    let middle = format!("local function step_{}(", LINES / 20);
    let line = text
        .lines()
        .position(|l| l.starts_with(&middle))
        .ok_or("no function in the middle of the script")?
        + 1;
    let original = text.lines().nth(line).unwrap_or_default().to_string();
    let broken = original.replacen("redis.call('", "redis.call('X", 1);
    let mut times = Vec::with_capacity(rounds);
    let load_before = load_average();
    for round in 0..rounds {
        std::thread::sleep(Duration::from_millis(300));
        let version = round as i32 + 2;
        let new = if round % 2 == 0 { &broken } else { &original };
        let started = Instant::now();
        send(notification(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": version }, "contentChanges": [{
                "range": { "start": { "line": line, "character": 0 },
                           "end": { "line": line, "character": 10_000 } },
                "text": new }] }),
        ))?;
        let (ms, count) = diagnostics_of(&mut from_server, version, started)?;
        let expected = usize::from(round % 2 == 0);
        if count != expected {
            return Err(format!(
                "round {round}: {count} diagnostics, {expected} expected"
            ));
        }
        times.push(ms);
    }
    let load_after = load_average();
    send(Message::Request(Request::new(
        RequestId::from(2),
        "shutdown".into(),
        json!(null),
    )))?;
    send(notification("exit", json!(null)))?;
    let _ = server.join();
    times.sort_by(f64::total_cmp);
    Ok(Measured {
        per_second: 0.0,
        commands_per_acquisition: None,
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: 0,
        contention: None,
        figures: vec![
            Figure::new("diagnostics after opening", open_ms, "ms"),
            Figure::new(
                "diagnostics after an edit, median",
                times[times.len() / 2],
                "ms",
            ),
            Figure::new(
                "diagnostics after an edit, p90",
                percentile(&times, 0.9),
                "ms",
            ),
            Figure::new(
                "diagnostics after an edit, slowest",
                times[times.len() - 1],
                "ms",
            ),
            Figure::new("load average (1 min) before the edits", load_before, ""),
            Figure::new("load average (1 min) after the edits", load_after, ""),
        ],
    })
}

/// The `q` quantile of `sorted` (nearest rank).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The machine's load average over the last minute (0 where it cannot be
/// read).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn notification(method: &str, params: serde_json::Value) -> Message {
    Message::Notification(Notification::new(method.into(), params))
}

/// Reads until the diagnostics of `version`: the time since `started` (in
/// ms) and their number.
fn diagnostics_of(
    from_server: &mut BufReader<std::io::PipeReader>,
    version: i32,
    started: Instant,
) -> Result<(f64, usize), String> {
    loop {
        let message = Message::read(from_server)
            .map_err(|e| e.to_string())?
            .ok_or("the server ended")?;
        if let Message::Notification(n) = message
            && n.method == "textDocument/publishDiagnostics"
            && n.params["version"] == version
        {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let count = n.params["diagnostics"].as_array().map_or(0, Vec::len);
            return Ok((ms, count));
        }
    }
}
