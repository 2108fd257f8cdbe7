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
