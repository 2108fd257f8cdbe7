//! The runner works: `tools/bench`'s binary, on one group, prints the
//! table's rows for that group with figures it measured (a throwaway
//! redis-server of its own; no peers).

use std::process::Command;

/// The rows of the bench's table for `library` and `scenario`.
fn rows<'a>(table: &'a str, library: &str, scenario: &str) -> Vec<Vec<&'a str>> {
    table
        .lines()
        .map(|line| line.split('|').map(str::trim).collect::<Vec<_>>())
        .filter(|cells| cells.len() > 3 && cells[1] == library && cells[2] == scenario)
        .collect()
}

#[test]
fn the_uncontended_group_measures_raw_scripts_and_redlua() {
    let output = Command::new(env!("CARGO_BIN_EXE_redlua-bench"))
        .args(["--quick", "--no-peers", "--only", "uncontended"])
        .output()
        .expect("running redlua-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "redlua-bench failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for library in [
        "raw EVALSHA",
        "redlua",
        "raw EVALSHA (current-thread runtime)",
        "redlua (current-thread runtime)",
    ] {
        let rows = rows(&stdout, library, "uncontended");
        assert_eq!(rows.len(), 1, "{library}:\n{stdout}");
        let per_second: f64 = rows[0][3].parse().expect("ops/s");
        assert!(per_second > 0.0, "{library}: {per_second}");
        // Server commands per lock + unlock: the two scripts' own calls,
        // counted by Redis (16 for the raw scripts, one more for redlua's
        // release, which also deletes a carried latch).
        let server: f64 = rows[0][5].parse().expect("server cmds/acq");
        let expected = if library.starts_with("raw") {
            16.0
        } else {
            17.0
        };
        assert!((server - expected).abs() < 0.5, "{library}: {server}");
    }
}

#[test]
fn the_editor_group_measures_the_language_servers_diagnostics_latency() {
    let output = Command::new(env!("CARGO_BIN_EXE_redlua-bench"))
        .args(["--quick", "--no-peers", "--only", "editor"])
        .output()
        .expect("running redlua-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "redlua-bench failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = rows(&stdout, "redlua-lsp", "editor, 5,000-line script");
    let figures: Vec<&str> = rows.iter().map(|row| row[3]).collect();
    assert_eq!(
        figures,
        [
            "diagnostics after opening",
            "diagnostics after an edit, median",
            "diagnostics after an edit, p90",
            "diagnostics after an edit, slowest",
            "load average (1 min) before the edits",
            "load average (1 min) after the edits"
        ],
        "{stdout}"
    );
    let mut times = Vec::new();
    for row in &rows {
        if row[3].starts_with("load average") {
            let load: f64 = row[4]
                .parse()
                .unwrap_or_else(|_| panic!("a load average: {row:?}"));
            assert!(load >= 0.0, "{row:?}");
            continue;
        }
        let ms: f64 = row[4]
            .strip_suffix(" ms")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a time in ms: {row:?}"));
        assert!(ms > 0.0, "{row:?}");
        times.push(ms);
    }
    // Opening, then the median, p90 and slowest of the edits: the three
    // edit figures are in order.
    assert!(times[1] <= times[2] && times[2] <= times[3], "{stdout}");
}

#[test]
fn the_semaphores_group_takes_one_round_trip_per_acquire_and_per_release() {
    let output = Command::new(env!("CARGO_BIN_EXE_redlua-bench"))
        .args(["--quick", "--no-peers", "--only", "semaphores"])
        .output()
        .expect("running redlua-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "redlua-bench failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for scenario in ["semaphore uncontended", "leased semaphore uncontended"] {
        for library in ["raw EVALSHA", "redlua"] {
            let rows = rows(&stdout, library, scenario);
            assert_eq!(rows.len(), 1, "{library}, {scenario}:\n{stdout}");
            let per_second: f64 = rows[0][3].parse().expect("ops/s");
            assert!(per_second > 0.0, "{library}, {scenario}: {per_second}");
            // Client commands per acquire + release pair, counted with
            // MONITOR: one script each, and a few hundredths of batched
            // latch deletions and periodic reads.
            let client: f64 = rows[0][4].parse().expect("client cmds/acq");
            assert!(
                (2.0..2.1).contains(&client),
                "{library}, {scenario}: {client} client commands per pair"
            );
        }
    }
    for library in ["redlua Semaphore", "redlua LeasedSemaphore"] {
        let rows = rows(&stdout, library, "16 contenders, 4 permits");
        // One throughput row, and the figures' rows.
        assert_eq!(rows.len(), 4, "{library}:\n{stdout}");
        let utilization = rows
            .iter()
            .find(|r| r[3].starts_with("utilization"))
            .expect("a utilization row");
        let percent: f64 = utilization[4]
            .trim_end_matches(" %")
            .parse()
            .expect("a percentage");
        assert!(percent > 30.0, "{library}: utilization {percent} %");
    }
}
