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

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use moka::policy::EvictionPolicy;
use serde_json::Value;

use super::{IdempotencyClaim, IdempotencyRecord, Store, StoreError, effective_ttl, now_ms};
use crate::weigh;

/// Byte budgets of the embedded store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// What one principal may hold: runs, idempotency records, promoted
    /// programs and catalog baselines together. Default 4 MiB.
    pub principal_bytes: u64,
    /// What all principals together may hold. Default 64 MiB.
    pub total_bytes: u64,
    /// Revoked session ids: default 2 MiB (about 12,000 ids).
    pub revoked_sessions_bytes: u64,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        MemoryLimits {
            principal_bytes: 4 * MIB,
            total_bytes: 64 * MIB,
            revoked_sessions_bytes: 2 * MIB,
        }
    }
}

/// Rough per-entry bookkeeping cost (map slot, `Arc`, expiry queue entry).
const ENTRY_OVERHEAD: u64 = 160;

/// The record kinds, each its own map within a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Run,
    Idempotency,
    Program,
    Snapshot,
}

/// One stored value with its expiry (and the expiry queue key that goes
/// with it) and its estimated size.
#[derive(Debug)]
struct Entry<T> {
    value: Arc<T>,
    expires: Option<(Instant, u64)>,
    weight: u64,
}

type Records<T> = BTreeMap<String, Entry<T>>;

/// Everything one principal holds.
#[derive(Debug, Default)]
struct ScopeRecords {
    bytes: u64,
    runs: Records<Value>,
    idempotency: Records<IdempotencyRecord>,
    /// Ordered by ref, as `list_programs` answers.
    programs: Records<Value>,
    snapshots: Records<Value>,
}

impl ScopeRecords {
    fn is_empty(&self) -> bool {
        self.runs.is_empty()
            && self.idempotency.is_empty()
            && self.programs.is_empty()
            && self.snapshots.is_empty()
    }

    /// Removes one entry of `kind`; its weight, if it was there.
    fn remove(&mut self, kind: Kind, id: &str) -> Option<u64> {
        let weight = match kind {
            Kind::Run => self.runs.remove(id).map(|e| e.weight),
            Kind::Idempotency => self.idempotency.remove(id).map(|e| e.weight),
            Kind::Program => self.programs.remove(id).map(|e| e.weight),
            Kind::Snapshot => self.snapshots.remove(id).map(|e| e.weight),
        }?;
        self.bytes = self.bytes.saturating_sub(weight);
        Some(weight)
    }

    fn expiry_of(&self, kind: Kind, id: &str) -> Option<(Instant, u64)> {
        match kind {
            Kind::Run => self.runs.get(id)?.expires,
            Kind::Idempotency => self.idempotency.get(id)?.expires,
            Kind::Program => self.programs.get(id)?.expires,
            Kind::Snapshot => self.snapshots.get(id)?.expires,
        }
    }
}

/// Whether a write may exceed a full budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    /// Before execution: refused when the budget has no room.
    IfRoom,
    /// After a started run: always accepted (refusing would lose its record).
    Always,
}

/// The maps and the expiry queue, behind the store's mutex.
#[derive(Debug, Default)]
struct State {
    scopes: HashMap<String, ScopeRecords>,
    total: u64,
    /// (deadline, sequence) → the entry that expires then.
    expiries: BTreeMap<(Instant, u64), (String, Kind, String)>,
    sequence: u64,
}

