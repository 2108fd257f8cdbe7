//! After any sequence of edits, the server's diagnostics and hovers are
//! those of a server given the final text at once: the analysis that
//! reuses the previous version's work (a change inside one function is
//! analyzed there only, `redlua_analyzer::incremental`) never shows
//! anything a full analysis would not.
//!
//! The edits are random: inside a function, between functions, across a
//! function's end, breaking and mending the syntax, renaming a function,
//! changing what a function returns so that its callers' diagnostics
//! change, and any text at all.

use lsp_server::{Message, Notification, Request, RequestId};
use proptest::prelude::*;
use redlua_lsp::Server;
use serde_json::{Value, json};

const URI: &str = "file:///nonexistent-redlua-lsp-test/incremental.lua";

/// A server with one document open.
struct Client {
    server: Server,
    next_id: i32,
    version: i32,
}

impl Client {
    /// A server that opened `text`, and the diagnostics it published.
    fn open(text: &str) -> (Client, Value) {
        let mut client = Client {
            server: Server::new(),
            next_id: 0,
            version: 1,
        };
        client.request("initialize", json!({ "capabilities": {} }));
        client.notify("initialized", json!({}));
        client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": URI, "languageId": "lua", "version": 1, "text": text } }),
        );
        let published = client.published();
        (client, published)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let mut out = Vec::new();
        let request = Request::new(RequestId::from(self.next_id), method.to_string(), params);
        self.server.handle(Message::Request(request), &mut out);
        match out.pop() {
            Some(Message::Response(response)) => {
                assert!(response.error.is_none(), "{response:?}");
                response.result.unwrap_or(Value::Null)
            }
            other => panic!("a response expected, got {other:?}"),
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        let mut out = Vec::new();
        self.server.handle(
            Message::Notification(Notification::new(method.to_string(), params)),
            &mut out,
        );
    }

    /// The diagnostics of the document's last publication.
    fn published(&mut self) -> Value {
        let mut out = Vec::new();
        self.server.publish(&mut out);
        out.into_iter()
            .rev()
            .find_map(|message| match message {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    Some(n.params["diagnostics"].clone())
                }
                _ => None,
            })
            .expect("diagnostics published")
    }

    /// Replaces bytes `from..to` of `text` (the document's text) with
    /// `new`, as an editor sends it; the diagnostics then published.
    fn change(&mut self, text: &str, (from, to): (usize, usize), new: &str) -> Value {
        self.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": self.version }, "contentChanges": [
                { "range": { "start": position(text, from), "end": position(text, to) }, "text": new } ] }),
        );
        self.published()
    }

    /// The hover at byte `at` of `text`.
    fn hover(&mut self, text: &str, at: usize) -> Value {
        self.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": URI }, "position": position(text, at) }),
        )
    }
}

/// The protocol's position (UTF-16 columns) of byte `at` of `text`.
fn position(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let character: usize = before[start..].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": character })
}

/// A script of helpers, functions calling them, and a main chunk calling
/// them all; `seed` varies the bodies.
fn script(seed: usize) -> String {
    let bodies = [
        "  local current = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')\n  if current > n then\n    redis.call('HSET', KEYS[1], 'f', n)\n  end\n  return 1\n",
        "  local v = redis.call('GET', KEYS[2])\n  if v then\n    redis.call('SET', KEYS[3], v)\n  end\n  return 0\n",
        "  local t = {n, 'x'}\n  redis.call('RPUSH', KEYS[1], #t)\n  return #t\n",
        "  local r = redis.call('LRANGE', KEYS[1], 0, -1)\n  for _, item in ipairs(r) do\n    redis.call('SADD', KEYS[2], item)\n  end\n  return n + 1\n",
        "  local ttl = redis.call('TTL', KEYS[1])\n  redis.call('EXPIRE', KEYS[2], ttl)\n  return 2\n",
        "  local s = ARGV[1] .. ':' .. n\n  redis.call('SET', KEYS[3], s)\n  return n * 2\n",
    ];
    let mut out = String::from("-- redlua: keys=3 args=2\nlocal total = 0\n");
    for f in 1..5 {
        let body = bodies[(seed + f) % bodies.len()];
        out.push_str(&format!("local function helper_{f}(n)\n{body}end\n"));
    }
    for f in 1..3 {
        out.push_str(&format!(
            "local function caller_{f}(n)\n  if helper_{}(n) then\n    total = total + 1\n  end\n  local v = helper_{}(n)\n  return v + 1\nend\n",
            f,
            f + 2
        ));
    }
    for f in 1..5 {
        out.push_str(&format!("total = total + helper_{f}({f})\n"));
    }
    out.push_str("total = total + caller_1(1) + caller_2(2)\nreturn total\n");
    out
}

