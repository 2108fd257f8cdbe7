//! Memory over a long session: 10,000 edits (3,000 in a debug build) of a
//! script, each followed by its diagnostics, through the server's handler;
//! the resident set size must stay flat. It prints the sizes
//! (`cargo test --release -p redlua-lsp --test memory -- --nocapture`).
//! Alone in its test binary, so that no other test's allocations count.

use lsp_server::{Message, Notification, Request, RequestId};
use redlua_lsp::Server;
use serde_json::json;

const URI: &str = "file:///nonexistent-redlua-lsp-bench/edited.lua";

/// The number of diagnostics the change's publication carries.
fn diagnostics_after(server: &mut Server, message: Message) -> usize {
    let mut out = Vec::new();
    server.handle(message, &mut out);
    server.publish(&mut out);
    out.into_iter()
        .find_map(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                Some(n.params["diagnostics"].as_array().unwrap().len())
            }
            _ => None,
        })
        .expect("diagnostics published")
}

/// The resident set size of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

#[test]
fn memory_stays_flat_over_many_edits() {
    // 10,000 edits in a release build; a debug build analyzes more slowly.
    let edits = if cfg!(debug_assertions) {
        3_000
    } else {
        10_000
    };
    let text = "-- redlua: keys=1 args=1\n".to_string()
        + &"local v = redis.call('GET', KEYS[1])\nif v == nil then return ARGV[1] end\n".repeat(10)
        + "return 0\n";
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
    diagnostics_after(&mut server, Message::Notification(open));
    let mut warmed = 0;
    for edit in 0..edits {
        if edit == edits / 10 {
            warmed = rss_kib();
        }
        // Type a character at the end of line 2, then delete it.
        let change = if edit % 2 == 0 {
            json!({ "range": { "start": { "line": 2, "character": 35 }, "end": { "line": 2, "character": 35 } }, "text": "x" })
        } else {
            json!({ "range": { "start": { "line": 2, "character": 35 }, "end": { "line": 2, "character": 36 } }, "text": "" })
        };
        let change = Notification::new(
            "textDocument/didChange".into(),
            json!({ "textDocument": { "uri": URI, "version": edit + 2 }, "contentChanges": [change] }),
        );
        let count = diagnostics_after(&mut server, Message::Notification(change));
        // Ten nil comparisons; the typed `x` is a syntax error.
        assert_eq!(count, if edit % 2 == 0 { 1 } else { 10 }, "edit {edit}");
    }
    let end = rss_kib();
    println!(
        "redlua-lsp memory over {edits} edits: RSS {} KiB after {} edits, {} KiB at the end",
        warmed,
        edits / 10,
        end
    );
    // Leaking the document's text (under 1 KiB) at each edit fails this
    // bound; allocator noise stays far under it.
    assert!(
        end < warmed + 1024,
        "RSS grew from {warmed} KiB to {end} KiB"
    );
}
