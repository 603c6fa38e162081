//! Finding the Redis master through Sentinel, and noticing when it changed.
//!
//! Sentinel promotes a replica when the master fails; the store asks the
//! sentinels which server is the master now and moves its connection there
//! (see the keeper in [`super::redis`]), so a failover needs no restart.

use ::redis::sentinel::{SentinelClient, SentinelServerType};
use ::redis::{Client, ConnectionAddr, RedisError};
use tokio::sync::Mutex;

/// The sentinels of one monitored master.
pub(crate) struct MasterLocator {
    sentinels: Mutex<SentinelClient>,
    pub(crate) master_name: String,
}

impl MasterLocator {
    pub(crate) fn new(urls: &[String], master_name: &str) -> Result<Self, RedisError> {
        let client =
            SentinelClient::build(urls.to_vec(), master_name, None, SentinelServerType::Master)?;
        Ok(MasterLocator {
            sentinels: Mutex::new(client),
            master_name: master_name.to_owned(),
        })
    }

    /// A client for the server the sentinels name as master now (checked
    /// to answer as one), and its address.
    pub(crate) async fn master(&self) -> Result<(Client, String), RedisError> {
        let client = self.sentinels.lock().await.async_get_client().await?;
        let addr = describe(client.get_connection_info().addr());
        Ok((client, addr))
    }
}

/// `host:port` of a server address, for comparing and logging.
pub(crate) fn describe(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
        other => format!("{other:?}"),
    }
}
