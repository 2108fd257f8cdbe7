//! The results: a table for the terminal, JSON, and an SVG plot.

use crate::Settings;
use crate::metrics::{Outcome, percentile};
use crate::scenarios::CURRENT_THREAD;
use std::fmt::Write as _;
use std::path::Path;

/// The machine the numbers come from.
pub struct Machine {
    pub cores: usize,
    pub redis_version: String,
}

fn number(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// The results as Markdown tables (what `bench/README.md` shows):
/// throughput, the libraries side by side, then the figures of the other
/// scenarios.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut out = throughput_table(outcomes);
    out.push_str(&side_by_side(outcomes));
    let figures: Vec<_> = outcomes
        .iter()
        .filter_map(|o| Some((o, o.result.as_ref().ok()?)))
        .filter(|(_, m)| !m.figures.is_empty())
        .collect();
    if !figures.is_empty() {
        out.push_str("\n| library | scenario | figure | value |\n| --- | --- | --- | ---: |\n");
        for (outcome, measured) in figures {
            for figure in &measured.figures {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {}{} |",
                    outcome.library,
                    outcome.scenario,
                    figure.name,
                    number(figure.value),
                    if figure.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", figure.unit)
                    },
                );
            }
        }
    }
    out
}

/// The scenarios every library ran, compared within this one run: each
/// library's lock + unlock pairs (or acquisitions) per second over
/// redlua's. Ratios of one run only: the machine's speed moves all the
/// libraries of a run alike, not those of different runs. The peers run on
/// one thread each; the figures of the current-thread copy of the bench
/// are left out.
fn side_by_side(outcomes: &[Outcome]) -> String {
    const BASELINE: &str = "redlua";
    let mut out = String::new();
    for scenario in SHARED_SCENARIOS {
        let runs: Vec<(&str, f64)> = outcomes
            .iter()
            .filter(|o| o.scenario == scenario && !o.library.ends_with(CURRENT_THREAD))
            .filter_map(|o| Some((o.library.as_str(), o.result.as_ref().ok()?.per_second)))
            .filter(|(_, per_second)| *per_second > 0.0)
            .collect();
        let Some(&(_, baseline)) = runs.iter().find(|(library, _)| *library == BASELINE) else {
            continue;
        };
        if runs.len() < 2 {
            continue;
        }
        let _ = write!(
            out,
            "\n| {scenario} | ops/s | {BASELINE} / library |\n| --- | ---: | ---: |\n"
        );
        for (library, per_second) in runs {
            let _ = writeln!(
                out,
                "| {library} | {} | {:.2} |",
                number(per_second),
                baseline / per_second
            );
        }
    }
    out
}

/// The scenarios that the peers run too.
const SHARED_SCENARIOS: [&str; 2] = ["uncontended", "8 contenders, 8 clients"];

/// The throughput scenarios' table.
fn throughput_table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| library | scenario | ops/s | client cmds/acq | server cmds/acq | utilization | handoff p50 ms | handoff p99 ms | fairness (min/mean) |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for outcome in outcomes {
        let _ = match &outcome.result {
            Ok(m) if m.per_second == 0.0 && m.contention.is_none() => Ok(()),
            Ok(m) => {
                let commands = m.commands_per_acquisition.map_or("-".into(), number);
                let client = m.client_commands_per_acquisition.map_or("-".into(), number);
                let (util, p50, p99, fair) = match &m.contention {
                    Some(c) => (
                        number(c.utilization),
                        number(c.handoff_p50_ms),
                        number(c.handoff_p99_ms),
                        number(c.fairness),
                    ),
                    None => ("-".into(), "-".into(), "-".into(), "-".into()),
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {client} | {commands} | {util} | {p50} | {p99} | {fair} |",
                    outcome.library,
                    outcome.scenario,
                    number(m.per_second)
                )
            }
            Err(why) => writeln!(
                out,
                "| {} | {} | not measured: {why} | | | | | | |",
                outcome.library, outcome.scenario
            ),
        };
    }
    out
}

/// Writes `latest.json` and `latest.svg` into `dir`.
pub fn write(
    dir: &Path,
    machine: &Machine,
    settings: &Settings,
    outcomes: &[Outcome],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let results: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| match &o.result {
            Ok(m) => serde_json::json!({
                "library": o.library,
                "scenario": o.scenario,
                "per_second": m.per_second,
                "commands_per_acquisition": m.commands_per_acquisition,
                "client_commands_per_acquisition": m.client_commands_per_acquisition,
                "contention": m.contention.as_ref().map(|c| serde_json::json!({
                    "utilization": c.utilization,
                    "handoff_p50_ms": c.handoff_p50_ms,
                    "handoff_p99_ms": c.handoff_p99_ms,
                    "fairness": c.fairness,
                    "handoffs": c.handoffs_ms.len(),
                })),
                "figures": m.figures.iter().map(|f| serde_json::json!({
                    "name": f.name, "value": f.value, "unit": f.unit,
                })).collect::<Vec<_>>(),
            }),
            Err(why) => serde_json::json!({
                "library": o.library, "scenario": o.scenario, "error": why,
            }),
        })
        .collect();
    let json = serde_json::json!({
        "machine": { "cores": machine.cores, "redis_version": machine.redis_version },
        "settings": {
            "iterations": settings.iterations,
            "seconds": settings.seconds,
            "contenders": settings.contenders,
            "critical_ms": settings.critical_ms,
            "lease_ms": 30_000,
        },
        "results": results,
    });
    std::fs::write(
        dir.join("latest.json"),
        serde_json::to_string_pretty(&json).unwrap_or_default() + "\n",
    )?;
    std::fs::write(dir.join("latest.svg"), svg(machine, settings, outcomes))
}