/// Statements and expressions edits put in.
const PIECES: &[&str] = &[
    "  local y = redis.call('GET', KEYS[1])\n",
    "  y = y + 1\n",
    "  redis.call('EXPIRE', KEYS[1], n - 5)\n",
    "  if redis.call('EXISTS', KEYS[1]) then return 2 end\n",
    "  local p = redis.pcall('GET', KEYS[1])\n  local q = p .. 'x'\n",
    "  local z = cjson.decode(ARGV[1])\n  if z.x == nil then return 0 end\n",
    "  local a = helper_1(n) + helper_2(n)\n",
    "  redis.call('SET', 'literal', n)\n",
    "  redis.call('GETT', KEYS[1])\n",
    "  local c = currnet + 1\n",
    "  g = 1\n",
    "  KEYS[1] = 'k'\n",
    "  local w = KEYS[7]\n",
    "local extra = redis.call('GET', KEYS[1])\n",
    "local function extra(n)\n  return redis.call('INCR', KEYS[1])\nend\n",
    "redis.setresp(3)\n",
    "helper_1 = helper_2\n",
    "",
    "\n",
];

/// What a function may return instead.
const RETURNS: &[&str] = &[
    "  return redis.call('EXISTS', KEYS[1])\n",
    "  return redis.call('GET', KEYS[1])\n",
    "  return 1\n",
    "  return n / 2\n",
    "  return\n",
    "  return false\n",
];

/// What breaks the syntax.
const BREAKERS: &[&str] = &["(", "'", "end", "--[[", "local", "=", "function("];

/// One edit.
#[derive(Clone, Debug)]
enum Edit {
    /// A line of a function's body (its place among them) becomes a piece.
    Inside(f64, usize),
    /// A piece goes before a line of the main chunk.
    Between(f64, usize),
    /// From inside a function to past its `end`, some bytes become a piece.
    Across(f64, usize, usize),
    /// Something that breaks the syntax goes into a function's body, and
    /// out again (two changes).
    Break(f64, usize),
    /// The edit before the last is undone (a break mended).
    Undo,
    /// A function gets another name where it is declared.
    Rename(f64, usize),
    /// A function's `return` becomes another.
    Return(f64, usize),
    /// Any text replaces any bytes.
    Any(f64, usize, String),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        8 => (0.0..1.0f64, 0..PIECES.len()).prop_map(|(at, p)| Edit::Inside(at, p)),
        2 => (0.0..1.0f64, 0..PIECES.len()).prop_map(|(at, p)| Edit::Between(at, p)),
        1 => (0.0..1.0f64, 1usize..40, 0..PIECES.len()).prop_map(|(at, n, p)| Edit::Across(at, n, p)),
        2 => (0.0..1.0f64, 0..BREAKERS.len()).prop_map(|(at, b)| Edit::Break(at, b)),
        5 => Just(Edit::Undo),
        1 => (0.0..1.0f64, 0usize..3).prop_map(|(at, n)| Edit::Rename(at, n)),
        3 => (0.0..1.0f64, 0..RETURNS.len()).prop_map(|(at, r)| Edit::Return(at, r)),
        1 => (0.0..1.0f64, 0usize..8, "\\PC{0,6}|é😀\r\n").prop_map(|(at, n, s)| Edit::Any(at, n, s)),
    ]
}

