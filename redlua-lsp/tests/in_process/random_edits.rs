//! Random edits: the server never goes down; edited real scripts are diagnosed as if opened afresh.

use super::{Session, URI};
use lsp_types::Position;
use proptest::prelude::*;
use serde_json::json;

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

pub(crate) fn position() -> impl Strategy<Value = Position> {
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
