//! Idempotency claims in the embedded store: claim, start, complete and
//! release of one key, each a check and a write under the store's one lock,
//! so exactly one concurrent claimer finds a key free.

use super::budget::{Admission, Kind, MemoryLimits, State, idempotency, key_bytes};
use crate::store::{IdempotencyClaim, IdempotencyRecord, StoreError, now_ms};
use crate::weigh;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One idempotency key of one principal, with the store's state locked.
pub(super) struct KeyClaims<'a> {
    pub(super) state: &'a mut State,
    pub(super) limits: &'a MemoryLimits,
    pub(super) scope: &'a str,
    pub(super) key: &'a str,
}

impl KeyClaims<'_> {
    fn current(&self) -> Option<Arc<IdempotencyRecord>> {
        self.state
            .scopes
            .get(self.scope)
            .and_then(|r| r.idempotency.get(self.key))
            .map(|e| Arc::clone(&e.value))
    }

    /// Claims a free key for `attempt`, or answers what holds it.
    pub(super) fn claim(
        self,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        let weight = key_bytes(self.scope, self.key) + (fingerprint.len() + attempt.len()) as u64;
        let record = Arc::new(IdempotencyRecord::Pending {
            fingerprint: fingerprint.to_owned(),
            claimed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
            started: false,
        });
        match self.current() {
            Some(found) if found.is_pending_for(attempt) => Ok(IdempotencyClaim::Acquired),
            Some(found) => Ok(IdempotencyRecord::clone(&found).into_claim()),
            None => {
                self.state.put(
                    self.limits,
                    Admission::IfRoom,
                    self.scope,
                    Kind::Idempotency,
                    self.key,
                    record,
                    Some(lease),
                    weight,
                    idempotency,
                )?;
                Ok(IdempotencyClaim::Acquired)
            }
        }
    }

    /// Marks `attempt`'s pending claim started and keeps it for `window`;
    /// false when the claim is not (or no longer) this attempt's.
    pub(super) fn start(self, attempt: &str, window: Duration) -> Result<bool, StoreError> {
        let Some(entry) = self
            .state
            .scopes
            .get(self.scope)
            .and_then(|r| r.idempotency.get(self.key))
        else {
            return Ok(false);
        };
        if !entry.value.is_pending_for(attempt) {
            return Ok(false);
        }
        let weight = entry.weight;
        let Some(started) = entry.value.started() else {
            return Ok(false);
        };
        self.state.put(
            self.limits,
            Admission::Always,
            self.scope,
            Kind::Idempotency,
            self.key,
            Arc::new(started),
            Some(window),
            weight,
            idempotency,
        )?;
        Ok(true)
    }

    /// Records the response over `attempt`'s still-pending claim.
    pub(super) fn complete(
        self,
        fingerprint: &str,
        attempt: &str,
        response: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let weight = key_bytes(self.scope, self.key)
            + (fingerprint.len() + attempt.len()) as u64
            + weigh::json(response);
        let completed = Arc::new(IdempotencyRecord::Completed {
            fingerprint: fingerprint.to_owned(),
            response: response.clone(),
            completed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
        });
        match self.current() {
            Some(found) if found.is_pending_for(attempt) => self.state.put(
                self.limits,
                Admission::Always,
                self.scope,
                Kind::Idempotency,
                self.key,
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

    /// Deletes `attempt`'s claim while it is still pending.
    pub(super) fn release(self, attempt: &str) {
        let state = self.state;
        let Some(records) = state.scopes.get_mut(self.scope) else {
            return;
        };
        let ours = records
            .idempotency
            .get(self.key)
            .is_some_and(|e| e.value.is_pending_for(attempt));
        if ours && let Some(weight) = records.remove(Kind::Idempotency, self.key) {
            let empty = records.is_empty();
            state.total = state.total.saturating_sub(weight);
            if empty {
                state.scopes.remove(self.scope);
            }
        }
    }
}
