//! Hover, completion and quick fixes: inferred values, allows in the header, snippets.

use super::{Session, URI, code};
use lsp_types::CompletionResponse;
use redlua_lsp::Server;
use serde_json::{Value, json};

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
