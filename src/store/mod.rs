//! Shared state of the gateway: retained runs, idempotency claims, promoted
//! programs, catalog snapshots and session revocations.
//!
//! The gateway instances themselves are stateless (DESIGN §3): everything that
//! must survive a request, or be visible to another instance, goes through the
//! [`Store`] trait. Two backends implement it:
//!
//! - [`memory::MemoryStore`]: an embedded moka cache, the default when no Redis
//!   URL is configured. It is correct for **one** gateway process only.
//! - [`redis::RedisStore`]: Redis, the store of every multi-instance deployment.
//!
//! Both pass the same behavioural suite ([`conformance`]), so the execute code
//! can be written once against the trait.
//!
//! Every record is namespaced by a `scope` (the principal: a tenant or an
//! anonymous session), so nothing of one principal is visible to another.
//! Values are `serde_json::Value`s; the store never interprets run records,
//! programs or snapshots, only the idempotency record it owns.

pub mod conformance;
pub mod memory;
pub mod redis;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Why a store operation failed.
///
/// The gateway maps both to an internal request error before execution; the
/// distinction exists for operators (retry later vs. inspect the data).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend could not be reached or did not answer in time.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The backend answered, but what it holds is not what this gateway wrote.
    #[error("store data corrupt: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// The message without the variant's prefix, for wrapping in a larger one.
    pub fn detail(&self) -> &str {
        match self {
            StoreError::Unavailable(detail) | StoreError::Corrupt(detail) => detail,
        }
    }
}

/// What an atomic idempotency claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyClaim {
    /// This caller now owns the key and must execute, then `complete_idempotency` or `release_idempotency`.
    Acquired,
    /// Another attempt holds the key and has not recorded a response yet (running, or it died mid-run).
    InFlight {
        fingerprint: String,
        claimed_at_ms: u64,
    },
    /// The first attempt finished; replay `response` if `fingerprint` matches, else it is a conflict.
    Completed {
        fingerprint: String,
        response: serde_json::Value,
    },
}

/// The persistent state of one idempotency key, shared by both backends.
///
/// Its JSON form (`{"state":"pending",...}` / `{"state":"completed",...}`) is
/// what Redis holds and what the Lua scripts in [`redis`] inspect, so the field
/// names are part of the stored schema (`v1`): change them only with a new
/// schema version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum IdempotencyRecord {
    /// Claimed by an attempt that has not recorded its response yet.
    Pending {
        fingerprint: String,
        claimed_at_ms: u64,
    },
    /// The owning attempt finished and recorded the response to replay.
    Completed {
        fingerprint: String,
        response: serde_json::Value,
        completed_at_ms: u64,
    },
}

impl IdempotencyRecord {
    /// What a claimer that did not get the key is told.
    pub(crate) fn into_claim(self) -> IdempotencyClaim {
        match self {
            IdempotencyRecord::Pending {
                fingerprint,
                claimed_at_ms,
            } => IdempotencyClaim::InFlight {
                fingerprint,
                claimed_at_ms,
            },
            IdempotencyRecord::Completed {
                fingerprint,
                response,
                ..
            } => IdempotencyClaim::Completed {
                fingerprint,
                response,
            },
        }
    }

    /// Whether this is a claim that `fingerprint`'s attempt may still complete or release.
    pub(crate) fn is_pending_for(&self, fingerprint: &str) -> bool {
        matches!(self, IdempotencyRecord::Pending { fingerprint: f, .. } if f == fingerprint)
    }
}

/// The storage interface the gateway is written against.
///
/// All methods are safe to call concurrently from any number of tasks and, for
/// the Redis backend, from any number of gateway instances.
#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    /// Human-readable backend name for logs/readyz ("memory" | "redis").
    fn backend(&self) -> &'static str;
    /// Cheap liveness check of the backend (readyz).
    async fn ping(&self) -> Result<(), StoreError>;
    /// Durably write a run record; returns only after the write is acknowledged. `scope` is the principal namespace.
    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &serde_json::Value,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    /// The run record, or `None` when it never existed, expired or belongs to another scope.
    async fn get_run(
        &self,
        scope: &str,
        run_id: &str,
    ) -> Result<Option<serde_json::Value>, StoreError>;
    /// Atomic claim (SET NX + expiry in Redis). The claim lives for `ttl` (the dedup window, >= retention).
    ///
    /// On `Err(Unavailable)` the claim may or may not have been recorded (the
    /// write can land after the timeout fired); the request must be refused and
    /// a later retry will see either `Acquired` or `InFlight`.
    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        ttl: Duration,
    ) -> Result<IdempotencyClaim, StoreError>;
    /// Record the response of the owning attempt (only if the stored claim is still ours: same fingerprint and still pending).
    ///
    /// When the claim is no longer ours (expired, released, already completed)
    /// nothing is written and `Ok(())` is returned: the run happened, and
    /// failing its response because the dedup record could not be written would
    /// turn a started run into a request error.
    async fn complete_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        response: &serde_json::Value,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    /// Drop a pending claim we own (request refused before execution). Never deletes a completed record.
    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
    ) -> Result<(), StoreError>;
    /// Create or replace a promoted program, kept for `ttl` from this write
    /// (the language's `promotion_lifetime`; promoting again renews it).
    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &serde_json::Value,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    /// One promoted program of the scope.
    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<serde_json::Value>, StoreError>;
    /// All programs of the scope, ordered by program_ref.
    async fn list_programs(&self, scope: &str) -> Result<Vec<serde_json::Value>, StoreError>;
    /// Catalog snapshots for changed_since: `snapshot` maps entry id -> entry digest. Kept for `ttl`.
    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &serde_json::Value,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    /// The snapshot recorded for `catalog_version`, if still kept.
    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<serde_json::Value>, StoreError>;
    /// Mark an MCP session id as revoked (DELETE) for `ttl` (at least the token lifetime).
    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError>;
    /// Whether `revoke_session` was called for this id and has not expired.
    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError>;
}

