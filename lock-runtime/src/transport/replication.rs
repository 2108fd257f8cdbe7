//! Replica-synced writes: a lock script sent pipelined with `WAIT` (or
//! `WAITAOF`) on one connection to the primary that runs it, and the
//! replicas that acknowledged it counted.
//!
//! `WAIT n t` counts the replicas that acknowledged every earlier write *of
//! its connection*: sent after the script in one pipeline, to the node the
//! script ran on, it counts those that have the script's write (never too
//! many). A lone `WAIT` on a redis-rs cluster connection would go to every
//! primary instead.
//!
//! What the servers offer is probed once, at connect: a server that
//! refuses `WAIT` (a proxy, a managed service, an ACL) fails the connect
//! with [`Error::SyncUnavailable`] rather than dropping a safety setting
//! silently; `WAITAOF` (Redis 7.2) is used where it exists and the primary
//! keeps an append-only file. The replicas online are read from
//! `INFO replication` once per primary (per slot on a cluster), again when
//! an acknowledgement shows a change, the node's connection failed or the
//! client's own connection was replaced (a Sentinel failover), and every
//! second while there are none (their scripts then go without `WAIT`).
//! `replica_info.rs` keeps the counts.
//!
//! A `WAIT` blocks its connection until the replicas acknowledge or its
//! timeout passes, and the client's requests queued behind it wait too: a
//! synced pipeline on the client's own connection may take the response
//! timeout plus the sync timeout (by default at most half the response
//! timeout), so one lock operation can wait behind one whole `WAIT` and
//! still finish in time. One that waits longer fails as any reply that did
//! not come: the connection is replaced, an acquire undone, a renewal or
//! release retried.

use crate::base::error::{Error, Failure, classify};
use crate::base::names::slot;
use crate::base::sync_replicas::SyncReplicas;
use crate::protocol::replies::millis;
use crate::script::{ScriptCall, is_noscript};
use crate::transport::connection::{Connection, Deadline};
use crate::transport::replica_info::{Counted, NodeId, NodeInfo, ReplicaCounts, Sections};
use redis::{ErrorKind, FromRedisValue, RedisError, RedisResult, ServerErrorKind, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a script that met a redirection (`MOVED`, `ASK`) is sent
/// again before the call gives up with `TRYAGAIN` (which callers retry).
const REDIRECTS: u32 = 3;

/// The first pause before a script that met a redirection is sent again;
/// it doubles.
const REDIRECT_PAUSE: Duration = Duration::from_millis(25);

/// How a client syncs its lock writes to replicas.
#[derive(Debug)]
pub(crate) struct Replication {
    mode: SyncReplicas,
    timeout: Duration,
    /// The server has `WAITAOF` (probed at connect).
    waitaof: bool,
    /// What `INFO` said, per slot (see `replica_info.rs`).
    counts: Arc<ReplicaCounts>,
    cluster: bool,
}

/// How often the topology is read again after a replica answered for the
/// primary, before a lock write fails (with `TRYAGAIN`).
const STALE_TOPOLOGY_RETRIES: u32 = 4;

/// How often a primary counted without replicas is counted again; in
/// between, its lock scripts go without `WAIT`.
const RECOUNT_WITHOUT_REPLICAS: Duration = Duration::from_secs(1);

/// How many replicas acknowledged a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acked {
    /// Synced mode is off: nothing was asked.
    NotAsked,
    /// At least as many as wanted.
    Enough,
    /// Fewer than wanted within the sync timeout.
    Short {
        /// Replicas that acknowledged.
        acked: u32,
        /// Replicas wanted.
        wanted: u32,
    },
}

/// A script's reply, and how its write was acknowledged.
#[derive(Debug)]
pub(crate) struct Synced<T> {
    pub reply: T,
    pub acked: Acked,
}

/// The command that waits for the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitCommand {
    /// `WAIT <replicas> <ms>`: replicas that received the writes.
    Wait,
    /// `WAITAOF 1 <replicas> <ms>`: the primary and replicas that wrote
    /// them to their append-only files.
    WaitAof,
}

