//! Idempotency claims of execute (Part II §6.5.6): at most one execution per
//! key within the dedup window, and a key never stuck by an attempt that did
//! not run.
//!
//! Life of a claim, one random `attempt` id per request:
//! 1. **claim**: a lease that follows the run deadline (the language's
//!    `run_deadline_ms` + `store.claim_grace_ms`, or `store.claim_lease_ms`
//!    when that is shorter). Refused, failed or abandoned before its run
//!    starts, the claim frees the key by itself when the lease ends; the
//!    owner also releases it.
//! 2. **start**: right before execution the owner marks the claim started,
//!    which keeps it for the dedup window. Only the attempt that still owns
//!    the claim can mark it, so a lease that ended means no run: exactly one
//!    attempt ever executes.
//! 3. **complete**: the response is recorded for replay.
//!
//! A store write that timed out may still land later (a frozen Redis answers
//! its queue when it wakes). Whenever a claim or start write failed, the
//! owner keeps releasing its claim in the background for a while, so such a
//! late write is undone instead of blocking the key. A run that started and
//! recorded nothing (the process died mid-run) keeps the key: retries are
//! told so, never executed a second time, once the claim is older than the
//! run deadline plus the grace (so a retry waits at most that long).

use super::Done;
use crate::auth::Principal;
use crate::gateway::Gateway;
use crate::pilotage::{RequestError, RequestErrorKind};
use crate::store::{IdempotencyClaim, Store, StoreError};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Delays between background releases after a failed claim or start write:
/// about half a minute in all, well past any queued write's landing.
const CLEANUP_DELAYS_MS: [u64; 8] = [0, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000];

/// One request's claim on an idempotency key.
pub(super) struct Claim {
    scope: String,
    key: String,
    fingerprint: String,
    attempt: String,
    lease: Duration,
    /// How long after its claim a run has recorded its answer, or never
    /// will: the run deadline plus the grace.
    answered_within: Duration,
    window: Duration,
}

impl Claim {
    pub(super) fn new(
        gw: &Gateway,
        principal: &Principal,
        key: &str,
        fingerprint: String,
        run_deadline: Duration,
        window: Duration,
    ) -> Claim {
        let answered_within = run_deadline + Duration::from_millis(gw.config.store.claim_grace_ms);
        let lease = match gw.config.store.claim_lease_ms {
            0 => answered_within,
            set => Duration::from_millis(set).min(answered_within),
        };
        Claim {
            scope: principal.scope.clone(),
            key: key.to_owned(),
            fingerprint,
            attempt: format!("att_{:032x}", rand::random::<u128>()),
            lease,
            answered_within,
            window,
        }
    }