/// Store selection: `None` → memory; `Some(url)` → Redis at url (redis://host:port/db).
///
/// For Redis this connects and pings once, bounded by `op_timeout`, so a
/// misconfigured URL fails at start-up rather than on the first request.
/// `op_timeout` then bounds every Redis operation. The memory store never
/// waits on I/O and ignores it.
pub async fn connect(
    redis_url: Option<&str>,
    op_timeout: Duration,
) -> Result<Arc<dyn Store>, StoreError> {
    connect_with_ca(redis_url, op_timeout, None).await
}

/// [`connect`], trusting the CA certificates of `ca_pem` (PEM) besides the
/// system roots for a `rediss://` URL.
pub async fn connect_with_ca(
    redis_url: Option<&str>,
    op_timeout: Duration,
    ca_pem: Option<Vec<u8>>,
) -> Result<Arc<dyn Store>, StoreError> {
    match redis_url {
        None => {
            tracing::info!(
                backend = "memory",
                "using the embedded store (one instance only)"
            );
            Ok(Arc::new(memory::MemoryStore::new()))
        }
        Some(url) => {
            let store = redis::RedisStore::connect_with_ca(url, op_timeout, ca_pem).await?;
            Ok(Arc::new(store))
        }
    }
}

/// Longest expiry either backend accepts (about 100 years).
///
/// Redis rejects a `PX` whose deadline overflows, and `Instant + Duration` can
/// overflow too; no retention policy needs more than this.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// The expiry actually applied for a requested `ttl`.
///
/// Redis counts in whole milliseconds and refuses `PX 0`, so both backends round
/// up to the next millisecond (at least one) and cap at [`MAX_TTL`]: a record
/// lives at least as long as asked, and the two backends agree.
pub(crate) fn effective_ttl(ttl: Duration) -> Duration {
    let ms = ttl.as_nanos().div_ceil(1_000_000).max(1);
    let ms = u64::try_from(ms).unwrap_or(u64::MAX);
    Duration::from_millis(ms).min(MAX_TTL)
}

/// Wall-clock milliseconds since the Unix epoch, for `claimed_at_ms`.
///
/// Wall clock (not `Instant`) because the value is compared across gateway
/// instances; a clock before 1970 reads as 0 rather than failing a claim.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_rounds_up_to_whole_milliseconds() {
        assert_eq!(effective_ttl(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(
            effective_ttl(Duration::from_micros(1)),
            Duration::from_millis(1)
        );
        assert_eq!(
            effective_ttl(Duration::from_micros(1500)),
            Duration::from_millis(2)
        );
        assert_eq!(
            effective_ttl(Duration::from_secs(3)),
            Duration::from_secs(3)
        );
        assert_eq!(effective_ttl(Duration::MAX), MAX_TTL);
    }

    #[test]
    fn idempotency_record_json_shape_is_stable() {
        // The Redis Lua scripts read `state` and `fingerprint` from this JSON.
        let pending = IdempotencyRecord::Pending {
            fingerprint: "fp".into(),
            claimed_at_ms: 7,
        };
        assert_eq!(
            serde_json::to_value(&pending).ok(),
            Some(serde_json::json!({"state": "pending", "fingerprint": "fp", "claimed_at_ms": 7}))
        );
        let completed = IdempotencyRecord::Completed {
            fingerprint: "fp".into(),
            response: serde_json::json!({"ok": true}),
            completed_at_ms: 9,
        };
        assert_eq!(
            serde_json::to_value(&completed).ok(),
            Some(serde_json::json!({
                "state": "completed", "fingerprint": "fp",
                "response": {"ok": true}, "completed_at_ms": 9
            }))
        );
        assert!(pending.is_pending_for("fp"));
        assert!(!pending.is_pending_for("other"));
        assert!(!completed.is_pending_for("fp"));
    }
}
