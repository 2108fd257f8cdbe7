//! The server driven in-process through its handler: the protocol's
//! lifecycle and errors, diagnostics, hover, completion and quick fixes,
//! random edits that must never bring it down, and random edits of real
//! scripts whose diagnostics must be those of the edited text opened afresh.

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CompletionResponse, Diagnostic, DiagnosticSeverity, NumberOrString, Position,
    PublishDiagnosticsParams, Range,
};
use proptest::prelude::*;
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

#[test]
fn diagnostics_carry_the_lint_name_its_level_and_the_exact_range() {
    let mut session = Session::new();
    let text =
        "-- redlua: keys=1\nlocal v = redis.call('hincrbyy', KEYS[1], 'n', 1)\nreturn ARGV[1]\n";
    let diagnostics = session.open(text);
    let unknown = diagnostics
        .iter()
        .find(|d| code(d) == "unknown_command")
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    assert_eq!(
        unknown.range,
        Range::new(Position::new(1, 21), Position::new(1, 31))
    );
    assert_eq!(unknown.severity, Some(DiagnosticSeverity::ERROR));
    assert_eq!(unknown.source.as_deref(), Some("redlua"));
    assert!(
        unknown.message.contains("did you mean `hincrby`?"),
        "{}",
        unknown.message
    );
    // `args` is not declared: any number of arguments is accepted.
    assert!(
        !diagnostics.iter().any(|d| code(d) == "arity"),
        "{diagnostics:#?}"
    );
}

#[test]
fn the_same_messages_as_the_analyzer_with_the_header_applied() {
    let mut session = Session::new();
    let text =
        "-- redlua: keys=1 args=0 returns=string\nreturn redis.call('GET', KEYS[1]) .. ARGV[1]\n";
    let diagnostics = session.open(text);
    let mut options = redlua_analyzer::Options::default();
    redlua_analyzer::header::parse(text)
        .unwrap()
        .apply(&mut options);
    let expected = redlua_analyzer::analyze(text, &options).diagnostics;
    assert!(!expected.is_empty());
    let got: Vec<(&str, &str)> = diagnostics
        .iter()
        .map(|d| (code(d), d.message.lines().next().unwrap()))
        .collect();
    let want: Vec<(&str, &str)> = expected
        .iter()
        .map(|d| (d.lint.name(), d.message.as_str()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_header_error_points_at_the_setting_and_warnings_stay_warnings() {
    let mut session = Session::new();
    let diagnostics = session.open("-- redlua: key=1\nreturn 1\n");
    assert_eq!(code(&diagnostics[0]), "header");
    assert_eq!(
        diagnostics[0].range,
        Range::new(Position::new(0, 11), Position::new(0, 16))
    );
    assert!(diagnostics[0].message.starts_with(
        "invalid `-- redlua:` header: unknown header setting `key` (did you mean `keys`?)"
    ));
    let mut session = Session::new();
    let diagnostics = session.open("return redis.call('GET', 'literal:key')\n");
    let literal = diagnostics
        .iter()
        .find(|d| code(d) == "literal_key")
        .unwrap();
    assert_eq!(literal.severity, Some(DiagnosticSeverity::WARNING));
}

#[test]
fn changes_and_closing_republish() {
    let mut session = Session::new();
    assert_eq!(session.open("return 1\n"), []);
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [
            { "range": { "start": { "line": 0, "character": 7 }, "end": { "line": 0, "character": 8 } },
              "text": "redis.call('GETT', KEYS[1])" } ] }),
    );
    let published = session.published();
    assert_eq!(code(&published[0].diagnostics[0]), "unknown_command");
    assert_eq!(
        published[0].diagnostics[0].range,
        Range::new(Position::new(0, 18), Position::new(0, 24))
    );
    session.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": URI } }),
    );
    let published = session.published();
    assert_eq!(published.len(), 1);
    assert!(published[0].diagnostics.is_empty());
}

