//! A throwaway Redis Sentinel deployment: a master, its replicas, and
//! sentinels watching them, on free loopback ports, tuned for fast
//! failovers.

use crate::server::{acknowledges, pick_free_port};
use crate::{Issued, RedisServer};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::thread;
use std::time::{Duration, Instant};

/// How long a deployment may take to settle (sentinels that know each
/// other and the replicas, a master in charge, replicas in sync).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A master, `replicas` replicas of it and `sentinels` sentinels
/// monitoring them as the service [`SERVICE`](Self::SERVICE), with a
/// quorum of a majority of the sentinels, `down-after-milliseconds` 1000
/// and `failover-timeout` 5000. Every process is killed on drop (or at
/// exit, see [`until_exit`](Self::until_exit)).
///
/// Which server is the master changes with failovers: ask
/// [`master`](Self::master), not the order of [`servers`](Self::servers).
///
/// ```no_run
/// let deployment = redlua_test_support::RedisSentinel::start(1, 3);
/// let urls = deployment.sentinel_urls();
/// assert_eq!(urls.len(), 3);
/// let master = deployment.master();
/// let new = deployment.failover();
/// assert_ne!(new, master);
/// deployment.rejoin(master);
/// ```
#[derive(Debug)]
pub struct RedisSentinel {
    servers: Vec<RedisServer>,
    sentinels: Vec<RedisServer>,
    /// The sentinels' TLS ports, for [`start_tls`](Self::start_tls).
    sentinel_tls_ports: Vec<u16>,
}

impl RedisSentinel {
    /// The name of the service (the master) the sentinels monitor.
    pub const SERVICE: &'static str = "redlua";

    /// Starts the servers (the first one master, the others replicas of
    /// it) and the sentinels, and waits until the deployment is settled
    /// (see [`wait_settled`](Self::wait_settled)).
    ///
    /// # Panics
    ///
    /// When `sentinels` is 0, a process fails to start, or the deployment
    /// does not settle in time.
    pub fn start(replicas: usize, sentinels: usize) -> RedisSentinel {
        Self::start_with(replicas, sentinels, None)
    }