/// The byte ranges of the lines of `text` that satisfy `keep`.
fn lines_where(text: &str, keep: impl Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if keep(line) {
            found.push((offset, offset + line.len()));
        }
        offset += line.len();
    }
    found
}

/// One of `places`, at a fraction of them.
fn pick<T: Copy>(places: &[T], at: f64) -> Option<T> {
    (!places.is_empty()).then(|| places[((places.len() - 1) as f64 * at) as usize])
}

/// `at`, or the place before it that a protocol's position can name: a
/// character's start, not inside a `\r\n` (a line break, for the
/// protocol, whatever is between).
fn boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) || (at > 0 && text[..at].ends_with('\r')) {
        at -= 1;
    }
    at
}

/// The bytes `edit` replaces in `text`, and with what; `None` when it has
/// nothing to act on (`Undo` is the caller's).
fn bytes(text: &str, edit: &Edit) -> Option<((usize, usize), String)> {
    let body = |line: &str| line.starts_with("  ");
    Some(match edit {
        Edit::Inside(at, piece) => (
            pick(&lines_where(text, body), *at)?,
            PIECES[*piece].to_string(),
        ),
        Edit::Between(at, piece) => {
            let (start, _) = pick(&lines_where(text, |l| l.starts_with("total")), *at)?;
            ((start, start), PIECES[*piece].to_string())
        }
        Edit::Across(at, len, piece) => {
            let (start, end) = pick(&lines_where(text, |l| l.starts_with("end")), *at)?;
            let from = boundary(text, start.saturating_sub(3));
            let to = boundary(text, (end + len).min(text.len())).max(from);
            ((from, to), PIECES[*piece].to_string())
        }
        Edit::Break(at, breaker) => {
            let (start, _) = pick(&lines_where(text, body), *at)?;
            ((start + 2, start + 2), BREAKERS[*breaker].to_string())
        }
        Edit::Rename(at, to) => {
            let (start, end) = pick(
                &lines_where(text, |l| l.starts_with("local function ")),
                *at,
            )?;
            let name_start = start + "local function ".len();
            let name_end = text[name_start..end].find('(')? + name_start;
            let name = ["renamed", "helper_1", "caller_9"][*to];
            ((name_start, name_end), name.to_string())
        }
        Edit::Return(at, with) => (
            pick(&lines_where(text, |l| l.starts_with("  return")), *at)?,
            RETURNS[*with].to_string(),
        ),
        Edit::Any(at, len, new) => {
            let from = boundary(text, ((text.len() as f64) * at) as usize);
            let to = boundary(text, (from + len).min(text.len())).max(from);
            ((from, to), new.clone())
        }
        Edit::Undo => return None,
    })
}

