//! Embedded [`Store`] on moka caches: the default when no Redis URL is set.
//!
//! It keeps everything in this process, so it is only correct for a single
//! gateway instance (a second instance would have its own claims and runs).
//! Every record kind has its own cache with a byte budget ([`MemoryLimits`]);
//! each entry carries its own expiry, applied by moka's [`Expiry`] hook, so a
//! run kept for a day and a claim kept for a week live side by side.
//!
//! Concurrency: reads and plain writes go straight to moka's concurrent maps.
//! Read-modify-write operations (idempotency claims, program upserts) use
//! `entry().and_compute_with`, which serialises callers **per key** only, so
//! there is no store-wide lock anywhere.
//!
//! Bounded, not durable: when a budget is full the least recently used entries
//! of that kind are evicted (LRU rather than moka's default TinyLFU, because
//! TinyLFU may refuse to admit a *new* entry, and a refused claim or run write
//! would be silently lost). An evicted run or claim is a retention or dedup
//! promise broken, so the budgets are sized far above what a single trial
//! instance holds. Sizes are estimates of heap use, not exact counts.

use std::collections::BTreeMap;
use std::future::ready;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use moka::ops::compute::{CompResult, Op};
use moka::policy::EvictionPolicy;
use serde_json::Value;

use super::{IdempotencyClaim, IdempotencyRecord, Store, StoreError, effective_ttl, now_ms};

/// Byte budgets of the embedded store, one per record kind.
///
/// Separate budgets keep a burst of one kind (say, large full-trace runs)
/// from evicting another (idempotency claims, promoted programs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Retained run records (traces dominate): default 8 MiB. The embedded
    /// store is for one instance trying the gateway out: it keeps the most
    /// recent runs within this budget (the estimate counts JSON bytes; the
    /// process holds about three times that) and loses everything on restart.
    /// Deployments that promise retention use Redis.
    pub runs_bytes: u64,
    /// Idempotency claims and recorded responses: default 8 MiB.
    pub idempotency_bytes: u64,
    /// Promoted programs: default 16 MiB. Each expires after its
    /// language's `promotion_lifetime`; the budget can push one out sooner.
    pub programs_bytes: u64,
    /// Catalog snapshots for `changed_since`: default 4 MiB.
    pub catalog_snapshots_bytes: u64,
    /// Revoked session ids: default 2 MiB (about 12,000 ids).
    pub revoked_sessions_bytes: u64,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        MemoryLimits {
            runs_bytes: 8 * MIB,
            idempotency_bytes: 8 * MIB,
            programs_bytes: 16 * MIB,
            catalog_snapshots_bytes: 4 * MIB,
            revoked_sessions_bytes: 2 * MIB,
        }
    }
}

/// `(scope, id)`: every scoped record is keyed by its principal first.
type ScopedKey = (String, String);

/// The embedded single-instance store.
pub struct MemoryStore {
    runs: Cache<ScopedKey, Stored<Value>>,
    idempotency: Cache<ScopedKey, Stored<IdempotencyRecord>>,
    /// One entry per scope, holding all its programs sorted by ref, so listing
    /// is a single lookup and already in order.
    programs: Cache<String, Stored<ProgramSet>>,
    catalog_snapshots: Cache<ScopedKey, Stored<Value>>,
    revoked_sessions: Cache<String, Stored<()>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("runs", &self.runs.entry_count())
            .field("idempotency", &self.idempotency.entry_count())
            .field("program_scopes", &self.programs.entry_count())
            .field("catalog_snapshots", &self.catalog_snapshots.entry_count())
            .field("revoked_sessions", &self.revoked_sessions.entry_count())
            .finish()
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// A store with the default [`MemoryLimits`].
    pub fn new() -> Self {
        Self::with_limits(MemoryLimits::default())
    }

    /// A store with explicit byte budgets.
    pub fn with_limits(limits: MemoryLimits) -> Self {
        MemoryStore {
            runs: cache("runs", limits.runs_bytes),
            idempotency: cache("idempotency", limits.idempotency_bytes),
            programs: cache("programs", limits.programs_bytes),
            catalog_snapshots: cache("catalog-snapshots", limits.catalog_snapshots_bytes),
            revoked_sessions: cache("revoked-sessions", limits.revoked_sessions_bytes),
        }
    }

