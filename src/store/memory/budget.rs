//! The embedded store's records and their byte shares: every record belongs
//! to a principal and counts against its budget and the store's total, and
//! leaves only when its own expiry passes (never evicted).

use super::super::{IdempotencyRecord, StoreError, effective_ttl};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
pub(super) const ENTRY_OVERHEAD: u64 = 160;

/// The record kinds, each its own map within a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Run,
    Idempotency,
    Program,
    Snapshot,
}

/// One stored value with its expiry (and the expiry queue key that goes
/// with it) and its estimated size.
#[derive(Debug)]
pub(super) struct Entry<T> {
    pub(super) value: Arc<T>,
    pub(super) expires: Option<(Instant, u64)>,
    pub(super) weight: u64,
}

pub(super) type Records<T> = BTreeMap<String, Entry<T>>;

/// Everything one principal holds.
#[derive(Debug, Default)]
pub(super) struct ScopeRecords {
    pub(super) bytes: u64,
    pub(super) runs: Records<Value>,
    pub(super) idempotency: Records<IdempotencyRecord>,
    /// Ordered by ref, as `list_programs` answers.
    pub(super) programs: Records<Value>,
    pub(super) snapshots: Records<Value>,
}

impl ScopeRecords {
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
            && self.idempotency.is_empty()
            && self.programs.is_empty()
            && self.snapshots.is_empty()
    }

    /// Removes one entry of `kind`; its weight, if it was there.
    pub(super) fn remove(&mut self, kind: Kind, id: &str) -> Option<u64> {
        let weight = match kind {
            Kind::Run => self.runs.remove(id).map(|e| e.weight),
            Kind::Idempotency => self.idempotency.remove(id).map(|e| e.weight),
            Kind::Program => self.programs.remove(id).map(|e| e.weight),
            Kind::Snapshot => self.snapshots.remove(id).map(|e| e.weight),
        }?;
        self.bytes = self.bytes.saturating_sub(weight);
        Some(weight)
    }

    pub(super) fn expiry_of(&self, kind: Kind, id: &str) -> Option<(Instant, u64)> {
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
pub(super) enum Admission {
    /// Before execution: refused when the budget has no room.
    IfRoom,
    /// After a started run: always accepted (refusing would lose its record).
    Always,
}

/// The maps and the expiry queue, behind the store's mutex.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) scopes: HashMap<String, ScopeRecords>,
    pub(super) total: u64,
    /// (deadline, sequence) → the entry that expires then.
    pub(super) expiries: BTreeMap<(Instant, u64), (String, Kind, String)>,
    pub(super) sequence: u64,
}

impl State {
    /// Drops every entry whose expiry has passed.
    pub(super) fn purge(&mut self, now: Instant) {
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

    pub(super) fn used_by(&self, scope: &str) -> u64 {
        self.scopes.get(scope).map_or(0, |r| r.bytes)
    }

    /// Refuses when `scope` (or the store) cannot take `extra` more bytes.
    pub(super) fn room(
        &self,
        limits: &MemoryLimits,
        scope: &str,
        extra: u64,
    ) -> Result<(), StoreError> {
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

    pub(super) fn expiry(&mut self, ttl: Option<Duration>, now: Instant) -> Option<(Instant, u64)> {
        let ttl = ttl?;
        self.sequence += 1;
        Some((now + effective_ttl(ttl), self.sequence))
    }

    /// Writes `value` as `(scope, kind, id)`, replacing what was there.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put<T>(
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

pub(super) fn key_bytes(scope: &str, id: &str) -> u64 {
    (scope.len() + id.len()) as u64 + ENTRY_OVERHEAD
}

pub(super) fn runs(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.runs
}
pub(super) fn idempotency(r: &mut ScopeRecords) -> &mut Records<IdempotencyRecord> {
    &mut r.idempotency
}
pub(super) fn programs(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.programs
}
pub(super) fn snapshots(r: &mut ScopeRecords) -> &mut Records<Value> {
    &mut r.snapshots
}
