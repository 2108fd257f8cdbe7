//! A throwaway Redis Cluster, and the clean-up of nodes kept until the
//! process exits.

use crate::binary::redis_server_bin;
use crate::server::{Mode, RedisServer};
use crate::tls::Issued;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a cluster may take to report `cluster_state:ok` on every node.
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(30);
/// Number of hash slots of a Redis Cluster.
const CLUSTER_SLOTS: usize = 16384;

/// A throwaway Redis Cluster on free loopback ports, with all 16384 slots
/// assigned evenly: primaries only ([`start`](Self::start)), or primaries
/// with replicas ([`start_with_replicas`](Self::start_with_replicas)). Every
/// node is killed on drop.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` cluster-enabled servers, assigns the slots evenly
    /// (node `i` gets the `i`-th contiguous range), joins them with
    /// `CLUSTER MEET`, and waits until every node reports `cluster_state:ok`.
    ///
    /// # Panics
    ///
    /// When `masters` is 0, when a server fails to start (see
    /// [`RedisServer::start`]), or when the cluster does not become healthy
    /// in time (the message includes each node's `CLUSTER INFO`).
    pub fn start(masters: usize) -> RedisCluster {
        assert!(masters > 0, "a cluster needs at least one primary");
        let cluster = RedisCluster {
            nodes: Self::spawn_nodes(masters, None),
        };
        cluster.assign_slots_and_meet();
        cluster.wait_ok();
        cluster
    }

    /// As [`start`](Self::start), with nodes that also listen with TLS
    /// (`--tls-port`, presenting `cert` from a [`TestCa`](crate::TestCa)), their cluster
    /// bus over TLS (`--tls-cluster yes`), so that `CLUSTER SLOTS` and
    /// redirections name TLS ports to TLS clients. [`urls`](Self::urls)
    /// are still the plain ports (this crate speaks no TLS);
    /// [`tls_urls`](Self::tls_urls) the TLS ones.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_tls(masters: usize, cert: &Issued) -> RedisCluster {
        assert!(masters > 0, "a cluster needs at least one primary");
        let cluster = RedisCluster {
            nodes: Self::spawn_nodes(masters, Some(cert)),
        };
        cluster.assign_slots_and_meet();
        cluster.wait_ok();
        cluster
    }

    /// The TLS URLs of the nodes of a cluster made by
    /// [`start_tls`](Self::start_tls), in start order; empty for others.
    pub fn tls_urls(&self) -> Vec<String> {
        self.nodes.iter().filter_map(RedisServer::tls_url).collect()
    }

    /// Starts a cluster of `masters` primaries with `replicas` replicas
    /// each, made by `redis-cli --cluster create ... --cluster-replicas`
    /// (slots spread evenly), and waits until every node reports
    /// `cluster_state:ok` and every replica is in sync with its primary.
    /// Which node is a primary is up to `redis-cli` (and to failovers
    /// later): ask the nodes (`ROLE`), not their order.
    ///
    /// `redis-cli` is looked up next to `redis-server`, else on `PATH`.
    ///
    /// ```no_run
    /// let cluster = redlua_test_support::RedisCluster::start_with_replicas(3, 1);
    /// assert_eq!(cluster.nodes().len(), 6);
    /// ```
    ///
    /// # Panics
    ///
    /// When `masters` is below 3 (`redis-cli` refuses fewer), when a
    /// server fails to start, when `redis-cli` fails (its output is in the
    /// message), or when the cluster does not become healthy in time.
    pub fn start_with_replicas(masters: usize, replicas: usize) -> RedisCluster {
        assert!(masters >= 3, "redis-cli --cluster create needs 3 primaries");
        let cluster = RedisCluster {
            nodes: Self::spawn_nodes(masters * (1 + replicas), None),
        };
        let cli = redis_server_bin().with_file_name("redis-cli");
        let cli = if cli.is_file() {
            cli
        } else {
            PathBuf::from("redis-cli")
        };
        let output = Command::new(&cli)
            .arg("--cluster")
            .arg("create")
            .args(
                cluster
                    .nodes
                    .iter()
                    .map(|n| format!("127.0.0.1:{}", n.port())),
            )
            .arg("--cluster-replicas")
            .arg(replicas.to_string())
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", cli.display()));
        assert!(
            output.status.success(),
            "redis-cli --cluster create failed ({})\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        cluster.wait_ok();
        cluster.wait_replicas_in_sync(replicas);
        cluster
    }

    fn spawn_nodes(count: usize, tls: Option<&Issued>) -> Vec<RedisServer> {
        (0..count)
            .map(|_| {
                let extra: Vec<OsString> = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "5000",
                ]
                .iter()
                .map(OsString::from)
                .collect();
                let mode = match tls {
                    Some(cert) => Mode::AlsoTls(cert.clone(), 0),
                    None => Mode::Plain,
                };
                RedisServer::spawn(&extra, true, mode)
            })
            .collect()
    }

    /// Waits until every replica reports `master_link_status:up` and
    /// `master_sync_in_progress:0`.
    /// Waits until every replica is in sync with its primary, and every
    /// primary counts its `per_master` replicas `online` (a lock client in
    /// replica-synced mode waits for the replicas a primary counts online:
    /// one not yet counted would be waited for by no acquire).
    fn wait_replicas_in_sync(&self, per_master: usize) {
        let deadline = Instant::now() + CLUSTER_TIMEOUT;
        for node in &self.nodes {
            loop {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut node.connection())
                    .unwrap_or_else(|e| format!("INFO failed: {e}"));
                let online = info.matches("state=online").count();
                if (info.contains("role:master") && online == per_master)
                    || (info.contains("master_link_status:up")
                        && info.contains("master_sync_in_progress:0"))
                {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "replica {} not in sync within {CLUSTER_TIMEOUT:?}\n{info}",
                    node.url()
                );
                thread::sleep(Duration::from_millis(50));
            }
        }
    }

    fn assign_slots_and_meet(&self) {
        let n = self.nodes.len();
        for (i, node) in self.nodes.iter().enumerate() {
            let mut con = node.connection();
            // Distinct config epochs avoid a round of epoch collision handling.
            let epoch = i + 1;
            let _: () = redis::cmd("CLUSTER")
                .arg("SET-CONFIG-EPOCH")
                .arg(epoch)
                .query(&mut con)
                .unwrap_or_else(|e| panic!("CLUSTER SET-CONFIG-EPOCH on {}: {e}", node.url()));
            let first = i * CLUSTER_SLOTS / n;
            let end = (i + 1) * CLUSTER_SLOTS / n;
            let mut add = redis::cmd("CLUSTER");
            add.arg("ADDSLOTS");
            for slot in first..end {
                add.arg(slot);
            }
            let _: () = add
                .query(&mut con)
                .unwrap_or_else(|e| panic!("CLUSTER ADDSLOTS on {}: {e}", node.url()));
        }
        let mut first = self.nodes[0].connection();
        for node in &self.nodes[1..] {
            let _: () = redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port())
                .query(&mut first)
                .unwrap_or_else(|e| panic!("CLUSTER MEET {}: {e}", node.url()));
        }
    }

    fn wait_ok(&self) {
        let deadline = Instant::now() + CLUSTER_TIMEOUT;
        loop {
            let infos: Vec<String> = self
                .nodes
                .iter()
                .map(|node| {
                    redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query::<String>(&mut node.connection())
                        .unwrap_or_else(|e| format!("CLUSTER INFO failed: {e}"))
                })
                .collect();
            let known = format!("cluster_known_nodes:{}", self.nodes.len());
            if infos
                .iter()
                .all(|info| info.contains("cluster_state:ok") && info.contains(&known))
            {
                return;
            }
            if Instant::now() >= deadline {
                let report: Vec<String> = self
                    .nodes
                    .iter()
                    .zip(&infos)
                    .map(|(node, info)| format!("--- {} ---\n{info}", node.url()))
                    .collect();
                panic!(
                    "the cluster did not reach cluster_state:ok within {CLUSTER_TIMEOUT:?}\n{}",
                    report.join("\n")
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Keeps the cluster for the rest of the process and returns it, for a
    /// cluster shared by the tests of one binary (a `static` is never
    /// dropped): its nodes are killed and their directories removed when the
    /// process exits (an `atexit` handler), as a drop would.
    ///
    /// ```no_run
    /// use std::sync::OnceLock;
    /// use redlua_test_support::RedisCluster;
    /// static CLUSTER: OnceLock<&'static RedisCluster> = OnceLock::new();
    /// let cluster = *CLUSTER.get_or_init(|| RedisCluster::start(3).until_exit());
    /// # let _ = cluster;
    /// ```
    ///
    /// # Panics
    ///
    /// When the exit handler cannot be registered.
    pub fn until_exit(self) -> &'static RedisCluster {
        self.nodes.iter().for_each(RedisServer::kill_at_exit);
        Box::leak(Box::new(self))
    }

    /// The connection URLs of all nodes, in start order.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// The nodes, in start order (with [`start`](Self::start), node `i`
    /// owns the `i`-th slot range).
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// A redis-rs cluster client seeded with every node.
    ///
    /// # Panics
    ///
    /// Never in practice (the URLs are always valid).
    pub fn client(&self) -> redis::cluster::ClusterClient {
        redis::cluster::ClusterClient::new(self.urls()).expect("valid cluster URLs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_serves_keys_on_every_node() {
        let cluster = RedisCluster::start(3);
        assert_eq!(cluster.urls().len(), 3);
        for node in cluster.nodes() {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query(&mut node.connection())
                .unwrap();
            assert!(info.contains("cluster_state:ok"), "{info}");
            assert!(info.contains("cluster_slots_assigned:16384"), "{info}");
        }
        let mut con = cluster.client().get_connection().unwrap();
        // Slots: "a" = 15495 (node 2), "b" = 3300 (node 0), "c" = 7365 (node 1).
        for key in ["a", "b", "c"] {
            let _: () = redis::cmd("SET").arg(key).arg(key).query(&mut con).unwrap();
        }
        for (i, key) in ["b", "c", "a"].iter().enumerate() {
            let mut direct = cluster.nodes()[i].connection();
            let n: usize = redis::cmd("DBSIZE").query(&mut direct).unwrap();
            assert_eq!(n, 1, "node {i} should hold exactly `{key}`");
            let v: String = redis::cmd("GET").arg(*key).query(&mut direct).unwrap();
            assert_eq!(&v, key);
        }
    }
}
