//! The protocol: its lifecycle and errors, and file watching asked of the client.

use super::Session;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use redlua_lsp::{Flow, Server};
use serde_json::{Value, json};

#[test]
fn a_client_that_watches_files_is_asked_to_watch_rust_sources_and_manifests() {
    let mut server = Server::new();
    let mut out = Vec::new();
    let capabilities =
        json!({ "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } });
    let init = Request::new(
        RequestId::from(1),
        "initialize".into(),
        json!({ "capabilities": capabilities }),
    );
    server.handle(Message::Request(init), &mut out);
    out.clear();
    let initialized = Notification::new("initialized".into(), json!({}));
    server.handle(Message::Notification(initialized), &mut out);
    let [Message::Request(request)] = out.as_slice() else {
        panic!("one request expected: {out:?}")
    };
    assert_eq!(request.method, "client/registerCapability");
    let registration = &request.params["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    let globs: Vec<&Value> = registration["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["globPattern"])
        .collect();
    assert_eq!(globs, [&json!("**/*.rs"), &json!("**/Cargo.toml")]);
    // The client's answer is taken and needs none.
    let answer = Response {
        id: request.id.clone(),
        result: Some(Value::Null),
        error: None,
    };
    out.clear();
    server.handle(Message::Response(answer), &mut out);
    assert!(out.is_empty());
}

#[test]
fn the_lifecycle_and_errors_follow_the_protocol() {
    let mut server = Server::new();
    let mut out = Vec::new();
    let hover = Request::new(RequestId::from(1), "textDocument/hover".into(), json!({}));
    server.handle(Message::Request(hover), &mut out);
    let Message::Response(response) = out.pop().unwrap() else {
        panic!()
    };
    assert_eq!(
        response.error.unwrap().code,
        ErrorCode::ServerNotInitialized as i32
    );

    let mut session = Session::new();
    let unknown = session.request("textDocument/frobnicate", json!({}));
    assert_eq!(
        unknown.error.unwrap().code,
        ErrorCode::MethodNotFound as i32
    );
    let bad = session.request("textDocument/hover", json!({ "position": "nowhere" }));
    assert_eq!(bad.error.unwrap().code, ErrorCode::InvalidParams as i32);
    let again = session.request("initialize", json!({ "capabilities": {} }));
    assert_eq!(again.error.unwrap().code, ErrorCode::InvalidRequest as i32);
    // A notification that does not fit its method, and one nobody knows.
    session.notify("textDocument/didOpen", json!({ "textDocument": 7 }));
    session.notify("$/unknown", json!(null));
    // A request about a document that is not open: null.
    let hover = session.request("textDocument/hover", session.at(0, 0));
    assert_eq!(hover.result, Some(Value::Null));
    let shutdown = session.request("shutdown", Value::Null);
    assert!(shutdown.error.is_none());
    let late = session.request("textDocument/hover", session.at(0, 0));
    assert_eq!(late.error.unwrap().code, ErrorCode::InvalidRequest as i32);
    assert_eq!(session.notify("exit", Value::Null), Flow::Exit(0));
    let mut unclean = Session::new();
    assert_eq!(unclean.notify("exit", Value::Null), Flow::Exit(1));
}
