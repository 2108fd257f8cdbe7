//! The cost the `#[redis_script]` macro adds to a build: its analysis of
//! each script (parsing, lints, key and argument arity, reply shape), run
//! directly with the options the macro passes. The code the macro then
//! emits is a few small items per script whatever the script's size.
//!
//! Two workloads: the 50 scripts of a project (redlua's own 12 lock
//! scripts and 5 examples, cycled) and one generated 5,000-line script.

use crate::metrics::{Figure, Measured};
use redlua_analyzer::{Options, analyze};
use std::path::Path;
use std::time::Instant;

/// Runs both workloads (each the best of 5, after a warm-up).
pub fn run(root: &Path) -> Result<Measured, String> {
    let mut sources = Vec::new();
    for dir in ["lock-runtime/scripts", "scripts"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .map_err(|e| format!("{dir}: {e}"))?
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
            .collect();
        files.sort();
        for file in files {
            sources.push(std::fs::read_to_string(&file).map_err(|e| e.to_string())?);
        }
    }
    if sources.is_empty() {
        return Err("no scripts found".to_string());
    }
    let fifty: Vec<&str> = sources
        .iter()
        .cycle()
        .take(50)
        .map(String::as_str)
        .collect();
    let big = generated(5_000);
    let options = Options {
        cluster: true,
        ..Options::default()
    };
    let fifty_ms = best_of(5, || {
        for source in &fifty {
            std::hint::black_box(analyze(source, &options));
        }
    });
    let big_ms = best_of(5, || {
        std::hint::black_box(analyze(&big, &options));
    });
    let lines: usize = fifty.iter().map(|s| s.lines().count()).sum();
    Ok(Measured {
        per_second: 0.0,
        commands_per_acquisition: None,
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: 0,
        contention: None,
        figures: vec![
            Figure::new("50 scripts", fifty_ms, "ms"),
            Figure::new("lines in the 50 scripts", lines as f64, ""),
            Figure::new("one 5,000-line script", big_ms, "ms"),
        ],
    })
}

/// The fastest of `runs` runs of `work` after one warm-up, in ms.
fn best_of(runs: usize, mut work: impl FnMut()) -> f64 {
    work();
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .fold(f64::INFINITY, f64::min)
}

/// A script of about `lines` lines: helper functions of ten lines each,
/// all called from the body, reading keys and arguments.
pub fn generated(lines: usize) -> String {
    let mut out = String::from("local total = 0\n");
    let functions = lines / 10;
    for f in 0..functions {
        let key = f % 8 + 1;
        let arg = f % 4 + 1;
        out.push_str(&format!(
            "local function step_{f}(n)\n\
             \x20 local current = tonumber(redis.call('HGET', KEYS[{key}], 'f{f}') or '0')\n\
             \x20 if current > n then\n\
             \x20   redis.call('HSET', KEYS[{key}], 'f{f}', n)\n\
             \x20 else\n\
             \x20   redis.call('HINCRBY', KEYS[{key}], 'f{f}', tonumber(ARGV[{arg}]))\n\
             \x20 end\n\
             \x20 local t = {{current, n, 'f{f}'}}\n\
             \x20 return #t + current\n\
             end\n"
        ));
    }
    for f in 0..functions {
        out.push_str(&format!("total = total + step_{f}({f})\n"));
    }
    out.push_str("return total\n");
    out
}
