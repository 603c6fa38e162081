//! The Redis-backed store: one shared connection, its keeper, its scripts,
//! and every operation bounded by the configured timeout and mapped to a
//! [`StoreError`].

use super::connection::{SharedConnection, StoreConnection, read_connection};
use super::errors::{OpError, connection_lost, map_redis_error};
use super::keeper::Keeper;
use super::scripts::*;
use super::sentinel::MasterLocator;
use super::values::{decode, encode, ttl_ms};
use crate::store::StoreError;
use ::redis::{Script, cmd};
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The Redis-backed store.
pub struct RedisStore {
    /// Replaced by the keeper when Sentinel names a new master.
    conn: SharedConnection,
    op_timeout: Duration,
    pub(super) claim: Script,
    pub(super) start: Script,
    pub(super) complete: Script,
    pub(super) release: Script,
    pub(super) put_program: Script,
    pub(super) list_programs: Script,
    pub(super) put_task: Script,
    _keeper: Keeper,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("op_timeout", &self.op_timeout)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// The connection in use now.
    pub(super) fn conn(&self) -> StoreConnection {
        read_connection(&self.conn)
    }

    /// The store over an established connection, with its keeper running.
    /// Scripts are sent by digest and loaded on a node's first `NOSCRIPT`.
    pub(super) fn over(
        conn: StoreConnection,
        op_timeout: Duration,
        sentinel: Option<(Arc<MasterLocator>, String)>,
    ) -> Self {
        let conn = Arc::new(RwLock::new(conn));
        RedisStore {
            _keeper: Keeper::spawn(conn.clone(), op_timeout, sentinel),
            conn,
            op_timeout,
            claim: Script::new(CLAIM_SCRIPT),
            start: Script::new(START_SCRIPT),
            complete: Script::new(COMPLETE_SCRIPT),
            release: Script::new(RELEASE_SCRIPT),
            put_program: Script::new(PUT_PROGRAM_SCRIPT),
            list_programs: Script::new(LIST_PROGRAMS_SCRIPT),
            put_task: Script::new(PUT_TASK_SCRIPT),
        }
    }

    /// Runs one store operation under the timeout, mapping every failure.
    ///
    /// An operation that failed because the connection was lost (Redis
    /// restarted, a proxy dropped it) is tried once more on the connection
    /// the manager re-establishes: every operation here is safe to repeat
    /// (plain reads and overwrites, and scripts that recognise their own
    /// attempt). A timeout is not retried: the command may still be queued.
    pub(super) async fn bounded<T, F>(
        &self,
        op: &'static str,
        work: impl Fn() -> F,
    ) -> Result<T, StoreError>
    where
        F: Future<Output = Result<T, OpError>>,
    {
        let mut retried = false;
        loop {
            match tokio::time::timeout(self.op_timeout, work()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(OpError::Store(err))) => return Err(err),
                Ok(Err(OpError::Redis(err))) if !retried && connection_lost(&err) => {
                    tracing::info!(backend = "redis", op, error = %err, "store connection lost; retrying once on a new connection");
                    retried = true;
                }
                Ok(Err(OpError::Redis(err))) => return Err(map_redis_error(op, &err)),
                Err(_) => {
                    return Err(StoreError::Unavailable(format!(
                        "redis {op}: no reply within {} ms",
                        self.op_timeout.as_millis()
                    )));
                }
            }
        }
    }

    pub(super) async fn get_json(
        &self,
        op: &'static str,
        key: String,
    ) -> Result<Option<Value>, StoreError> {
        self.bounded(op, || async {
            let mut conn = self.conn();
            let raw: Option<Vec<u8>> = cmd("GET").arg(&key).query_async(&mut conn).await?;
            match raw {
                Some(bytes) => Ok(Some(decode(&key, &bytes)?)),
                None => Ok(None),
            }
        })
        .await
    }

    pub(super) async fn set_json_px(
        &self,
        op: &'static str,
        key: String,
        value: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let json = encode(value)?;
        self.bounded(op, || async {
            let mut conn = self.conn();
            let () = cmd("SET")
                .arg(&key)
                .arg(&json)
                .arg("PX")
                .arg(ttl_ms(ttl))
                .query_async(&mut conn)
                .await?;
            Ok(())
        })
        .await
    }
}
