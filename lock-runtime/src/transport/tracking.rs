//! The loss watch's connections (`loss_watch.rs`): opened with RESP3 and
//! `CLIENT TRACKING ON` (Redis then pushes an invalidation when a key read
//! on it changes), and a batch of holds read on one in a pipeline (a
//! lock's held fields with `HMGET`, leased permits with `ZSCORE`), which
//! arms their tracking.
//!
//! A refusal that will not pass (an unknown command, an ACL) is told apart
//! from one that may (unreachable, loading, timed out): the first turns the
//! watch off, the second is tried again.

use crate::base::hold_key::{HoldKey, HoldShape};
use crate::transport::cluster_nodes::Nodes;
use futures_util::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError, RedisResult, Value};
use std::sync::Arc;

/// A tracking connection to one node.
pub(crate) struct NodeConn {
    pub id: u64,
    pub con: MultiplexedConnection,
}

/// The holds of one lock (or one semaphore's permits taken) as read: each
/// with the generation and shape of its registry entry when the read was
/// sent.
pub(crate) type Reading = (Arc<str>, Vec<(HoldKey, u64, HoldShape)>);

/// Each lock's reply; or the error that kept a batch from being read,
/// with the batch.
pub(crate) type BatchReplies =
    Result<Vec<(Reading, RedisResult<Value>)>, (BatchError, Vec<Reading>)>;

/// Why a batch was not read.
pub(crate) enum BatchError {
    /// Its connection could not be opened: the server refuses
    /// `CLIENT TRACKING`, and the watch goes off.
    Refused(RedisError),
    /// Its connection could not be opened otherwise (unreachable, loading,
    /// timed out): tried again.
    Unopened(RedisError),
    /// Its pipeline failed as a whole (a lost connection, a timeout): the
    /// connection is in doubt.
    Failed(RedisError),
}

/// Why a tracking connection could not be opened: a server's plain error
/// (`ERR`: an unknown command, `HELLO` before Redis 6, a proxy) or an
/// ACL's (`NOPERM`) is for good; anything else may pass.
fn unopened(error: RedisError) -> BatchError {
    match error.code() {
        Some("ERR" | "NOPERM") => BatchError::Refused(error),
        _ => BatchError::Unopened(error),
    }
}

/// A connection being opened.
pub(crate) type Opener = BoxFuture<'static, Result<MultiplexedConnection, BatchError>>;

/// The connection a batch is read on.
pub(crate) enum Via {
    /// The node's connection (its id).
    Open(u64, MultiplexedConnection),
    /// A new one, opened by the future first.
    New(u64, Opener),
}

/// A batch read on one node: the connection opened for it (if one was),
/// the connection used, and each lock's reply; or the error that kept the
/// batch from being sent.
pub(crate) struct BatchDone {
    pub node: String,
    pub opened: Option<NodeConn>,
    pub conn: u64,
    pub replies: BatchReplies,
}

/// Opens a connection to `node` of `nodes` with `config` (its
/// timeouts, where its pushes go), with tracking on.
pub(crate) fn open(nodes: Nodes, node: String, config: AsyncConnectionConfig) -> Opener {
    Box::pin(async move {
        let mut con = nodes
            .connect_resp3(&node, &config)
            .await
            .map_err(unopened)?;
        redis::cmd("CLIENT")
            .arg("TRACKING")
            .arg("ON")
            .query_async::<()>(&mut con)
            .await
            .map_err(unopened)?;
        Ok(con)
    })
}

/// Reads a batch of locks on one node (opening the connection first for
/// [`Via::New`]) in one pipeline; a key's error (`WRONGTYPE`, `MOVED`) is
/// its reply only. Each key's reply is an array of one value per member
/// ([`HoldShape::members`]), in the holds' order: nil where it is gone.
pub(crate) async fn read_batch(node: String, via: Via, batch: Vec<Reading>) -> BatchDone {
    let (conn, con, opened) = match via {
        Via::Open(id, con) => (id, con, false),
        Via::New(id, open) => match open.await {
            Ok(con) => (id, con, true),
            Err(error) => {
                return BatchDone {
                    node,
                    opened: None,
                    conn: id,
                    replies: Err((error, batch)),
                };
            }
        },
    };
    let replies = match read_on(con.clone(), &batch).await {
        Ok(replies) => Ok(batch.into_iter().zip(replies).collect()),
        Err(error) => Err((BatchError::Failed(error), batch)),
    };
    BatchDone {
        node,
        opened: opened.then_some(NodeConn { id: conn, con }),
        conn,
        replies,
    }
}

/// Each lock's reply to one pipeline for the whole batch on `con` (one
/// request, one reply to wait for), each key's commands in turn; an error
/// when the pipeline failed as a whole.
async fn read_on(
    mut con: MultiplexedConnection,
    batch: &[Reading],
) -> RedisResult<Vec<RedisResult<Value>>> {
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    let mut counts = Vec::with_capacity(batch.len());
    for (lock, holds) in batch {
        let fields = holds
            .iter()
            .all(|(_, _, shape)| matches!(shape, HoldShape::Lock { .. }));
        if fields {
            let hmget = pipe.cmd("HMGET").arg(&**lock);
            for (hold, _, _) in holds {
                hmget.arg(&*hold.field);
            }
            counts.push(None);
        } else {
            let mut count = 0;
            for (hold, _, shape) in holds {
                let read = match shape {
                    HoldShape::Lock { .. } => "HGET",
                    HoldShape::Permits { .. } => "ZSCORE",
                };
                for member in shape.members(hold) {
                    pipe.cmd(read).arg(&**lock).arg(member);
                    count += 1;
                }
            }
            counts.push(Some(count));
        }
    }
    let replies = pipe
        .query_async::<Vec<RedisResult<Value>>>(&mut con)
        .await?;
    if replies.len() != counts.iter().map(|c| c.unwrap_or(1)).sum::<usize>() {
        return Err(RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "a loss watch batch got a reply of the wrong length",
        )));
    }
    let mut replies = replies.into_iter();
    Ok(counts
        .iter()
        .map(|count| match count {
            // The `HMGET`'s array, as it came.
            None => replies.next().unwrap_or(Ok(Value::Nil)),
            // One value per member, as an array; the first error for all.
            Some(count) => replies
                .by_ref()
                .take(*count)
                .collect::<RedisResult<Vec<Value>>>()
                .map(Value::Array),
        })
        .collect())
}