impl State {
    /// Drops every entry whose expiry has passed.
    fn purge(&mut self, now: Instant) {
        while let Some(entry) = self.expiries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (when, (scope, kind, id)) = entry.remove_entry();
            let Some(records) = self.scopes.get_mut(&scope) else {
                continue;
            };
            // A rewritten entry has a new queue key; the old one is stale.
            if records.expiry_of(kind, &id) == Some(when)
                && let Some(weight) = records.remove(kind, &id)
            {
                self.total = self.total.saturating_sub(weight);
            }
            if records.is_empty() {
                self.scopes.remove(&scope);
            }
        }
    }

    fn used_by(&self, scope: &str) -> u64 {
        self.scopes.get(scope).map_or(0, |r| r.bytes)
    }

    /// Refuses when `scope` (or the store) cannot take `extra` more bytes.
    fn room(&self, limits: &MemoryLimits, scope: &str, extra: u64) -> Result<(), StoreError> {
        let used = self.used_by(scope);
        if used.saturating_add(extra) > limits.principal_bytes {
            return Err(StoreError::Full(format!(
                "this principal's share of the embedded store is full ({used} of {} bytes); records leave when their retention ends",
                limits.principal_bytes
            )));
        }
        if self.total.saturating_add(extra) > limits.total_bytes {
            return Err(StoreError::Full(format!(
                "the embedded store is full ({} of {} bytes); records leave when their retention ends",
                self.total, limits.total_bytes
            )));
        }
        Ok(())
    }

    fn expiry(&mut self, ttl: Option<Duration>, now: Instant) -> Option<(Instant, u64)> {
        let ttl = ttl?;
        self.sequence += 1;
        Some((now + effective_ttl(ttl), self.sequence))
    }

    /// Writes `value` as `(scope, kind, id)`, replacing what was there.
    #[allow(clippy::too_many_arguments)]
    fn put<T>(
        &mut self,
        limits: &MemoryLimits,
        admission: Admission,
        scope: &str,
        kind: Kind,
        id: &str,
        value: Arc<T>,
        ttl: Option<Duration>,
        weight: u64,
        map: fn(&mut ScopeRecords) -> &mut Records<T>,
    ) -> Result<(), StoreError> {
        let now = Instant::now();
        let old = self
            .scopes
            .get_mut(scope)
            .and_then(|r| map(r).get(id).map(|e| e.weight))
            .unwrap_or(0);
        if admission == Admission::IfRoom && weight > old {
            self.room(limits, scope, weight - old)?;
        }
        let expires = self.expiry(ttl, now);
        if let Some((when, seq)) = expires {
            self.expiries
                .insert((when, seq), (scope.to_owned(), kind, id.to_owned()));
        }
        let records = self.scopes.entry(scope.to_owned()).or_default();
        map(records).insert(
            id.to_owned(),
            Entry {
                value,
                expires,
                weight,
            },
        );
        records.bytes = records.bytes.saturating_sub(old).saturating_add(weight);
        self.total = self.total.saturating_sub(old).saturating_add(weight);
        Ok(())
    }
}

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

/// A revocation marker with its own lifetime.
#[derive(Debug, Clone, Copy)]
struct Revoked {
    ttl: Duration,
    weight: u32,
}

/// Each revocation lives for its own ttl, counted from its write.
struct RevocationTtl;

