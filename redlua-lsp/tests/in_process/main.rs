//! The server driven in-process through its handler: the protocol's
//! lifecycle and errors, diagnostics, hover, completion and quick fixes,
//! random edits that must never bring it down, and random edits of real
//! scripts whose diagnostics must be those of the edited text opened afresh.

mod assists;
mod diagnostics;
mod protocol;
mod random_edits;
mod rust_declarations;

use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::{Diagnostic, NumberOrString, PublishDiagnosticsParams};
use redlua_lsp::{Flow, Server};
use serde_json::{Value, json};

const URI: &str = "file:///nonexistent-redlua-lsp-test/script.lua";

/// A server and the messages it sent.
struct Session {
    server: Server,
    next_id: i32,
}

impl Session {
    /// A server, initialized.
    fn new() -> Session {
        let mut session = Session {
            server: Server::new(),
            next_id: 0,
        };
        let response = session.request("initialize", json!({ "capabilities": {} }));
        assert!(response.error.is_none(), "{response:?}");
        session.notify("initialized", json!({}));
        session
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let mut out = Vec::new();
        let request = Request::new(id.clone(), method.to_string(), params);
        assert_eq!(
            self.server.handle(Message::Request(request), &mut out),
            Flow::Continue
        );
        match out.as_slice() {
            [Message::Response(response)] if response.id == id => response.clone(),
            other => panic!("one response expected, got {other:?}"),
        }
    }

    fn notify(&mut self, method: &str, params: Value) -> Flow {
        let mut out = Vec::new();
        let flow = self.server.handle(
            Message::Notification(Notification::new(method.to_string(), params)),
            &mut out,
        );
        assert!(out.is_empty(), "a notification is not answered: {out:?}");
        flow
    }

    /// The diagnostics published since the last call.
    fn published(&mut self) -> Vec<PublishDiagnosticsParams> {
        let mut out = Vec::new();
        self.server.publish(&mut out);
        out.into_iter()
            .map(|message| match message {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    serde_json::from_value(n.params).unwrap()
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn open(&mut self, text: &str) -> Vec<Diagnostic> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": URI, "languageId": "lua", "version": 1, "text": text } }),
        );
        let mut published = self.published();
        assert_eq!(published.len(), 1);
        published.remove(0).diagnostics
    }

    fn at(&self, line: u32, character: u32) -> Value {
        json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": character } })
    }
}

fn code(d: &Diagnostic) -> &str {
    match &d.code {
        Some(NumberOrString::String(code)) => code,
        other => panic!("no code: {other:?}"),
    }
}
