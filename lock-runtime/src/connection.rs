//! The command connection a [`LockClient`](crate::LockClient) sends its
//! scripts on.

use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A multiplexed redis-rs connection for the lock client's commands: a
/// [`ConnectionManager`] (reconnects by itself; what
/// [`LockClient::connect`](crate::LockClient::connect) uses) or a
/// [`MultiplexedConnection`] of your own.
///
/// ```no_run
/// # async fn demo() -> redis::RedisResult<()> {
/// let client = redis::Client::open("redis://127.0.0.1:6380/")?;
/// let manager = client.get_connection_manager().await?;
/// let connection = redlua_runtime::Connection::from(manager);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Connection(Inner);

#[derive(Clone)]
enum Inner {
    Manager(ConnectionManager),
    Multiplexed(MultiplexedConnection),
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Inner::Manager(_) => f.write_str("Connection::Manager"),
            Inner::Multiplexed(_) => f.write_str("Connection::Multiplexed"),
        }
    }
}

impl From<ConnectionManager> for Connection {
    fn from(con: ConnectionManager) -> Self {
        Connection(Inner::Manager(con))
    }
}

impl From<MultiplexedConnection> for Connection {
    fn from(con: MultiplexedConnection) -> Self {
        Connection(Inner::Multiplexed(con))
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match &mut self.0 {
            Inner::Manager(con) => con.req_packed_command(cmd),
            Inner::Multiplexed(con) => con.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match &mut self.0 {
            Inner::Manager(con) => con.req_packed_commands(pipeline, offset, count),
            Inner::Multiplexed(con) => con.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.0 {
            Inner::Manager(con) => con.get_db(),
            Inner::Multiplexed(con) => con.get_db(),
        }
    }
}
