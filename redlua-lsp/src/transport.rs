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
//! Messages are read on a thread of their own, and documents analyzed on
//! another ([`run`]). A panic while handling a message (a bug) is caught: a
//! request gets an `InternalError` response, and the server goes on.
//!
//! A burst of edits is analyzed once: an analysis starts when no edit has
//! come for [`QUIET`], and an analysis made stale by an edit while it ran
//! is dropped. After the diagnostics, the same thread reads the values of
//! the document's locals for hovers from the same inference (unless an
//! edit came meanwhile) and hands back the analyzer's session of the
//! text, which the next analysis of the document reuses: a change inside
//! one function is analyzed in that function only (see
//! `redlua_analyzer::incremental`).
//! With `REDLUA_LSP_LOG` set (to anything), each analysis is logged on
//! standard error: the document, its version, its time, whether it was
//! dropped, and whether it analyzed the changed function only (or why the
//! whole script).

use crate::server::{Analyzed, Flow, Job, Server, Valued};
use lsp_server::{ErrorCode, Message, RequestId, Response};
use lsp_types::notification::{DidChangeTextDocument, Notification as _};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long after the last edit an analysis waits: the edits of a burst
/// (a paste, a multi-cursor edit, an editor's automatic fixes) come
/// closer together than this, keystrokes further apart.
pub const QUIET: Duration = Duration::from_millis(8);

/// The environment variable that turns the log of analyses on.
pub const LOG_VARIABLE: &str = "REDLUA_LSP_LOG";

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

