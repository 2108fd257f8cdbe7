//! The server over standard input and output.
//!
//! Messages are framed as the protocol says (`Content-Length` headers, then
//! the JSON body) and are lsp-server's [`Message`]s. The framing is read
//! here rather than by lsp-server's own stdio transport, which stops at the
//! first malformed message; this one answers it and reads on:
//!
//! - a body that is not JSON gets a `ParseError` response with a null id;
//! - JSON that is not a request, response or notification gets an
//!   `InvalidRequest` response, with its id when it has a usable one;
//! - a header block without a usable `Content-Length` is skipped.
//!
//! Messages are read on a thread of their own, so that the changes that
//! arrive while a document is analyzed are applied together and the
//! document analyzed once ([`run`]). A panic while handling a message (a
//! bug) is caught: a request gets an `InternalError` response, and the
//! server goes on.

use crate::server::{Flow, Server};
use lsp_server::{ErrorCode, Message, RequestId, Response};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

/// The largest body accepted, in bytes: anything larger is skipped.
const MAX_BODY: usize = 256 << 20;

/// What the reader thread passes on.
#[derive(Debug)]
pub enum Incoming {
    /// A well-formed message.
    Message(Message),
    /// A malformed one: the error response to send (a JSON-RPC object).
    Malformed(Value),
}

/// Reads framed messages from `input` until its end, passing each on.
pub fn read_messages(mut input: impl BufRead, sender: mpsc::Sender<Incoming>) {
    loop {
        let body = match read_frame(&mut input) {
            Ok(Some(body)) => body,
            Ok(None) | Err(_) => return,
        };
        let Some(body) = body else {
            continue; // no usable Content-Length: skipped
        };
        let incoming = match parse(&body) {
            Ok(message) => Incoming::Message(message),
            Err(response) => Incoming::Malformed(response),
        };
        if sender.send(incoming).is_err() {
            return;
        }
    }
}

/// The message in `body`, or the error response to send: `ParseError`
/// for a body that is not JSON, `InvalidRequest` for JSON that is not a
/// message (one with a `method` must be a request or a notification; a
/// usable `id` is echoed).
fn parse(body: &[u8]) -> Result<Message, Value> {
    let error = |code: ErrorCode, id: Value, why: String| {
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": code as i32, "message": format!("malformed message: {why}") },
        })
    };
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| error(ErrorCode::ParseError, Value::Null, e.to_string()))?;
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    let has_method = value.get("method").is_some();
    match serde_json::from_value::<Message>(value) {
        Ok(Message::Response(_)) if has_method => Err(error(
            ErrorCode::InvalidRequest,
            id,
            "`method` is not a string".into(),
        )),
        Ok(message) => Ok(message),
        Err(e) => Err(error(ErrorCode::InvalidRequest, id, e.to_string())),
    }
}

/// One frame: `Ok(None)` at the end of the input, `Ok(Some(None))` for a
/// header block without a usable length (its body, if any, is left to be
/// read as headers and skipped in turn).
fn read_frame(input: &mut impl BufRead) -> std::io::Result<Option<Option<Vec<u8>>>> {
    let mut length = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let Some(length) = length.filter(|&n| n <= MAX_BODY) else {
        return Ok(Some(None));
    };
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(Some(body)))
}

/// Writes one framed JSON body.
fn write_frame(output: &mut impl Write, body: &Value) -> std::io::Result<()> {
    let text = body.to_string();
    write!(output, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    output.flush()
}

/// Serves over `input` and `output` until `exit` or the input's end; the
/// exit status (0 after `shutdown` then `exit`, 1 otherwise).
pub fn run(input: impl BufRead + Send + 'static, mut output: impl Write) -> u8 {
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name("redlua-lsp-reader".into())
        .spawn(move || read_messages(input, sender))
        .expect("a thread for reading messages");
    let mut server = Server::new();
    let mut out = Vec::new();
    while let Ok(first) = receiver.recv() {
        let mut next = Some(first);
        while let Some(incoming) = next {
            let flow = match incoming {
                Incoming::Malformed(response) => {
                    if write_frame(&mut output, &response).is_err() {
                        return 1;
                    }
                    Flow::Continue
                }
                Incoming::Message(message) => {
                    let id = match &message {
                        Message::Request(request) => Some(request.id.clone()),
                        _ => None,
                    };
                    let flow = catch_unwind(AssertUnwindSafe(|| server.handle(message, &mut out)))
                        .unwrap_or_else(|_| {
                            out.extend(id.map(internal_error));
                            Flow::Continue
                        });
                    if send(&mut output, &mut out).is_err() {
                        return 1;
                    }
                    flow
                }
            };
            if let Flow::Exit(status) = flow {
                return status;
            }
            next = receiver.try_recv().ok();
        }
        let published = catch_unwind(AssertUnwindSafe(|| server.publish(&mut out)));
        if published.is_err() {
            out.clear();
        }
        if send(&mut output, &mut out).is_err() {
            return 1;
        }
    }
    1
}

fn internal_error(id: RequestId) -> Message {
    Message::Response(Response::new_err(
        id,
        ErrorCode::InternalError as i32,
        "internal error in redlua-lsp while handling this request".into(),
    ))
}

fn send(output: &mut impl Write, out: &mut Vec<Message>) -> std::io::Result<()> {
    for message in out.drain(..) {
        message.write(output)?;
    }
    Ok(())
}
