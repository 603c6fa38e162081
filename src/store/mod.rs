//! Shared state of the gateway: retained runs, idempotency claims, promoted
//! programs, tasks, catalog snapshots and session revocations.
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
    /// No room for a new record: the embedded store's budget (after the
    /// principal's own oldest plain runs made room), or a Redis at its
    /// `maxmemory`. Nothing of anyone else was evicted for it.
    #[error("store budget full: {detail}")]
    Full {
        detail: String,
        /// When room is expected (the oldest record's expiry, or a short
        /// pause for a Redis whose memory may free up).
        retry_after_ms: u64,
    },
}

impl StoreError {
    /// The message without the variant's prefix, for wrapping in a larger one.
    pub fn detail(&self) -> &str {
        match self {
            StoreError::Unavailable(detail)
            | StoreError::Corrupt(detail)
            | StoreError::Full { detail, .. } => detail,
        }
    }
}

/// What an atomic idempotency claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyClaim {
    /// This attempt now owns the key (or already did: a retried claim of the
    /// same attempt): it must start the run with `start_idempotency`, then
    /// `complete_idempotency`, or `release_idempotency` when refused.
    Acquired,
    /// Another attempt holds the key and has not recorded a response yet.
    /// `started: false`: it has not started its run, and its claim is a short
    /// lease that frees the key by itself; `true`: the run started (running,
    /// or its process died mid-run).
    InFlight {
        fingerprint: String,
        claimed_at_ms: u64,
        started: bool,
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
/// schema version. `attempt` and `started` were added compatibly: a record
/// without them reads as owned by nobody and started, the cautious reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum IdempotencyRecord {
    /// Claimed by an attempt that has not recorded its response yet.
    Pending {
        fingerprint: String,
        claimed_at_ms: u64,
        /// The owning attempt (random, one per request).
        #[serde(default)]
        attempt: String,
        /// Whether the owner started the run (then the record lives for the
        /// dedup window; before, for the claim lease).
        #[serde(default = "started_when_unknown")]
        started: bool,
    },
    /// The owning attempt finished and recorded the response to replay.
    Completed {
        fingerprint: String,
        response: serde_json::Value,
        completed_at_ms: u64,
        #[serde(default)]
        attempt: String,
    },
}

fn started_when_unknown() -> bool {
    true
}

