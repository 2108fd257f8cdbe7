//! End to end through Neovim (Debian's package), headless: its own LSP
//! client starts the `redlua-lsp` binary for a script, and the Lua of
//! `tests/neovim/e2e.lua` reads back the diagnostics, a hover and the
//! quick fixes, applies the preferred fix as the editor does, and waits
//! for the diagnostics of the fixed text.
//!
//! Neovim is installed by `tools/ensure-lsp-client` (with apt-get when it
//! is missing); when it cannot be installed, this test fails, it never
//! skips.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = "-- redlua: keys=1\n\
    local v = redis.call('GETT', KEYS[1])\n\
    if redis.call('EXISTS', KEYS[1]) then return 1 end\n\
    return 0\n";

#[test]
fn neovim_shows_diagnostics_a_hover_and_applies_a_quick_fix() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.parent().expect("the workspace root");
    let ensure = Command::new(root.join("tools/ensure-lsp-client"))
        .output()
        .expect("tools/ensure-lsp-client runs");
    assert!(
        ensure.status.success(),
        "tools/ensure-lsp-client failed: Neovim cannot be installed\n{}\n{}",
        String::from_utf8_lossy(&ensure.stdout),
        String::from_utf8_lossy(&ensure.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("count.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    let result = dir.path().join("result.json");
    let mut nvim = Command::new("nvim")
        .args(["--headless", "-n", "-i", "NONE", "-u"])
        .arg(crate_dir.join("tests/neovim/e2e.lua"))
        .env("REDLUA_LSP", env!("CARGO_BIN_EXE_redlua-lsp"))
        .env("SCRIPT", &script)
        .env("RESULT", &result)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim starts (tools/ensure-lsp-client installs it)");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = nvim.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            nvim.kill().unwrap();
            panic!("nvim did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = nvim.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut stderr).unwrap();
    }
    assert!(status.success(), "nvim: {status}\n{stderr}");
    let text = std::fs::read_to_string(&result)
        .unwrap_or_else(|e| panic!("no result from nvim ({e}):\n{stderr}"));
    let seen: Value = serde_json::from_str(&text).unwrap();
    assert!(seen.get("problem").is_none(), "{seen:#}");
    let found: Vec<(&str, u64)> = seen["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        found,
        [("unknown_command", 1), ("integer_condition", 2)],
        "{seen:#}"
    );
    let hover = seen["hover"].as_str().unwrap();
    assert!(
        hover.starts_with("**EXISTS** — ")
            && hover.contains("- reply (RESP2): a number (an integer reply)"),
        "{hover}"
    );
    let actions: Vec<&str> = seen["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "Compare the integer reply: `== 1`",
            "Compare the integer reply: `> 0`",
            "Allow `integer_condition` in this script's header"
        ]
    );
    assert_eq!(
        seen["fixed"], "if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end",
        "{seen:#}"
    );
    assert_eq!(seen["after"][0]["code"], "unknown_command", "{seen:#}");
    assert_eq!(seen["after"].as_array().unwrap().len(), 1, "{seen:#}");
}