#[test]
fn hover_completion_and_a_quick_fix() {
    let mut session = Session::new();
    let text = "-- redlua: keys=1\nif redis.call('EXISTS', KEYS[1]) then return 1 end\nreturn 0\n";
    session.open(text);
    let hover = session.request("textDocument/hover", session.at(1, 16));
    let value = hover.result.unwrap();
    let markdown = value["contents"]["value"].as_str().unwrap();
    assert!(
        markdown.starts_with("**EXISTS** — Determines whether one or more keys exist."),
        "{markdown}"
    );
    assert!(
        markdown.contains("reply (RESP2): a number (an integer reply)"),
        "{markdown}"
    );
    let completion = session.request("textDocument/completion", session.at(1, 16));
    let items: CompletionResponse = serde_json::from_value(completion.result.unwrap()).unwrap();
    let CompletionResponse::Array(items) = items else {
        panic!("an array")
    };
    assert!(items.iter().any(|i| i.label == "EXPIRE"), "{items:?}");
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": URI },
                "range": { "start": { "line": 1, "character": 5 }, "end": { "line": 1, "character": 5 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    assert_eq!(actions[0]["title"], "Compare the integer reply: `== 1`");
    let edit = &actions[0]["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "redis.call('EXISTS', KEYS[1]) == 1");
    assert_eq!(edit["range"]["start"], json!({ "line": 1, "character": 3 }));
    assert_eq!(edit["range"]["end"], json!({ "line": 1, "character": 32 }));
    assert_eq!(actions[0]["diagnostics"][0]["code"], "integer_condition");
}

#[test]
fn hover_on_a_local_shows_its_inferred_value_where_it_is_read() {
    let mut session = Session::new();
    let text = "-- redlua: keys=1\nlocal v = redis.call('GET', KEYS[1])\nif v then\n  return v\nend\nreturn v\n";
    session.open(text);
    let hover = session.request("textDocument/hover", session.at(5, 7));
    let value = hover.result.unwrap();
    // Past `if v then return v end`, only `false` is left.
    assert_eq!(
        value["contents"]["value"],
        "**`v`**: `false` (the reply of GET (`redis.call`); \
         `false` is its nil reply, as for GET of a missing key)"
    );
    assert_eq!(
        value["range"],
        json!({ "start": { "line": 5, "character": 7 }, "end": { "line": 5, "character": 8 } })
    );
    // Under `if v then`, `false` is ruled out.
    let guarded = session.request("textDocument/hover", session.at(3, 9));
    let markdown = guarded.result.unwrap()["contents"]["value"].clone();
    assert_eq!(
        markdown,
        "**`v`**: a string (the reply of GET (`redis.call`))"
    );
    let declared = session.request("textDocument/hover", session.at(1, 6));
    assert!(
        declared.result.unwrap()["contents"]["value"]
            .as_str()
            .unwrap()
            .starts_with("**`v`**: a string or `false` (the reply of GET"),
    );
    // A global is not a local: no hover.
    let global = session.request("textDocument/hover", session.at(1, 11));
    assert_eq!(global.result, Some(Value::Null));
}

#[test]
fn a_finding_can_be_allowed_in_the_script_header() {
    let mut session = Session::new();
    let text = "-- redlua: keys=0\nredis.call('SET', 'fixed', 1)\nreturn 1\n";
    let diagnostics = session.open(text);
    assert_eq!(
        diagnostics.iter().map(code).collect::<Vec<_>>(),
        ["literal_key"]
    );
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": URI },
                "range": { "start": { "line": 1, "character": 20 }, "end": { "line": 1, "character": 20 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    let allow = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Allow `literal_key` in this script's header")
        .unwrap_or_else(|| panic!("{actions:#}"));
    assert_eq!(allow["isPreferred"], false);
    assert_eq!(allow["diagnostics"][0]["code"], "literal_key");
    let edit = &allow["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], " allow=literal_key");
    let end_of_header = json!({ "line": 0, "character": 17 });
    assert_eq!(edit["range"]["start"], end_of_header);
    assert_eq!(edit["range"]["end"], end_of_header);
    // Made, the edit switches the finding off.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": URI, "version": 2 },
                "contentChanges": [ { "range": edit["range"], "text": edit["newText"] } ] }),
    );
    let published = session.published();
    assert_eq!(published[0].diagnostics, []);
    // Then no action is left to offer.
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": URI },
                "range": { "start": { "line": 1, "character": 20 }, "end": { "line": 1, "character": 20 } },
                "context": { "diagnostics": [] } }),
    );
    assert_eq!(actions.result.unwrap(), json!([]));
}

