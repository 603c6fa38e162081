//! [`Store`] on Redis: each method one command or one script, bounded and
//! mapped by [`RedisStore`]'s handle.

use super::handle::RedisStore;
use super::keys::*;
use super::values::{decode, encode, ttl_ms};
use crate::store::{IdempotencyClaim, IdempotencyRecord, Store, StoreError, now_ms};
use ::redis::cmd;
use serde_json::Value;
use std::time::Duration;

#[async_trait::async_trait]
impl Store for RedisStore {
    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.bounded("ping", || async {
            let mut conn = self.conn();
            let _: String = cmd("PING").query_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    async fn admit(&self, _scope: &str) -> Result<(), StoreError> {
        // A cluster answers INFO once per master: every one must have room.
        let info: redis::Value = self
            .bounded("admit", || async {
                let mut conn = self.conn();
                let info: redis::Value = cmd("INFO").arg("memory").query_async(&mut conn).await?;
                Ok(info)
            })
            .await?;
        super::headroom::node_texts(&info)
            .iter()
            .try_for_each(|text| super::headroom::Memory::parse(text).admit())
    }

    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        // Acknowledged by Redis before we return; how durable that is depends on
        // the server's persistence settings (AOF), an operations choice.
        self.set_json_px("put_run", run_key(scope, run_id), record, ttl)
            .await
    }

    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        self.get_json("get_run", run_key(scope, run_id)).await
    }

    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        let key = idempotency_key(scope, key);
        let pending = encode(&IdempotencyRecord::Pending {
            fingerprint: fingerprint.to_owned(),
            claimed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
            started: false,
        })?;
        let lease_ms = ttl_ms(lease);
        let found: ::redis::Value = self
            .bounded("claim_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.claim.prepare_invoke();
                call.key(&key).arg(&pending).arg(lease_ms).arg(attempt);
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match found {
            ::redis::Value::Int(1) => Ok(IdempotencyClaim::Acquired),
            ::redis::Value::BulkString(bytes) => {
                let record: IdempotencyRecord = decode(&key, &bytes)?;
                Ok(record.into_claim())
            }
            other => Err(StoreError::Corrupt(format!(
                "redis claim_idempotency: unexpected script reply {other:?}"
            ))),
        }
    }

    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError> {
        let key = idempotency_key(scope, key);
        let outcome: i64 = self
            .bounded("start_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.start.prepare_invoke();
                call.key(&key).arg(attempt).arg(ttl_ms(window));
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match outcome {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            ))),
        }
    }

    async fn complete_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        response: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = idempotency_key(scope, key);
        let completed = encode(&IdempotencyRecord::Completed {
            fingerprint: fingerprint.to_owned(),
            response: response.clone(),
            completed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
        })?;
        let outcome: i64 = self
            .bounded("complete_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.complete.prepare_invoke();
                call.key(&key).arg(attempt).arg(&completed).arg(ttl_ms(ttl));
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match outcome {
            1 => Ok(()),
            0 => {
                tracing::warn!(
                    backend = "redis",
                    "idempotency claim no longer owned at completion; response not recorded"
                );
                Ok(())
            }
            _ => Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            ))),
        }
    }

    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
    ) -> Result<(), StoreError> {
        let key = idempotency_key(scope, key);
        let outcome: i64 = self
            .bounded("release_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.release.prepare_invoke();
                call.key(&key).arg(attempt);
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        if outcome < 0 {
            return Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            )));
        }
        Ok(())
    }

    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let json = encode(record)?;
        let ttl = ttl_ms(ttl);
        let expires_at = now_ms().saturating_add(ttl);
        self.bounded("put_program", || async {
            let mut conn = self.conn();
            let mut call = self.put_program.prepare_invoke();
            call.key(program_key(scope, program_ref))
                .key(program_index_key(scope))
                .arg(&json)
                .arg(ttl)
                .arg(expires_at)
                .arg(program_ref);
            let _: i64 = call.invoke_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<Value>, StoreError> {
        self.get_json("get_program", program_key(scope, program_ref))
            .await
    }

    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        let mut listed = self
            .list_indexed("list_programs", program_index_key(scope), |r| {
                program_key(scope, r)
            })
            .await?;
        // In ref order, as the trait promises.
        listed.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        Ok(listed.into_iter().map(|(_, v)| v).collect())
    }

    async fn put_task(
        &self,
        scope: &str,
        task_id: &str,
        record: &Value,
        ttl: Duration,
        expected: Option<u64>,
    ) -> Result<bool, StoreError> {
        let json = encode(record)?;
        let ttl = ttl_ms(ttl);
        let expires_at = now_ms().saturating_add(ttl);
        let key = task_key(scope, task_id);
        let outcome: i64 = self
            .bounded("put_task", || async {
                let mut conn = self.conn();
                let mut call = self.put_task.prepare_invoke();
                call.key(&key)
                    .key(task_index_key(scope))
                    .arg(&json)
                    .arg(ttl)
                    .arg(expires_at)
                    .arg(task_id)
                    .arg(expected.map(|r| r.to_string()).unwrap_or_default());
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        if outcome < 0 {
            return Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid task record"
            )));
        }
        Ok(outcome == 1)
    }

    async fn get_task(&self, scope: &str, task_id: &str) -> Result<Option<Value>, StoreError> {
        self.get_json("get_task", task_key(scope, task_id)).await
    }

    async fn list_tasks(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        let listed = self
            .list_indexed("list_tasks", task_index_key(scope), |id| {
                task_key(scope, id)
            })
            .await?;
        Ok(listed.into_iter().map(|(_, v)| v).collect())
    }

    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = catalog_snapshot_key(scope, catalog_version);
        self.set_json_px("put_catalog_snapshot", key, snapshot, ttl)
            .await
    }

    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<Value>, StoreError> {
        let key = catalog_snapshot_key(scope, catalog_version);
        self.get_json("get_catalog_snapshot", key).await
    }

    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError> {
        let key = revoked_session_key(session_id);
        self.set_json_px("revoke_session", key, &Value::Bool(true), ttl)
            .await
    }

    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError> {
        let key = revoked_session_key(session_id);
        self.bounded("is_session_revoked", || async {
            let mut conn = self.conn();
            let found: i64 = cmd("EXISTS").arg(&key).query_async(&mut conn).await?;
            Ok(found > 0)
        })
        .await
    }
}

impl RedisStore {
    /// The records an index (a sorted set scored by expiry) lists, with
    /// their members, once the expired members are pruned.
    async fn list_indexed(
        &self,
        op: &'static str,
        index: String,
        key_of: impl Fn(&str) -> String,
    ) -> Result<Vec<(String, Value)>, StoreError> {
        self.bounded(op, || async {
            let mut conn = self.conn();
            let mut call = self.list_programs.prepare_invoke();
            call.key(&index).arg(now_ms());
            let members: Vec<String> = call.invoke_async(&mut conn).await?;
            if members.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = members.iter().map(|m| key_of(m)).collect();
            let raws: Vec<Option<Vec<u8>>> = cmd("MGET").arg(&keys).query_async(&mut conn).await?;
            let mut listed = Vec::with_capacity(raws.len());
            for ((member, key), raw) in members.into_iter().zip(&keys).zip(raws) {
                match raw {
                    Some(bytes) => listed.push((member, decode(key, &bytes)?)),
                    // Expired between the pruning and this read (or deleted
                    // by hand): no longer listed.
                    None => tracing::debug!(backend = "redis", %key, "indexed record expired"),
                }
            }
            Ok(listed)
        })
        .await
    }
}
