//! Scripts checked against the crate's Rust declarations: counts, options, functions of a library.

use super::{Session, code};
use lsp_types::Position;
use serde_json::json;

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