#[test]
fn a_script_without_a_header_gets_one_for_the_allow() {
    let mut session = Session::new();
    let diagnostics = session.open("#!lua flags=no-writes\nreturn redis.call('GET', 'fixed')\n");
    assert_eq!(
        diagnostics.iter().map(code).collect::<Vec<_>>(),
        ["literal_key"]
    );
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": URI },
                "range": { "start": { "line": 1, "character": 27 }, "end": { "line": 1, "character": 27 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    let edit = &actions[0]["edit"]["changes"][URI][0];
    assert_eq!(
        actions[0]["title"],
        "Allow `literal_key` in this script's header"
    );
    assert_eq!(edit["newText"], "-- redlua: allow=literal_key\n");
    assert_eq!(edit["range"]["start"], json!({ "line": 1, "character": 0 }));
}

#[test]
fn a_rust_declaration_in_the_crate_gives_the_counts_options_and_related_places() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"x\"\n\n[package.metadata.redlua]\ntarget = \"redis-7.4\"\n",
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "mod deep;\n").unwrap();
    std::fs::write(
        root.join("src/deep/bump.rs"),
        "use redlua::redis_script;\n\n\
         /// Bumps a counter.\n\
         #[redis_script(\"scripts/bump.lua\", returns = i64, allow(literal_key))]\n\
         pub struct Bump<'a> {\n    #[key] pub counter: &'a str,\n    #[key] pub unused: &'a str,\n    \
         #[arg] pub by: i64,\n}\n",
    )
    .unwrap();
    let script = root.join("scripts/bump.lua");
    let text = "redis.call('SET', 'literal', 1)\nreturn redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, 'f')\n";
    std::fs::write(&script, text).unwrap();
    let uri = format!("file://{}", script.display());
    let mut session = Session::new();
    session.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": text } }),
    );
    let published = session.published();
    let diagnostics = &published[0].diagnostics;
    // No `literal_key` (allowed), no `target_version` (Redis 7.4); HEXPIRE's
    // array is not an `i64`, and the second key is never read.
    let codes: Vec<&str> = diagnostics.iter().map(code).collect();
    assert_eq!(codes, ["return_type", "arity"], "{diagnostics:#?}");
    let script_wide = diagnostics[0].related_information.as_ref().unwrap();
    assert_eq!(script_wide[0].message, "`Bump` declares this script");
    assert_eq!(script_wide[0].location.range.start, Position::new(4, 11));
    assert!(
        diagnostics[1].message.contains("KEYS[2]"),
        "{}",
        diagnostics[1].message
    );
    let related = diagnostics[1].related_information.as_ref().unwrap();
    let field = &related[0];
    assert_eq!(field.message, "`unused` of `Bump` declares KEYS[2]");
    assert!(
        field.location.uri.as_str().ends_with("/src/deep/bump.rs"),
        "{field:?}"
    );
    assert_eq!(field.location.range.start, Position::new(6, 15));

    // A finding is allowed in the attribute, not in a header.
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 2, "character": 0 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Allow `return_type` in the `#[redis_script]` of `Bump`"]
    );
    let rust_uri = format!("file://{}", root.join("src/deep/bump.rs").display());
    let edit = &actions[0]["edit"]["changes"][&rust_uri][0];
    assert_eq!(edit["newText"], ", return_type");
    let column = "#[redis_script(\"scripts/bump.lua\", returns = i64, allow(literal_key".len();
    let at = json!({ "line": 3, "character": column });
    assert_eq!(edit["range"], json!({ "start": at, "end": at }));

    // Without the unread key, once the client tells of the change.
    std::fs::write(
        root.join("src/deep/bump.rs"),
        "#[redlua::redis_script(\"scripts/bump.lua\", returns = Vec<i64>, allow(literal_key))]\n\
         pub struct Bump<'a> { #[key] pub counter: &'a str, #[arg] pub by: i64 }\n",
    )
    .unwrap();
    session.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": format!("file://{}", root.join("src/deep/bump.rs").display()), "type": 2 }] }),
    );
    let published = session.published();
    assert_eq!(published.len(), 1);
    assert_eq!(
        published[0].diagnostics,
        [],
        "{:#?}",
        published[0].diagnostics
    );
}