impl WaitCommand {
    /// The command for `wanted` replicas within `timeout`.
    pub(crate) fn cmd(self, wanted: u32, timeout: Duration) -> redis::Cmd {
        // WAIT's timeout 0 means forever; `millis` is at least 1.
        let ms = millis(timeout);
        match self {
            WaitCommand::Wait => redis::cmd("WAIT").arg(wanted).arg(ms).clone(),
            WaitCommand::WaitAof => redis::cmd("WAITAOF").arg(1).arg(wanted).arg(ms).clone(),
        }
    }

    /// The replicas its reply counts (`WAITAOF`: none unless the primary's
    /// own file has the writes too).
    pub(crate) fn acked(self, reply: Value) -> RedisResult<u32> {
        let reply = reply.extract_error()?;
        match self {
            WaitCommand::Wait => redis::from_redis_value(reply).map_err(Into::into),
            WaitCommand::WaitAof => {
                let (local, replicas): (u32, u32) = redis::from_redis_value(reply)?;
                Ok(if local >= 1 { replicas } else { 0 })
            }
        }
    }
}

impl Replication {
    /// No syncing.
    pub(crate) fn off() -> Replication {
        Replication {
            mode: SyncReplicas::Off,
            timeout: Duration::ZERO,
            waitaof: false,
            counts: Arc::new(ReplicaCounts::private(Sections::Replication)),
            cluster: false,
        }
    }

    /// Probes once whether the server (every primary of a cluster) has
    /// `WAIT` and `WAITAOF`: [`Error::SyncUnavailable`] when it refuses
    /// `WAIT`, [`Error::Redis`] when it cannot be asked.
    pub(crate) async fn probe(
        con: &mut Connection,
        mode: SyncReplicas,
        timeout: Duration,
    ) -> Result<Replication, Error> {
        if mode == SyncReplicas::Off {
            return Ok(Replication::off());
        }
        // Zero replicas are reached at once: these return without waiting.
        // A WAIT answered otherwise than refused is there (a replica, say,
        // answers that it cannot use it: the scripts will meet its
        // redirection).
        if let Err(error) = probe_answer(con, redis::cmd("WAIT").arg(0).arg(0)).await?
            && refuses(&error)
        {
            let reason = error.to_string();
            return Err(Error::SyncUnavailable { reason });
        }
        // WAITAOF unknown (before Redis 7.2), or refused by an ACL: WAIT it is.
        let waitaof = probe_answer(con, redis::cmd("WAITAOF").arg(0).arg(0).arg(0))
            .await?
            .is_ok();
        if con.is_cluster() && (mode == SyncReplicas::Connected || waitaof) {
            // Replica counts on a cluster say which node they are of.
            if let Err(error) = probe_answer(con, &NodeId::cmd()).await? {
                let reason = format!("CLUSTER MYID: {error}");
                return Err(Error::SyncUnavailable { reason });
            }
        }
        let sections = if waitaof {
            Sections::ReplicationAndPersistence
        } else {
            Sections::Replication
        };
        Ok(Replication {
            mode,
            timeout,
            waitaof,
            counts: ReplicaCounts::for_connection(con, sections),
            cluster: con.is_cluster(),
        })
    }

    /// Whether a lock script on `lock`'s primary would now wait for no
    /// replica or disk: only then may a fair lock's waiter be handed the
    /// lock by another client's release, whose `WAIT` it would not see.
    pub(crate) fn waits_for_nobody(&self, con: &Connection, lock: &str) -> bool {
        match self.mode {
            SyncReplicas::Off => true,
            SyncReplicas::AtLeast(_) => false,
            SyncReplicas::Connected => {
                self.counts
                    .current(con, self.slot_of(lock))
                    .is_some_and(|counted| {
                        self.goes_without_wait(counted.info)
                            && counted.at.elapsed() < RECOUNT_WITHOUT_REPLICAS
                    })
            }
        }
    }

