//! The master of a Redis Sentinel service: asked of the sentinels whenever
//! a connection to it is opened, and checked with `ROLE` before it is used.
//!
//! Each connection a Sentinel client (re)opens asks the sentinels in turn
//! (`SENTINEL GET-MASTER-ADDR-BY-NAME`) until one names the master, and
//! refuses a node that does not answer `ROLE` as a master (a failover under
//! way: tried again later).
//!
//! The old master's connections do not close at a failover (the sentinels
//! demote it seconds later; one cut off from them goes on taking writes),
//! so a watcher asks the sentinels every [`SENTINEL_POLL_INTERVAL`]; a new
//! answer bumps the generation, and the connections opened under an older
//! one are replaced (pub/sub waiters subscribe again on the new master). A
//! write refused with `READONLY` drops the connection too
//! (`error::classify`).

use crate::base::config::{SENTINEL_POLL_INTERVAL, Timeouts};
use crate::base::mutex::locked;
use crate::transport::tls::{masked, with_addr};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionInfo, ErrorKind, RedisError};
use redis::{RedisResult, Value};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::watch;

/// A master's address as the sentinels give it.
type Addr = (String, u16);

/// The sentinels of one service, and how to reach its master.
#[derive(Debug)]
pub(crate) struct Sentinels {
    /// The sentinels, asked in this order.
    sentinels: Vec<ConnectionInfo>,
    /// The service (master) name the sentinels monitor.
    service: String,
    /// How to connect to a master, its address aside.
    master: ConnectionInfo,
    /// Bound opening each connection, and each reply.
    timeouts: Timeouts,
    /// The master last named, if any.
    named: Mutex<Option<Addr>>,
    /// A connection to each sentinel, kept (`None`: none yet, or failed).
    connections: Mutex<Vec<Option<MultiplexedConnection>>>,
    /// Counts the changes of master seen (the generation of the master).
    switches: watch::Sender<u64>,
}

impl Sentinels {
    /// The sentinels at `sentinels` of `service`, whose master is reached
    /// with the settings of `master`.
    pub(crate) fn new(
        sentinels: Vec<ConnectionInfo>,
        service: String,
        master: ConnectionInfo,
        timeouts: Timeouts,
    ) -> Sentinels {
        let count = sentinels.len();
        Sentinels {
            sentinels,
            service,
            master,
            timeouts,
            named: Mutex::new(None),
            connections: Mutex::new(vec![None; count]),
            switches: watch::channel(0).0,
        }
    }

    /// How many times the master changed so far (as seen from here).
    pub(crate) fn generation(&self) -> u64 {
        *self.switches.borrow()
    }

    /// Tells of each change of master from now on.
    pub(crate) fn switches(&self) -> watch::Receiver<u64> {
        self.switches.subscribe()
    }

    /// Remembers the master the sentinels named; a change (not the first
    /// answer) bumps the generation.
    fn note(&self, addr: &Addr) {
        let previous = locked(&self.named).replace(addr.clone());
        if previous.is_some_and(|previous| previous != *addr) {
            tracing::warn!(target: crate::observability::targets::CONNECTION, master = %format!("{}:{}", addr.0, addr.1), "the sentinels name a new master; moving the connections to it");
            self.switches.send_modify(|generation| *generation += 1);
        }
    }

