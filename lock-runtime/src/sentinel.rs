//! The master of a Redis Sentinel service: asked of the sentinels whenever
//! a connection to it is opened, and checked with `ROLE` before it is used.
//!
//! A client made with [`LockClient::sentinel`](crate::LockClient::sentinel)
//! opens its command connection and its pub/sub connection through
//! [`Sentinels`]: each time one is (re)opened, the sentinels are asked in
//! turn (`SENTINEL GET-MASTER-ADDR-BY-NAME`) until one names the master,
//! and a node that does not say it is a master (`ROLE`; a failover under
//! way) is refused, so the connection is tried again later. A write
//! refused with `READONLY` (a master demoted under an open connection)
//! drops the connection (see `error::classify`), and the next command
//! asks the sentinels again.

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, ErrorKind, RedisError};
use redis::{RedisResult, Value};
use std::time::Duration;

/// The sentinels of one service, and how to reach its master.
#[derive(Debug)]
pub(crate) struct Sentinels {
    /// The sentinels, asked in this order.
    sentinels: Vec<ConnectionInfo>,
    /// The service (master) name the sentinels monitor.
    service: String,
    /// How to connect to a master: TLS, credentials, database (its address
    /// is replaced by the one the sentinels name).
    master: ConnectionInfo,
    /// Bounds opening each connection.
    connect_timeout: Duration,
    /// Bounds each reply.
    response_timeout: Duration,
}

impl Sentinels {
    /// The sentinels at `sentinels` of `service`, whose master is reached
    /// with the settings of `master`.
    pub(crate) fn new(
        sentinels: Vec<ConnectionInfo>,
        service: String,
        master: ConnectionInfo,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> Sentinels {
        Sentinels {
            sentinels,
            service,
            master,
            connect_timeout,
            response_timeout,
        }
    }

    /// The settings of connections to the master (its address aside).
    pub(crate) fn master_template(&self) -> &ConnectionInfo {
        &self.master
    }

    fn config(&self) -> AsyncConnectionConfig {
        AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.response_timeout))
    }

    /// A connection to the current master (made with `config`), checked to
    /// be one.
    pub(crate) async fn connect_master(
        &self,
        config: &AsyncConnectionConfig,
    ) -> RedisResult<MultiplexedConnection> {
        let client = redis::Client::open(self.master_info().await?)?;
        let mut con = client
            .get_multiplexed_async_connection_with_config(config)
            .await?;
        check_master(&mut con, &client).await?;
        Ok(con)
    }

    /// A client of the current master, checked to be one (for the pub/sub
    /// connection, which it opens next).
    pub(crate) async fn master_client(&self) -> RedisResult<redis::Client> {
        let client = redis::Client::open(self.master_info().await?)?;
        let mut con = client
            .get_multiplexed_async_connection_with_config(&self.config())
            .await?;
        check_master(&mut con, &client).await?;
        Ok(client)
    }

    /// The connection settings of the master the first sentinel that
    /// answers names.
    async fn master_info(&self) -> RedisResult<ConnectionInfo> {
        let (host, port) = self.master_addr().await?;
        let addr = match self.master.addr() {
            ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => ConnectionAddr::TcpTls {
                host,
                port,
                insecure: *insecure,
                tls_params: tls_params.clone(),
            },
            _ => ConnectionAddr::Tcp(host, port),
        };
        Ok(self.master.clone().set_addr(addr))
    }

    /// Asks the sentinels in turn for the master's address.
    async fn master_addr(&self) -> RedisResult<(String, u16)> {
        let mut last_error = None;
        let mut unknown = 0;
        for sentinel in &self.sentinels {
            let limit = self.connect_timeout.saturating_add(self.response_timeout);
            let asked = tokio::time::timeout(limit, self.ask(sentinel)).await;
            match asked {
                Ok(Ok(Some(addr))) => return Ok(addr),
                Ok(Ok(None)) => unknown += 1,
                Ok(Err(error)) => last_error = Some(error),
                Err(_) => {
                    last_error = Some(RedisError::from((
                        ErrorKind::Io,
                        "redlua: a sentinel did not answer",
                        format!("{} within {limit:?}", describe(sentinel)),
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

    /// One sentinel's answer: the master's address, or `None` if it knows
    /// no such service.
    async fn ask(&self, sentinel: &ConnectionInfo) -> RedisResult<Option<(String, u16)>> {
        let mut con = redis::Client::open(sentinel.clone())?
            .get_multiplexed_async_connection_with_config(&self.config())
            .await?;
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
            describe(client.get_connection_info()),
        )))
    }
}

/// `host:port` of a connection, without credentials.
fn describe(info: &ConnectionInfo) -> String {
    match info.addr() {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            format!("{host}:{port}")
        }
        other => other.to_string(),
    }
}