    /// Estimated bytes held per record kind, after pending evictions ran.
    ///
    /// In the order of [`MemoryLimits`]' fields; for tests and diagnostics.
    pub async fn weighted_sizes(&self) -> [u64; 5] {
        self.runs.run_pending_tasks().await;
        self.idempotency.run_pending_tasks().await;
        self.programs.run_pending_tasks().await;
        self.catalog_snapshots.run_pending_tasks().await;
        self.revoked_sessions.run_pending_tasks().await;
        [
            self.runs.weighted_size(),
            self.idempotency.weighted_size(),
            self.programs.weighted_size(),
            self.catalog_snapshots.weighted_size(),
            self.revoked_sessions.weighted_size(),
        ]
    }
}

/// A bounded, LRU, per-entry-expiry cache weighed in estimated bytes.
fn cache<K, T>(name: &str, max_bytes: u64) -> Cache<K, Stored<T>>
where
    K: Hash + Eq + Send + Sync + 'static,
    T: Send + Sync + 'static,
{
    Cache::builder()
        .name(name)
        .max_capacity(max_bytes)
        .weigher(|_key, stored: &Stored<T>| stored.weight)
        .expire_after(PerEntryTtl)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

/// A cached value with its own lifetime and estimated size.
///
/// The value sits behind an `Arc` because moka clones values on every read
/// and compute; cloning a large trace each time would be wasteful.
#[derive(Debug)]
struct Stored<T> {
    value: Arc<T>,
    /// `None`: never expires.
    ttl: Option<Duration>,
    weight: u32,
}

impl<T> Clone for Stored<T> {
    fn clone(&self) -> Self {
        Stored {
            value: Arc::clone(&self.value),
            ttl: self.ttl,
            weight: self.weight,
        }
    }
}

impl<T> Stored<T> {
    fn new(value: T, ttl: Option<Duration>, bytes: u64) -> Self {
        Stored {
            value: Arc::new(value),
            ttl: ttl.map(effective_ttl),
            weight: u32::try_from(bytes.saturating_add(ENTRY_OVERHEAD)).unwrap_or(u32::MAX),
        }
    }
}

/// Rough per-entry bookkeeping cost (key tuple, `Arc`, moka's entry node).
const ENTRY_OVERHEAD: u64 = 96;

/// moka expiry policy: each entry lives for its own `ttl`, counted from its
/// last write (like Redis `SET ... PX`); reads do not extend it.
struct PerEntryTtl;

impl<K, T> Expiry<K, Stored<T>> for PerEntryTtl {
    fn expire_after_create(&self, _key: &K, stored: &Stored<T>, _at: Instant) -> Option<Duration> {
        stored.ttl
    }

    fn expire_after_update(
        &self,
        _key: &K,
        stored: &Stored<T>,
        _at: Instant,
        _remaining: Option<Duration>,
    ) -> Option<Duration> {
        stored.ttl
    }
}

/// All promoted programs of one scope, with their summed size so an upsert
/// does not have to re-measure the whole set, and each program's deadline.
#[derive(Debug, Clone, Default)]
struct ProgramSet {
    programs: BTreeMap<String, Value>,
    deadlines: BTreeMap<String, Instant>,
    bytes: u64,
}

impl ProgramSet {
    fn upsert(&mut self, program_ref: &str, record: &Value, deadline: Instant) {
        self.prune(Instant::now());
        let added = program_ref.len() as u64 + approx_size(record);
        if let Some(old) = self.programs.insert(program_ref.to_owned(), record.clone()) {
            let removed = program_ref.len() as u64 + approx_size(&old);
            self.bytes = self.bytes.saturating_sub(removed);
        }
        self.deadlines.insert(program_ref.to_owned(), deadline);
        self.bytes = self.bytes.saturating_add(added);
    }

    /// Drops the programs whose lifetime ended before `now`.
    fn prune(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .deadlines
            .iter()
            .filter(|(_, d)| **d <= now)
            .map(|(r, _)| r.clone())
            .collect();
        for program_ref in expired {
            self.deadlines.remove(&program_ref);
            if let Some(old) = self.programs.remove(&program_ref) {
                let removed = program_ref.len() as u64 + approx_size(&old);
                self.bytes = self.bytes.saturating_sub(removed);
            }
        }
    }

    fn live(&self, program_ref: &str, now: Instant) -> bool {
        self.deadlines.get(program_ref).is_some_and(|d| *d > now)
    }

    /// How long the whole set must stay: until its last program's deadline.
    fn remaining(&self, now: Instant) -> Duration {
        self.deadlines
            .values()
            .max()
            .map(|d| d.saturating_duration_since(now))
            .unwrap_or(Duration::ZERO)
    }
}

/// Estimated heap bytes of a JSON value.
///
/// Iterative (an explicit stack) so that a pathologically deep value cannot
/// overflow the thread stack while merely being measured.
fn approx_size(value: &Value) -> u64 {
    /// Size of a `Value` node itself (enum + inline data).
    const NODE: u64 = 32;
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
            Value::String(s) => total = total.saturating_add(s.len() as u64),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                for (k, item) in map {
                    // Key string plus the map's per-entry bookkeeping.
                    total = total.saturating_add(k.len() as u64 + NODE);
                    stack.push(item);
                }
            }
        }
    }
    total
}