    /// As [`start`](Self::start), over TLS: every process also listens on
    /// a TLS port presenting `cert` (from a [`TestCa`](crate::TestCa)),
    /// replication and the sentinels' links go over TLS, so the sentinels
    /// name the master's TLS port. The helpers use the plain ports;
    /// clients take [`sentinel_tls_urls`](Self::sentinel_tls_urls).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_tls(replicas: usize, sentinels: usize, cert: &Issued) -> RedisSentinel {
        Self::start_with(replicas, sentinels, Some(cert))
    }

    fn start_with(replicas: usize, sentinels: usize, tls: Option<&Issued>) -> RedisSentinel {
        assert!(sentinels > 0, "a Sentinel deployment needs a sentinel");
        let data = |extra: &[String]| {
            let extra: Vec<OsString> = extra.iter().map(OsString::from).collect();
            match tls {
                Some(cert) => RedisServer::start_also_tls(cert, &extra),
                None => RedisServer::start_with(extra),
            }
        };
        let master = data(&[]);
        let master_port = master.tls_port().unwrap_or(master.port()).to_string();
        let mut servers = vec![master];
        for _ in 0..replicas {
            servers.push(data(&[
                "--replicaof".into(),
                "127.0.0.1".into(),
                master_port.clone(),
            ]));
        }
        let quorum = sentinels / 2 + 1;
        let service = Self::SERVICE;
        let conf = format!(
            "sentinel monitor {service} 127.0.0.1 {master_port} {quorum}\n\
             sentinel down-after-milliseconds {service} 1000\n\
             sentinel failover-timeout {service} 5000\n\
             sentinel parallel-syncs {service} 1\n"
        );
        let mut sentinel_tls_ports = Vec::new();
        let sentinels = (0..sentinels)
            .map(|_| {
                let extra: Vec<OsString> = match tls {
                    None => Vec::new(),
                    Some(cert) => {
                        let port = pick_free_port(false);
                        sentinel_tls_ports.push(port);
                        let port = port.to_string();
                        [
                            OsStr::new("--tls-port"),
                            OsStr::new(&port),
                            OsStr::new("--tls-cert-file"),
                            cert.cert.as_os_str(),
                            OsStr::new("--tls-key-file"),
                            cert.key.as_os_str(),
                            OsStr::new("--tls-ca-cert-file"),
                            cert.ca_cert.as_os_str(),
                            OsStr::new("--tls-auth-clients"),
                            OsStr::new("no"),
                            OsStr::new("--tls-replication"),
                            OsStr::new("yes"),
                        ]
                        .iter()
                        .map(|a| a.to_os_string())
                        .collect()
                    }
                };
                RedisServer::start_sentinel(conf.clone(), &extra)
            })
            .collect();
        let deployment = RedisSentinel {
            servers,
            sentinels,
            sentinel_tls_ports,
        };
        deployment.wait_settled();
        deployment
    }

    /// Keeps the deployment for the rest of the process and returns it,
    /// for one deployment shared by the tests of a binary: its processes
    /// are killed and their directories removed when the process exits.
    ///
    /// # Panics
    ///
    /// When the exit handler cannot be registered.
    pub fn until_exit(self) -> &'static RedisSentinel {
        self.servers
            .iter()
            .chain(&self.sentinels)
            .for_each(RedisServer::kill_at_exit);
        Box::leak(Box::new(self))
    }

    /// The URLs of the sentinels (`redis://127.0.0.1:<port>/`).
    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(RedisServer::url).collect()
    }

    /// The TLS URLs of the sentinels (`rediss://127.0.0.1:<port>/`) of a
    /// deployment made by [`start_tls`](Self::start_tls); empty otherwise.
    pub fn sentinel_tls_urls(&self) -> Vec<String> {
        self.sentinel_tls_ports
            .iter()
            .map(|port| format!("rediss://127.0.0.1:{port}/"))
            .collect()
    }

    /// The sentinel processes.
    pub fn sentinels(&self) -> &[RedisServer] {
        &self.sentinels
    }

    /// The data servers (master and replicas), in start order.
    pub fn servers(&self) -> &[RedisServer] {
        &self.servers
    }

    /// The index in [`servers`](Self::servers) of the master the first
    /// sentinel names.
    ///
    /// # Panics
    ///
    /// When the sentinel cannot be asked, or names an unknown server.
    pub fn master(&self) -> usize {
        let port = self.named_master(&self.sentinels[0]);
        self.servers
            .iter()
            .position(|s| replication_port(s) == port)
            .unwrap_or_else(|| panic!("the sentinels name an unknown master on port {port}"))
    }

    /// Fails over now (`SENTINEL FAILOVER`, asked of the first sentinel),
    /// waits until a replica was promoted and every sentinel names it
    /// ([`wait_new_master`](Self::wait_new_master)), and returns its index.
    /// The old master is still a master then: the sentinels make it a
    /// replica 8 s or more later, or [`rejoin`](Self::rejoin) at once.
    ///
    /// # Panics
    ///
    /// When the sentinel refuses, or the failover does not end in time.
    pub fn failover(&self) -> usize {
        let before = self.master();
        let mut con = self.sentinels[0].connection();
        let _: () = redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(Self::SERVICE)
            .query(&mut con)
            .unwrap_or_else(|e| panic!("SENTINEL FAILOVER: {e}"));
        self.wait_new_master(before)
    }

    /// Makes server `old`, a master that was replaced, a replica of the
    /// current master now (`REPLICAOF`), as the sentinels do some seconds
    /// later, and waits until the deployment is settled
    /// ([`wait_settled`](Self::wait_settled)). `old` must run (resume it
    /// first if it was paused). Harmless if it is a replica already.
    ///
    /// # Panics
    ///
    /// When `old` refuses, or the deployment does not settle in time.
    pub fn rejoin(&self, old: usize) {
        let master = self.master();
        if master != old && role(&self.servers[old]).first().map(String::as_str) == Some("master") {
            let _: () = redis::cmd("REPLICAOF")
                .arg("127.0.0.1")
                .arg(replication_port(&self.servers[master]))
                .query(&mut self.servers[old].connection())
                .unwrap_or_else(|e| panic!("REPLICAOF on the old master: {e}"));
        }
        self.wait_settled();
    }

    /// Waits until every sentinel names a master other than server `old`
    /// and that server says it is a master (`ROLE`); the rest (the old
    /// master turned replica, replicas in sync) is
    /// [`wait_settled`](Self::wait_settled)'s. Returns the new master's
    /// index. Works while `old` is paused.
    ///
    /// # Panics
    ///
    /// When that does not happen in time.
    pub fn wait_new_master(&self, old: usize) -> usize {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        let old_port = replication_port(&self.servers[old]);
        loop {
            let ports: Vec<u16> = self
                .sentinels
                .iter()
                .map(|s| self.named_master(s))
                .collect();
            if ports.iter().all(|p| *p == ports[0] && *p != old_port)
                && let Some(new) = self
                    .servers
                    .iter()
                    .position(|s| replication_port(s) == ports[0])
                && role(&self.servers[new]).first().map(String::as_str) == Some("master")
            {
                return new;
            }
            assert!(
                Instant::now() < deadline,
                "no new master within {SETTLE_TIMEOUT:?}: the sentinels name ports {ports:?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until every sentinel names the same master, which says it is
    /// one (`ROLE`), knows the other sentinels and every other server as
    /// a replica not down, and every replica is in sync with the master.
    /// Every server must run (none paused).
    ///
    /// # Panics
    ///
    /// When that does not happen in time (the message says what is
    /// missing).
    pub fn wait_settled(&self) {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let missing = self.unsettled();
            let Some(missing) = missing else { return };
            assert!(
                Instant::now() < deadline,
                "the Sentinel deployment did not settle within {SETTLE_TIMEOUT:?}: {missing}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// What keeps the deployment from being settled, if anything.
    fn unsettled(&self) -> Option<String> {
        let ports: Vec<u16> = self
            .sentinels
            .iter()
            .map(|s| self.named_master(s))
            .collect();
        if ports.iter().any(|p| *p != ports[0]) {
            return Some(format!("the sentinels name different masters: {ports:?}"));
        }
        let master = self
            .servers
            .iter()
            .find(|s| replication_port(s) == ports[0])?;
        let role = role(master);
        if role.first().map(String::as_str) != Some("master") {
            return Some(format!("the named master says ROLE {role:?}"));
        }
        for sentinel in &self.sentinels {
            let mut con = sentinel.connection();
            let others: Vec<HashMap<String, String>> = redis::cmd("SENTINEL")
                .arg("SENTINELS")
                .arg(Self::SERVICE)
                .query(&mut con)
                .unwrap_or_default();
            if others.len() + 1 < self.sentinels.len() {
                return Some(format!(
                    "sentinel {} knows {} other sentinels",
                    sentinel.port(),
                    others.len()
                ));
            }
            let replicas: Vec<HashMap<String, String>> = redis::cmd("SENTINEL")
                .arg("REPLICAS")
                .arg(Self::SERVICE)
                .query(&mut con)
                .unwrap_or_default();
            let up = replicas
                .iter()
                .filter(|r| {
                    r.get("flags")
                        .is_some_and(|f| !f.contains("down") && !f.contains("disconnected"))
                        && r.get("master-link-status").is_some_and(|l| l == "ok")
                })
                .count();
            if up + 1 < self.servers.len() {
                return Some(format!(
                    "sentinel {} sees {up} replicas up: {replicas:?}",
                    sentinel.port()
                ));
            }
        }
        for server in &self.servers {
            if replication_port(server) == ports[0] {
                continue;
            }
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut server.connection())
                .unwrap_or_default();
            let synced = info.contains(&format!("master_port:{}", ports[0]))
                && info.contains("master_link_status:up")
                && info.contains("master_sync_in_progress:0");
            if !synced {
                return Some(format!("replica {} not in sync: {info}", server.port()));
            }
        }
        if !acknowledges(master, self.servers.len() - 1) {
            return Some("the replicas do not acknowledge writes (WAIT) yet".to_string());
        }
        None
    }

    /// The port of the master `sentinel` names.
    fn named_master(&self, sentinel: &RedisServer) -> u16 {
        let (_, port): (String, u16) = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(Self::SERVICE)
            .query(&mut sentinel.connection())
            .unwrap_or_else(|e| panic!("sentinel {}: {e}", sentinel.port()));
        port
    }
}

/// The port replicas and sentinels use for `server`: its TLS port in a
/// deployment over TLS.
fn replication_port(server: &RedisServer) -> u16 {
    server.tls_port().unwrap_or(server.port())
}

/// A server's `ROLE` reply, its first field as text.
fn role(server: &RedisServer) -> Vec<String> {
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query(&mut server.connection())
        .unwrap_or_default();
    role.into_iter()
        .take(1)
        .filter_map(|v| redis::from_redis_value::<String>(v).ok())
        .collect()
}