impl Expiry<String, Revoked> for RevocationTtl {
    fn expire_after_create(&self, _key: &String, v: &Revoked, _at: Instant) -> Option<Duration> {
        Some(v.ttl)
    }
    fn expire_after_update(
        &self,
        _key: &String,
        v: &Revoked,
        _at: Instant,
        _remaining: Option<Duration>,
    ) -> Option<Duration> {
        Some(v.ttl)
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

    fn get<T>(
        &self,
        scope: &str,
        id: &str,
        map: fn(&ScopeRecords) -> &Records<T>,
    ) -> Option<Arc<T>> {
        let state = self.purged();
        let records = state.scopes.get(scope)?;
        map(records).get(id).map(|e| Arc::clone(&e.value))
    }
}

fn key_bytes(scope: &str, id: &str) -> u64 {
    (scope.len() + id.len()) as u64 + ENTRY_OVERHEAD
}

fn runs(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.runs
}
fn idempotency(r: &mut ScopeRecords) -> &mut Records<IdempotencyRecord> {
    &mut r.idempotency
}
fn programs(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.programs
}
fn snapshots(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.snapshots
}

#[async_trait::async_trait]
impl Store for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn admit(&self, scope: &str) -> Result<(), StoreError> {
        // Room for at least a small record: a run's record comes after it
        // started and is always accepted, so this is the moment to refuse.
        self.purged().room(&self.limits, scope, ENTRY_OVERHEAD)
    }

    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let weight = key_bytes(scope, run_id) + weigh::json(record);
        let value = Arc::new(record.clone());
        self.purged().put(
            &self.limits,
            Admission::Always,
            scope,
            Kind::Run,
            run_id,
            value,
            Some(ttl),
            weight,
            runs,
        )
    }

    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        Ok(self
            .get(scope, run_id, |r| &r.runs)
            .map(|v| Value::clone(&v)))
    }

    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        let weight = key_bytes(scope, key) + (fingerprint.len() + attempt.len()) as u64;
        let record = Arc::new(IdempotencyRecord::Pending {
            fingerprint: fingerprint.to_owned(),
            claimed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
            started: false,
        });
        // Check and insert under one lock: exactly one concurrent claimer
        // finds the key free.
        let mut state = self.purged();
        let existing = state
            .scopes
            .get(scope)
            .and_then(|r| r.idempotency.get(key))
            .map(|e| Arc::clone(&e.value));
        match existing {
            Some(found) if found.is_pending_for(attempt) => Ok(IdempotencyClaim::Acquired),
            Some(found) => Ok(IdempotencyRecord::clone(&found).into_claim()),
            None => {
                state.put(
                    &self.limits,
                    Admission::IfRoom,
                    scope,
                    Kind::Idempotency,
                    key,
                    record,
                    Some(lease),
                    weight,
                    idempotency,
                )?;
                Ok(IdempotencyClaim::Acquired)
            }
        }
    }

    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError> {
        let mut state = self.purged();
        let Some(entry) = state.scopes.get(scope).and_then(|r| r.idempotency.get(key)) else {
            return Ok(false);
        };
        if !entry.value.is_pending_for(attempt) {
            return Ok(false);
        }
        let weight = entry.weight;
        let Some(started) = entry.value.started() else {
            return Ok(false);
        };
        state.put(
            &self.limits,
            Admission::Always,
            scope,
            Kind::Idempotency,
            key,
            Arc::new(started),
            Some(window),
            weight,
            idempotency,
        )?;
        Ok(true)
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
        let weight = key_bytes(scope, key)
            + (fingerprint.len() + attempt.len()) as u64
            + weigh::json(response);
        let completed = Arc::new(IdempotencyRecord::Completed {
            fingerprint: fingerprint.to_owned(),
            response: response.clone(),
            completed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
        });
        let mut state = self.purged();
        let current = state
            .scopes
            .get(scope)
            .and_then(|r| r.idempotency.get(key))
            .map(|e| Arc::clone(&e.value));
        match current {
            Some(found) if found.is_pending_for(attempt) => state.put(
                &self.limits,
                Admission::Always,
                scope,
                Kind::Idempotency,
                key,
                completed,
                Some(ttl),
                weight,
                idempotency,
            ),
            Some(found) if found.is_completed_by(attempt) => Ok(()),
            _ => {
                tracing::warn!(
                    backend = "memory",
                    "idempotency claim no longer owned at completion; response not recorded"
                );
                Ok(())
            }
        }
    }

    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
    ) -> Result<(), StoreError> {
        let mut state = self.purged();
        let Some(records) = state.scopes.get_mut(scope) else {
            return Ok(());
        };
        let ours = records
            .idempotency
            .get(key)
            .is_some_and(|e| e.value.is_pending_for(attempt));
        if ours && let Some(weight) = records.remove(Kind::Idempotency, key) {
            let empty = records.is_empty();
            state.total = state.total.saturating_sub(weight);
            if empty {
                state.scopes.remove(scope);
            }
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
        let listed: Vec<Arc<Value>> = {
            let state = self.purged();
            state
                .scopes
                .get(scope)
                .map(|r| r.programs.values().map(|e| Arc::clone(&e.value)).collect())
                .unwrap_or_default()
        };
        Ok(listed.iter().map(|v| Value::clone(v)).collect())
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
    async fn a_full_principal_is_refused_and_nobody_is_evicted() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        let keeper = json!({"invoice": 1});
        assert!(store.put_run("keeper", "r0", &keeper, ttl).await.is_ok());
        let claim = store
            .claim_idempotency("keeper", "k", "fp", "a1", ttl)
            .await;
        assert_eq!(claim.ok(), Some(IdempotencyClaim::Acquired));
        let big = json!({"trace": "x".repeat(20 * 1024)});
        // A stranger fills its own share: its runs are accepted (they follow
        // started runs), then admission refuses it before it runs more.
        let mut admitted = 0;
        for i in 0..10 {
            if store.admit("stranger").await.is_err() {
                break;
            }
            admitted += 1;
            let put = store.put_run("stranger", &format!("r{i}"), &big, ttl).await;
            assert!(put.is_ok());
        }
        assert!((3..10).contains(&admitted), "admitted {admitted} runs");
        let refused = store.admit("stranger").await;
        assert!(matches!(refused, Err(StoreError::Full(m)) if m.contains("principal")));
        let claim = store
            .claim_idempotency("stranger", "k2", "fp", "a2", ttl)
            .await;
        assert!(matches!(claim, Err(StoreError::Full(_))));
        // The keeper's records are all still there, and it may still write.
        let kept = store.get_run("keeper", "r0").await.ok().flatten();
        assert_eq!(kept, Some(keeper));
        assert!(store.admit("keeper").await.is_ok());
        let again = store
            .claim_idempotency("keeper", "k", "fp", "a3", ttl)
            .await;
        assert!(matches!(again, Ok(IdempotencyClaim::InFlight { .. })));
    }

    #[tokio::test]
    async fn the_total_budget_refuses_everyone_without_evicting() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        let big = json!({"trace": "x".repeat(30 * 1024)});
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
            matches!(refused, Err(StoreError::Full(m)) if m.contains("embedded store is full"))
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
        let big = json!({"trace": "x".repeat(20 * 1024)});
        for i in 0..3 {
            let put = store
                .put_run("s", &format!("r{i}"), &big, Duration::from_millis(30))
                .await;
            assert!(put.is_ok());
        }
        assert!(store.used_bytes("s").0 > 60_000);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(store.used_bytes("s"), (0, 0));
        assert!(store.admit("s").await.is_ok());
    }

    #[tokio::test]
    async fn accounting_returns_to_zero_after_rewrites_and_releases() {
        let store = MemoryStore::with_limits(SMALL);
        let ttl = Duration::from_secs(60);
        for i in 0..5 {
            let record = json!({"v": "x".repeat(100 * i)});
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
