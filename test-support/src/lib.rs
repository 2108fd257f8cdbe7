//! Test helpers of redlua: throwaway `redis-server` processes.
//!
//! [`RedisServer::start`] spawns a private `redis-server` on a free loopback
//! port with its own temporary directory and no persistence, waits until it
//! answers `PING`, and kills it when dropped. [`RedisCluster::start`] does the
//! same for a cluster of several primaries with all 16384 slots assigned.
//!
//! For fault tests, a server can be [paused](RedisServer::pause) (a hung
//! process) and [restarted](RedisServer::restart) on the same port, and a
//! [`FaultProxy`] placed between clients and a server injects network faults:
//! latency, a black-holed link, cut connections, refused connections.
//!
//! The binary is taken from the `REDIS_SERVER_BIN` environment variable, or
//! else looked up as `redis-server` on `PATH`. When it cannot be found, the
//! helpers panic with a message saying how to install it: tests that need
//! Redis fail loudly instead of being skipped.
//!
//! These helpers panic on failure, which is what a test wants; they are not
//! meant for production code.
#![warn(missing_docs)]

mod at_exit;
mod binary;
mod cluster;
mod proxy;
mod sentinel;
mod server;
mod tls;

pub use binary::{REDIS_SERVER_BIN_ENV, find_redis_server, redis_server_bin};
pub use cluster::RedisCluster;
pub use proxy::FaultProxy;
pub use sentinel::RedisSentinel;
pub use server::RedisServer;
pub use tls::{Issued, TestCa};

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn server_starts_answers_and_dies_on_drop() {
        let server = RedisServer::start();
        assert_eq!(
            server.url(),
            format!("redis://127.0.0.1:{}/", server.port())
        );
        assert_ne!(server.port(), 6379);
        let mut con = server.connection();
        let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
        let v: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
        assert_eq!(v, "v");
        let save: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("save")
            .query(&mut con)
            .unwrap();
        assert_eq!(save, ["save", ""]);
        let dir: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("dir")
            .query(&mut con)
            .unwrap();
        assert_eq!(
            std::fs::canonicalize(&dir[1]).unwrap(),
            std::fs::canonicalize(server.dir()).unwrap()
        );
        let path = server.dir().to_owned();
        let port = server.port();
        drop(con);
        drop(server);
        assert!(!path.exists(), "temporary directory should be removed");
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        assert!(
            client
                .get_connection_with_timeout(Duration::from_millis(500))
                .is_err(),
            "server should be gone after drop"
        );
    }

    #[test]
    fn servers_get_distinct_ports_and_extra_config() {
        let a = RedisServer::start();
        let b = RedisServer::start_with(["--maxmemory", "10mb", "--databases", "3"]);
        assert_ne!(a.port(), b.port());
        let mut con = b.connection();
        let maxmemory: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory")
            .query(&mut con)
            .unwrap();
        assert_eq!(maxmemory, ["maxmemory", "10485760"]);
        let err = redis::cmd("SELECT")
            .arg(3)
            .query::<()>(&mut con)
            .unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    #[test]
    fn bad_config_panics_with_the_log() {
        let panic = std::panic::catch_unwind(|| RedisServer::start_with(["--no-such-option", "1"]))
            .expect_err("an unknown option must make the start fail");
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("exited early"), "{msg}");
        assert!(msg.contains("no-such-option"), "{msg}");
    }

    #[test]
    fn paused_server_hangs_until_resumed() {
        let server = RedisServer::start();
        let mut con = server.connection();
        con.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        server.pause();
        let start = Instant::now();
        let err = redis::cmd("PING").query::<String>(&mut con).unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(start.elapsed() >= Duration::from_millis(300));
        server.resume();
        let pong: String = redis::cmd("PING").query(&mut server.connection()).unwrap();
        assert_eq!(pong, "PONG");
        // redis-rs skips the late reply of the PING that timed out.
        let pong: String = redis::cmd("PING").query(&mut con).unwrap();
        assert_eq!(pong, "PONG");
        // A paused server still dies on drop.
        server.pause();
        let port = server.port();
        drop(server);
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        assert!(
            client
                .get_connection_with_timeout(Duration::from_millis(500))
                .is_err()
        );
    }

    #[test]
    fn restart_keeps_port_dir_and_args() {
        let mut server = RedisServer::start_with(["--appendonly", "yes", "--databases", "3"]);
        let (port, dir, pid) = (server.port(), server.dir().to_owned(), server.pid());
        let mut con = server.connection();
        let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
        server.restart();
        assert_eq!(server.port(), port);
        assert_eq!(server.dir(), dir);
        assert_ne!(server.pid(), pid);
        assert!(
            redis::cmd("PING").query::<String>(&mut con).is_err(),
            "old connections are broken"
        );
        let mut con = server.connection();
        let v: Option<String> = redis::cmd("GET").arg("k").query(&mut con).unwrap();
        assert_eq!(
            v.as_deref(),
            Some("v"),
            "the append-only file keeps the data"
        );
        let databases: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("databases")
            .query(&mut con)
            .unwrap();
        assert_eq!(databases, ["databases", "3"]);
    }

    #[test]
    fn restart_without_persistence_loses_data() {
        let mut server = RedisServer::start();
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query(&mut server.connection())
            .unwrap();
        // Restarting a paused server works too.
        server.pause();
        server.restart();
        let v: Option<String> = redis::cmd("GET")
            .arg("k")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(v, None);
    }

    #[test]
    fn a_tls_server_speaks_tls_only() {
        let ca = TestCa::new("redlua test CA");
        let cert = ca.issue("server", &["IP:127.0.0.1"]);
        let mut server = RedisServer::start_tls(&cert, ["--tls-auth-clients", "no"]);
        assert_eq!(
            server.url(),
            format!("rediss://127.0.0.1:{}/", server.port())
        );
        let plain = redis::Client::open(format!("redis://127.0.0.1:{}/", server.port())).unwrap();
        let ping = plain
            .get_connection_with_timeout(Duration::from_secs(2))
            .and_then(|mut con| redis::cmd("PING").query::<String>(&mut con));
        assert!(ping.is_err(), "a plain PING on the TLS port: {ping:?}");
        assert!(ca.cert_pem().starts_with(b"-----BEGIN CERTIFICATE-----"));
        assert!(cert.key_pem().starts_with(b"-----BEGIN PRIVATE KEY-----"));
        // A restart keeps TLS.
        server.restart();
        assert!(server.log().contains("Ready to accept connections"));
    }
}
