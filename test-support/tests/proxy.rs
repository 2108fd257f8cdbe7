//! `FaultProxy` against a real redis-server, with blocking redis-rs
//! connections.

use std::thread;
use std::time::{Duration, Instant};

use redlua_test_support::{FaultProxy, RedisServer};

/// Read timeout of connections expected to hang.
const HANG: Duration = Duration::from_millis(300);

fn connect(url: &str) -> redis::RedisResult<redis::Connection> {
    redis::Client::open(url)?.get_connection_with_timeout(Duration::from_secs(2))
}

fn ping(con: &mut redis::Connection) -> redis::RedisResult<String> {
    redis::cmd("PING").query(con)
}

fn get(con: &mut redis::Connection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

/// Polls `cond` every 10 ms for up to 2 s.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn passes_commands_through() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    assert_eq!(proxy.url(), format!("redis://127.0.0.1:{}/", proxy.port()));
    assert_ne!(proxy.port(), server.port());
    let mut con = connect(&proxy.url()).unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
    assert_eq!(get(&mut con, "k").as_deref(), Some("v"));
    // A value larger than one read chunk, both ways.
    let big = "x".repeat(200_000);
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query(&mut con)
        .unwrap();
    assert_eq!(get(&mut con, "big").as_deref(), Some(big.as_str()));
    assert_eq!(get(&mut server.connection(), "k").as_deref(), Some("v"));
    assert_eq!(proxy.connections(), 1);
    assert_eq!(proxy.accepted(), 1);
    drop(con);
    eventually("the closed connection is gone", || proxy.connections() == 0);
    assert_eq!(proxy.accepted(), 1);
}

#[test]
fn delay_adds_latency_both_ways() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let mut con = connect(&proxy.url()).unwrap();
    proxy.set_delay(Duration::from_millis(100));
    let start = Instant::now();
    assert_eq!(ping(&mut con).unwrap(), "PONG");
    let took = start.elapsed();
    // The request and the reply are each delayed.
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(2),
        "{took:?}"
    );
    proxy.set_delay(Duration::ZERO);
    let start = Instant::now();
    assert_eq!(ping(&mut con).unwrap(), "PONG");
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn stall_holds_bytes_until_resume() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let mut con = connect(&proxy.url()).unwrap();
    con.set_read_timeout(Some(HANG)).unwrap();
    proxy.stall();
    let start = Instant::now();
    let err = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query::<()>(&mut con)
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(start.elapsed() >= HANG, "{:?}", start.elapsed());
    // New connections are accepted but cannot even finish their setup.
    assert!(
        redis::Client::open(proxy.url())
            .unwrap()
            .get_connection_with_timeout(HANG)
            .is_err()
    );
    assert_eq!(proxy.accepted(), 2);
    // Nothing reached the server.
    let mut direct = server.connection();
    assert_eq!(get(&mut direct, "k"), None);

    proxy.resume();
    eventually("the held SET is executed", || {
        get(&mut direct, "k").as_deref() == Some("v")
    });
    let mut fresh = connect(&proxy.url()).unwrap();
    assert_eq!(ping(&mut fresh).unwrap(), "PONG");
    // The stalled connection stayed open (redis-rs skips the late reply of
    // the SET that timed out).
    assert_eq!(ping(&mut con).unwrap(), "PONG");
}

#[test]
fn resume_dropping_discards_held_bytes_and_closes() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let mut con = connect(&proxy.url()).unwrap();
    con.set_read_timeout(Some(HANG)).unwrap();
    proxy.stall();
    let err = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query::<()>(&mut con)
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(proxy.connections(), 1);

    proxy.resume_dropping();
    assert_eq!(proxy.connections(), 0);
    let err = ping(&mut con).unwrap_err();
    assert!(!err.is_timeout(), "the connection should be closed: {err}");
    let mut fresh = connect(&proxy.url()).unwrap();
    assert_eq!(ping(&mut fresh).unwrap(), "PONG");
    thread::sleep(Duration::from_millis(100));
    assert_eq!(get(&mut server.connection(), "k"), None);
}

#[test]
fn cut_closes_current_connections_only() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let mut a = connect(&proxy.url()).unwrap();
    let mut b = connect(&proxy.url()).unwrap();
    assert_eq!(ping(&mut a).unwrap(), "PONG");
    assert_eq!(proxy.connections(), 2);
    a.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();

    proxy.cut();
    assert_eq!(proxy.connections(), 0);
    for con in [&mut a, &mut b] {
        let err = ping(con).unwrap_err();
        assert!(
            !err.is_timeout(),
            "should fail at once, not time out: {err}"
        );
    }
    let mut fresh = connect(&proxy.url()).unwrap();
    assert_eq!(ping(&mut fresh).unwrap(), "PONG");
    assert_eq!(proxy.connections(), 1);
    assert_eq!(proxy.accepted(), 3);
    // The server saw the cut connections go away.
    eventually("the server has one client left", || {
        let clients: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query(&mut server.connection())
            .unwrap();
        // That one and the one asking.
        clients.lines().count() == 2
    });
}

#[test]
fn refuse_closes_new_connections() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let mut old = connect(&proxy.url()).unwrap();
    proxy.refuse(true);
    let refused = connect(&proxy.url()).and_then(|mut con| ping(&mut con));
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(proxy.accepted(), 2);
    assert_eq!(
        ping(&mut old).unwrap(),
        "PONG",
        "current connections live on"
    );
    proxy.refuse(false);
    let mut con = connect(&proxy.url()).unwrap();
    assert_eq!(ping(&mut con).unwrap(), "PONG");
    assert_eq!(proxy.accepted(), 3);
}

#[test]
fn unreachable_target_closes_connections() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    drop(server);
    let result = connect(&proxy.url()).and_then(|mut con| ping(&mut con));
    assert!(result.is_err(), "{result:?}");
    assert_eq!(proxy.accepted(), 1);
    assert_eq!(proxy.connections(), 0);
}

#[test]
fn drop_closes_connections_and_the_port() {
    let server = RedisServer::start();
    let proxy = FaultProxy::start(server.port());
    let url = proxy.url();
    let mut con = connect(&url).unwrap();
    con.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    proxy.stall();
    let start = Instant::now();
    drop(proxy);
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let err = ping(&mut con).unwrap_err();
    assert!(!err.is_timeout(), "should be closed: {err}");
    assert!(connect(&url).is_err(), "nothing should listen any more");
}
