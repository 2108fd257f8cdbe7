//! The peer libraries: installed into a throwaway environment, each run as
//! a child process with the same scenarios and parameters as redlua.

use crate::Settings;
use crate::metrics::{Event, Measured, Outcome, contention};
use crate::monitor::counted;
use crate::scenarios::{commands_so_far, contended_name, per_op};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the peers were installed, or why they could not be.
pub struct Environment {
    python: Result<PathBuf, String>,
    node_modules: Result<PathBuf, String>,
}

impl Environment {
    /// Installs the peers under `dir` (kept between runs).
    pub fn prepare(dir: &Path) -> Environment {
        Environment {
            python: prepare_python(&dir.join("venv")),
            node_modules: prepare_node(&dir.join("node")),
        }
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("").to_string();
        Err(format!("{shown} failed ({}): {last}", output.status))
    }
}

fn prepare_python(venv: &Path) -> Result<PathBuf, String> {
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!(
            "installing redis-py and python-redis-lock into {}",
            venv.display()
        );
        run(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    }
    run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "redis",
        "python-redis-lock",
    ]))?;
    Ok(python)
}

fn prepare_node(prefix: &Path) -> Result<PathBuf, String> {
    let modules = prefix.join("node_modules");
    if !modules.join("redis-semaphore").exists() || !modules.join("ioredis").exists() {
        eprintln!(
            "installing redis-semaphore and ioredis into {}",
            prefix.display()
        );
        std::fs::create_dir_all(prefix).map_err(|e| e.to_string())?;
        run(Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(prefix)
            .args(["redis-semaphore", "ioredis"]))?;
    }
    Ok(modules)
}

/// One peer library: how to start its script.
struct Peer {
    library: &'static str,
    program: Result<Vec<String>, String>,
    node_modules: Option<PathBuf>,
}

/// Runs every scenario of every peer.
pub async fn run_all(
    env: &Environment,
    scripts: &Path,
    url: &str,
    settings: &Settings,
) -> Vec<Outcome> {
    let python = |library: &'static str| Peer {
        library,
        program: env.python.clone().map(|python| {
            vec![
                python.display().to_string(),
                scripts.join("py_locks.py").display().to_string(),
                library.to_string(),
            ]
        }),
        node_modules: None,
    };
    let peers = [
        python("redis-py"),
        python("python-redis-lock"),
        Peer {
            library: "redis-semaphore",
            program: env.node_modules.clone().map(|_| {
                vec![
                    "node".to_string(),
                    scripts.join("node_locks.mjs").display().to_string(),
                ]
            }),
            node_modules: env.node_modules.clone().ok(),
        },
    ];
    let mut outcomes = Vec::new();
    for peer in &peers {
        let uncontended = serde_json::json!({ "iterations": settings.iterations });
        let contended = serde_json::json!({
            "contenders": settings.contenders,
            "seconds": settings.seconds,
            "critical_ms": settings.critical_ms,
        });
        if peer.library == "redis-semaphore" && settings.wants("semaphores") {
            outcomes.push(Outcome {
                library: "redis-semaphore".to_string(),
                scenario: "semaphore uncontended".to_string(),
                result: counted(
                    settings,
                    "redis-semaphore, semaphore uncontended",
                    measure(peer, url, "semaphore_uncontended", &uncontended, settings),
                )
                .await,
            });
        }
        if !(settings.wants("uncontended") || settings.wants("contended")) {
            continue;
        }
        outcomes.push(Outcome {
            library: peer.library.to_string(),
            scenario: "uncontended".to_string(),
            result: counted(
                settings,
                &format!("{}, uncontended", peer.library),
                measure(peer, url, "uncontended", &uncontended, settings),
            )
            .await,
        });
        outcomes.push(Outcome {
            library: peer.library.to_string(),
            scenario: contended_name(settings.contenders, settings.contenders),
            result: counted(
                settings,
                &format!("{}, contended", peer.library),
                measure(peer, url, "contended", &contended, settings),
            )
            .await,
        });
    }
    outcomes
}

async fn measure(
    peer: &Peer,
    url: &str,
    scenario: &str,
    params: &serde_json::Value,
    settings: &Settings,
) -> Result<Measured, String> {
    let program = peer.program.clone()?;
    let mut command = tokio::process::Command::new(&program[0]);
    command
        .args(&program[1..])
        .args([url, scenario, &params.to_string()]);
    if let Some(modules) = &peer.node_modules {
        command.env("REDLUA_BENCH_NODE_MODULES", modules);
    }
    let before = commands_so_far(url).await;
    let output = command.output().await.map_err(|e| e.to_string())?;
    let after = commands_so_far(url).await;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "{} {scenario} failed: {}",
            peer.library,
            stderr.lines().last().unwrap_or("")
        ));
    }
    let reply: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("bad output: {e}"))?;
    if scenario.ends_with("uncontended") {
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or("no `seconds` in the output")?;
        // The warm-up's 50 pairs count in the commands; they are few.
        return Ok(Measured {
            per_second: settings.iterations as f64 / seconds,
            commands_per_acquisition: per_op(before, after, settings.iterations + 50),
            client_commands_per_acquisition: None,
            steady: None,
            acquisitions: settings.iterations + 50,
            contention: None,
            figures: Vec::new(),
        });
    }
    let events: Vec<Event> = reply["events"]
        .as_array()
        .ok_or("no `events` in the output")?
        .iter()
        .filter_map(|e| Some((e[0].as_u64()? as usize, e[1].as_f64()?, e[2].as_f64()?)))
        .collect();
    let (per_second, contention) = contention(&events, settings.contenders, settings.seconds);
    Ok(Measured {
        per_second,
        commands_per_acquisition: per_op(before, after, events.len()),
        client_commands_per_acquisition: None,
        steady: None,
        acquisitions: events.len(),
        contention: Some(contention),
        figures: Vec::new(),
    })
}
