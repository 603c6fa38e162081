//! Placeholder interface; replaced by the store module.
use std::time::Duration;
use serde_json::Value;
#[derive(Debug, thiserror::Error)]
pub enum StoreError { #[error("store unavailable: {0}")] Unavailable(String), #[error("store data corrupt: {0}")] Corrupt(String) }
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyClaim { Acquired, InFlight { fingerprint: String, claimed_at_ms: u64 }, Completed { fingerprint: String, response: Value } }
#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    fn backend(&self) -> &'static str;
    async fn ping(&self) -> Result<(), StoreError>;
    async fn put_run(&self, scope: &str, run_id: &str, record: &Value, ttl: Duration) -> Result<(), StoreError>;
    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError>;
    async fn claim_idempotency(&self, scope: &str, key: &str, fingerprint: &str, ttl: Duration) -> Result<IdempotencyClaim, StoreError>;
    async fn complete_idempotency(&self, scope: &str, key: &str, fingerprint: &str, response: &Value, ttl: Duration) -> Result<(), StoreError>;
    async fn release_idempotency(&self, scope: &str, key: &str, fingerprint: &str) -> Result<(), StoreError>;
    async fn put_program(&self, scope: &str, program_ref: &str, record: &Value) -> Result<(), StoreError>;
    async fn get_program(&self, scope: &str, program_ref: &str) -> Result<Option<Value>, StoreError>;
    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError>;
    async fn put_catalog_snapshot(&self, scope: &str, catalog_version: &str, snapshot: &Value, ttl: Duration) -> Result<(), StoreError>;
    async fn get_catalog_snapshot(&self, scope: &str, catalog_version: &str) -> Result<Option<Value>, StoreError>;
    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError>;
    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError>;
}
pub async fn connect(_redis_url: Option<&str>, _op_timeout: Duration) -> Result<std::sync::Arc<dyn Store>, StoreError> { Err(StoreError::Unavailable("placeholder".into())) }
