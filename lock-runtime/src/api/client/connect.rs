//! Connecting a [`LockClientBuilder`]: the settings checked, then the
//! command connection, the pub/sub hub, the loss watch, the watchdog and
//! the background worker that a client and its handles share.
//!
//! Invariants: nothing is connected before every setting was checked;
//! dropping the future drops the half-made connections.

use crate::base::config::{Config, LATCH_TTL, MIN_WATCHDOG_TIMEOUT, Timeouts, check_lease};
use crate::base::error::{Error, Failure, Result, classify};
use crate::base::owner::Ids;
use crate::base::sync_replicas::{DEFAULT_SYNC_TIMEOUT, SyncReplicas};
use crate::holds::background;
use crate::holds::latches::Latches;
use crate::holds::loss_watch::LossWatch;
use crate::holds::registry::Holds;
use crate::holds::shared::Shared;
use crate::protocol::replies::Publish;
use crate::transport::cluster_nodes::{ClusterNodes, Nodes};
use crate::transport::connection::{Connection, Source};
use crate::transport::pubsub::PubSubHub;
use crate::transport::replication::Replication;
use crate::transport::sentinel::Sentinels;
use crate::transport::tls::{masked, uses_tls};
use redis::{ConnectionInfo, RedisConnectionInfo};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

use super::LockClient;
use super::builder::{LockClientBuilder, Seeds};

impl LockClientBuilder {
    /// [`LockClientBuilder::connect`], also returning the background
    /// worker's task, which ends once the client, every handle and guard
    /// made from it, and their last background job are gone (what the
    /// blocking client's thread waits for).
    pub(crate) async fn connect_with_worker(
        self,
    ) -> Result<(LockClient, tokio::task::JoinHandle<()>)> {
        check_lease("the watchdog timeout", self.watchdog_timeout)?;
        check_lease("the fair lock wait timeout", self.fair_wait)?;
        if self.watchdog_timeout < MIN_WATCHDOG_TIMEOUT {
            return Err(Error::Config(format!(
                "the watchdog timeout must be at least 30 ms, not {:?}",
                self.watchdog_timeout
            )));
        }
        for (what, timeout) in [
            ("the connect timeout", self.connect_timeout),
            ("the response timeout", self.response_timeout),
        ] {
            if timeout.is_zero() {
                return Err(Error::Config(format!("{what} must be longer than zero")));
            }
        }
        let sync_timeout = self
            .sync_timeout
            .unwrap_or(DEFAULT_SYNC_TIMEOUT.min(self.response_timeout / 2));
        let synced = self.sync_replicas != SyncReplicas::Off;
        if synced {
            if sync_timeout.is_zero() || sync_timeout >= self.response_timeout {
                return Err(Error::Config(format!(
                    "the sync timeout ({sync_timeout:?}) must be longer than zero and shorter than the response timeout ({:?})",
                    self.response_timeout
                )));
            }
            if self.sync_replicas == SyncReplicas::AtLeast(0) {
                return Err(Error::Config(
                    "SyncReplicas::AtLeast needs at least 1 replica (SyncReplicas::Off waits for none)"
                        .to_string(),
                ));
            }
        }
        let timeouts = Timeouts {
            connect: self.connect_timeout,
            response: self.response_timeout,
        };
        // A synced pipeline's WAIT may block its connection this long.
        let synced_extra = if synced { sync_timeout } else { Duration::ZERO };
        let healing = |source| Connection::healing(source, timeouts, synced_extra);
        let tls = &self.tls;
        let seeds = self.seeds?;
        if self.master.is_some() && !matches!(seeds, Seeds::Sentinel { .. }) {
            return Err(Error::Config(
                "sentinel_master is for a Sentinel client (LockClient::sentinel_builder)"
                    .to_string(),
            ));
        }
        let (con, nodes) = match (seeds, self.connection) {
            (Seeds::Cluster(_), Some(con)) if !con.is_cluster() => {
                return Err(Error::Config(
                    "a cluster client needs a cluster connection \
                     (redis::cluster_async::ClusterConnection)"
                        .to_string(),
                ));
            }
            (Seeds::Cluster(nodes), Some(con)) => {
                cluster_parts(tls.apply(nodes[0].clone())?, con).await?
            }
            (Seeds::Server(client), Some(con)) if con.is_cluster() => {
                let template = tls.apply(client.get_connection_info().clone())?;
                cluster_parts(template, con).await?
            }
            (Seeds::Server(client), con) => {
                let client = redis::Client::open(tls.apply(client.get_connection_info().clone())?)
                    .map_err(Error::Redis)?;
                let con = match con {
                    Some(con) => con,
                    None => healing(Source::Server(Box::new(client.clone())))
                        .await
                        .map_err(|e| Error::connect(masked(client.get_connection_info()), e))?,
                };
                (con, Nodes::Server(Box::new(client)))
            }
            (Seeds::Cluster(nodes), None) => {
                let nodes = nodes
                    .into_iter()
                    .map(|node| tls.apply(node))
                    .collect::<Result<Vec<_>>>()?;
                let connect_error = |error| Error::connect(masked(&nodes[0]), error);
                // Synced pipelines may take this long (one response timeout
                // for every request of a cluster client).
                let response = timeouts.response.saturating_add(synced_extra);
                let cluster = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(timeouts.connect)
                    .response_timeout(response);
                #[cfg(feature = "tls-rustls")]
                let cluster = match tls.certificates() {
                    Some(certificates) => cluster.certs(certificates),
                    None => cluster,
                };
                let cluster = cluster.build().map_err(connect_error)?;
                let con = Connection::healing_cluster(cluster, timeouts.connect, response)
                    .await
                    .map_err(connect_error)?;
                let template = nodes[0].clone();
                cluster_parts(template, con).await?
            }
            (Seeds::Sentinel { sentinels, service }, con) => {
                // Sentinels and masters may differ: plain sentinels of
                // masters that speak TLS, say.
                let sentinels = sentinels
                    .into_iter()
                    .map(|sentinel| tls.apply_where_tls(sentinel))
                    .collect::<Result<Vec<_>>>()?;
                let master = match self.master {
                    Some(master) => master?,
                    None => sentinels[0]
                        .clone()
                        .set_redis_settings(RedisConnectionInfo::default()),
                };
                let master = tls.apply_where_tls(master)?;
                tls.check_used(uses_tls(&master) || sentinels.iter().any(uses_tls))?;
                let addr = format!(
                    "the master of `{service}` (sentinels {})",
                    sentinels.iter().map(masked).collect::<Vec<_>>().join(", ")
                );
                let sentinels = Arc::new(Sentinels::new(sentinels, service, master, timeouts));
                let con = match con {
                    Some(con) if con.is_cluster() => {
                        return Err(Error::Config(
                            "a Sentinel client cannot send on a cluster connection".to_string(),
                        ));
                    }
                    Some(con) => con,
                    None => healing(Source::Sentinel(sentinels.clone()))
                        .await
                        .map_err(|e| Error::connect(addr, e))?,
                };
                sentinels.watch();
                (con, Nodes::Sentinel(sentinels))
            }
        };
        let mut probe_con = con.clone();
        let sync = Replication::probe(&mut probe_con, self.sync_replicas, sync_timeout).await?;
        let config = Config {
            watchdog_timeout: self.watchdog_timeout,
            fair_wait: self.fair_wait,
            latch_ttl: LATCH_TTL,
            publish: match &nodes {
                Nodes::Cluster(cluster) if cluster.sharded => Publish::Sharded,
                _ => Publish::Plain,
            },
        };
        let (jobs, queue) = mpsc::unbounded_channel();
        let by_slot = con.is_cluster();
        let renewal_con = con.sibling();
        let shared = Arc::new(Shared {
            id: uuid::Uuid::new_v4().to_string().into(),
            con,
            hub: PubSubHub::new(nodes.clone(), timeouts),
            losses: LossWatch::new(nodes, timeouts),
            config,
            sync,
            holds: Arc::new(Mutex::new(Holds::new(by_slot))),
            ids: Ids::default(),
            renewal_con,
            jobs,
            latches: Latches::default(),
        });
        let worker = background::start(queue);
        crate::observability::telemetry::client_started();
        Ok((LockClient { shared }, worker))
    }
}

