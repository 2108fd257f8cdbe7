//! Diagnostics latency on a 5,000-line script, and the mechanisms that
//! keep it low:
//!
//! - one analysis per change: hover (on a command or a local), completion
//!   and code actions reuse it, taking a small part of an analysis's time;
//! - a change inside one function of the main chunk is analyzed in that
//!   function only, against what the analysis of the previous version
//!   found for the rest (`redlua_analyzer::incremental`): a small part of
//!   a full analysis's time;
//! - over standard input and output, a burst of edits is analyzed once,
//!   for its last version.
//!
//! The times are printed (`cargo test --release -p redlua-lsp --test
//! latency -- --nocapture`); the benchmark (`tools/bench --only editor`)
//! reports the latency itself.

use lsp_server::{Message, Notification, Request, RequestId};
use redlua_lsp::Server;
use serde_json::json;
use std::time::{Duration, Instant};

const URI: &str = "file:///nonexistent-redlua-lsp-bench/big.lua";
const LINES: usize = 5_000;

/// A realistic script of `LINES` lines: blocks of reads, writes, branches
/// and loops over the keys and arguments its header declares.
fn script() -> String {
    let mut lines = vec!["-- redlua: keys=2 args=2 returns=integer".to_string()];
    let block = [
        "local v{i} = redis.call('GET', KEYS[1])",
        "if v{i} then",
        "  redis.call('HSET', KEYS[2], 'f{i}', ARGV[1])",
        "  local n{i} = tonumber(redis.call('HGET', KEYS[2], 'n') or '0') + {i}",
        "  redis.call('HINCRBY', KEYS[2], 'total', n{i})",
        "end",
        "for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do",
        "  redis.call('SADD', KEYS[2], member .. ARGV[2])",
        "end",
        "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], 10) end",
    ];
    let mut i = 0;
    while lines.len() < LINES - 1 {
        // Whole blocks only: a block cut short would not parse.
        if lines.len() + block.len() > LINES - 1 {
            lines.push(format!("local last = {i}"));
            continue;
        }
        lines.extend(block.iter().map(|line| line.replace("{i}", &i.to_string())));
        i += 1;
    }
    lines.push("return 1".to_string());
    lines.join("\n") + "\n"
}

fn diagnostics_after(server: &mut Server, message: Message) -> (Duration, usize) {
    let started = Instant::now();
    let mut out = Vec::new();
    server.handle(message, &mut out);
    server.publish(&mut out);
    let elapsed = started.elapsed();
    let published = out
        .into_iter()
        .find_map(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                Some(n.params["diagnostics"].as_array().unwrap().len())
            }
            _ => None,
        })
        .expect("diagnostics published");
    (elapsed, published)
}

/// Hovers on the start of `line` (a local's name), appending the reply.
fn hover_local(server: &mut Server, id: i32, line: u32, out: &mut Vec<Message>) -> Duration {
    let hover = Request::new(
        RequestId::from(id),
        "textDocument/hover".into(),
        json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": 4 } }),
    );
    let started = Instant::now();
    server.handle(Message::Request(hover), out);
    started.elapsed()
}

