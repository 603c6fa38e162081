//! A [`Store`] that times every operation of the store it wraps and counts
//! its failures (`pilotage_store_operation_duration_seconds`,
//! `pilotage_store_errors_total`), so neither backend carries metrics code.

use super::Metrics;
use crate::store::{IdempotencyClaim, Store, StoreError};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The wrapped store and where its timings go.
pub struct MeteredStore {
    inner: Arc<dyn Store>,
    metrics: Arc<Metrics>,
}

impl MeteredStore {
    pub fn wrap(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Arc<dyn Store> {
        Arc::new(Self { inner, metrics })
    }

    async fn timed<T>(
        &self,
        operation: &str,
        f: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let result = f.await;
        let backend = self.inner.backend();
        self.metrics
            .store_operations
            .with_label_values(&[operation, backend])
            .observe(started.elapsed().as_secs_f64());
        if let Err(e) = &result {
            let error = match e {
                StoreError::Unavailable(_) => "unavailable",
                StoreError::Corrupt(_) => "corrupt",
                StoreError::Full { .. } => "full",
            };
            self.metrics
                .store_errors
                .with_label_values(&[operation, backend, error])
                .inc();
        }
        result
    }
}

#[async_trait::async_trait]
impl Store for MeteredStore {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.timed("ping", self.inner.ping()).await
    }
    fn usage(&self) -> Vec<(String, u64)> {
        self.inner.usage()
    }
    fn runs_made_room(&self) -> u64 {
        self.inner.runs_made_room()
    }
    async fn admit(&self, scope: &str) -> Result<(), StoreError> {
        self.timed("admit", self.inner.admit(scope)).await
    }
    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.timed("put_run", self.inner.put_run(scope, run_id, record, ttl))
            .await
    }
    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        self.timed("get_run", self.inner.get_run(scope, run_id))
            .await
    }
    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        self.timed(
            "claim_idempotency",
            self.inner
                .claim_idempotency(scope, key, fingerprint, attempt, lease),
        )
        .await
    }
    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError> {
        self.timed(
            "start_idempotency",
            self.inner.start_idempotency(scope, key, attempt, window),
        )
        .await
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
        self.timed(
            "complete_idempotency",
            self.inner
                .complete_idempotency(scope, key, fingerprint, attempt, response, ttl),
        )
        .await
    }
    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
    ) -> Result<(), StoreError> {
        self.timed(
            "release_idempotency",
            self.inner.release_idempotency(scope, key, attempt),
        )
        .await
    }
    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.timed(
            "put_program",
            self.inner.put_program(scope, program_ref, record, ttl),
        )
        .await
    }
    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<Value>, StoreError> {
        self.timed("get_program", self.inner.get_program(scope, program_ref))
            .await
    }
    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        self.timed("list_programs", self.inner.list_programs(scope))
            .await
    }
    async fn put_task(
        &self,
        scope: &str,
        task_id: &str,
        record: &Value,
        ttl: Duration,
        expected: Option<u64>,
    ) -> Result<bool, StoreError> {
        self.timed(
            "put_task",
            self.inner.put_task(scope, task_id, record, ttl, expected),
        )
        .await
    }
    async fn get_task(&self, scope: &str, task_id: &str) -> Result<Option<Value>, StoreError> {
        self.timed("get_task", self.inner.get_task(scope, task_id))
            .await
    }
    async fn list_tasks(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        self.timed("list_tasks", self.inner.list_tasks(scope)).await
    }
    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.timed(
            "put_catalog_snapshot",
            self.inner
                .put_catalog_snapshot(scope, catalog_version, snapshot, ttl),
        )
        .await
    }
    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<Value>, StoreError> {
        self.timed(
            "get_catalog_snapshot",
            self.inner.get_catalog_snapshot(scope, catalog_version),
        )
        .await
    }
    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError> {
        self.timed("revoke_session", self.inner.revoke_session(session_id, ttl))
            .await
    }
    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError> {
        self.timed(
            "is_session_revoked",
            self.inner.is_session_revoked(session_id),
        )
        .await
    }
}

/// `/metrics` lines of the store's own accounting: bytes held per
/// tenant-level principal group (the largest few, so labels stay bounded)
/// and the runs that made room for newer ones.
pub fn usage_exposition(store: &dyn Store) -> String {
    let mut out = String::new();
    out.push_str("# HELP pilotage_store_principal_bytes Bytes the embedded store holds per tenant-level principal group (largest groups only).\n");
    out.push_str("# TYPE pilotage_store_principal_bytes gauge\n");
    for (group, bytes) in store.usage() {
        let label = group.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!(
            "pilotage_store_principal_bytes{{principal=\"{label}\"}} {bytes}\n"
        ));
    }
    out.push_str("# HELP pilotage_store_runs_made_room_total Stored runs that left before their expiry to make room for their own principal's newer runs.\n");
    out.push_str("# TYPE pilotage_store_runs_made_room_total counter\n");
    out.push_str(&format!(
        "pilotage_store_runs_made_room_total {}\n",
        store.runs_made_room()
    ));
    out
}
