//! The connection a [`super::RedisStore`] talks through: one server
//! (behind a reconnecting manager) or a Redis Cluster (routed by key slot),
//! shared by all requests and swapped on a Sentinel failover.
//!
//! Both answer the same commands, so the store's operations are written once;
//! the enum only forwards each request to the connection in use.

use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use ::redis::cluster_async::ClusterConnection;
use ::redis::{Cmd, Pipeline, RedisFuture, Value};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Reconnection attempts per outage before the manager reports the error to
/// the waiting requests. Few attempts with a short cap keep recovery after a
/// Redis restart around a second; the keeper task starts over while Redis
/// stays away.
pub(super) const RECONNECT_RETRIES: usize = 3;
pub(super) const RECONNECT_MIN_DELAY: Duration = Duration::from_millis(50);
pub(super) const RECONNECT_MAX_DELAY: Duration = Duration::from_secs(1);

/// A cheap-to-clone handle on the store's shared connection.
#[derive(Clone)]
pub(super) enum StoreConnection {
    /// One server; the manager reconnects by itself.
    Single(ConnectionManager),
    /// A cluster; commands go to the master of their key's slot, following
    /// `MOVED`/`ASK` redirections and refreshing the slot map on failover.
    Cluster(ClusterConnection),
}

impl ConnectionLike for StoreConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            StoreConnection::Single(conn) => conn.req_packed_command(cmd),
            StoreConnection::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            StoreConnection::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            StoreConnection::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            StoreConnection::Single(conn) => conn.get_db(),
            StoreConnection::Cluster(conn) => conn.get_db(),
        }
    }
}

/// Replaced by the keeper when Sentinel names a new master.
pub(super) type SharedConnection = Arc<RwLock<StoreConnection>>;

pub(super) fn read_connection(shared: &SharedConnection) -> StoreConnection {
    shared.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// How the single-server connection manager reconnects.
pub(super) fn manager_config(op_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(op_timeout))
        .set_response_timeout(Some(op_timeout))
        .set_number_of_retries(RECONNECT_RETRIES)
        .set_min_delay(RECONNECT_MIN_DELAY)
        .set_max_delay(RECONNECT_MAX_DELAY)
}