#[test]
fn diagnostics_of_a_5000_line_script_after_each_change() {
    let text = script();
    assert_eq!(text.lines().count(), LINES);
    let mut server = Server::new();
    let mut out = Vec::new();
    let init = Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({ "capabilities": {} }),
    );
    server.handle(Message::Request(init), &mut out);
    let open = Notification::new(
        "textDocument/didOpen".into(),
        json!({ "textDocument": { "uri": URI, "languageId": "lua", "version": 1, "text": text } }),
    );
    let (opened, clean) = diagnostics_after(&mut server, Message::Notification(open));
    assert_eq!(clean, 0, "the script is clean");
    let mut times = Vec::new();
    // A debug build analyzes much more slowly: fewer rounds there.
    let rounds = if cfg!(debug_assertions) { 4 } else { 20u32 };
    for round in 0..rounds {
        // Alternately break and mend a call in the middle of the script.
        let line = 2_500;
        let text = if round % 2 == 0 {
            "redis.call('GETT', KEYS[1])"
        } else {
            "redis.call('GET', KEYS[1])"
        };
        let change = Notification::new(
            "textDocument/didChange".into(),
            json!({ "textDocument": { "uri": URI, "version": round + 2 }, "contentChanges": [{
                "range": { "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 200 } },
                "text": text }] }),
        );
        let (elapsed, count) = diagnostics_after(&mut server, Message::Notification(change));
        assert_eq!(count, usize::from(round % 2 == 0), "round {round}");
        times.push(elapsed);
    }
    times.sort();
    let slowest = times[times.len() - 1];
    let fastest = times[0];
    // A hover on a local (`if v249 then`): the first infers the values of
    // the whole script (once per change), the next ones read them.
    let mut out = Vec::new();
    let first_local = hover_local(&mut server, 4, 2_492, &mut out);
    let second_local =
        hover_local(&mut server, 5, 2_492, &mut out) + hover_local(&mut server, 6, 2_482, &mut out);
    let hovered: Vec<String> = out
        .iter()
        .map(|m| match m {
            Message::Response(r) => r.result.as_ref().unwrap()["contents"]["value"]
                .as_str()
                .unwrap()
                .to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        hovered[0].starts_with("**`v249`**: a string or `false`") && hovered[1] == hovered[0],
        "{hovered:?}"
    );
    assert!(hovered[2].starts_with("**`v248`**"), "{hovered:?}");
    // A hover on a command, a completion and a code action.
    let started = Instant::now();
    let mut out = Vec::new();
    let requests = [
        (
            "textDocument/hover",
            json!({ "line": 2_501, "character": 20 }),
        ),
        (
            "textDocument/completion",
            json!({ "line": 2_501, "character": 20 }),
        ),
    ];
    for (id, (method, position)) in requests.into_iter().enumerate() {
        let request = Request::new(
            RequestId::from(10 + id as i32),
            method.into(),
            json!({ "textDocument": { "uri": URI }, "position": position }),
        );
        server.handle(Message::Request(request), &mut out);
    }
    let action = Request::new(
        RequestId::from(12),
        "textDocument/codeAction".into(),
        json!({ "textDocument": { "uri": URI }, "context": { "diagnostics": [] },
                "range": { "start": { "line": 2_500, "character": 0 }, "end": { "line": 2_500, "character": 30 } } }),
    );
    server.handle(Message::Request(action), &mut out);
    let requests = started.elapsed();
    assert!(
        matches!(&out[0], Message::Response(r) if r.result.as_ref().is_some_and(|v| v["contents"]["value"].as_str().is_some_and(|t| t.starts_with("**")))),
        "{:?}",
        out[0]
    );
    assert!(
        matches!(&out[2], Message::Response(r) if r.result.as_ref().is_some_and(|v| v.as_array().is_some_and(|a| a.is_empty()))),
        "{:?}",
        out[2]
    );
    // The mechanisms, with wide margins: what reuses the analysis takes a
    // tenth of one at most (in fact a few hundredths); the values are
    // inferred once (a later hover on a local takes a fifth of the first
    // at most: it reads the script's tokens, not its values).
    assert!(
        requests * 10 < fastest,
        "a hover, a completion and a code action took {requests:?}, an analysis {fastest:?}"
    );
    assert!(
        second_local / 2 * 5 < first_local,
        "two hovers on locals after the first took {second_local:?}, the first {first_local:?}"
    );
    // The analyzer alone on the same text, for comparison.
    let mut options = redlua_analyzer::Options::default();
    redlua_analyzer::header::parse(&text)
        .unwrap()
        .apply(&mut options);
    let started = Instant::now();
    let report = redlua_analyzer::analyze(&text, &options);
    let analyzer = started.elapsed();
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "redlua-lsp diagnostics latency, {LINES}-line script ({} build): open {:.1} ms; \
         change: median {:.1} ms, max {:.1} ms; redlua_analyzer::analyze alone {:.1} ms; \
         a hover, a completion and a code action {:.1} ms; a hover on a local {:.1} ms \
         (the values of the script inferred), then {:.2} ms",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        ms(opened),
        ms(times[times.len() / 2]),
        ms(slowest),
        ms(analyzer),
        ms(requests),
        ms(first_local),
        ms(second_local / 2),
    );
}

