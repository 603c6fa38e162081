//! Connecting to a Redis Cluster: commands routed by key slot, redirections
//! followed.

use super::connection::{RECONNECT_MAX_DELAY, RECONNECT_MIN_DELAY, StoreConnection};
use super::errors::redact_url;
use super::handle::RedisStore;
use crate::store::{Store, StoreError};
use std::time::Duration;

/// Attempts of one cluster command through redirections and a failover in
/// progress; the operation timeout still bounds the whole call.
const CLUSTER_RETRIES: u32 = 8;

impl RedisStore {
    /// Connects to the Redis Cluster that `urls` (some or all of its nodes)
    /// belong to: reads the slot map, then routes each command to the master
    /// of its key's slot. A `MOVED` (slot migrated, replica promoted) or `ASK`
    /// reply is followed and refreshes the map; each step is bounded by
    /// `op_timeout`.
    pub async fn connect_cluster(
        urls: &[String],
        op_timeout: Duration,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        use ::redis::ProtocolVersion;
        use ::redis::cluster::ClusterClientBuilder;
        let shown = urls
            .iter()
            .map(|u| redact_url(u))
            .collect::<Vec<_>>()
            .join(", ");
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot connect to the Redis Cluster at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        let mut builder = ClusterClientBuilder::new(urls.to_vec())
            .use_protocol(ProtocolVersion::RESP3)
            .connection_timeout(op_timeout)
            .response_timeout(op_timeout)
            // Redirections and a failover in progress are retried within the
            // operation timeout, which bounds the whole call anyway.
            .retries(CLUSTER_RETRIES)
            .min_retry_wait(RECONNECT_MIN_DELAY.as_millis() as u64)
            .max_retry_wait(RECONNECT_MAX_DELAY.as_millis() as u64);
        if let Some(root_cert) = ca_pem {
            crate::tls::install_crypto_provider();
            builder = builder.certs(::redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(root_cert),
            });
        }
        let client = builder.build().map_err(|e| {
            StoreError::Unavailable(format!("invalid Redis Cluster URLs {shown}: {e}"))
        })?;
        let conn = match tokio::time::timeout(op_timeout, client.get_async_connection()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let store = Self::over(StoreConnection::Cluster(conn), op_timeout, None);
        store
            .ping()
            .await
            .map_err(|e| unreachable(e.detail().to_owned()))?;
        tracing::info!(backend = "redis", mode = "cluster", urls = %shown, "connected to the shared store");
        Ok(store)
    }
}