/// Reads framed messages from `input` until its end, or until `pass`
/// refuses one, passing each on.
pub fn read_messages(mut input: impl BufRead, pass: impl Fn(Incoming) -> bool) {
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
        if !pass(incoming) {
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

/// What the server's thread waits for.
enum Event {
    /// A message from the reader.
    Incoming(Incoming),
    /// An analysis done on the analysis thread.
    Analyzed(Analyzed),
    /// The same job's inferred values.
    Valued(Valued),
    /// The analysis thread's diagnostics are sent: the next may start.
    Done,
    /// The input ended (or could not be read further).
    Closed,
}

/// Serves over `input` and `output` until `exit` or the input's end; the
/// exit status (0 after `shutdown` then `exit`, 1 otherwise).
///
/// Messages are handled on this thread, one batch at a time (those that
/// arrived while the last was handled); documents are analyzed on another,
/// one at a time, so that requests are answered while a long script is
/// analyzed. An analysis of a document changed meanwhile is dropped and
/// made again.
pub fn run(input: impl BufRead + Send + 'static, mut output: impl Write) -> u8 {
    let (sender, receiver) = mpsc::channel();
    let reader = sender.clone();
    let spawned = std::thread::Builder::new()
        .name("redlua-lsp-reader".into())
        .spawn(move || {
            read_messages(input, |m| reader.send(Event::Incoming(m)).is_ok());
            let _ = reader.send(Event::Closed);
        });
    if let Err(error) = spawned {
        eprintln!("redlua-lsp: cannot start a thread to read messages: {error}");
        return 1;
    }
    let log = std::env::var_os(LOG_VARIABLE).is_some();
    let mut server = Server::new();
    let mut out = Vec::new();
    let mut analyzing: Option<(String, i32, Instant)> = None;
    // Counts the edits: an analysis thread skips the values of a text
    // edited meanwhile.
    let edits = Arc::new(AtomicU64::new(0));
    let mut last_edit: Option<Instant> = None;
    loop {
        // While an analysis is due but the edits are not quiet yet, wait
        // only until they are.
        let due = (analyzing.is_none() && server.has_pending())
            .then(|| last_edit.map_or(Duration::ZERO, |at| QUIET.saturating_sub(at.elapsed())));
        let first = match due {
            Some(wait) => match receiver.recv_timeout(wait) {
                Ok(event) => Some(event),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return 1,
            },
            None => match receiver.recv() {
                Ok(event) => Some(event),
                Err(_) => return 1,
            },
        };
        let mut next = first;
        while let Some(event) = next {
            let flow = match event {
                Event::Incoming(Incoming::Malformed(response)) => {
                    if write_frame(&mut output, &response).is_err() {
                        return 1;
                    }
                    Flow::Continue
                }
                Event::Incoming(Incoming::Message(message)) => {
                    let id = match &message {
                        Message::Request(request) => Some(request.id.clone()),
                        Message::Notification(n) if n.method == DidChangeTextDocument::METHOD => {
                            edits.fetch_add(1, Ordering::SeqCst);
                            last_edit = Some(Instant::now());
                            None
                        }
                        _ => None,
                    };
                    catch_unwind(AssertUnwindSafe(|| server.handle(message, &mut out)))
                        .unwrap_or_else(|_| {
                            out.extend(id.map(internal_error));
                            Flow::Continue
                        })
                }
                Event::Closed => Flow::Exit(1),
                Event::Analyzed(analyzed) => {
                    let published = out.len();
                    if catch_unwind(AssertUnwindSafe(|| server.finish(analyzed, &mut out))).is_err()
                    {
                        out.clear();
                    }
                    if log && let Some((uri, version, started)) = &analyzing {
                        eprintln!(
                            "redlua-lsp: analyzed {uri} (version {version}) in {:.1} ms{}",
                            started.elapsed().as_secs_f64() * 1000.0,
                            if out.len() > published {
                                ""
                            } else {
                                ": dropped, edited meanwhile"
                            }
                        );
                    }
                    Flow::Continue
                }
                Event::Valued(valued) => {
                    if log && let Some((uri, version, started)) = &analyzing {
                        let how = match valued.reused() {
                            Ok(()) => "the changed function checked alone".to_string(),
                            Err(why) => format!("the whole script checked ({why})"),
                        };
                        eprintln!(
                            "redlua-lsp: {uri} (version {version}): {how}; values and session ready after {:.1} ms",
                            started.elapsed().as_secs_f64() * 1000.0,
                        );
                    }
                    let _ = catch_unwind(AssertUnwindSafe(|| server.take_values(valued)));
                    Flow::Continue
                }
                Event::Done => {
                    analyzing = None;
                    Flow::Continue
                }
            };
            if send(&mut output, &mut out).is_err() {
                return 1;
            }
            if let Flow::Exit(status) = flow {
                return status;
            }
            next = receiver.try_recv().ok();
        }
        let quiet = last_edit.is_none_or(|at| at.elapsed() >= QUIET);
        if analyzing.is_none()
            && quiet
            && let Ok(Some(job)) = catch_unwind(AssertUnwindSafe(|| server.next_job(&mut out)))
        {
            let (uri, version) = job.document();
            analyzing = Some((uri.to_string(), version, Instant::now()));
            if let Some(job) = analyze_apart(job, sender.clone(), edits.clone()) {
                // No thread to be had: the job runs here.
                if let Ok((analyzed, valued)) = catch_unwind(AssertUnwindSafe(|| job.run())) {
                    let _ = catch_unwind(AssertUnwindSafe(|| {
                        server.finish(analyzed, &mut out);
                        server.take_values(valued);
                    }));
                }
                analyzing = None;
            }
        }
        if send(&mut output, &mut out).is_err() {
            return 1;
        }
    }
}

/// Runs `job` on a thread of its own, which sends its findings, then its
/// inferred values (of the same inference, unless an edit came meanwhile:
/// counted by `edits`) with the analyzer's session, then [`Event::Done`]:
/// the next analysis reuses the session. The job back when no thread can
/// be had.
fn analyze_apart(job: Job, done: mpsc::Sender<Event>, edits: Arc<AtomicU64>) -> Option<Job> {
    let (key, generation) = job.id();
    let slot = Arc::new(Mutex::new(Some(job)));
    let taken = slot.clone();
    let edits_before = edits.load(Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("redlua-lsp-analysis".into())
        .spawn(move || {
            let job = taken.lock().ok().and_then(|mut slot| slot.take());
            if let Some(job) = job {
                let mut delivered = false;
                let valued = catch_unwind(AssertUnwindSafe(|| {
                    job.run_then_values(|analyzed| {
                        let _ = done.send(Event::Analyzed(analyzed));
                        delivered = true;
                        edits.load(Ordering::SeqCst) == edits_before
                    })
                }));
                if !delivered {
                    let _ = done.send(Event::Analyzed(Job::failed(key.clone(), generation)));
                }
                let valued = valued.unwrap_or_else(|_| Valued::failed(key, generation));
                let _ = done.send(Event::Valued(valued));
            }
            let _ = done.send(Event::Done);
        });
    match spawned {
        Ok(_) => None,
        Err(_) => slot.lock().ok().and_then(|mut slot| slot.take()),
    }
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