#[test]
fn each_function_of_a_library_is_checked_against_its_redis_function_struct() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    // `bump` is declared with one argument but reads two, and returns an
    // integer where a list is declared; `peek` is declared as it is
    // written; `other` is declared by no struct.
    std::fs::write(
        root.join("src/lib.rs"),
        "#[redlua::redis_function(\"lib.lua\", name = \"bump\", returns = Vec<String>)]\n\
         struct Bump<'a> { #[key] counter: &'a str, #[arg] by: i64 }\n\
         #[redlua::redis_function(\"lib.lua\", name = \"peek\", returns = Option<String>)]\n\
         struct Peek<'a> { #[key] counter: &'a str }\n",
    )
    .unwrap();
    let text = "#!lua name=counters\n\
        local function bump(keys, args)\n\
        \x20 redis.call('EXPIRE', keys[1], args[2])\n\
        \x20 return redis.call('INCRBY', keys[1], args[1])\n\
        end\n\
        redis.register_function('bump', bump)\n\
        redis.register_function('peek', function(keys) return redis.call('GET', keys[1]) end)\n\
        redis.register_function('other', function(keys) return redis.call('GET', 'literal') end)\n";
    let library = root.join("lib.lua");
    std::fs::write(&library, text).unwrap();
    let uri = format!("file://{}", library.display());
    let mut session = Session::new();
    session.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "lua", "version": 1, "text": text } }),
    );
    let published = session.published();
    let found: Vec<(&str, u32)> = published[0]
        .diagnostics
        .iter()
        .map(|d| (code(d), d.range.start.line))
        .collect();
    // Past the declared arguments in `bump` (line 2), its integer where a
    // list is declared (line 3), and `other`'s literal key (line 7).
    assert_eq!(
        found,
        [("arity", 2), ("return_type", 3), ("literal_key", 7)],
        "{:#?}",
        published[0].diagnostics
    );

    // The declaring struct is related information, and the finding can be
    // allowed in its attribute.
    let related = published[0].diagnostics[0]
        .related_information
        .as_ref()
        .unwrap();
    assert_eq!(related[0].message, "`Bump` declares the function `bump`");
    assert!(related[0].location.uri.as_str().ends_with("/src/lib.rs"));
    assert_eq!(related[0].location.range.start, Position::new(1, 7));
    assert_eq!(published[0].diagnostics[2].related_information, None);
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 2, "character": 0 }, "end": { "line": 2, "character": 40 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Allow `arity` in this script's header",
            "Allow `arity` in the `#[redis_function]` of `Bump`"
        ]
    );
    let rust_uri = format!("file://{}", root.join("src/lib.rs").display());
    assert_eq!(
        actions[1]["edit"]["changes"][&rust_uri][0]["newText"],
        ", allow(arity)"
    );

    // The header's allow holds for the whole library: offered after the
    // `#!lua` line, and applied.
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 7, "character": 0 }, "end": { "line": 7, "character": 90 } },
                "context": { "diagnostics": [] } }),
    );
    let actions = actions.result.unwrap();
    assert_eq!(
        actions[0]["title"], "Allow `literal_key` in this script's header",
        "{actions:#?}"
    );
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "-- redlua: allow=literal_key\n");
    assert_eq!(edit["range"]["start"], json!({ "line": 1, "character": 0 }));
    let allowed = text.replacen('\n', "\n-- redlua: allow=literal_key\n", 1);
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 },
                "contentChanges": [{ "text": allowed }] }),
    );
    let published = session.published();
    let codes: Vec<&str> = published[0].diagnostics.iter().map(code).collect();
    assert_eq!(codes, ["arity", "return_type"]);
}

#[test]
fn a_client_that_takes_snippets_gets_placeholders_for_a_command_s_arguments() {
    let mut session = Session {
        server: Server::new(),
        next_id: 0,
    };
    let capabilities = json!({ "textDocument": { "completion": { "completionItem": { "snippetSupport": true } } } });
    session.request("initialize", json!({ "capabilities": capabilities }));
    session.notify("initialized", json!({}));
    session.open("return redis.call('INCRB')\n");
    let completion = session.request("textDocument/completion", session.at(0, 24));
    let items = completion.result.unwrap();
    let incrby = items
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["label"] == "INCRBY")
        .unwrap();
    assert_eq!(incrby["insertTextFormat"], 2, "{incrby:#}");
    assert_eq!(incrby["textEdit"]["newText"], "INCRBY', ${1:key}, ${2:arg}");
    assert_eq!(
        incrby["textEdit"]["range"],
        json!({ "start": { "line": 0, "character": 19 }, "end": { "line": 0, "character": 25 } })
    );
}

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

/// The text after an edit, with the protocol's clamping (written
/// independently of the server's, as a check of it): a line past the end is
/// the end; a column past the line's end is the line's end; a column inside
/// a character is the character's start. Lines end at `\n`, `\r\n`, `\r`.
fn offset(text: &str, position: Position) -> usize {
    let mut line = 0;
    let mut column = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if line == position.line {
            if c == '\n' || c == '\r' {
                return i;
            }
            let width = c.len_utf16() as u32;
            if column + width > position.character {
                return i;
            }
            column += width;
            continue;
        }
        if c == '\n' || (c == '\r' && chars.peek().map(|(_, c)| *c) != Some('\n')) {
            line += 1;
        }
    }
    text.len()
}

/// Whether `position` names a place in `text`: an existing line, and a
/// column within it that is not inside a character.
fn valid(text: &str, position: Position) -> bool {
    let lines: Vec<&str> = text
        .split("\r\n")
        .flat_map(|l| l.split(['\n', '\r']))
        .collect();
    let Some(line) = lines.get(position.line as usize) else {
        return false;
    };
    let mut units = 0;
    for c in line.chars() {
        if units == position.character {
            return true;
        }
        units += c.len_utf16() as u32;
    }
    units == position.character
}