/// The benchmark's script (`bench/src/expansion.rs`): helper functions of
/// ten lines each, all called from the main chunk.
fn functions_script() -> String {
    let mut out = String::from("local total = 0\n");
    let functions = LINES / 10;
    for f in 0..functions {
        let key = f % 8 + 1;
        let arg = f % 4 + 1;
        out.push_str(&format!(
            "local function step_{f}(n)\n\
             \x20 local current = tonumber(redis.call('HGET', KEYS[{key}], 'f{f}') or '0')\n\
             \x20 if current > n then\n\
             \x20   redis.call('HSET', KEYS[{key}], 'f{f}', n)\n\
             \x20 else\n\
             \x20   redis.call('HINCRBY', KEYS[{key}], 'f{f}', tonumber(ARGV[{arg}]))\n\
             \x20 end\n\
             \x20 local t = {{current, n, 'f{f}'}}\n\
             \x20 return #t + current\n\
             end\n"
        ));
    }
    for f in 0..functions {
        out.push_str(&format!("total = total + step_{f}({f})\n"));
    }
    out.push_str("return total\n");
    out
}

#[test]
fn an_edit_inside_a_function_is_analyzed_in_that_function_only() {
    let text = functions_script();
    let mut server = Server::new();
    let mut out = Vec::new();
    let init = Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({ "capabilities": {} }),
    );
    server.handle(Message::Request(init), &mut out);
    let open = Notification::new(
        "textDocument/didOpen".into(),
        json!({ "textDocument": { "uri": URI, "languageId": "lua", "version": 1, "text": text } }),
    );
    let (opened, clean) = diagnostics_after(&mut server, Message::Notification(open));
    assert_eq!(clean, 0, "the script is clean");
    // The benchmark's edit: a command's name broken and mended, on the
    // first line of the function in the middle of the script.
    let line = text
        .lines()
        .position(|l| l.starts_with(&format!("local function step_{}(", LINES / 20)))
        .unwrap()
        + 1;
    let original = text.lines().nth(line).unwrap().to_string();
    let broken = original.replacen("redis.call('", "redis.call('X", 1);
    let rounds = if cfg!(debug_assertions) { 6 } else { 40u32 };
    let mut times = Vec::new();
    for round in 0..rounds {
        let new = if round % 2 == 0 { &broken } else { &original };
        let change = Notification::new(
            "textDocument/didChange".into(),
            json!({ "textDocument": { "uri": URI, "version": round + 2 }, "contentChanges": [{
                "range": { "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 10_000 } },
                "text": new }] }),
        );
        let (elapsed, count) = diagnostics_after(&mut server, Message::Notification(change));
        assert_eq!(count, usize::from(round % 2 == 0), "round {round}");
        assert_eq!(server.reused(URI), Ok(()), "round {round}");
        times.push(elapsed);
    }
    times.sort();
    let median = times[times.len() / 2];
    // The analyzer alone on the whole text, for comparison.
    let started = Instant::now();
    let report = redlua_analyzer::analyze(&text, &redlua_analyzer::Options::default());
    let analyzer = started.elapsed();
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    // With a wide margin: in fact a few hundredths of a full analysis.
    assert!(
        median * 5 < analyzer,
        "a change inside a function took {median:?} (median), a full analysis {analyzer:?}"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "redlua-lsp diagnostics latency, {LINES}-line script of functions ({} build): open \
         {:.1} ms; a change inside a function: median {:.2} ms, max {:.2} ms; \
         redlua_analyzer::analyze alone {:.1} ms",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        ms(opened),
        ms(median),
        ms(times[times.len() - 1]),
        ms(analyzer),
    );
}