fn scoped(scope: &str, id: &str) -> ScopedKey {
    (scope.to_owned(), id.to_owned())
}

fn key_bytes(scope: &str, id: &str) -> u64 {
    (scope.len() + id.len()) as u64
}

#[async_trait::async_trait]
impl Store for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let bytes = key_bytes(scope, run_id) + approx_size(record);
        self.runs
            .insert(
                scoped(scope, run_id),
                Stored::new(record.clone(), Some(ttl), bytes),
            )
            .await;
        Ok(())
    }

    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        let stored = self.runs.get(&scoped(scope, run_id)).await;
        Ok(stored.map(|s| Value::clone(&s.value)))
    }

    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        ttl: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        let bytes = key_bytes(scope, key) + fingerprint.len() as u64;
        let outcome = self
            .idempotency
            .entry(scoped(scope, key))
            .and_compute_with(|existing| {
                // Runs under moka's per-key lock: exactly one concurrent caller
                // sees `None` and inserts; the others see its record.
                ready(match existing {
                    Some(_) => Op::Nop,
                    None => Op::Put(Stored::new(
                        IdempotencyRecord::Pending {
                            fingerprint: fingerprint.to_owned(),
                            claimed_at_ms: now_ms(),
                        },
                        Some(ttl),
                        bytes,
                    )),
                })
            })
            .await;
        match outcome {
            CompResult::Inserted(_) => Ok(IdempotencyClaim::Acquired),
            CompResult::Unchanged(entry) => {
                Ok(IdempotencyRecord::clone(&entry.into_value().value).into_claim())
            }
            // Put-if-absent / Nop-if-present can produce nothing else.
            other => Err(StoreError::Corrupt(format!(
                "idempotency claim produced an impossible cache outcome: {other:?}"
            ))),
        }
    }

    async fn complete_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        response: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let bytes = key_bytes(scope, key) + fingerprint.len() as u64 + approx_size(response);
        let outcome = self
            .idempotency
            .entry(scoped(scope, key))
            .and_compute_with(|existing| {
                ready(match existing {
                    Some(entry) if entry.value().value.is_pending_for(fingerprint) => {
                        Op::Put(Stored::new(
                            IdempotencyRecord::Completed {
                                fingerprint: fingerprint.to_owned(),
                                response: response.clone(),
                                completed_at_ms: now_ms(),
                            },
                            Some(ttl),
                            bytes,
                        ))
                    }
                    _ => Op::Nop,
                })
            })
            .await;
        if !matches!(outcome, CompResult::ReplacedWith(_)) {
            tracing::warn!(
                backend = "memory",
                "idempotency claim no longer owned at completion; response not recorded"
            );
        }
        Ok(())
    }

    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
    ) -> Result<(), StoreError> {
        self.idempotency
            .entry(scoped(scope, key))
            .and_compute_with(|existing| {
                ready(match existing {
                    Some(entry) if entry.value().value.is_pending_for(fingerprint) => Op::Remove,
                    _ => Op::Nop,
                })
            })
            .await;
        Ok(())
    }

    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let now = Instant::now();
        let deadline = now + effective_ttl(ttl);
        self.programs
            .entry(scope.to_owned())
            .and_compute_with(|existing| {
                // Copy-on-write of the scope's set; per-scope lock only.
                let mut set = existing
                    .map(|entry| ProgramSet::clone(&entry.into_value().value))
                    .unwrap_or_default();
                set.upsert(program_ref, record, deadline);
                let bytes = scope.len() as u64 + set.bytes;
                let keep = set.remaining(now);
                ready(Op::Put(Stored::new(set, Some(keep), bytes)))
            })
            .await;
        Ok(())
    }

    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<Value>, StoreError> {
        let set = self.programs.get(scope).await;
        let now = Instant::now();
        Ok(set
            .filter(|s| s.value.live(program_ref, now))
            .and_then(|s| s.value.programs.get(program_ref).cloned()))
    }

    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        let set = self.programs.get(scope).await;
        let now = Instant::now();
        Ok(set
            .map(|s| {
                s.value
                    .programs
                    .iter()
                    .filter(|(r, _)| s.value.live(r, now))
                    .map(|(_, p)| p.clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let bytes = key_bytes(scope, catalog_version) + approx_size(snapshot);
        self.catalog_snapshots
            .insert(
                scoped(scope, catalog_version),
                Stored::new(snapshot.clone(), Some(ttl), bytes),
            )
            .await;
        Ok(())
    }

    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<Value>, StoreError> {
        let stored = self
            .catalog_snapshots
            .get(&scoped(scope, catalog_version))
            .await;
        Ok(stored.map(|s| Value::clone(&s.value)))
    }

    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError> {
        self.revoked_sessions
            .insert(
                session_id.to_owned(),
                Stored::new((), Some(ttl), session_id.len() as u64),
            )
            .await;
        Ok(())
    }

    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError> {
        Ok(self.revoked_sessions.get(session_id).await.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn setup() -> (Arc<dyn Store>, ()) {
        (Arc::new(MemoryStore::new()), ())
    }

    // The behavioural suite shared with the Redis backend.
    crate::store_conformance_tests!(setup);

    #[test]
    fn approx_size_grows_with_content() {
        let small = approx_size(&json!({"a": 1}));
        let large = approx_size(&json!({"a": "x".repeat(10_000)}));
        assert!(small > 0);
        assert!(large > 10_000 && large > small);
        assert_eq!(approx_size(&json!([1, 2, 3])), 4 * 32);
    }

    #[test]
    fn approx_size_survives_very_deep_values() {
        let mut deep = json!(null);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(approx_size(&deep), 100_001 * 32);
        // Dropping a value this deep recurses in serde_json; leak it instead so
        // the test exercises only our measuring code.
        std::mem::forget(deep);
    }

    #[test]
    fn program_set_tracks_its_size_across_overwrites() {
        let mut set = ProgramSet::default();
        let later = Instant::now() + Duration::from_secs(600);
        set.upsert("p", &json!({"v": "x".repeat(1000)}), later);
        let first = set.bytes;
        let small = json!({"v": "x".repeat(10)});
        set.upsert("p", &small, later);
        assert!(set.bytes < first);
        set.upsert("q", &small, later);
        assert_eq!(set.bytes, 2 * (1 + approx_size(&small)));
        assert_eq!(set.programs.len(), 2);
    }

    #[tokio::test]
    async fn runs_stay_within_their_byte_budget() {
        let limits = MemoryLimits {
            runs_bytes: 64 * 1024,
            ..MemoryLimits::default()
        };
        let store = MemoryStore::with_limits(limits);
        let record = json!({"trace": "x".repeat(1024)});
        for i in 0..1_000 {
            let id = format!("run-{i}");
            let put = store
                .put_run("scope", &id, &record, Duration::from_secs(60))
                .await;
            assert!(put.is_ok());
        }
        let [runs, ..] = store.weighted_sizes().await;
        assert!(runs <= limits.runs_bytes, "{runs} > {}", limits.runs_bytes);
        // LRU keeps the newest writes.
        let newest = store.get_run("scope", "run-999").await.ok().flatten();
        assert_eq!(newest, Some(record));
    }

    #[tokio::test]
    async fn connect_without_url_selects_memory() {
        let store = crate::store::connect(None, Duration::from_millis(10)).await;
        assert_eq!(store.map(|s| s.backend()).ok(), Some("memory"));
    }
}
