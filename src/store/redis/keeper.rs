//! The background task that keeps the store's connection alive and, with
//! Sentinel, on the current master.

use super::connection::{SharedConnection, read_connection};
use super::sentinel::{MasterLocator, follow_master};
use ::redis::cmd;
use std::sync::Arc;
use std::time::Duration;

/// How often the keeper pings Redis, so a lost connection is re-established
/// between requests rather than by the next request failing.
pub(super) const KEEPER_INTERVAL: Duration = Duration::from_millis(500);

/// The background task that keeps the connection alive; ends with the store.
pub(super) struct Keeper(tokio::task::JoinHandle<()>);

impl Drop for Keeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Keeper {
    /// Pings every [`KEEPER_INTERVAL`]: a failed ping makes the connection
    /// manager reconnect now, and the transitions are logged for operators.
    /// With Sentinel, it first asks which server is the master and moves the
    /// connection there when that changed (a failover).
    pub(super) fn spawn(
        shared: SharedConnection,
        op_timeout: Duration,
        sentinel: Option<(Arc<MasterLocator>, String)>,
    ) -> Keeper {
        Keeper(tokio::spawn(async move {
            let mut healthy = true;
            let mut sentinel = sentinel;
            loop {
                tokio::time::sleep(KEEPER_INTERVAL).await;
                if let Some((locator, current)) = &mut sentinel {
                    follow_master(&shared, locator, current, op_timeout).await;
                }
                let mut c = read_connection(&shared);
                let ping =
                    tokio::time::timeout(op_timeout, cmd("PING").query_async::<String>(&mut c))
                        .await;
                match (ping, healthy) {
                    (Ok(Ok(_)), false) => {
                        tracing::info!(backend = "redis", "store connection re-established");
                        healthy = true;
                    }
                    (Ok(Err(e)), true) => {
                        tracing::warn!(backend = "redis", error = %e, "store connection lost; reconnecting");
                        healthy = false;
                    }
                    (Err(_), true) => {
                        tracing::warn!(
                            backend = "redis",
                            "store not answering within the operation timeout"
                        );
                        healthy = false;
                    }
                    _ => {}
                }
            }
        }))
    }
}
