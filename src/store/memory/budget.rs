//! The embedded store's records and their byte shares: every record belongs
//! to a principal and counts against its budget and the store's total, and
//! leaves only when its own expiry passes (never evicted).

use super::super::{IdempotencyRecord, StoreError, effective_ttl};
use super::packed::Packed;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Byte budgets of the embedded store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// What one principal may hold: runs, idempotency records, promoted
    /// programs and catalog baselines together. Default: an eighth of the
    /// total, at least 4 MiB.
    pub principal_bytes: u64,
    /// What all principals together may hold. Default: an eighth of the
    /// memory this process may use, between 64 MiB and 4 GiB.
    pub total_bytes: u64,
    /// Revoked session ids: default 2 MiB (about 12,000 ids).
    pub revoked_sessions_bytes: u64,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        let (total_bytes, principal_bytes) =
            super::sizing::budgets_for(super::sizing::available_memory());
        MemoryLimits {
            principal_bytes,
            total_bytes,
            revoked_sessions_bytes: 2 * MIB,
        }
    }
}

impl MemoryLimits {
    /// The configured budgets, each 0 standing for its machine-sized default.
    pub fn configured(principal_bytes: u64, total_bytes: u64) -> MemoryLimits {
        let sized = MemoryLimits::default();
        let total_bytes = if total_bytes == 0 {
            sized.total_bytes
        } else {
            total_bytes
        };
        let principal_bytes = match principal_bytes {
            0 => sized.principal_bytes.min(total_bytes),
            set => set,
        };
        MemoryLimits {
            principal_bytes,
            total_bytes,
            ..sized
        }
    }
}

/// Per-entry bookkeeping cost beyond its id's and scope's text, as held:
/// its slot in its map's tree (about 150 B: a 104 B slot in leaves about
/// 70 % full), its expiry queue entry (about 115 B: 64 B in leaves about
/// 55 % full) and the shared id's allocation header (16 B), rounded up.
/// With records kept small, this is most of what a kept run weighs, so it
/// is counted as measured rather than as the bare sizes.
pub(super) const ENTRY_OVERHEAD: u64 = 320;

/// The record kinds, each its own map within a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Run,
    Idempotency,
    Program,
    Task,
    Snapshot,
}

/// One stored value with its expiry (and the expiry queue key that goes
/// with it) and its estimated size. `V` is cheap to clone (an `Arc`, or a
/// packed run's shared bytes), so a reader copies it out of the lock.
#[derive(Debug)]
pub(super) struct Entry<V> {
    pub(super) value: V,
    pub(super) expires: Option<(Instant, u64)>,
    pub(super) weight: u64,
}

/// Records of one kind by id. The id is shared with the expiry queue's
/// entry rather than copied: a retained run is a few hundred bytes, and
/// two copies of its id were a tenth of them.
pub(super) type Records<V> = BTreeMap<Arc<str>, Entry<V>>;

/// Everything one principal holds.
#[derive(Debug, Default)]
pub(super) struct ScopeRecords {
    pub(super) bytes: u64,
    /// Run records, compressed.
    pub(super) runs: Records<Packed>,
    pub(super) idempotency: Records<Arc<IdempotencyRecord>>,
    /// Ordered by ref, as `list_programs` answers.
    pub(super) programs: Records<Arc<Value>>,
    pub(super) tasks: Records<Arc<Value>>,
    pub(super) snapshots: Records<Arc<Value>>,
}

impl ScopeRecords {
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
            && self.idempotency.is_empty()
            && self.programs.is_empty()
            && self.tasks.is_empty()
            && self.snapshots.is_empty()
    }

    /// Removes one entry of `kind`; its weight, if it was there.
    pub(super) fn remove(&mut self, kind: Kind, id: &str) -> Option<u64> {
        let weight = match kind {
            Kind::Run => self.runs.remove(id).map(|e| e.weight),
            Kind::Idempotency => self.idempotency.remove(id).map(|e| e.weight),
            Kind::Program => self.programs.remove(id).map(|e| e.weight),
            Kind::Task => self.tasks.remove(id).map(|e| e.weight),
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
            Kind::Task => self.tasks.get(id)?.expires,
            Kind::Snapshot => self.snapshots.get(id)?.expires,
        }
    }
}