impl IdempotencyRecord {
    /// What a claimer that did not get the key is told.
    pub(crate) fn into_claim(self) -> IdempotencyClaim {
        match self {
            IdempotencyRecord::Pending {
                fingerprint,
                claimed_at_ms,
                started,
                ..
            } => IdempotencyClaim::InFlight {
                fingerprint,
                claimed_at_ms,
                started,
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

    /// Whether this is a claim that `attempt` owns and may still start,
    /// complete or release.
    pub(crate) fn is_pending_for(&self, attempt: &str) -> bool {
        matches!(self, IdempotencyRecord::Pending { attempt: a, .. } if !a.is_empty() && a == attempt)
    }

    /// Whether `attempt` already recorded this response (a retried completion).
    pub(crate) fn is_completed_by(&self, attempt: &str) -> bool {
        matches!(self, IdempotencyRecord::Completed { attempt: a, .. } if !a.is_empty() && a == attempt)
    }

    /// The same claim, marked as started.
    pub(crate) fn started(&self) -> Option<IdempotencyRecord> {
        match self {
            IdempotencyRecord::Pending {
                fingerprint,
                claimed_at_ms,
                attempt,
                ..
            } => Some(IdempotencyRecord::Pending {
                fingerprint: fingerprint.clone(),
                claimed_at_ms: *claimed_at_ms,
                attempt: attempt.clone(),
                started: true,
            }),
            IdempotencyRecord::Completed { .. } => None,
        }
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
    /// Whether `scope` may start something that will write records, so a
    /// refusal comes before execution: the embedded store first makes room
    /// from the principal's own oldest plain runs, and refuses with
    /// [`StoreError::Full`] only when that is not enough; Redis refuses at
    /// its `maxmemory`.
    async fn admit(&self, _scope: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// Bytes held per tenant-level principal group (`tenant`, or
    /// `anonymous:<tenant>`), the largest [`USAGE_GROUPS`] of them: the
    /// embedded store's usage for `/metrics`. Redis answers none (its own
    /// `INFO memory` is the measure there).
    fn usage(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// Runs that left before their expiry to make room for their own
    /// principal's newer runs, since start.
    fn runs_made_room(&self) -> u64 {
        0
    }
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
    /// Atomic claim (SET NX + expiry in Redis) by one `attempt` (a random id
    /// per request). The claim is a short `lease`: it frees the key by itself
    /// unless the owner starts the run in time. Claiming again with the same
    /// attempt answers `Acquired`, so a claim whose reply was lost can be retried.
    ///
    /// On `Err(Unavailable)` the claim may or may not have been recorded (the
    /// write can land after the timeout fired); the request must be refused,
    /// and the owner releases the claim later (or the lease ends it).
    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError>;
    /// Marks the owner's claim as started, right before execution, and keeps
    /// it for `window` (the dedup window, >= retention). `Ok(false)`: the
    /// claim is no longer this attempt's (its lease ended): it must not run.
    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError>;
    /// Record the response of the owning attempt (only over the claim it
    /// still owns; a retried completion by the same attempt is a no-op).
    ///
    /// When the claim is no longer ours (expired, released, completed by
    /// another) nothing is written and `Ok(())` is returned: the run happened,
    /// and failing its response because the dedup record could not be written
    /// would turn a started run into a request error.
    async fn complete_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        response: &serde_json::Value,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    /// Drop a pending claim `attempt` owns (nothing was executed). Never
    /// deletes a completed record or another attempt's claim.
    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
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
    /// Writes a task record (`tasks/`) for `ttl`, the lifetime it has left.
    /// `expected: None` creates it, only when no task of that id exists;
    /// `Some(r)` replaces it only while the stored record's `revision` is
    /// `r`, so two instances never both move one task. Whether it was
    /// written. Task records are admitted like promoted programs.
    async fn put_task(
        &self,
        scope: &str,
        task_id: &str,
        record: &serde_json::Value,
        ttl: Duration,
        expected: Option<u64>,
    ) -> Result<bool, StoreError>;
    /// One task of the scope; another scope's task is indistinguishable from none.
    async fn get_task(
        &self,
        scope: &str,
        task_id: &str,
    ) -> Result<Option<serde_json::Value>, StoreError>;
    /// Every unexpired task of the scope, in no particular order.
    async fn list_tasks(&self, scope: &str) -> Result<Vec<serde_json::Value>, StoreError>;
    /// Mark an MCP session id as revoked (DELETE) for `ttl` (at least the token lifetime).
    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError>;
    /// Whether `revoke_session` was called for this id and has not expired.
    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError>;
}

/// At most this many principal groups are reported by [`Store::usage`], so
/// the label set of `/metrics` stays bounded whatever the traffic.
pub const USAGE_GROUPS: usize = 20;

/// The tenant-level group a scope (`key:<tenant>:<name>`,
/// `jwt:<tenant>:…`, `anon:<tenant>:<owner>`) is reported under: never a
/// session or subject, so label values are few and reveal no caller.
pub fn usage_group(scope: &str) -> String {
    let mut parts = scope.splitn(3, ':');
    match (parts.next(), parts.next()) {
        (Some("anon"), Some(tenant)) => format!("anonymous:{tenant}"),
        (Some(_), Some(tenant)) => tenant.to_owned(),
        _ => "other".to_owned(),
    }
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
    let backend = match redis_url {
        Some(url) => Backend::Redis(url),
        None => Backend::Memory,
    };
    connect_with(backend, op_timeout, memory::MemoryLimits::default(), None).await
}

/// Which backend [`connect_with`] opens.
#[derive(Debug, Clone, Copy)]
pub enum Backend<'a> {
    /// The embedded in-memory store (one instance only).
    Memory,
    /// One Redis server at this URL (redis://host:port/db).
    Redis(&'a str),
    /// A Redis Cluster reached through these node URLs.
    RedisCluster(&'a [String]),
    /// The master Sentinel monitors under `master_name`, found through these
    /// sentinel URLs and followed across failovers.
    RedisSentinel {
        urls: &'a [String],
        master_name: &'a str,
    },
}

/// [`connect`] with the embedded store's budgets, trusting the CA
/// certificates of `ca_pem` (PEM) besides the system roots for a `rediss://`
/// URL.
pub async fn connect_with(
    backend: Backend<'_>,
    op_timeout: Duration,
    limits: memory::MemoryLimits,
    ca_pem: Option<Vec<u8>>,
) -> Result<Arc<dyn Store>, StoreError> {
    match backend {
        Backend::Memory => {
            tracing::info!(
                backend = "memory",
                principal_bytes = limits.principal_bytes,
                total_bytes = limits.total_bytes,
                "using the embedded store (one instance only)"
            );
            Ok(Arc::new(memory::MemoryStore::with_limits(limits)))
        }
        Backend::Redis(url) => {
            let store = redis::RedisStore::connect_with_ca(url, op_timeout, ca_pem).await?;
            Ok(Arc::new(store))
        }
        Backend::RedisCluster(urls) => {
            let store = redis::RedisStore::connect_cluster(urls, op_timeout, ca_pem).await?;
            Ok(Arc::new(store))
        }
        Backend::RedisSentinel { urls, master_name } => {
            let store = redis::RedisStore::connect_sentinel(urls, master_name, op_timeout).await?;
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
            attempt: "a1".into(),
            started: false,
        };
        assert_eq!(
            serde_json::to_value(&pending).ok(),
            Some(
                serde_json::json!({"state": "pending", "fingerprint": "fp", "claimed_at_ms": 7,
                "attempt": "a1", "started": false})
            )
        );
        let completed = IdempotencyRecord::Completed {
            fingerprint: "fp".into(),
            response: serde_json::json!({"ok": true}),
            completed_at_ms: 9,
            attempt: "a1".into(),
        };
        assert_eq!(
            serde_json::to_value(&completed).ok(),
            Some(serde_json::json!({
                "state": "completed", "fingerprint": "fp",
                "response": {"ok": true}, "completed_at_ms": 9, "attempt": "a1"
            }))
        );
        assert!(pending.is_pending_for("a1"));
        assert!(!pending.is_pending_for("other"));
        assert!(!completed.is_pending_for("a1"));
        assert!(completed.is_completed_by("a1"));
        assert_eq!(
            pending.started().map(|r| r.into_claim()),
            Some(IdempotencyClaim::InFlight {
                fingerprint: "fp".into(),
                claimed_at_ms: 7,
                started: true
            })
        );
    }

    #[test]
    fn records_written_before_attempts_read_as_started_and_unowned() {
        let old: IdempotencyRecord = serde_json::from_value(
            serde_json::json!({"state": "pending", "fingerprint": "fp", "claimed_at_ms": 7}),
        )
        .expect("an old pending record parses");
        assert!(!old.is_pending_for(""));
        assert!(matches!(
            old.into_claim(),
            IdempotencyClaim::InFlight { started: true, .. }
        ));
    }
}