    /// Runs `call` (a lock script in the slot of `lock`) and, in synced
    /// mode, waits for the replicas in the same pipeline. It runs at most
    /// once: a retry only follows `NOSCRIPT` or a redirection.
    pub(crate) async fn run<T: FromRedisValue>(
        &self,
        con: &mut Connection,
        call: &ScriptCall,
        lock: &str,
    ) -> RedisResult<Synced<T>> {
        if self.mode == SyncReplicas::Off {
            return unsynced(con, call).await;
        }
        let slot = self.slot_of(lock);
        let mut loaded = false;
        let mut redirects = 0;
        let mut pause = REDIRECT_PAUSE;
        loop {
            let counted = self.node_info(con, lock, None).await?;
            let info = counted.info;
            let wanted = match self.mode {
                SyncReplicas::AtLeast(n) => n,
                SyncReplicas::Connected | SyncReplicas::Off => info.replicas,
            };
            let command = if self.waitaof && info.aof {
                WaitCommand::WaitAof
            } else {
                WaitCommand::Wait
            };
            // Nothing to wait for: `WAIT 0` would return at once (and
            // `node_info` counts again after a second).
            let waits = !(command == WaitCommand::Wait && wanted == 0);
            if !waits && counted.node.is_none() {
                // One server: the count is of the node the script runs on.
                let reply = call.invoke_async(con).await?;
                return Ok(Synced {
                    reply,
                    acked: Acked::Enough,
                });
            }
            // On a cluster, with the id of the node that runs it: a count
            // holds only on the node it is of.
            let mut pipe = redis::pipe();
            if counted.node.is_some() {
                pipe.add_command(NodeId::cmd());
            }
            call.add_to_pipeline(&mut pipe);
            if waits {
                pipe.add_command(command.cmd(wanted, self.timeout));
            }
            let deadline = if waits {
                Deadline::Synced
            } else {
                Deadline::Response
            };
            let values = con
                .pipeline_on_primary(&pipe, slot, deadline)
                .await
                .inspect_err(|_| self.counts.forget(slot, &counted))?;
            if values.len() != pipe.len() {
                return Err(RedisError::from((
                    ErrorKind::UnexpectedReturnType,
                    "redlua: a lock script's pipeline did not get a reply per command",
                )));
            }
            let mut values = values.into_iter();
            let ran_on = counted.node.map(|_| NodeId::from_reply(values.next()).ok());
            let script = values.next().unwrap_or(Value::Nil);
            let wait = values.next();
            match script.extract_error() {
                Err(error) if is_noscript(&error) && !loaded => {
                    call.def().load(con).await?;
                    loaded = true;
                }
                // A redirection: the slot is served elsewhere (now, or for
                // this key).
                Err(error) if self.cluster && matches!(error.code(), Some("MOVED" | "ASK")) => {
                    self.counts.forget(slot, &counted);
                    if redirects == REDIRECTS {
                        return Err(RedisError::from((
                            ErrorKind::Server(ServerErrorKind::TryAgain),
                            "redlua: the lock's slot is moving",
                            error.to_string(),
                        )));
                    }
                    redirects += 1;
                    // A lone command follows the redirection, and makes the
                    // cluster connection read the slots again.
                    let _ = redis::cmd("PTTL").arg(lock).query_async::<Value>(con).await;
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(error) => {
                    if classify(&error) == Failure::Unknown {
                        // A write refused by a demoted primary (`READONLY`)
                        // and the like: the count and the connection are
                        // in doubt, as after a request that failed.
                        self.counts.forget(slot, &counted);
                        con.discard();
                    }
                    return Err(error);
                }
                Ok(value) => {
                    let reply = redis::from_redis_value(value)?;
                    let acked = self.acked(slot, &counted, command, wanted, ran_on, wait);
                    return Ok(Synced { reply, acked });
                }
            }
        }
    }

    /// How a script that ran was acknowledged: `ran_on`, the node that ran
    /// it (asked where the count names its node), and `wait`, the wait
    /// command's reply if one was sent.
    fn acked(
        &self,
        slot: u16,
        counted: &Counted,
        command: WaitCommand,
        wanted: u32,
        ran_on: Option<Option<NodeId>>,
        wait: Option<Value>,
    ) -> Acked {
        match (ran_on, wait) {
            (Some(ran_on), wait) if ran_on != counted.node => {
                self.ran_elsewhere(slot, counted, command, wait)
            }
            (_, Some(wait)) => self.count(command.acked(wait), wanted, slot, counted),
            (_, None) => Acked::Enough,
        }
    }

    /// The script ran on another node than the one counted (the slot map
    /// changed in between): taken as short of one replica more than
    /// acknowledged it (an acquire is undone, a release counted again).
    fn ran_elsewhere(
        &self,
        slot: u16,
        counted: &Counted,
        command: WaitCommand,
        wait: Option<Value>,
    ) -> Acked {
        self.counts.forget(slot, counted);
        let acked = wait.and_then(|wait| command.acked(wait).ok()).unwrap_or(0);
        tracing::warn!(target: crate::observability::targets::CONNECTION, slot, acked, "a lock script ran on another node than the replicas were counted on (a failover); taken as not replicated");
        Acked::Short {
            acked,
            wanted: acked.saturating_add(1),
        }
    }

    /// A release fewer replicas acknowledged than counted, checked against
    /// a fresh count (the old one may predate a failover or a replica
    /// leaving): `Enough` if the primary now has no more replicas online
    /// than acknowledged it. Only in [`SyncReplicas::Connected`] mode and
    /// for releases (a short acquire stays undone); a failed count leaves
    /// `acked` as it was.
    pub(crate) async fn recount_release(
        &self,
        con: &mut Connection,
        lock: &str,
        acked: Acked,
    ) -> Acked {
        let Acked::Short { acked: got, .. } = acked else {
            return acked;
        };
        if self.mode != SyncReplicas::Connected {
            return acked;
        }
        // Asked from now on (`count` forgot the count the release went by).
        let since = Instant::now();
        match self.node_info(con, lock, Some(since)).await {
            Ok(Counted { info, .. }) if info.replicas <= got => Acked::Enough,
            _ => acked,
        }
    }

    /// The slot counts of `lock`'s primary are kept under: its slot on a
    /// cluster, 0 on one server.
    fn slot_of(&self, lock: &str) -> u16 {
        if self.cluster { slot(lock) } else { 0 }
    }

    /// What the wait command's reply means for a write that wanted
    /// `wanted` replicas.
    fn count(&self, acked: RedisResult<u32>, wanted: u32, slot: u16, counted: &Counted) -> Acked {
        let acked = match acked {
            Ok(acked) => {
                if self.mode == SyncReplicas::Connected && acked != wanted {
                    // More replicas than counted, or some missing: count
                    // them again next time.
                    self.counts.forget(slot, counted);
                }
                acked
            }
            Err(error) => {
                self.counts.forget(slot, counted);
                tracing::warn!(target: crate::observability::targets::CONNECTION, %error, "waiting for the replicas failed");
                0
            }
        };
        if acked >= wanted {
            Acked::Enough
        } else {
            Acked::Short { acked, wanted }
        }
    }

    /// What the primary of `lock`'s slot said about itself, and when; asked
    /// if not known, counted before `since`, or due ([`Self::recount_due`]).
    async fn node_info(
        &self,
        con: &mut Connection,
        lock: &str,
        since: Option<Instant>,
    ) -> RedisResult<Counted> {
        let slot = self.slot_of(lock);
        let needed = self.mode == SyncReplicas::Connected || self.waitaof;
        if !needed {
            return Ok(Counted {
                epoch: con.epoch(),
                info: NodeInfo {
                    primary: true,
                    replicas: 0,
                    aof: false,
                },
                at: Instant::now(),
                node: None,
            });
        }
        let mut pause = REDIRECT_PAUSE;
        for _ in 0..STALE_TOPOLOGY_RETRIES {
            let counted = self
                .counts
                .get(con, slot, |counted| {
                    since.is_none_or(|since| counted.at >= since) && !self.recount_due(counted)
                })
                .await?;
            if counted.info.primary {
                return Ok(counted);
            }
            // A replica answered (a topology older than a failover): its
            // count is never used; the primary is found afresh.
            self.counts.forget(slot, &counted);
            tracing::debug!(target: crate::observability::targets::CONNECTION, slot, "a replica answered for the primary; reading the topology again");
            if !con.refresh_topology(lock).await {
                // One server, which is a replica: no failover will make it
                // a primary for this client; refused, not retried.
                return Err(RedisError::from((
                    ErrorKind::Server(ServerErrorKind::ResponseError),
                    "redlua: the server is a replica, not a primary",
                    "lock writes need the primary: connect to it, or through Sentinel or Cluster"
                        .to_string(),
                )));
            }
            tokio::time::sleep(pause).await;
            pause *= 2;
        }
        Err(RedisError::from((
            ErrorKind::Server(ServerErrorKind::TryAgain),
            "redlua: the node the lock's writes go to is a replica, not a primary",
            "a failover the client has not caught up with; nothing was written".to_string(),
        )))
    }

    /// Whether `counted` is a count without replicas from a second ago or
    /// more that lets the scripts go without a `WAIT`.
    fn recount_due(&self, counted: &Counted) -> bool {
        self.mode == SyncReplicas::Connected
            && self.goes_without_wait(counted.info)
            && counted.at.elapsed() >= RECOUNT_WITHOUT_REPLICAS
    }

    /// Whether, in [`SyncReplicas::Connected`] mode, a primary that said
    /// `info` gets its lock scripts without a `WAIT` or `WAITAOF`: no
    /// replica online, and no append-only file to wait for.
    fn goes_without_wait(&self, info: NodeInfo) -> bool {
        info.replicas == 0 && !(self.waitaof && info.aof)
    }
}

/// Runs `call` without waiting for replicas (an undo: nothing relies on it).
pub(crate) async fn unsynced<T: FromRedisValue>(
    con: &mut Connection,
    call: &ScriptCall,
) -> RedisResult<Synced<T>> {
    let reply = call.invoke_async(con).await?;
    Ok(Synced {
        reply,
        acked: Acked::NotAsked,
    })
}

/// What the server answered `cmd` at connect; [`Error::Redis`] when it
/// could not be asked.
async fn probe_answer(con: &mut Connection, cmd: &redis::Cmd) -> Result<RedisResult<Value>, Error> {
    match cmd.query_async::<Value>(con).await {
        Err(error) if classify(&error) == Failure::Unknown => Err(Error::Redis(error)),
        answer => Ok(answer),
    }
}

/// The server does not know the command (renamed away, or a proxy
/// without it), or the user may not run it.
fn refuses(error: &RedisError) -> bool {
    error.kind() == ErrorKind::Server(ServerErrorKind::NoPerm)
        || error.code() == Some("NOPERM")
        || error.to_string().contains("unknown command")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &redis::Cmd) -> Vec<String> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(s) => String::from_utf8_lossy(s).into_owned(),
                _ => "<cursor>".to_string(),
            })
            .collect()
    }

    #[test]
    fn wait_commands_and_their_replies() {
        let second = Duration::from_secs(1);
        assert_eq!(
            args(&WaitCommand::Wait.cmd(2, second)),
            ["WAIT", "2", "1000"]
        );
        assert_eq!(
            args(&WaitCommand::WaitAof.cmd(2, second)),
            ["WAITAOF", "1", "2", "1000"]
        );
        // Never WAIT's "forever".
        assert_eq!(
            args(&WaitCommand::Wait.cmd(1, Duration::ZERO)),
            ["WAIT", "1", "1"]
        );
        assert_eq!(WaitCommand::Wait.acked(Value::Int(2)).unwrap(), 2);
        let aof = |local, replicas| Value::Array(vec![Value::Int(local), Value::Int(replicas)]);
        assert_eq!(WaitCommand::WaitAof.acked(aof(1, 2)).unwrap(), 2);
        // Not on the primary's own disk: nothing counts.
        assert_eq!(WaitCommand::WaitAof.acked(aof(0, 2)).unwrap(), 0);
        let refused = redis::parse_redis_value(b"-NOPERM no permission to run WAIT\r\n").unwrap();
        assert!(matches!(refused, Value::ServerError(_)), "{refused:?}");
        assert!(WaitCommand::Wait.acked(refused).is_err());
    }

    fn replication(mode: SyncReplicas) -> Replication {
        Replication {
            mode,
            timeout: Duration::from_secs(1),
            waitaof: false,
            counts: Arc::new(ReplicaCounts::private(Sections::Replication)),
            cluster: true,
        }
    }

    fn counted(r: &Replication) -> Counted {
        let counted = Counted {
            epoch: Default::default(),
            info: NodeInfo {
                primary: true,
                replicas: 2,
                aof: false,
            },
            at: Instant::now(),
            node: None,
        };
        r.counts.put(7, counted);
        counted
    }

    #[test]
    fn fewer_acknowledgements_than_wanted_are_short_and_recount() {
        let r = replication(SyncReplicas::Connected);
        let c = counted(&r);
        assert_eq!(r.count(Ok(2), 2, 7, &c), Acked::Enough);
        assert_eq!(r.counts.peek(7), Some(c), "the count still holds");
        // Redisson passes 1 of 3; this does not.
        assert_eq!(
            r.count(Ok(1), 2, 7, &c),
            Acked::Short {
                acked: 1,
                wanted: 2
            }
        );
        assert_eq!(r.counts.peek(7), None, "counted again next time");
        let r = replication(SyncReplicas::Connected);
        let c = counted(&r);
        assert_eq!(r.count(Ok(3), 2, 7, &c), Acked::Enough);
        assert_eq!(r.counts.peek(7), None, "a new replica is counted");
        let r = replication(SyncReplicas::AtLeast(2));
        let c = counted(&r);
        assert_eq!(
            r.count(Ok(0), 2, 7, &c),
            Acked::Short {
                acked: 0,
                wanted: 2
            }
        );
        let failed = Err(RedisError::from((ErrorKind::Io, "gone")));
        assert_eq!(r.count(failed, 0, 7, &c), Acked::Enough);
        let failed = Err(RedisError::from((ErrorKind::Io, "gone")));
        assert_eq!(
            r.count(failed, 1, 7, &c),
            Acked::Short {
                acked: 0,
                wanted: 1
            }
        );
    }

    #[test]
    fn a_script_that_ran_on_another_node_than_the_one_counted_is_not_replicated() {
        let node = |c: u8| NodeId::from_reply(Some(Value::BulkString(vec![c; 40]))).unwrap();
        let r = replication(SyncReplicas::Connected);
        let none = Counted {
            epoch: Default::default(),
            info: NodeInfo {
                primary: true,
                replicas: 0,
                aof: false,
            },
            at: Instant::now(),
            node: Some(node(b'a')),
        };
        r.counts.put(7, none);
        let wait = WaitCommand::Wait;
        // Counted without replicas, run on that node: no WAIT was needed.
        let same = Some(Some(node(b'a')));
        assert_eq!(r.acked(7, &none, wait, 0, same, None), Acked::Enough);
        assert_eq!(r.counts.peek(7), Some(none));
        // Run on another node (the slot map changed in between): its
        // replicas were never waited for.
        let other = Some(Some(node(b'b')));
        assert_eq!(
            r.acked(7, &none, wait, 0, other, None),
            Acked::Short {
                acked: 0,
                wanted: 1
            }
        );
        assert_eq!(r.counts.peek(7), None, "counted again next time");
        // The node's id could not be read: not known to be the same.
        r.counts.put(7, none);
        assert_eq!(
            r.acked(7, &none, wait, 0, Some(None), None),
            Acked::Short {
                acked: 0,
                wanted: 1
            }
        );
        // With a WAIT on another node, what it acknowledged is kept, and
        // still short.
        let two = Counted {
            info: NodeInfo {
                replicas: 2,
                ..none.info
            },
            ..none
        };
        assert_eq!(
            r.acked(7, &two, wait, 2, other, Some(Value::Int(2))),
            Acked::Short {
                acked: 2,
                wanted: 3
            }
        );
        // One server: no node ids, the WAIT's reply decides.
        let single = Counted { node: None, ..two };
        assert_eq!(
            r.acked(0, &single, wait, 2, None, Some(Value::Int(2))),
            Acked::Enough
        );
    }

    #[test]
    fn a_primary_without_replicas_is_counted_again_after_a_second() {
        let r = replication(SyncReplicas::Connected);
        let now = Instant::now();
        let none = |at| Counted {
            epoch: Default::default(),
            info: NodeInfo {
                primary: true,
                replicas: 0,
                aof: false,
            },
            at,
            node: None,
        };
        assert!(!r.recount_due(&none(now)));
        let old = now - RECOUNT_WITHOUT_REPLICAS;
        assert!(r.recount_due(&none(old)));
        // With replicas, WAIT's reply tells when they change.
        let two = Counted {
            info: NodeInfo {
                primary: true,
                replicas: 2,
                aof: false,
            },
            ..none(old)
        };
        assert!(!r.recount_due(&two));
        // A fixed number is waited for whatever the count.
        assert!(!replication(SyncReplicas::AtLeast(1)).recount_due(&none(old)));
    }
}
