//! The locks' metrics exported for Prometheus: `metrics-exporter-prometheus`
//! serves `/metrics`; a few lock operations fill it; the example scrapes it
//! once, as Prometheus would, and prints redlua's series.
//!
//! ```sh
//! cargo run --example prometheus --features metrics            # a throwaway local redis-server
//! REDIS_URL=redis://127.0.0.1:6380/ METRICS_ADDR=127.0.0.1:9898 \
//!   cargo run --example prometheus --features metrics
//! ```
//!
//! The metrics (names in `redlua::observability::metric_names`) are recorded
//! through the `metrics` facade, so any recorder works; this one is
//! Prometheus's.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use redlua::LockClient;
use redlua::observability::{ACQUIRE_WAIT_BUCKETS, metric_names};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, _server) = redlua_test_support::RedisServer::from_env_or_start();
    let addr: SocketAddr = match std::env::var("METRICS_ADDR") {
        Ok(addr) => addr.parse()?,
        // A free port of the loopback interface.
        Err(_) => std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?,
    };
    // Serves http://<addr>/metrics on this runtime; acquire waits as a
    // histogram with redlua's buckets (1 ms to a minute) rather than a
    // summary.
    PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets_for_metric(
            Matcher::Full(metric_names::ACQUIRE_WAIT_SECONDS.to_string()),
            ACQUIRE_WAIT_BUCKETS,
        )?
        .install()?;

    let client = LockClient::builder(url.as_str())
        .watchdog_timeout(Duration::from_millis(900))
        .connect()
        .await?;
    let lock = client.lock("example:metrics");
    let guard = lock.lock().await?;
    // Busy, then a waiter woken by the release.
    let other = LockClient::connect(url.as_str()).await?;
    assert!(other.lock("example:metrics").try_lock().await?.is_none());
    let waiter = tokio::spawn(async move { other.lock("example:metrics").lock().await });
    tokio::time::sleep(Duration::from_millis(700)).await; // two renewal rounds
    guard.unlock().await?;
    waiter.await??.unlock().await?;

    println!("GET http://{addr}/metrics (redlua's series):\n");
    for line in scrape(addr).await?.lines() {
        if line.starts_with("redlua_") || line.starts_with("# TYPE redlua_") {
            println!("  {line}");
        }
    }
    Ok(())
}

/// What Prometheus would get from `/metrics`.
async fn scrape(addr: SocketAddr) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response)
}
