//! The locks' metrics as Prometheus scrapes them, through
//! `metrics-exporter-prometheus` given redlua's buckets: each metric's kind
//! (the acquire wait a histogram with the documented buckets, counters,
//! the gauge), every series there at zero as soon as a client connects,
//! and every metric the Grafana dashboard (docs/grafana/redlua.json)
//! queries present. A real redis-server serves the locks.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use redlua::LockClient;
use redlua::observability::{ACQUIRE_WAIT_BUCKETS, metric_names};
use std::collections::BTreeMap;
use std::path::Path;

/// The exporter, installed once as the process's recorder, as a program
/// installs it.
fn exporter() -> PrometheusHandle {
    PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(metric_names::ACQUIRE_WAIT_SECONDS.to_string()),
            ACQUIRE_WAIT_BUCKETS,
        )
        .expect("buckets")
        .install_recorder()
        .expect("the only recorder of this test binary")
}

/// The `# TYPE` of every metric in an exposition.
fn types(exposition: &str) -> BTreeMap<String, String> {
    exposition
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .map(|rest| {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            (name.to_string(), kind.to_string())
        })
        .collect()
}

/// The value of the sample `series` (name and labels, as exported).
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().expect("a number"))
    })
}

/// The `redlua_*` metric names of every `expr` of a Grafana dashboard.
fn queried(dashboard: &serde_json::Value, out: &mut Vec<String>) {
    match dashboard {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                if key == "expr"
                    && let Some(expr) = value.as_str()
                {
                    let mut rest = expr;
                    while let Some(at) = rest.find("redlua_") {
                        let name: String = rest[at..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        rest = &rest[at + name.len()..];
                        out.push(name);
                    }
                }
                queried(value, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| queried(item, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_exporter_shows_each_metric_with_its_kind_and_the_dashboard_queries_only_those() {
    let handle = exporter();
    let server = redlua_test_support::RedisServer::start();
    let client = LockClient::connect(server.url()).await.expect("connect");

    // Connected, nothing done yet: every counter and the gauge are there,
    // at zero, with their kinds.
    let before = handle.render();
    let kinds = types(&before);
    for counter in [
        metric_names::RELEASES,
        metric_names::RENEWALS,
        metric_names::RENEWAL_FAILURES,
        metric_names::LOCKS_LOST,
        metric_names::WAKEUPS,
        metric_names::RECONNECTS,
    ] {
        assert_eq!(
            kinds.get(counter).map(String::as_str),
            Some("counter"),
            "{counter}: {before}"
        );
    }
    assert_eq!(
        kinds.get(metric_names::HOLDS).map(String::as_str),
        Some("gauge"),
        "{before}"
    );
    assert_eq!(
        sample(&before, "redlua_renewal_failures_total"),
        Some(0.0),
        "{before}"
    );
    assert_eq!(
        sample(&before, "redlua_locks_lost_total"),
        Some(0.0),
        "{before}"
    );
    assert_eq!(sample(&before, "redlua_holds"), Some(0.0), "{before}");
    assert_eq!(
        sample(
            &before,
            r#"redlua_releases_total{kind="fair",outcome="not_held"}"#
        ),
        Some(0.0),
        "{before}"
    );
    assert_eq!(
        sample(&before, r#"redlua_reconnects_total{connection="pubsub"}"#),
        Some(0.0),
        "{before}"
    );
    assert!(
        before.contains("# HELP redlua_renewal_failures_total "),
        "{before}"
    );

    // One acquire and release: the wait is a histogram with the documented
    // buckets, not a summary.
    let guard = client.lock("prom:a").lock().await.expect("lock");
    assert_eq!(sample(&handle.render(), "redlua_holds"), Some(1.0));
    guard.unlock().await.expect("unlock");
    let after = handle.render();
    let kinds = types(&after);
    assert_eq!(
        kinds
            .get(metric_names::ACQUIRE_WAIT_SECONDS)
            .map(String::as_str),
        Some("histogram"),
        "{after}"
    );
    let series = r#"redlua_acquire_wait_seconds_bucket{kind="reentrant",outcome="acquired",le=""#;
    let bounds: Vec<String> = after
        .lines()
        .filter_map(|line| line.strip_prefix(series))
        .map(|rest| rest.split('"').next().expect("le").to_string())
        .collect();
    let mut expected: Vec<String> = ACQUIRE_WAIT_BUCKETS.iter().map(f64::to_string).collect();
    expected.push("+Inf".to_string());
    assert_eq!(bounds, expected, "{after}");
    assert_eq!(
        sample(
            &after,
            r#"redlua_acquire_wait_seconds_count{kind="reentrant",outcome="acquired"}"#
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            r#"redlua_releases_total{kind="reentrant",outcome="freed"}"#
        ),
        Some(1.0),
        "{after}"
    );

    // The dashboard queries only what the exporter shows (a histogram's
    // series are its `_bucket`, `_sum` and `_count`), and every metric.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana/redlua.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the dashboard"))
            .expect("the dashboard is JSON");
    let mut names = Vec::new();
    queried(&dashboard, &mut names);
    assert!(!names.is_empty(), "no queries in {}", path.display());
    for name in &names {
        let exported = match kinds.get(name.as_str()) {
            Some(_) => true,
            None => ["_bucket", "_sum", "_count"].iter().any(|suffix| {
                name.strip_suffix(suffix)
                    .is_some_and(|base| kinds.get(base).map(String::as_str) == Some("histogram"))
            }),
        };
        assert!(
            exported,
            "the dashboard queries `{name}`, which the exporter does not show"
        );
    }
    for metric in kinds.keys().filter(|name| name.starts_with("redlua_")) {
        assert!(
            names.iter().any(|name| name.starts_with(metric.as_str())),
            "the dashboard shows nothing of `{metric}`"
        );
    }
}