/// A cluster client's command connection, and the nodes of its side
/// connections (pub/sub, loss watch), sharded if the cluster has sharded
/// pub/sub (probed once, with `PUBSUB SHARDNUMSUB`, as Redisson does).
async fn cluster_parts(
    template: ConnectionInfo,
    mut con: Connection,
) -> Result<(Connection, Nodes)> {
    let probe = redis::cmd("PUBSUB")
        .arg("SHARDNUMSUB")
        .query_async::<redis::Value>(&mut con)
        .await;
    let sharded = match probe {
        Ok(_) => true,
        // Unknown subcommand: a cluster before Redis 7.
        Err(e) if classify(&e) == Failure::Refused => false,
        Err(e) => {
            return Err(Error::Connect {
                addr: masked(&template),
                reason: e.to_string(),
            });
        }
    };
    let cluster = ClusterNodes::new(template, con.clone(), sharded);
    Ok((con, Nodes::Cluster(Arc::new(cluster))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both builds are checked: `cargo test -p redlua-runtime --lib` (no
    /// TLS) and with `--features tls-rustls` (tools/test runs both).
    #[tokio::test]
    async fn a_rediss_url_needs_the_tls_feature() {
        let connected = LockClient::connect("rediss://127.0.0.1:1/").await;
        if cfg!(feature = "tls-rustls") {
            // TLS is there: the URL is fine, nothing listens on port 1.
            assert!(
                matches!(&connected, Err(Error::Connect { addr, .. }) if addr == "rediss://127.0.0.1:1"),
                "{connected:?}"
            );
        } else {
            assert!(
                matches!(&connected, Err(Error::TlsNotEnabled)),
                "{connected:?}"
            );
            let message = Error::TlsNotEnabled.to_string();
            assert!(message.contains("`tls-rustls` feature"), "{message}");
        }
    }
}
