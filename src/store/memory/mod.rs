//! Embedded [`Store`]: the default when no Redis URL is set.
//!
//! It keeps everything in this process, so it is only correct for a single
//! gateway instance (a second instance would have its own claims and runs).
//!
//! Budgets per principal, never eviction: every record belongs to a scope (a
//! principal) and counts against that principal's byte budget and against
//! the store's total ([`MemoryLimits`]). Nothing is ever evicted to make room:
//! an evicted run is a retention promise broken, and an evicted idempotency
//! record is a double execution. Records leave only when their own expiry
//! passes. When a budget is full, new writes that come before execution
//! (claims, promoted programs, catalog baselines) are refused with
//! [`StoreError::Full`], and execute asks [`Store::admit`] before it runs
//! anything; the writes that follow a started run (its record, its replay
//! response) are always accepted, so a budget can be exceeded by the runs in
//! flight when it filled, never by more.
//!
//! Concurrency: one mutex over plain maps. Every critical section is a few
//! map operations (values are sized and copied outside it), so contention
//! stays far below what one trial instance sees.
//!
//! Session revocations are not a principal's records: they keep their own
//! byte-bounded cache (an evicted revocation only matters after about 12,000
//! revocations within one session lifetime).
//!
//! One file per job: `budget` (records, byte shares, expiries), `claims`
//! (idempotency keys), `packed` (run records, compressed), `revoked`
//! (revoked sessions); this file is the store and its [`Store`] methods.

mod budget;
mod claims;
mod packed;
mod revoked;
mod sizing;

pub use budget::MemoryLimits;

use budget::{
    Admission, ENTRY_OVERHEAD, Kind, Records, ScopeRecords, State, key_bytes, programs, runs,
    snapshots, tasks,
};
use claims::KeyClaims;
use moka::future::Cache;
use moka::policy::EvictionPolicy;
use packed::Packed;
use revoked::{RevocationTtl, Revoked};
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{IdempotencyClaim, Store, StoreError, effective_ttl};
use crate::weigh;

/// The embedded single-instance store.
pub struct MemoryStore {
    limits: MemoryLimits,
    state: Mutex<State>,
    revoked_sessions: Cache<String, Revoked>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("MemoryStore")
            .field("limits", &self.limits)
            .field("scopes", &state.scopes.len())
            .field("bytes", &state.total)
            .finish_non_exhaustive()
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
            limits,
            state: Mutex::new(State::default()),
            revoked_sessions: Cache::builder()
                .name("revoked-sessions")
                .max_capacity(limits.revoked_sessions_bytes)
                .weigher(|_key, v: &Revoked| v.weight)
                .expire_after(RevocationTtl)
                .eviction_policy(EvictionPolicy::lru())
                .build(),
        }
    }

    /// Estimated bytes held by `scope` and by the whole store, after
    /// expired records left (tests and diagnostics).
    pub fn used_bytes(&self, scope: &str) -> (u64, u64) {
        let mut state = self.lock();
        state.purge(Instant::now());
        (state.used_by(scope), state.total)
    }

    /// The bytes this store keeps for `record` as a run (measurements).
    pub fn run_record_bytes(record: &Value) -> Result<u64, StoreError> {
        packed::compress(record).map(|bytes| bytes.len() as u64)
    }

    /// The bytes this store keeps for `record` when `reference` is the run
    /// its shelf compresses against, as for a run kept just after one like
    /// it (measurements).
    pub fn run_record_bytes_after(reference: &Value, record: &Value) -> Result<u64, StoreError> {
        packed::compress_after(reference, record).map(|bytes| bytes.len() as u64)
    }

    /// Runs that left before their expiry to make room for their own
    /// principal's newer ones, since start.
    pub fn runs_made_room(&self) -> u64 {
        self.lock().made_room
    }

    /// The state with expired entries gone. A poisoned lock is taken over:
    /// every critical section leaves the maps consistent before it can panic.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn purged(&self) -> MutexGuard<'_, State> {
        let mut state = self.lock();
        state.purge(Instant::now());
        state
    }

    /// One idempotency key, under the lock with expired entries gone.
    fn with_key<R>(&self, scope: &str, key: &str, work: impl FnOnce(KeyClaims<'_>) -> R) -> R {
        let mut state = self.purged();
        work(KeyClaims {
            state: &mut state,
            limits: &self.limits,
            scope,
            key,
        })
    }

    /// Every record of one kind of `scope`, copied outside the lock.
    fn list(&self, scope: &str, map: fn(&ScopeRecords) -> &Records<Arc<Value>>) -> Vec<Value> {
        let listed: Vec<Arc<Value>> = {
            let state = self.purged();
            state
                .scopes
                .get(scope)
                .map(|r| map(r).values().map(|e| Arc::clone(&e.value)).collect())
                .unwrap_or_default()
        };
        listed.iter().map(|v| Value::clone(v)).collect()
    }

    fn get<V: Clone>(
        &self,
        scope: &str,
        id: &str,
        map: fn(&ScopeRecords) -> &Records<V>,
    ) -> Option<V> {
        let state = self.purged();
        let records = state.scopes.get(scope)?;
        map(records).get(id).map(|e| e.value.clone())
    }
}