/// What an expiry queue entry names: (scope, kind, id), the names shared
/// with the maps' keys.
pub(super) type Expiring = (Arc<str>, Kind, Arc<str>);

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
    /// By scope; the key is shared with every expiry queue entry of the scope.
    pub(super) scopes: HashMap<Arc<str>, ScopeRecords>,
    pub(super) total: u64,
    /// (deadline, sequence) → the entry that expires then.
    pub(super) expiries: BTreeMap<(Instant, u64), Expiring>,
    pub(super) sequence: u64,
    /// Runs that left before their expiry to make room for their own
    /// principal's newer ones (counted for `/metrics`).
    pub(super) made_room: u64,
}

impl State {
    /// Drops every entry whose expiry has passed.
    pub(super) fn purge(&mut self, now: Instant) {
        while let Some(entry) = self.expiries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (when, (scope, kind, id)) = entry.remove_entry();
            let Some(records) = self.scopes.get_mut(&*scope) else {
                continue;
            };
            // A rewritten entry has a new queue key; the old one is stale.
            if records.expiry_of(kind, &id) == Some(when)
                && let Some(weight) = records.remove(kind, &id)
            {
                self.total = self.total.saturating_sub(weight);
            }
            if records.is_empty() {
                self.scopes.remove(&*scope);
            }
        }
    }

    pub(super) fn used_by(&self, scope: &str) -> u64 {
        self.scopes.get(scope).map_or(0, |r| r.bytes)
    }

    /// Makes room for `extra` more bytes of `scope`: while its share (or
    /// the store) is over, the principal's own oldest plain run leaves
    /// (never another principal's record, never an idempotency record nor
    /// a run a recorded response names, never `keep`). Refuses, with when
    /// its oldest record expires, when that is not enough.
    pub(super) fn make_room(
        &mut self,
        limits: &MemoryLimits,
        scope: &str,
        extra: u64,
        keep: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut keyed: Option<HashSet<String>> = None;
        loop {
            let used = self.used_by(scope);
            let over_share = used.saturating_add(extra) > limits.principal_bytes;
            let over_total = self.total.saturating_add(extra) > limits.total_bytes;
            if !over_share && !over_total {
                return Ok(());
            }
            let keyed = keyed.get_or_insert_with(|| self.keyed_runs(scope));
            if self.drop_oldest_plain_run(scope, keyed, keep) {
                continue;
            }
            let now = Instant::now();
            return Err(if over_share {
                StoreError::Full {
                    detail: format!(
                        "this principal's share of the embedded store is full of records that must be kept ({used} of {} bytes: idempotency records and the runs they answer)",
                        limits.principal_bytes
                    ),
                    retry_after_ms: self.soonest_expiry_of(scope, now),
                }
            } else {
                StoreError::Full {
                    detail: format!(
                        "the embedded store is full ({} of {} bytes) with other principals' records",
                        self.total, limits.total_bytes
                    ),
                    retry_after_ms: self.soonest_expiry(now),
                }
            });
        }
    }

    /// Run ids named by `scope`'s recorded idempotency responses: a replay
    /// hands them out, so they stay fetchable as long as the record lives.
    fn keyed_runs(&self, scope: &str) -> HashSet<String> {
        let Some(records) = self.scopes.get(scope) else {
            return HashSet::new();
        };
        records
            .idempotency
            .values()
            .filter_map(|e| match e.value.as_ref() {
                IdempotencyRecord::Completed { response, .. } => {
                    response["run_id"].as_str().map(str::to_owned)
                }
                IdempotencyRecord::Pending { .. } => None,
            })
            .collect()
    }

    /// Drops `scope`'s plain run that expires first (the oldest written:
    /// runs of one language share one retention); false when none is left.
    fn drop_oldest_plain_run(
        &mut self,
        scope: &str,
        keyed: &HashSet<String>,
        keep: Option<&str>,
    ) -> bool {
        let Some(records) = self.scopes.get_mut(scope) else {
            return false;
        };
        let oldest = records
            .runs
            .iter()
            .filter(|(id, _)| !keyed.contains(&***id) && Some(&***id) != keep)
            .min_by_key(|(_, e)| e.expires)
            .map(|(id, e)| (id.clone(), e.expires));
        let Some((id, expires)) = oldest else {
            return false;
        };
        if let Some(weight) = records.remove(Kind::Run, &id) {
            self.total = self.total.saturating_sub(weight);
            self.made_room += 1;
        }
        if let Some(when) = expires {
            self.expiries.remove(&when);
        }
        true
    }

    /// Milliseconds until `scope`'s first record expires (at least 1).
    fn soonest_expiry_of(&self, scope: &str, now: Instant) -> u64 {
        let first = self
            .expiries
            .iter()
            .find(|(_, (s, _, _))| &**s == scope)
            .map(|((when, _), _)| *when);
        millis_until(first, now)
    }

    /// Milliseconds until the store's first record expires (at least 1).
    fn soonest_expiry(&self, now: Instant) -> u64 {
        millis_until(self.expiries.keys().next().map(|(when, _)| *when), now)
    }

    /// The map's own key for `scope` (made the first time the scope writes),
    /// so its expiry entries share one copy of the name.
    fn scope_key(&self, scope: &str) -> Arc<str> {
        self.scopes
            .get_key_value(scope)
            .map_or_else(|| Arc::from(scope), |(key, _)| Arc::clone(key))
    }

    pub(super) fn expiry(&mut self, ttl: Option<Duration>, now: Instant) -> Option<(Instant, u64)> {
        let ttl = ttl?;
        self.sequence += 1;
        Some((now + effective_ttl(ttl), self.sequence))
    }

    /// Writes `value` as `(scope, kind, id)`, replacing what was there.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put<V>(
        &mut self,
        limits: &MemoryLimits,
        admission: Admission,
        scope: &str,
        kind: Kind,
        id: &str,
        value: V,
        ttl: Option<Duration>,
        weight: u64,
        map: fn(&mut ScopeRecords) -> &mut Records<V>,
    ) -> Result<(), StoreError> {
        let now = Instant::now();
        let old = self
            .scopes
            .get_mut(scope)
            .and_then(|r| map(r).get(id).map(|e| e.weight))
            .unwrap_or(0);
        if admission == Admission::IfRoom && weight > old {
            self.make_room(limits, scope, weight - old, Some(id))?;
        }
        let expires = self.expiry(ttl, now);
        let scope_key = self.scope_key(scope);
        let id_key: Arc<str> = Arc::from(id);
        if let Some((when, seq)) = expires {
            self.expiries.insert(
                (when, seq),
                (Arc::clone(&scope_key), kind, Arc::clone(&id_key)),
            );
        }
        let records = self.scopes.entry(scope_key).or_default();
        map(records).insert(
            id_key,
            Entry {
                value,
                expires,
                weight,
            },
        );
        records.bytes = records.bytes.saturating_sub(old).saturating_add(weight);
        self.total = self.total.saturating_sub(old).saturating_add(weight);
        if admission == Admission::Always {
            // A started run's record is kept; older plain runs make room for
            // it, and when none is left the share is exceeded by this one.
            let _ = self.make_room(limits, scope, 0, Some(id));
        }
        Ok(())
    }
}

/// Whole milliseconds from `now` to `when` (rounded up, at least 1); an
/// unknown expiry reads as one minute.
fn millis_until(when: Option<Instant>, now: Instant) -> u64 {
    when.map_or(60_000, |w| {
        let ms = w.saturating_duration_since(now).as_micros().div_ceil(1000);
        u64::try_from(ms).unwrap_or(u64::MAX).max(1)
    })
}

pub(super) fn key_bytes(scope: &str, id: &str) -> u64 {
    (scope.len() + id.len()) as u64 + ENTRY_OVERHEAD
}

pub(super) fn runs(r: &mut ScopeRecords) -> &mut Records<Packed> {
    &mut r.runs
}
pub(super) fn idempotency(r: &mut ScopeRecords) -> &mut Records<Arc<IdempotencyRecord>> {
    &mut r.idempotency
}
pub(super) fn programs(r: &mut ScopeRecords) -> &mut Records<Arc<Value>> {
    &mut r.programs
}
pub(super) fn tasks(r: &mut ScopeRecords) -> &mut Records<Arc<Value>> {
    &mut r.tasks
}
pub(super) fn snapshots(r: &mut ScopeRecords) -> &mut Records<Arc<Value>> {
    &mut r.snapshots
}
