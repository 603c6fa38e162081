//! Finding the Redis master through Sentinel, and following it when it
//! changed.
//!
//! Sentinel promotes a replica when the master fails; the keeper asks the
//! sentinels which server is the master now and moves the store's connection
//! there, so a failover needs no restart.

use super::connection::{SharedConnection, StoreConnection, manager_config};
use ::redis::aio::ConnectionManager;
use ::redis::sentinel::{SentinelClient, SentinelServerType};
use ::redis::{Client, ConnectionAddr, RedisError};
use std::time::Duration;
use tokio::sync::Mutex;

/// The sentinels of one monitored master.
pub(super) struct MasterLocator {
    sentinels: Mutex<SentinelClient>,
    pub(super) master_name: String,
}

impl MasterLocator {
    pub(super) fn new(urls: &[String], master_name: &str) -> Result<Self, RedisError> {
        let client =
            SentinelClient::build(urls.to_vec(), master_name, None, SentinelServerType::Master)?;
        Ok(MasterLocator {
            sentinels: Mutex::new(client),
            master_name: master_name.to_owned(),
        })
    }

    /// A client for the server the sentinels name as master now (checked
    /// to answer as one), and its address.
    pub(super) async fn master(&self) -> Result<(Client, String), RedisError> {
        let client = self.sentinels.lock().await.async_get_client().await?;
        let addr = describe(client.get_connection_info().addr());
        Ok((client, addr))
    }
}

/// `host:port` of a server address, for comparing and logging.
pub(super) fn describe(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
        other => format!("{other:?}"),
    }
}

/// Asks the sentinels for the master; when it is another server than
/// `current`, connects there and swaps the shared connection.
pub(super) async fn follow_master(
    shared: &SharedConnection,
    locator: &MasterLocator,
    current: &mut String,
    op_timeout: Duration,
) {
    let found = tokio::time::timeout(op_timeout, locator.master()).await;
    let (client, addr) = match found {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            tracing::debug!(backend = "redis", error = %e, "sentinels not answering");
            return;
        }
        Err(_) => return,
    };
    if addr == *current {
        return;
    }
    let manager = tokio::time::timeout(
        op_timeout,
        ConnectionManager::new_with_config(client, manager_config(op_timeout)),
    )
    .await;
    match manager {
        Ok(Ok(manager)) => {
            tracing::warn!(backend = "redis", master = %locator.master_name, from = %current, to = %addr, "sentinel failover: following the new master");
            *shared.write().unwrap_or_else(|e| e.into_inner()) = StoreConnection::Single(manager);
            *current = addr;
        }
        Ok(Err(e)) => {
            tracing::warn!(backend = "redis", error = %e, to = %addr, "cannot connect to the new master yet")
        }
        Err(_) => {}
    }
}