#[async_trait::async_trait]
impl Store for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn usage(&self) -> Vec<(String, u64)> {
        let mut groups: std::collections::HashMap<String, u64> = Default::default();
        for (scope, records) in &self.purged().scopes {
            *groups.entry(super::usage_group(scope)).or_default() += records.bytes;
        }
        let mut listed: Vec<(String, u64)> = groups.into_iter().collect();
        listed.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        listed.truncate(super::USAGE_GROUPS);
        listed
    }

    fn runs_made_room(&self) -> u64 {
        MemoryStore::runs_made_room(self)
    }

    async fn admit(&self, scope: &str) -> Result<(), StoreError> {
        // Room for at least a small record: a run's record comes after it
        // started and is always accepted, so this is the moment to refuse.
        self.purged()
            .make_room(&self.limits, scope, ENTRY_OVERHEAD, None)
    }

    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        // Kept compressed, not as a parsed value: a trace's text is several
        // times smaller than its tree of maps and strings, and its
        // compressed text several times smaller again.
        let (packed, held) = Packed::pack(record, ttl)?;
        let weight = key_bytes(scope, run_id) + held as u64;
        self.purged().put(
            &self.limits,
            Admission::Always,
            scope,
            Kind::Run,
            run_id,
            packed,
            Some(ttl),
            weight,
            runs,
        )
    }

    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        self.get(scope, run_id, |r| &r.runs)
            .map(|packed| packed.unpack())
            .transpose()
    }

    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        self.with_key(scope, key, |claims| {
            claims.claim(fingerprint, attempt, lease)
        })
    }

    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError> {
        self.with_key(scope, key, |claims| claims.start(attempt, window))
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
        self.with_key(scope, key, |claims| {
            claims.complete(fingerprint, attempt, response, ttl)
        })
    }

    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
    ) -> Result<(), StoreError> {
        self.with_key(scope, key, |claims| claims.release(attempt));
        Ok(())
    }

    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let weight = key_bytes(scope, program_ref) + weigh::json(record);
        let value = Arc::new(record.clone());
        self.purged().put(
            &self.limits,
            Admission::IfRoom,
            scope,
            Kind::Program,
            program_ref,
            value,
            Some(ttl),
            weight,
            programs,
        )
    }

    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<Value>, StoreError> {
        Ok(self
            .get(scope, program_ref, |r| &r.programs)
            .map(|v| Value::clone(&v)))
    }

    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        Ok(self.list(scope, |r| &r.programs))
    }

    async fn put_task(
        &self,
        scope: &str,
        task_id: &str,
        record: &Value,
        ttl: Duration,
        expected: Option<u64>,
    ) -> Result<bool, StoreError> {
        let weight = key_bytes(scope, task_id) + weigh::json(record);
        let value = Arc::new(record.clone());
        let mut state = self.purged();
        let stored = state
            .scopes
            .get(scope)
            .and_then(|r| r.tasks.get(task_id))
            .map(|e| Arc::clone(&e.value));
        if stored.as_deref() == Some(record) {
            // This very write already landed: a repeated call.
            return Ok(true);
        }
        let stored_revision = stored.map(|v| v.get("revision").and_then(Value::as_u64));
        let admission = match (expected, stored_revision) {
            (None, None) => Admission::IfRoom,
            (Some(r), Some(Some(at))) if r == at => Admission::Always,
            _ => return Ok(false),
        };
        state.put(
            &self.limits,
            admission,
            scope,
            Kind::Task,
            task_id,
            value,
            Some(ttl),
            weight,
            tasks,
        )?;
        Ok(true)
    }

    async fn get_task(&self, scope: &str, task_id: &str) -> Result<Option<Value>, StoreError> {
        Ok(self
            .get(scope, task_id, |r| &r.tasks)
            .map(|v| Value::clone(&v)))
    }

    async fn list_tasks(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        Ok(self.list(scope, |r| &r.tasks))
    }

    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let weight = key_bytes(scope, catalog_version) + weigh::json(snapshot);
        let value = Arc::new(snapshot.clone());
        self.purged().put(
            &self.limits,
            Admission::IfRoom,
            scope,
            Kind::Snapshot,
            catalog_version,
            value,
            Some(ttl),
            weight,
            snapshots,
        )
    }

    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<Value>, StoreError> {
        Ok(self
            .get(scope, catalog_version, |r| &r.snapshots)
            .map(|v| Value::clone(&v)))
    }

    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError> {
        let marker = Revoked {
            ttl: effective_ttl(ttl),
            weight: weigh::as_weight(session_id.len() as u64 + ENTRY_OVERHEAD),
        };
        self.revoked_sessions
            .insert(session_id.to_owned(), marker)
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

    const SMALL: MemoryLimits = MemoryLimits {
        principal_bytes: 64 * 1024,
        total_bytes: 160 * 1024,
        revoked_sessions_bytes: 64 * 1024,
    };

    #[tokio::test]
    async fn a_full_share_makes_room_from_its_own_oldest_plain_runs_only() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        let keeper = json!({"invoice": 1});
        assert!(store.put_run("keeper", "r0", &keeper, ttl).await.is_ok());
        let claim = store
            .claim_idempotency("keeper", "k", "fp", "a1", ttl)
            .await;
        assert_eq!(claim.ok(), Some(IdempotencyClaim::Acquired));
        let big = json!({"trace": packed::incompressible(20 * 1024)});
        // The stranger's own replayed run (named by its recorded response)
        // is kept, whatever else leaves.
        let keyed = json!({"run_id": "keyed", "trace": packed::incompressible(1024)});
        assert!(
            store
                .put_run("stranger", "keyed", &keyed, ttl)
                .await
                .is_ok()
        );
        let claimed = store
            .claim_idempotency("stranger", "k", "fp", "a", ttl)
            .await;
        assert_eq!(claimed.ok(), Some(IdempotencyClaim::Acquired));
        let done = store
            .complete_idempotency("stranger", "k", "fp", "a", &keyed, ttl)
            .await;
        assert!(done.is_ok());
        for i in 0..30 {
            assert!(store.admit("stranger").await.is_ok(), "run {i} refused");
            let put = store.put_run("stranger", &format!("r{i}"), &big, ttl).await;
            assert!(put.is_ok());
            assert!(store.used_bytes("stranger").0 <= SMALL.principal_bytes);
        }
        // Its newest runs are there, its oldest made room for them.
        assert!(
            store
                .get_run("stranger", "r29")
                .await
                .ok()
                .flatten()
                .is_some()
        );
        assert!(
            store
                .get_run("stranger", "r28")
                .await
                .ok()
                .flatten()
                .is_some()
        );
        assert_eq!(store.get_run("stranger", "r0").await.ok().flatten(), None);
        assert!(store.runs_made_room() > 20);
        assert_eq!(
            store.get_run("stranger", "keyed").await.ok().flatten(),
            Some(keyed)
        );
        // Nothing of the keeper left, and its claim still holds.
        assert_eq!(
            store.get_run("keeper", "r0").await.ok().flatten(),
            Some(keeper)
        );
        let again = store
            .claim_idempotency("keeper", "k", "fp", "a3", ttl)
            .await;
        assert!(matches!(again, Ok(IdempotencyClaim::InFlight { .. })));
    }

    #[tokio::test]
    async fn a_share_full_of_live_claims_is_refused_with_when_to_retry() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        let fingerprint = "f".repeat(4 * 1024);
        let mut refused = None;
        for i in 0..40 {
            let claim = store
                .claim_idempotency("s", &format!("k{i}"), &fingerprint, "a", ttl)
                .await;
            if let Err(e) = claim {
                refused = Some(e);
                break;
            }
        }
        let Some(StoreError::Full {
            detail,
            retry_after_ms,
        }) = refused
        else {
            panic!("a share full of claims was not refused: {refused:?}");
        };
        assert!(detail.contains("principal"), "{detail}");
        assert!(
            (59_000..=60_000).contains(&retry_after_ms),
            "{retry_after_ms}"
        );
        let again = store
            .claim_idempotency("s", "late", &fingerprint, "a", ttl)
            .await;
        assert!(matches!(again, Err(StoreError::Full { .. })));
        assert!(store.admit("other").await.is_ok());
    }

    #[tokio::test]
    async fn the_total_budget_refuses_everyone_without_evicting() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        let big = json!({"trace": packed::incompressible(30 * 1024)});
        let mut scopes = 0;
        for i in 0..20 {
            let scope = format!("anon-{i}");
            if store.admit(&scope).await.is_err() {
                break;
            }
            scopes += 1;
            assert!(store.put_run(&scope, "r", &big, ttl).await.is_ok());
        }
        assert!((3..20).contains(&scopes), "{scopes} scopes admitted");
        let refused = store.admit("newcomer").await;
        assert!(
            matches!(refused, Err(StoreError::Full { detail: m, .. }) if m.contains("embedded store is full"))
        );
        for i in 0..scopes {
            let kept = store
                .get_run(&format!("anon-{i}"), "r")
                .await
                .ok()
                .flatten();
            assert_eq!(kept.as_ref(), Some(&big), "anon-{i} lost its run");
        }
    }

    #[tokio::test]
    async fn expired_records_free_their_budget() {
        let store = MemoryStore::with_limits(SMALL);
        let big = json!({"trace": packed::incompressible(20 * 1024)});
        for i in 0..3 {
            let put = store
                .put_run("s", &format!("r{i}"), &big, Duration::from_millis(30))
                .await;
            assert!(put.is_ok());
        }
        assert!(store.used_bytes("s").0 > 40_000);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(store.used_bytes("s"), (0, 0));
        assert!(store.admit("s").await.is_ok());
    }

    #[tokio::test]
    async fn accounting_returns_to_zero_after_rewrites_and_releases() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        for i in 0..5 {
            let record = json!({"v": packed::incompressible(100 * i)});
            assert!(store.put_run("s", "same", &record, ttl).await.is_ok());
        }
        let one = store.used_bytes("s").0;
        assert!(one > 400 && one < 2_000, "{one}");
        let claim = store.claim_idempotency("s", "k", "fp", "a", ttl).await;
        assert_eq!(claim.ok(), Some(IdempotencyClaim::Acquired));
        assert!(store.release_idempotency("s", "k", "a").await.is_ok());
        assert_eq!(store.used_bytes("s").0, one);
    }

    #[tokio::test]
    async fn connect_without_url_selects_memory() {
        let store = crate::store::connect(None, Duration::from_millis(10)).await;
        assert_eq!(store.map(|s| s.backend()).ok(), Some("memory"));
    }
}
