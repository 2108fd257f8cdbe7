//! The replica counts synced writes go by: what `INFO` said about a
//! primary, when, and on which connection.
//!
//! One count at a time: tasks that need a count while one is asked wait
//! for its answer (cancellation-safe: the asker holds a lock its drop
//! releases, and the next waiter asks). When the `INFO` fails, those that
//! waited ask on their own at once (not one after another: a silent server
//! would cost each a whole response timeout), and the next task asks again.
//!
//! Clients of one process whose own connections go to one IP address (or
//! Unix socket) share their counts, kept under the address: two
//! connections open to it at the same moment reach the same server, and a
//! server restarted or replaced drops its connections, so a count is used
//! only on a connection opened before it was asked. (A proxy there that
//! sends simultaneous connections to different primaries would break
//! this, as it breaks the lock itself.) Other clients keep their counts,
//! checked against their connection's [`Epoch`]: a host name may resolve
//! elsewhere at each connect, Sentinel clients see failovers at different
//! moments, a cluster client counts per slot on its own view, and the
//! address behind a connection of the user's is not known.

use crate::base::mutex::locked;
use crate::transport::connection::{Connection, Deadline, Epoch};
use redis::{ConnectionAddr, RedisResult, Value};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Instant;

/// What a node said about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeInfo {
    /// It is a primary (`role:master`). A replica's answer means that the
    /// request was routed by a topology older than a failover: its count
    /// (a replica has no replicas) must never be used.
    pub primary: bool,
    /// Replicas connected and in sync (`state=online`).
    pub replicas: u32,
    /// It keeps an append-only file (`aof_enabled:1`; always `false` when
    /// only [`Sections::Replication`] was asked).
    pub aof: bool,
}

/// A cluster node's id (`CLUSTER MYID`): which node answered a request
/// that was routed by slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeId([u8; NodeId::LEN]);

impl NodeId {
    /// Node ids are 40 hexadecimal characters.
    const LEN: usize = 40;

    /// The command that asks a node its id.
    pub(crate) fn cmd() -> redis::Cmd {
        redis::cmd("CLUSTER").arg("MYID").clone()
    }

    /// Reads the reply to [`NodeId::cmd`].
    pub(crate) fn from_reply(reply: Option<Value>) -> RedisResult<NodeId> {
        let reply = reply.unwrap_or(Value::Nil).extract_error()?;
        let text: String = redis::from_redis_value(reply)?;
        let bytes: [u8; NodeId::LEN] = text.as_bytes().try_into().map_err(|_| {
            redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "redlua: CLUSTER MYID did not answer a node id",
                text.clone(),
            ))
        })?;
        Ok(NodeId(bytes))
    }
}

/// What a primary said about itself, when, and on which connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    /// The epoch of the connection it was asked on, read before asking.
    pub epoch: Epoch,
    pub info: NodeInfo,
    /// When it was asked (before the `INFO` was sent, on a connection
    /// already open).
    pub at: Instant,
    /// On a cluster, the node that answered: a script routed by slot later
    /// asks again which node runs it, and the count holds only there.
    pub node: Option<NodeId>,
}

/// The sections of `INFO` asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sections {
    /// `INFO replication`.
    Replication,
    /// `INFO replication persistence` (several sections at once: Redis 7+,
    /// as `WAITAOF` is, the only reason to ask).
    ReplicationAndPersistence,
}

impl Sections {
    fn cmd(self) -> redis::Cmd {
        let mut cmd = redis::cmd("INFO");
        cmd.arg("replication");
        if self == Sections::ReplicationAndPersistence {
            cmd.arg("persistence");
        }
        cmd
    }
}

/// Where a connection goes, when that cannot change from one connect to
/// the next: an IP address (not a host name) or a Unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Place {
    Ip { ip: IpAddr, port: u16, tls: bool },
    Unix(PathBuf),
}