    /// Claims the key, or settles it: `Some` is the recorded answer to
    /// replay, `None` means this request now owns the key. While another
    /// attempt holds the key this waits: for a claim that has not started,
    /// until it starts, is released or its lease ends (then this request may
    /// take the key); for a started run, for its recorded answer. A started
    /// run that records none within the run deadline plus the grace from
    /// its claim is answered with `internal`, never by executing a second
    /// time; so this waits at most that long.
    ///
    /// `holder_gone`: the request holding the key is known to have died with
    /// its instance (a task whose lease lapsed), so a started run's answer
    /// will never be recorded: that is answered at once, never by waiting.
    pub(super) async fn settle(
        &self,
        gw: &Gateway,
        holder_gone: bool,
    ) -> Result<Option<Value>, RequestError> {
        let until = Instant::now() + self.answered_within;
        let mut pause = Duration::from_millis(25);
        loop {
            let found = gw
                .store
                .claim_idempotency(
                    &self.scope,
                    &self.key,
                    &self.fingerprint,
                    &self.attempt,
                    self.lease,
                )
                .await;
            match found {
                Err(e) => {
                    self.clean_up_later(gw.store.clone());
                    return Err(store_failed(&e));
                }
                Ok(IdempotencyClaim::Acquired) => return Ok(None),
                Ok(IdempotencyClaim::Completed {
                    fingerprint,
                    response,
                }) => {
                    return if fingerprint == self.fingerprint {
                        Ok(Some(response))
                    } else {
                        Err(conflict())
                    };
                }
                Ok(IdempotencyClaim::InFlight { fingerprint, .. })
                    if fingerprint != self.fingerprint =>
                {
                    return Err(conflict());
                }
                Ok(IdempotencyClaim::InFlight { started: true, .. }) if holder_gone => {
                    return Err(RequestError::internal(
                        "the instance running this request stopped mid-run, so its outcome is unknown; it will not be executed twice: check the engine's state before running it again",
                    ));
                }
                Ok(IdempotencyClaim::InFlight {
                    claimed_at_ms,
                    started,
                    ..
                }) if Instant::now() >= until || (started && self.overdue(claimed_at_ms)) => {
                    return Err(RequestError::internal(
                        "an earlier attempt with this idempotency_key started and has not recorded a result within its run deadline (still running, or it stopped mid-run); it will not be executed twice: check the engine's state, then use a new key",
                    ));
                }
                Ok(IdempotencyClaim::InFlight { .. }) => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                }
            }
        }
    }

    /// Whether a run claimed at `claimed_at_ms` (wall clock, any instance)
    /// is past its deadline plus the grace: an answer it never recorded
    /// will not come.
    fn overdue(&self, claimed_at_ms: u64) -> bool {
        let within = u64::try_from(self.answered_within.as_millis()).unwrap_or(u64::MAX);
        crate::store::now_ms() >= claimed_at_ms.saturating_add(within)
    }

    /// Marks the claim started, right before execution. An `Err` means
    /// nothing will run: the request is refused and the key freed.
    pub(super) async fn start(&self, gw: &Gateway) -> Result<(), RequestError> {
        match gw
            .store
            .start_idempotency(&self.scope, &self.key, &self.attempt, self.window)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => {
                tracing::warn!(
                    lease_ms = self.lease.as_millis() as u64,
                    "idempotency claim lease ended before the run could start; not executed"
                );
                Err(RequestError::internal(
                    "this request's claim on its idempotency_key ended before the run could start (the gateway was slower than the claim lease); nothing was executed: retry with the same idempotency_key",
                ))
            }
            Err(e) => {
                self.clean_up_later(gw.store.clone());
                Err(store_failed(&e))
            }
        }
    }

    /// After the request: records a started run's response for replay, or
    /// frees the key of a request that executed nothing.
    pub(super) async fn finish(&self, gw: &Gateway, result: &Result<Done, RequestError>) {
        match result {
            Ok(done) if done.started => {
                if let Err(e) = gw
                    .store
                    .complete_idempotency(
                        &self.scope,
                        &self.key,
                        &self.fingerprint,
                        &self.attempt,
                        &done.response,
                        self.window,
                    )
                    .await
                {
                    tracing::error!(error = %e, "idempotency record not written; retries of this key will be answered as an unfinished attempt");
                }
            }
            _ => {
                if let Err(e) = gw
                    .store
                    .release_idempotency(&self.scope, &self.key, &self.attempt)
                    .await
                {
                    tracing::warn!(error = %e, "idempotency claim not released; releasing it in the background");
                    self.clean_up_later(gw.store.clone());
                }
            }
        }
    }

    /// Keeps releasing this attempt's claim for a while: a claim or start
    /// write that timed out may land after the timeout, and must not keep
    /// the key. Releasing only ever removes this attempt's pending claim.
    fn clean_up_later(&self, store: Arc<dyn Store>) {
        let (scope, key, attempt) = (self.scope.clone(), self.key.clone(), self.attempt.clone());
        tokio::spawn(async move {
            let mut released = false;
            for delay in CLEANUP_DELAYS_MS {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                match store.release_idempotency(&scope, &key, &attempt).await {
                    Ok(()) => released = true,
                    Err(e) => {
                        tracing::debug!(error = %e, "background release of an idempotency claim failed; trying again")
                    }
                }
            }
            if !released {
                tracing::warn!(
                    "an idempotency claim could not be released; its lease will free the key"
                );
            }
        });
    }
}

/// The key was used for a different request.
fn conflict() -> RequestError {
    RequestError::new(
        RequestErrorKind::IdempotencyConflict,
        "this idempotency_key was used with a different runnable or input; use a new key for a changed request",
    )
}

/// The store failed before execution: nothing ran, the same key may be retried.
fn store_failed(e: &StoreError) -> RequestError {
    super::store_internal_with(
        e,
        "nothing was executed; retry later with the same idempotency_key",
    )
}