/// Two panels: uncontended lock + unlock pairs per second, and the handoff
/// latency distribution (p10..p99) of each contended run.
fn svg(machine: &Machine, settings: &Settings, outcomes: &[Outcome]) -> String {
    let bars: Vec<(String, f64)> = outcomes
        .iter()
        .filter(|o| o.scenario == "uncontended")
        .filter_map(|o| Some((o.library.clone(), o.result.as_ref().ok()?.per_second)))
        .collect();
    let spreads: Vec<(String, Vec<f64>)> = outcomes
        .iter()
        .filter_map(|o| {
            let c = o.result.as_ref().ok()?.contention.as_ref()?;
            Some((
                format!("{} — {}", o.library, o.scenario),
                c.handoffs_ms.clone(),
            ))
        })
        .collect();
    let width = 900.0;
    let row = 26.0;
    let top = 70.0;
    let left = 280.0;
    let plot = width - left - 40.0;
    let figures: Vec<String> = outcomes
        .iter()
        .filter_map(|o| Some((o, o.result.as_ref().ok()?)))
        .flat_map(|(o, m)| {
            m.figures.iter().map(move |f| {
                escape(&format!(
                    "{} — {}: {} {}{}",
                    o.library,
                    o.scenario,
                    f.name,
                    number(f.value),
                    if f.unit.is_empty() { "" } else { " " }.to_string() + f.unit,
                ))
            })
        })
        .collect();
    let figures_height = if figures.is_empty() {
        0.0
    } else {
        40.0 + 16.0 * figures.len() as f64
    };
    let height = top + row * (bars.len() + spreads.len()) as f64 + 120.0 + figures_height;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"15\">redlua benchmark — {} cores, redis-server {}, {} contenders, {} ms critical section, 30 s leases</text>\n",
        machine.cores, machine.redis_version, settings.contenders, settings.critical_ms
    );
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"{}\" font-size=\"13\">Uncontended lock + unlock pairs per second</text>",
        top - 12.0
    );
    let max = bars.iter().map(|b| b.1).fold(1.0, f64::max);
    let mut y = top;
    for (label, value) in &bars {
        let w = plot * value / max;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>",
            left - 8.0,
            y + 15.0
        );
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"{w:.1}\" height=\"18\" fill=\"#4e79a7\"/>",
            y + 2.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\">{value:.0}</text>",
            left + w + 4.0,
            y + 15.0
        );
        y += row;
    }
    y += 40.0;
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"{}\" font-size=\"13\">Handoff latency, ms (box p25–p75, whiskers p10–p99, line p50; log scale 0.01–1000)</text>",
        y - 12.0
    );
    let scale = |ms: f64| left + plot * ((ms.max(0.01).log10() + 2.0) / 5.0).clamp(0.0, 1.0);
    for (label, values) in &spreads {
        let q = |p| percentile(values, p);
        let mid = y + 11.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>",
            left - 8.0,
            y + 15.0
        );
        if !values.is_empty() {
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{mid}\" y2=\"{mid}\" stroke=\"#555\"/>",
                scale(q(0.10)),
                scale(q(0.99))
            );
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"16\" fill=\"#f28e2b\"/>",
                scale(q(0.25)),
                y + 3.0,
                (scale(q(0.75)) - scale(q(0.25))).max(1.0)
            );
            let _ = writeln!(
                s,
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"black\" stroke-width=\"2\"/>",
                scale(q(0.50)),
                y + 3.0,
                y + 19.0
            );
        }
        y += row;
    }
    for ms in [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0] {
        let x = scale(ms);
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#ccc\"/>",
            y,
            y + 6.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{ms}</text>",
            y + 20.0
        );
    }
    if !figures.is_empty() {
        y += 60.0;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{y}\" font-size=\"13\">Other scenarios</text>"
        );
        for line in &figures {
            y += 16.0;
            let _ = writeln!(s, "<text x=\"20\" y=\"{y}\">{line}</text>");
        }
    }
    s.push_str("</svg>\n");
    s
}

/// `text` made safe inside an SVG text element.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
