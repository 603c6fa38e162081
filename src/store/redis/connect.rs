//! Connecting to one Redis server, or to the master a set of sentinels
//! monitors; each step within the operation timeout.

use super::connection::{StoreConnection, manager_config};
use super::errors::redact_url;
use super::handle::RedisStore;
use super::sentinel::MasterLocator;
use crate::store::StoreError;
use ::redis::aio::ConnectionManager;
use ::redis::{AsyncConnectionConfig, Client, RedisError, cmd};
use std::sync::Arc;
use std::time::Duration;

impl RedisStore {
    /// Connects to `url`, pings once and loads the scripts, each step within `op_timeout`.
    pub async fn connect(url: &str, op_timeout: Duration) -> Result<Self, StoreError> {
        Self::connect_with_ca(url, op_timeout, None).await
    }

    /// [`RedisStore::connect`]; a `rediss://` URL also trusts the CA
    /// certificates of `ca_pem` besides the system roots.
    pub async fn connect_with_ca(
        url: &str,
        op_timeout: Duration,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        let shown = redact_url(url);
        let client = client_for(url, ca_pem)
            .map_err(|e| StoreError::Unavailable(format!("invalid Redis URL {shown}: {e}")))?;
        let config = manager_config(op_timeout);
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot connect to Redis at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        // A one-shot probe first: the manager retries with backoff, so it would
        // report a refused connection or a wrong password only as a timeout.
        let probe = async {
            let probe_config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(op_timeout))
                .set_response_timeout(Some(op_timeout));
            let mut conn = client
                .get_multiplexed_async_connection_with_config(&probe_config)
                .await?;
            cmd("PING").query_async::<String>(&mut conn).await
        };
        match tokio::time::timeout(op_timeout, probe).await {
            Ok(Ok(_pong)) => {}
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        }
        let conn = match tokio::time::timeout(
            op_timeout,
            ConnectionManager::new_with_config(client, config),
        )
        .await
        {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let store = Self::over(StoreConnection::Single(conn), op_timeout, None);
        // Loaded now so that each script is one EVALSHA round trip; after a
        // Redis restart the first call reloads transparently (NOSCRIPT).
        store
            .bounded("script load", || async {
                let mut conn = store.conn();
                for script in [
                    &store.claim,
                    &store.start,
                    &store.complete,
                    &store.release,
                    &store.put_program,
                    &store.list_programs,
                ] {
                    script.load_async(&mut conn).await?;
                }
                Ok(())
            })
            .await
            .map_err(|e| unreachable(e.detail().to_owned()))?;
        tracing::info!(backend = "redis", url = %shown, "connected to the shared store");
        Ok(store)
    }

    /// Connects to the master that the sentinels at `urls` monitor as
    /// `master_name`, and follows it: when Sentinel promotes a replica, the
    /// keeper moves the connection to it within about the keeper's interval
    /// of the sentinels announcing it.
    pub async fn connect_sentinel(
        urls: &[String],
        master_name: &str,
        op_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let shown = urls
            .iter()
            .map(|u| redact_url(u))
            .collect::<Vec<_>>()
            .join(", ");
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot reach master '{master_name}' through the sentinels at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        let locator = MasterLocator::new(urls, master_name)
            .map_err(|e| StoreError::Unavailable(format!("invalid sentinel URLs {shown}: {e}")))?;
        let (client, addr) = match tokio::time::timeout(op_timeout, locator.master()).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let conn = match tokio::time::timeout(
            op_timeout,
            ConnectionManager::new_with_config(client, manager_config(op_timeout)),
        )
        .await
        {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        tracing::info!(backend = "redis", mode = "sentinel", master = %master_name, at = %addr, "connected to the shared store");
        Ok(Self::over(
            StoreConnection::Single(conn),
            op_timeout,
            Some((Arc::new(locator), addr)),
        ))
    }
}

/// A client for `url`, speaking RESP3 unless the URL asks otherwise: over
/// RESP3 the connection reports its own loss, and the manager reconnects at
/// once instead of when the next request fails.
fn client_for(url: &str, ca_pem: Option<Vec<u8>>) -> Result<Client, RedisError> {
    use ::redis::{IntoConnectionInfo, ProtocolVersion};
    let info = url.into_connection_info()?;
    let info = if url.contains("protocol=") {
        info
    } else {
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        info.set_redis_settings(settings)
    };
    match ca_pem {
        Some(root_cert) => {
            crate::tls::install_crypto_provider();
            Client::build_with_tls(
                info,
                ::redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                },
            )
        }
        None => Client::open(info),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn invalid_url_is_unavailable_not_a_panic() {
        let err = RedisStore::connect("not a url", Duration::from_millis(100)).await;
        assert!(matches!(err, Err(StoreError::Unavailable(m)) if m.contains("invalid Redis URL")));
    }
}