impl Place {
    fn of(addr: &ConnectionAddr) -> Option<Place> {
        let (host, port, tls) = match addr {
            ConnectionAddr::Tcp(host, port) => (host, *port, false),
            ConnectionAddr::TcpTls { host, port, .. } => (host, *port, true),
            ConnectionAddr::Unix(path) => return Some(Place::Unix(path.clone())),
            _ => return None,
        };
        let ip = host.trim_start_matches('[').trim_end_matches(']').parse();
        Some(Place::Ip {
            ip: ip.ok()?,
            port,
            tls,
        })
    }
}

/// Whose counts they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// One client's: a count holds on a connection of the epoch it was
    /// asked in.
    Client,
    /// The process's, for one server: a count holds on a connection opened
    /// before it was asked.
    Process,
}

/// The counts of the primaries a client (or the clients of the process
/// that share a server) sends synced writes to, per slot on a cluster
/// (slot 0 on one server).
#[derive(Debug)]
pub(crate) struct ReplicaCounts {
    sections: Sections,
    scope: Scope,
    slots: Mutex<HashMap<u16, Arc<SlotCount>>>,
}

/// One slot's count, and the lock its askers take turns with.
#[derive(Debug, Default)]
struct SlotCount {
    counted: Mutex<Option<Counted>>,
    /// Asks that ended, with an answer or a failure.
    ended: AtomicU64,
    /// Held by the task that asks; the number of the last ask that ended
    /// (`ended`'s value after it), if it failed.
    asking: tokio::sync::Mutex<Option<u64>>,
}

/// The process's counts, by server and sections asked (a count without
/// the persistence section says nothing of the append-only file).
type Registry = HashMap<(Place, Sections), Weak<ReplicaCounts>>;

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