fn edit_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("redis.call('GET', KEYS[1])".to_string()),
        Just("if redis.call('EXISTS', KEYS[1]) then\n".to_string()),
        Just(" == nil end\n".to_string()),
        Just("-- redlua: keys=1 args=2+ returns=integer? target=redis-7.4\n".to_string()),
        Just("#!lua name=lib\nredis.register_function('f', function(k, a)".to_string()),
        Just("local x = {".to_string()),
        Just("é😀\r\n\r\u{0}\u{feff}".to_string()),
        "\\PC{0,12}",
        any::<String>(),
    ]
}

fn position() -> impl Strategy<Value = Position> {
    (0u32..12, prop_oneof![0u32..40, Just(u32::MAX)]).prop_map(|(l, c)| Position::new(l, c))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_never_bring_it_down_and_diagnostics_stay_in_the_text(
        start in "\\PC{0,40}",
        edits in prop::collection::vec((position(), position(), edit_text()), 1..12),
        probes in prop::collection::vec(position(), 1..4),
    ) {
        let mut session = Session::new();
        session.open(&start);
        let mut text = start;
        for (a, b, new) in edits {
            session.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [
                    { "range": { "start": a, "end": b }, "text": new } ] }),
            );
            let (x, y) = (offset(&text, a), offset(&text, b));
            text.replace_range(x.min(y)..x.max(y), &new);
            for published in session.published() {
                for d in published.diagnostics {
                    prop_assert!(valid(&text, d.range.start), "{d:?} in {text:?}");
                    prop_assert!(valid(&text, d.range.end), "{d:?} in {text:?}");
                    prop_assert!(d.range.start <= d.range.end, "{d:?}");
                }
            }
            for &probe in &probes {
                for method in ["textDocument/hover", "textDocument/completion"] {
                    let response = session.request(method, session.at(probe.line, probe.character));
                    prop_assert!(response.error.is_none(), "{method}: {response:?}");
                }
                let actions = session.request("textDocument/codeAction", json!({
                    "textDocument": { "uri": URI },
                    "range": { "start": Position::new(0, 0), "end": probe },
                    "context": { "diagnostics": [] } }));
                prop_assert!(actions.error.is_none(), "{actions:?}");
            }
        }
    }
}

/// The scripts of the analyzer's corpus and of the lock runtime.
fn corpus() -> &'static [String] {
    fn add(dir: &std::path::Path, out: &mut Vec<String>) {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("no corpus at {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                add(&path, out);
            } else if path.extension().is_some_and(|e| e == "lua") {
                out.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    static SCRIPTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut scripts = Vec::new();
        add(&root.join("script-analyzer/tests/corpus"), &mut scripts);
        add(&root.join("lock-runtime/scripts"), &mut scripts);
        assert!(scripts.len() > 100, "{} scripts", scripts.len());
        scripts
    })
}

/// Pieces of scripts an edit of a real script may insert.
fn script_piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        "\n",
        "end\n",
        "local v = redis.call('GET', KEYS[1])\n",
        "if v == nil then return 0 end\n",
        "redis.call('SET', 'literal', ARGV[2])",
        "return redis.call('HGETALL', KEYS[3])",
        "tonumber(ARGV[1])",
        "KEYS[#KEYS]",
        " == 1",
        "redis.call('GETT', KEYS[1])",
        "-- redlua: keys=1 args=1 returns=integer\n",
        "'",
        "(",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn after_random_edits_of_real_scripts_the_diagnostics_are_those_of_the_text_opened_afresh(
        script in any::<prop::sample::Index>(),
        edits in prop::collection::vec(
            ((0u32..80, 0u32..60), (0u32..3, 0u32..60), script_piece()),
            1..6,
        ),
    ) {
        let mut text = script.get(corpus()).clone();
        let mut session = Session::new();
        session.open(&text);
        let mut last = Vec::new();
        for (version, ((line, character), (lines, end_character), new)) in edits.into_iter().enumerate() {
            let a = Position::new(line, character);
            let b = Position::new(line + lines, end_character);
            session.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": URI, "version": version + 2 }, "contentChanges": [
                    { "range": { "start": a, "end": b }, "text": new } ] }),
            );
            let (x, y) = (offset(&text, a), offset(&text, b));
            text.replace_range(x.min(y)..x.max(y), &new);
            let mut published = session.published();
            prop_assert_eq!(published.len(), 1);
            last = published.remove(0).diagnostics;
        }
        let afresh = Session::new().open(&text);
        prop_assert_eq!(last, afresh, "{}", text);
    }
}
