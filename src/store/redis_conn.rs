//! The connection a [`super::redis::RedisStore`] talks through: one server
//! (behind a reconnecting manager) or a Redis Cluster (routed by key slot).
//!
//! Both answer the same commands, so the store's operations are written once;
//! this enum only forwards each request to the connection in use.

use ::redis::aio::{ConnectionLike, ConnectionManager};
use ::redis::cluster_async::ClusterConnection;
use ::redis::{Cmd, Pipeline, RedisFuture, Value};

/// A cheap-to-clone handle on the store's shared connection.
#[derive(Clone)]
pub(crate) enum StoreConnection {
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
