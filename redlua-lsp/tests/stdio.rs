//! The binary over standard input and output: malformed messages are
//! answered as JSON-RPC says and the server reads on; `shutdown` then
//! `exit` ends it with status 0.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn message(value: Value) -> Vec<u8> {
    frame(value.to_string().as_bytes())
}

/// The next framed JSON body from `reader`, `None` at its end.
fn next_body(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = Some(n.parse::<usize>().unwrap());
        }
    }
    let mut body = vec![0; length.expect("a Content-Length")];
    reader.read_exact(&mut body).unwrap();
    Some(serde_json::from_slice(&body).unwrap())
}

#[test]
fn malformed_messages_are_answered_and_the_server_reads_on() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redlua-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |bytes: Vec<u8>| stdin.write_all(&bytes).unwrap();
    let mut next = || next_body(&mut stdout).expect("a reply");
    let error = |reply: &Value| (reply["id"].clone(), reply["error"]["code"].clone());

    send(frame(b"{ this is not json"));
    assert_eq!(error(&next()), (Value::Null, json!(-32700)));
    send(frame(&[0xff, 0xfe, b'{', b'}']));
    assert_eq!(error(&next()), (Value::Null, json!(-32700)));
    send(frame(br#"{"jsonrpc":"2.0","id":7,"method":42}"#));
    assert_eq!(error(&next()), (json!(7), json!(-32600)));
    // A header block without a length is skipped.
    send(b"Content-Type: nothing\r\n\r\n".to_vec());
    send(message(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    ));
    let initialized = next();
    assert_eq!(initialized["id"], 1);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "redlua-lsp");
    send(message(
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    ));
    send(message(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "workspace/unheardOf", "params": {} }),
    ));
    assert_eq!(error(&next()), (json!(2), json!(-32601)));
    send(message(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": "file:///nonexistent/s.lua", "languageId": "lua", "version": 1,
                          "text": "\u{0}\u{7f}\u{fffd}return redis.call('GETT')" } } }),
    ));
    let published = next();
    assert_eq!(published["method"], "textDocument/publishDiagnostics");
    let codes: Vec<&Value> = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["code"])
        .collect();
    assert_eq!(codes, [&json!("syntax")], "{published:#?}");
    send(message(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }),
    ));
    let shut = next();
    assert_eq!(
        (shut["id"].clone(), shut["result"].clone()),
        (json!(3), Value::Null)
    );
    send(message(json!({ "jsonrpc": "2.0", "method": "exit" })));
    assert_eq!(next_body(&mut stdout), None);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_end_of_input_without_exit_ends_it_with_status_1() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redlua-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

#[test]
fn requests_are_answered_while_a_long_script_is_analyzed() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redlua-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = std::sync::Arc::new(std::sync::Mutex::new(child.stdin.take().unwrap()));
    let send = {
        let stdin = stdin.clone();
        move |value: Value| stdin.lock().unwrap().write_all(&message(value)).unwrap()
    };
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    );
    assert_eq!(next_body(&mut stdout).unwrap()["id"], 1);
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    // 5,000 lines, tens of milliseconds to analyze at the very least; its
    // last line is wrong.
    let uri = "file:///nonexistent/long.lua";
    let text: String = (0..2_500)
        .map(|i| format!("local v{i} = redis.call('GET', KEYS[1])\nif v{i} then redis.call('DEL', KEYS[1]) end\n"))
        .collect::<String>()
        + "return redis.call('GETT', KEYS[1])\n";
    send(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": text } } }),
    );
    // Hovers, one every 10 ms, until the diagnostics are in or 3 are
    // answered.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hovering = {
        let done = done.clone();
        let send = send.clone();
        std::thread::spawn(move || {
            let mut id = 100;
            while !done.load(std::sync::atomic::Ordering::SeqCst) && id < 100_000 {
                std::thread::sleep(std::time::Duration::from_millis(10));
                send(
                    json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
                    "textDocument": { "uri": uri }, "position": { "line": 0, "character": 23 } } }),
                );
                id += 1;
            }
            id
        })
    };
    let mut hovers_before = 0;
    loop {
        let reply = next_body(&mut stdout).expect("the diagnostics");
        if reply["method"] == "textDocument/publishDiagnostics" {
            assert_eq!(reply["params"]["diagnostics"][0]["code"], "unknown_command");
            break;
        }
        assert!(
            reply["result"]["contents"]["value"]
                .as_str()
                .is_some_and(|v| v.starts_with("**GET**")),
            "{reply:#?}"
        );
        hovers_before += 1;
        if hovers_before == 3 {
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let sent = hovering.join().unwrap();
    assert!(
        hovers_before >= 1,
        "no hover was answered while the script was analyzed ({} sent)",
        sent - 100
    );
    send(json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }));
    while next_body(&mut stdout).expect("the shutdown reply")["id"] != 3 {}
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_burst_of_edits_is_analyzed_once_for_its_last_version() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redlua-lsp"))
        .env(redlua_lsp::transport::LOG_VARIABLE, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |bytes: Vec<u8>| stdin.write_all(&bytes).unwrap();
    send(message(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    ));
    assert_eq!(next_body(&mut stdout).unwrap()["id"], 1);
    let uri = "file:///nonexistent/burst.lua";
    let text: String = (0..500)
        .map(|i| format!("local v{i} = redis.call('GET', KEYS[1])\n"))
        .collect::<String>()
        + "return 1\n";
    send(message(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": text } } }),
    ));
    let opened = next_body(&mut stdout).unwrap();
    assert_eq!(opened["params"]["version"], 1, "{opened}");
    // Twenty edits a millisecond apart, as a paste or an editor's fixes
    // send them: the first line typed letter by letter, wrong at the end.
    // A gap longer than half the quiet time (a busy machine) may let an
    // analysis start: those are counted.
    let typed = "redis.call('GETT', KEYS[1])";
    let quiet = redlua_lsp::transport::QUIET;
    let mut long_gaps = 0;
    let mut last = std::time::Instant::now();
    for version in 2..=21 {
        let line = &typed[..typed.len() - 21 + version];
        send(message(
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": { "textDocument": { "uri": uri, "version": version }, "contentChanges": [{
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 200 } },
            "text": line }] } }),
        ));
        if version > 2 && last.elapsed() > quiet / 2 {
            long_gaps += 1;
        }
        last = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let published = next_body(&mut stdout).unwrap();
    assert_eq!(published["params"]["version"], 21, "{published}");
    assert_eq!(
        published["params"]["diagnostics"][0]["code"], "unknown_command",
        "{published}"
    );
    send(message(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }),
    ));
    assert_eq!(next_body(&mut stdout).unwrap()["id"], 2);
    send(message(json!({ "jsonrpc": "2.0", "method": "exit" })));
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let log = String::from_utf8_lossy(&output.stderr);
    let analyses: Vec<&str> = log.lines().filter(|l| l.contains(" analyzed ")).collect();
    assert!(analyses[0].contains("(version 1)"), "{log}");
    assert!(
        analyses.len() >= 2 && analyses[analyses.len() - 1].contains("(version 21)"),
        "{log}"
    );
    assert!(
        analyses.len() <= 2 + long_gaps,
        "{} analyses of the burst, {long_gaps} gaps longer than {:?}:\n{log}",
        analyses.len() - 1,
        quiet / 2
    );
}