impl ReplicaCounts {
    /// A client's own counts.
    pub(crate) fn private(sections: Sections) -> ReplicaCounts {
        ReplicaCounts {
            sections,
            scope: Scope::Client,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The counts for a client that sends on `con`: the process's for its
    /// server when `con` is the client's own connection to one server at an
    /// IP address or Unix socket, else the client's own.
    pub(crate) fn for_connection(con: &Connection, sections: Sections) -> Arc<ReplicaCounts> {
        let Some(place) = con.server_addr().and_then(Place::of) else {
            return Arc::new(ReplicaCounts::private(sections));
        };
        let mut registry = locked(&REGISTRY);
        registry.retain(|_, counts| counts.strong_count() > 0);
        let key = (place, sections);
        if let Some(counts) = registry.get(&key).and_then(Weak::upgrade) {
            return counts;
        }
        let counts = Arc::new(ReplicaCounts {
            scope: Scope::Process,
            ..ReplicaCounts::private(sections)
        });
        registry.insert(key, Arc::downgrade(&counts));
        counts
    }

    /// Whether the clients of the process that go to this server share
    /// these counts.
    #[cfg(test)]
    fn is_shared(&self) -> bool {
        self.scope == Scope::Process
    }

    /// The count of the primary of `slot` that holds on `con` and is
    /// `usable`, asked if there is none: by this task, or by the one
    /// already asking (this task then waits for its answer).
    pub(crate) async fn get(
        &self,
        con: &mut Connection,
        slot: u16,
        usable: impl Fn(&Counted) -> bool,
    ) -> RedisResult<Counted> {
        let entry = self.slot(slot);
        let held = |con: &Connection| self.current(con, slot).filter(&usable);
        if let Some(counted) = held(con) {
            return Ok(counted);
        }
        let ended = entry.ended.load(Ordering::SeqCst);
        let mut asking = entry.asking.lock().await;
        if let Some(counted) = held(con) {
            return Ok(counted);
        }
        if asking.is_some_and(|failed| failed > ended) {
            // The ask this task waited for failed: ask alone, as the other
            // tasks that waited do.
            drop(asking);
            let counted = self.ask(con, slot).await?;
            self.keep(&entry, counted);
            return Ok(counted);
        }
        let answer = self.ask(con, slot).await;
        let number = entry.ended.fetch_add(1, Ordering::SeqCst) + 1;
        if let Ok(counted) = &answer {
            self.keep(&entry, *counted);
        }
        *asking = answer.is_err().then_some(number);
        answer
    }

    /// Forgets the count of `slot` if it is still `counted` (a count asked
    /// since stays).
    pub(crate) fn forget(&self, slot: u16, counted: &Counted) {
        let entry = self.slot(slot);
        let mut kept = locked(&entry.counted);
        if kept.as_ref() == Some(counted) {
            *kept = None;
        }
    }

    /// The count of the primary of `slot` that holds on `con`, if there is
    /// one (never asked here).
    pub(crate) fn current(&self, con: &Connection, slot: u16) -> Option<Counted> {
        locked(&self.slot(slot).counted).filter(|counted| self.holds_on(counted, con))
    }

    /// The count of `slot`, whether it holds or not.
    #[cfg(test)]
    pub(crate) fn peek(&self, slot: u16) -> Option<Counted> {
        *locked(&self.slot(slot).counted)
    }

    /// Keeps `counted` as the count of `slot`.
    #[cfg(test)]
    pub(crate) fn put(&self, slot: u16, counted: Counted) {
        self.keep(&self.slot(slot), counted);
    }

    /// Whether `counted` may be used for a request on `con`.
    fn holds_on(&self, counted: &Counted, con: &Connection) -> bool {
        match self.scope {
            Scope::Client => counted.epoch == con.epoch(),
            Scope::Process => con.opened_at().is_some_and(|opened| opened <= counted.at),
        }
    }

    /// Asks the primary of `slot` on `con`.
    async fn ask(&self, con: &mut Connection, slot: u16) -> RedisResult<Counted> {
        // Read before asking: a connection replaced meanwhile makes the
        // answer stale at once for this client, and it is asked again.
        let epoch = con.epoch();
        if self.scope == Scope::Process {
            // Open before the count's time: it holds on this connection.
            con.open().await?;
        }
        let at = Instant::now();
        // On a cluster, the node's id in the same pipeline, so on the same
        // node: which node the count is of.
        let cluster = con.is_cluster();
        let mut pipe = redis::pipe();
        if cluster {
            pipe.add_command(NodeId::cmd());
        }
        pipe.add_command(self.sections.cmd());
        let mut replies = con
            .pipeline_on_primary(&pipe, slot, Deadline::Response)
            .await?
            .into_iter();
        let node = if cluster {
            Some(NodeId::from_reply(replies.next())?)
        } else {
            None
        };
        let reply = replies.next().unwrap_or(Value::Nil).extract_error()?;
        let text: String = redis::from_redis_value(reply)?;
        let mut info = parse_info(&text);
        // A primary without replicas gets its lock scripts without `WAIT`:
        // one that was replaced by a failover (and not demoted yet) would
        // take them and lose them. Where the service can say which node is
        // the primary (Sentinel), it is asked.
        if info.primary && info.replicas == 0 && !con.confirm_primary().await? {
            info.primary = false;
        }
        Ok(Counted {
            epoch,
            info,
            at,
            node,
        })
    }

    /// Keeps `counted` unless a count asked later is kept already.
    fn keep(&self, entry: &SlotCount, counted: Counted) {
        let mut kept = locked(&entry.counted);
        if kept.is_none_or(|kept| kept.at <= counted.at) {
            *kept = Some(counted);
        }
    }

    fn slot(&self, slot: u16) -> Arc<SlotCount> {
        locked(&self.slots).entry(slot).or_default().clone()
    }
}

/// Reads `INFO replication` (and `persistence`): whether the node is a
/// primary, the replicas online, and whether the append-only file is on. A
/// reply without a `role` line is not taken for a primary's.
pub(crate) fn parse_info(text: &str) -> NodeInfo {
    let mut primary = false;
    let mut replicas = 0;
    let mut aof = false;
    for line in text.lines() {
        let line = line.trim();
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let replica_line = name
            .strip_prefix("slave")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if replica_line && value.split(',').any(|field| field == "state=online") {
            replicas += 1;
        } else if name == "aof_enabled" {
            aof = value == "1";
        } else if name == "role" {
            primary = value == "master";
        }
    }
    NodeInfo {
        primary,
        replicas,
        aof,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_counts_online_replicas_and_reads_the_aof_flag() {
        let text = "# Replication\r\nrole:master\r\nconnected_slaves:3\r\n\
            slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n\
            slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n\
            slave2:ip=127.0.0.1,port=7003,state=online,offset=42,lag=1\r\n\
            slave_read_repl_offset:0\r\nmaster_repl_offset:42\r\n\r\n\
            # Persistence\r\naof_enabled:1\r\n";
        assert_eq!(
            parse_info(text),
            NodeInfo {
                primary: true,
                replicas: 2,
                aof: true
            }
        );
        assert_eq!(
            parse_info("role:master\r\nconnected_slaves:0\r\n"),
            NodeInfo {
                primary: true,
                replicas: 0,
                aof: false
            }
        );
    }

    #[test]
    fn a_replicas_answer_or_one_without_a_role_is_not_a_primarys() {
        let replica = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n\
            master_port:7000\r\nmaster_link_status:up\r\nconnected_slaves:0\r\n";
        assert_eq!(
            parse_info(replica),
            NodeInfo {
                primary: false,
                replicas: 0,
                aof: false
            }
        );
        assert!(!parse_info("connected_slaves:0\r\n").primary);
        assert!(!parse_info("").primary);
    }

    #[test]
    fn node_ids_are_read_from_cluster_myid() {
        let id = "07c37dfeb235213a872192d90877d0cd55635b91";
        let read = NodeId::from_reply(Some(Value::BulkString(id.as_bytes().to_vec()))).unwrap();
        assert_eq!(read.0, *id.as_bytes());
        assert!(NodeId::from_reply(Some(Value::BulkString(b"short".to_vec()))).is_err());
        assert!(NodeId::from_reply(None).is_err());
        let refused = redis::parse_redis_value(b"-NOPERM no permission\r\n").unwrap();
        assert!(NodeId::from_reply(Some(refused)).is_err());
    }

    #[test]
    fn only_addresses_that_cannot_change_server_are_shared() {
        let tcp = |host: &str| Place::of(&ConnectionAddr::Tcp(host.to_string(), 6380));
        assert_eq!(
            tcp("127.0.0.1"),
            Some(Place::Ip {
                ip: [127, 0, 0, 1].into(),
                port: 6380,
                tls: false
            })
        );
        assert!(matches!(tcp("[::1]"), Some(Place::Ip { ip, .. }) if ip.is_loopback()));
        assert_eq!(tcp("localhost"), None);
        assert_eq!(tcp("redis.example.com"), None);
        let unix = ConnectionAddr::Unix("/run/redis.sock".into());
        assert_eq!(
            Place::of(&unix),
            Some(Place::Unix("/run/redis.sock".into()))
        );
        let cmd = |sections: Sections| {
            sections
                .cmd()
                .args_iter()
                .map(|arg| match arg {
                    redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    _ => "<cursor>".to_string(),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(cmd(Sections::Replication), ["INFO", "replication"]);
        assert_eq!(
            cmd(Sections::ReplicationAndPersistence),
            ["INFO", "replication", "persistence"]
        );
        assert!(!ReplicaCounts::private(Sections::Replication).is_shared());
    }

    #[test]
    fn a_count_is_forgotten_only_if_still_kept() {
        let counts = ReplicaCounts::private(Sections::Replication);
        let first = Counted {
            epoch: Epoch::default(),
            info: NodeInfo {
                primary: true,
                replicas: 1,
                aof: false,
            },
            at: Instant::now(),
            node: None,
        };
        let later = Counted {
            at: first.at + std::time::Duration::from_millis(1),
            ..first
        };
        counts.put(3, later);
        counts.put(3, first);
        assert_eq!(
            counts.peek(3),
            Some(later),
            "an older count does not replace a newer one"
        );
        counts.forget(3, &first);
        assert_eq!(counts.peek(3), Some(later), "asked since: it stays");
        counts.forget(3, &later);
        assert_eq!(counts.peek(3), None);
    }
}
