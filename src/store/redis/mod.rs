//! [`Store`] on Redis: the shared state of a multi-instance deployment.
//!
//! One [`ConnectionManager`] (a multiplexed connection that reconnects by
//! itself, at once over RESP3, and kept alive by a pinging keeper task) is
//! shared by all requests; against a Redis Cluster it is a cluster
//! connection routing by key slot instead, and with Sentinel the keeper
//! replaces the manager when the sentinels name a new master. Every operation is bounded by the
//! configured timeout and fails with [`StoreError::Unavailable`] instead of
//! waiting on a dead or frozen server, so a Redis outage costs a request at
//! most the timeout and never a stuck worker.
//!
//!
//! One file per job: `keys` (the key layout), `scripts` (the Lua scripts),
//! `connection` (the connection in use and how it reconnects), `keeper` (the
//! task keeping it alive), `connect` (one server, or a Sentinel-managed
//! master), `sentinel` (finding that master), `cluster` (a Redis Cluster),
//! `handle` (the store type and its bounded operations), `headroom` (refusing
//! before execution at `maxmemory`), `operations` (the
//! [`crate::store::Store`] methods), `errors` and `values` (failures and
//! encodings).

mod cluster;
mod connect;
mod connection;
mod errors;
mod handle;
mod headroom;
mod keeper;
mod keys;
mod operations;
mod scripts;
mod sentinel;
mod values;

pub(crate) use errors::redact_url;
pub use handle::RedisStore;