/// The places hovered after each edit: names of locals (and some other
/// bytes), a fraction of the text each.
fn hovered(text: &str, probes: &[f64]) -> Vec<usize> {
    let names: Vec<usize> = [
        "current", "v", "t", "r", "item", "ttl", "s", "n", "y", "p", "a", "c",
    ]
    .iter()
    .flat_map(|name| {
        text.match_indices(&format!("{name} "))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    })
    .collect();
    probes
        .iter()
        .map(|&at| {
            let mut at = match pick(&names, at) {
                Some(name) if at < 0.8 => name,
                _ => ((text.len() as f64) * at) as usize,
            };
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn after_any_edits_diagnostics_and_hovers_are_those_of_the_text_opened_afresh(
        seed in 0usize..6,
        crlf in any::<bool>(),
        edits in prop::collection::vec(edit(), 1..12),
        probes in prop::collection::vec(0.0..1.0f64, 3),
    ) {
        let mut text = script(seed);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let (mut client, _) = Client::open(&text);
        let mut before = text.clone();
        for edit in &edits {
            let mut changes = Vec::new();
            match bytes(&text, edit) {
                Some((range, new)) => {
                    changes.push((range, new.clone()));
                    if let Edit::Break(..) = edit {
                        // Mended: the breaker taken out.
                        changes.push(((range.0, range.0 + new.len()), String::new()));
                    }
                }
                // Undo: the whole text back as it was.
                None => changes.push(((0, text.len()), before.clone())),
            }
            for (range, new) in changes {
                let published = client.change(&text, range, &new);
                if std::env::var_os("REDLUA_TRACE_INCREMENTAL").is_some() {
                    eprintln!("REUSED {:?} {:?}", client.server.reused(URI), edit);
                }
                let mut next = text.clone();
                next.replace_range(range.0..range.1, &new);
                before = std::mem::replace(&mut text, next);
                let (mut afresh, expected) = Client::open(&text);
                prop_assert_eq!(&published, &expected, "after {:?}:\n{}", edit, text);
                for at in hovered(&text, &probes) {
                    prop_assert_eq!(
                        client.hover(&text, at),
                        afresh.hover(&text, at),
                        "hover at byte {} after {:?}:\n{}", at, edit, text
                    );
                }
            }
        }
    }
}

/// A helper whose return changes from a number to an integer reply (its
/// text changes nowhere else: the same reads, the same calls): its
/// caller, in another function, tests it as a condition, which is now an
/// `integer_condition` error there. The change is inside the helper only;
/// the analysis must still find the caller's error.
#[test]
fn a_helpers_new_return_changes_its_callers_diagnostics() {
    let text = script(0).replacen(
        "local function helper_1(n)\n",
        "local function helper_1(n)\n  local e = redis.call('EXISTS', KEYS[1])\n  return n\nend\nlocal function unused(n)\n",
        1,
    );
    let (from, to) = ("  return n\n", "  return e\n");
    let line_of = |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap();
    let (mut client, opened) = Client::open(&text);
    let caller = line_of(&text, "if helper_1(n) then");
    let at_caller = |published: &Value| {
        published
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["range"]["start"]["line"] == caller && d["code"] == "integer_condition")
            .count()
    };
    assert_eq!(at_caller(&opened), 0, "{opened:#}");
    // helper_1's `return n` becomes `return e`, the reply of EXISTS.
    let helper = text.find("local function helper_1(n)").unwrap();
    let ret = text[helper..].find(from).unwrap() + helper;
    let published = client.change(&text, (ret, ret + from.len()), to);
    let mut edited = text.clone();
    edited.replace_range(ret..ret + from.len(), to);
    assert_eq!(at_caller(&published), 1, "{published:#}");
    assert_eq!(published, Client::open(&edited).1);
    // What the helper gives its callers changed: the whole script again.
    assert_eq!(
        client.server.reused(URI),
        Err("what the function gives the rest of the script changed")
    );
    // And back: the error goes.
    let published = client.change(&edited, (ret, ret + to.len()), from);
    assert_eq!(at_caller(&published), 0, "{published:#}");
}

/// The benchmark's edit (a command's name broken and mended inside a
/// function) is analyzed in that function only, and gives what a full
/// analysis gives.
#[test]
fn a_broken_command_name_is_analyzed_in_its_function_only() {
    let text = script(2);
    let (mut client, _) = Client::open(&text);
    let at = text.find("redis.call('HGET'").unwrap() + "redis.call('".len();
    let published = client.change(&text, (at, at), "X");
    let mut broken = text.clone();
    broken.insert(at, 'X');
    assert_eq!(client.server.reused(URI), Ok(()));
    assert_eq!(published, Client::open(&broken).1);
    assert!(
        published
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "unknown_command"),
        "{published:#}"
    );
    let published = client.change(&broken, (at, at + 1), "");
    assert_eq!(client.server.reused(URI), Ok(()));
    assert_eq!(published, Client::open(&text).1);
}