    /// Starts the task that asks the sentinels every
    /// [`SENTINEL_POLL_INTERVAL`] which node is the master; it ends once
    /// `self` is dropped. Must be called within a tokio runtime.
    pub(crate) fn watch(self: &Arc<Self>) {
        let weak: Weak<Sentinels> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(SENTINEL_POLL_INTERVAL);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                let Some(sentinels) = weak.upgrade() else {
                    return;
                };
                // A failed round changes nothing: the next one asks again.
                if let Err(error) = sentinels.master_addr().await {
                    tracing::debug!(target: crate::observability::targets::CONNECTION, %error, "asking the sentinels for the master failed");
                }
            }
        });
    }

    /// The settings of connections to the master (its address aside).
    pub(crate) fn master_template(&self) -> &ConnectionInfo {
        &self.master
    }

    /// A client of the current master, checked to be one (for the pub/sub
    /// connection, which it opens next).
    pub(crate) async fn master_client(&self) -> RedisResult<redis::Client> {
        Ok(self.connect_master(&self.timeouts.config()).await?.0)
    }

    /// A client of the current master and a connection to it (made with
    /// `config`), refused unless the node answers `ROLE` as a master.
    pub(crate) async fn connect_master(
        &self,
        config: &AsyncConnectionConfig,
    ) -> RedisResult<(redis::Client, MultiplexedConnection)> {
        // The master the first sentinel that answers names.
        let (host, port) = self.master_addr().await?;
        let client = redis::Client::open(with_addr(&self.master, host, port))?;
        let mut con = client
            .get_multiplexed_async_connection_with_config(config)
            .await?;
        check_master(&mut con, &client).await?;
        Ok((client, con))
    }

    /// Asks the sentinels in turn for the master's address (a change of
    /// master bumps the generation).
    pub(crate) async fn master_addr(&self) -> RedisResult<(String, u16)> {
        let mut last_error = None;
        let mut unknown = 0;
        for (i, sentinel) in self.sentinels.iter().enumerate() {
            let limit = self.timeouts.connect.saturating_add(self.timeouts.response);
            let asked = tokio::time::timeout(limit, self.ask(i)).await;
            if !matches!(asked, Ok(Ok(_))) {
                self.connections()[i] = None;
            }
            match asked {
                Ok(Ok(Some(addr))) => {
                    self.note(&addr);
                    return Ok(addr);
                }
                Ok(Ok(None)) => unknown += 1,
                Ok(Err(error)) => last_error = Some(error),
                Err(_) => {
                    last_error = Some(RedisError::from((
                        ErrorKind::Io,
                        "redlua: a sentinel did not answer",
                        format!("{} within {limit:?}", masked(sentinel)),
                    )));
                }
            }
        }
        let detail = match last_error {
            Some(error) if unknown == 0 => format!("no sentinel answered; the last said: {error}"),
            Some(error) => format!(
                "{unknown} sentinel(s) know no master `{}`; another said: {error}",
                self.service
            ),
            None => format!("no sentinel knows a master named `{}`", self.service),
        };
        Err(RedisError::from((
            ErrorKind::Io,
            "redlua: the sentinels named no master",
            detail,
        )))
    }

    /// The kept sentinel connections.
    fn connections(&self) -> std::sync::MutexGuard<'_, Vec<Option<MultiplexedConnection>>> {
        locked(&self.connections)
    }

    /// Sentinel `i`'s answer: the master's address, or `None` if it knows
    /// no such service.
    async fn ask(&self, i: usize) -> RedisResult<Option<(String, u16)>> {
        let kept = self.connections()[i].clone();
        let mut con = match kept {
            Some(con) => con,
            None => {
                let con = redis::Client::open(self.sentinels[i].clone())?
                    .get_multiplexed_async_connection_with_config(&self.timeouts.config())
                    .await?;
                self.connections()[i] = Some(con.clone());
                con
            }
        };
        let reply: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(&self.service)
            .query_async(&mut con)
            .await?;
        Ok(reply)
    }
}

/// Refuses a node that is not a master (any more, or not yet).
async fn check_master(con: &mut MultiplexedConnection, client: &redis::Client) -> RedisResult<()> {
    let role: Vec<Value> = redis::cmd("ROLE").query_async(con).await?;
    let is_master = matches!(role.first(), Some(Value::BulkString(kind)) if kind == b"master")
        || matches!(role.first(), Some(Value::SimpleString(kind)) if kind == "master");
    if is_master {
        Ok(())
    } else {
        // An I/O kind: the caller retries later, on a new connection.
        Err(RedisError::from((
            ErrorKind::Io,
            "redlua: the node the sentinels named is not a master (a failover is under way)",
            masked(client.get_connection_info()),
        )))
    }
}
