//! Conformance checks of idempotency claims: exclusive under concurrency,
//! scoped, owned, released, expiring, started into a window.

use super::support::*;
use crate::store::{IdempotencyClaim, Store, now_ms};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Many simultaneous claims of one key: exactly one `Acquired`, all others `InFlight`.
pub async fn claim_is_exclusive_under_concurrency(store: Arc<dyn Store>) {
    let scope = fresh_scope("claim-race");
    let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMERS));
    let mut tasks = Vec::with_capacity(CLAIMERS);
    for i in 0..CLAIMERS {
        let store = Arc::clone(&store);
        let scope = scope.clone();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let attempt = format!("attempt-{i}");
            store
                .claim_idempotency(&scope, "key", "fp-1", &attempt, LONG_TTL)
                .await
        }));
    }
    let mut acquired = 0;
    for task in tasks {
        match task.await.expect("task").expect("claim") {
            IdempotencyClaim::Acquired => acquired += 1,
            IdempotencyClaim::InFlight { fingerprint, .. } => assert_eq!(fingerprint, "fp-1"),
            other => panic!("unexpected claim outcome {other:?}"),
        }
    }
    assert_eq!(acquired, 1, "exactly one of {CLAIMERS} claimers must win");
}

/// The same key in two scopes is two independent claims.
pub async fn claims_are_scoped(store: Arc<dyn Store>) {
    let a = fresh_scope("claim-scope-a");
    let b = fresh_scope("claim-scope-b");
    for scope in [&a, &b] {
        assert_eq!(
            store
                .claim_idempotency(scope, "shared-key", "fp", "fp", LONG_TTL)
                .await
                .expect("claim"),
            IdempotencyClaim::Acquired
        );
    }
}

/// A pending claim reports the first owner's fingerprint and claim time, whatever the second caller's fingerprint.
pub async fn in_flight_claim_reports_first_owner(store: Arc<dyn Store>) {
    let scope = fresh_scope("in-flight");
    let before = now_ms();
    let first = store
        .claim_idempotency(&scope, "k", "fp-1", "fp-1", LONG_TTL)
        .await
        .expect("claim");
    let after = now_ms();
    assert_eq!(first, IdempotencyClaim::Acquired);

    for fingerprint in ["fp-1", "fp-other"] {
        match store
            .claim_idempotency(&scope, "k", fingerprint, "second", LONG_TTL)
            .await
            .expect("claim")
        {
            IdempotencyClaim::InFlight {
                fingerprint,
                claimed_at_ms,
                started,
            } => {
                assert!(!started, "a fresh claim has not started its run");
                assert_eq!(
                    fingerprint, "fp-1",
                    "the first owner's fingerprint is reported"
                );
                assert!((before..=after).contains(&claimed_at_ms));
            }
            other => panic!("expected InFlight, got {other:?}"),
        }
    }
}

/// After completion every claim sees the recorded response and the original fingerprint.
pub async fn completed_claim_replays_response(store: Arc<dyn Store>) {
    let scope = fresh_scope("replay");
    let response = json!({"ok": true, "run_id": "r-1", "outputs": {"n": 3}});
    assert_eq!(
        store
            .claim_idempotency(&scope, "k", "fp-1", "fp-1", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Acquired
    );
    store
        .complete_idempotency(&scope, "k", "fp-1", "fp-1", &response, LONG_TTL)
        .await
        .expect("complete");
    for fingerprint in ["fp-1", "fp-changed"] {
        // A changed payload still sees the original: the caller decides it is a conflict.
        assert_eq!(
            store
                .claim_idempotency(&scope, "k", fingerprint, "later", LONG_TTL)
                .await
                .expect("claim"),
            IdempotencyClaim::Completed {
                fingerprint: "fp-1".into(),
                response: response.clone(),
            }
        );
    }
}

/// Completion writes only over the caller's own pending claim: never creates, never overwrites.
pub async fn complete_only_by_owner(store: Arc<dyn Store>) {
    let scope = fresh_scope("complete-owner");
    let response = json!({"ok": true});

    // No claim at all: completing must not create a record.
    store
        .complete_idempotency(&scope, "never-claimed", "fp", "fp", &response, LONG_TTL)
        .await
        .expect("complete");
    assert_eq!(
        store
            .claim_idempotency(&scope, "never-claimed", "fp", "fp", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Acquired
    );

    // Another fingerprint cannot complete our claim.
    assert_eq!(
        store
            .claim_idempotency(&scope, "k", "owner", "owner", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Acquired
    );
    store
        .complete_idempotency(
            &scope,
            "k",
            "intruder",
            "intruder",
            &json!({"ok": false}),
            LONG_TTL,
        )
        .await
        .expect("complete");
    assert!(matches!(
        store.claim_idempotency(&scope, "k", "owner", "other", LONG_TTL).await.expect("claim"),
        IdempotencyClaim::InFlight { fingerprint, .. } if fingerprint == "owner"
    ));

    // The owner completes; a second completion cannot overwrite the first response.
    store
        .complete_idempotency(&scope, "k", "owner", "owner", &response, LONG_TTL)
        .await
        .expect("complete");
    store
        .complete_idempotency(
            &scope,
            "k",
            "owner",
            "owner",
            &json!({"ok": "second"}),
            LONG_TTL,
        )
        .await
        .expect("complete");
    assert_eq!(
        store
            .claim_idempotency(&scope, "k", "owner", "later", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Completed {
            fingerprint: "owner".into(),
            response,
        }
    );
}

/// Release frees only the caller's pending claim; a completed record survives it.
pub async fn release_drops_only_own_pending_claim(store: Arc<dyn Store>) {
    let scope = fresh_scope("release");
    let claim = |attempt: &'static str| {
        let store = Arc::clone(&store);
        let scope = scope.clone();
        async move {
            store
                .claim_idempotency(&scope, "k", "fp", attempt, LONG_TTL)
                .await
                .expect("claim")
        }
    };

    // Releasing nothing is fine.
    store
        .release_idempotency(&scope, "k", "owner")
        .await
        .expect("release");

    assert_eq!(claim("owner").await, IdempotencyClaim::Acquired);
    // Someone else's fingerprint does not free the key.
    store
        .release_idempotency(&scope, "k", "intruder")
        .await
        .expect("release");
    assert!(matches!(
        claim("retry").await,
        IdempotencyClaim::InFlight { .. }
    ));

    // The owner's release frees it: an unchanged retry executes again.
    store
        .release_idempotency(&scope, "k", "owner")
        .await
        .expect("release");
    assert_eq!(claim("retry").await, IdempotencyClaim::Acquired);

    // A completed record is never released.
    let response = json!({"ok": true});
    store
        .complete_idempotency(&scope, "k", "fp", "retry", &response, LONG_TTL)
        .await
        .expect("complete");
    store
        .release_idempotency(&scope, "k", "retry")
        .await
        .expect("release");
    assert_eq!(
        claim("third").await,
        IdempotencyClaim::Completed {
            fingerprint: "fp".into(),
            response,
        }
    );
}

/// Pending and completed records both free the key after their ttl.
pub async fn claim_expires_after_ttl(store: Arc<dyn Store>) {
    let scope = fresh_scope("claim-ttl");
    let claim = |key: &'static str, attempt: &'static str, ttl: Duration| {
        let store = Arc::clone(&store);
        let scope = scope.clone();
        async move {
            store
                .claim_idempotency(&scope, key, "fp", attempt, ttl)
                .await
                .expect("claim")
        }
    };

    // A pending claim whose owner died frees itself after the dedup window.
    assert_eq!(
        claim("pending", "first", SHORT_TTL).await,
        IdempotencyClaim::Acquired
    );
    // A completed record lives for the ttl given at completion.
    assert_eq!(
        claim("done", "first", LONG_TTL).await,
        IdempotencyClaim::Acquired
    );
    store
        .complete_idempotency(
            &scope,
            "done",
            "fp",
            "first",
            &json!({"ok": true}),
            SHORT_TTL,
        )
        .await
        .expect("complete");
    assert!(matches!(
        claim("pending", "second", LONG_TTL).await,
        IdempotencyClaim::InFlight { .. }
    ));
    assert!(matches!(
        claim("done", "second", LONG_TTL).await,
        IdempotencyClaim::Completed { .. }
    ));

    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert_eq!(
        claim("pending", "third", LONG_TTL).await,
        IdempotencyClaim::Acquired
    );
    assert_eq!(
        claim("done", "third", LONG_TTL).await,
        IdempotencyClaim::Acquired
    );
}

/// A claim is a short lease until its owner starts the run; starting keeps
/// it for the window, and only the owner of a live claim can start it.
pub async fn start_turns_a_lease_into_a_window(store: Arc<dyn Store>) {
    let scope = fresh_scope("claim-start");
    let claim = |key: &'static str, attempt: &'static str, lease: Duration| {
        let store = Arc::clone(&store);
        let scope = scope.clone();
        async move {
            store
                .claim_idempotency(&scope, key, "fp", attempt, lease)
                .await
                .expect("claim")
        }
    };
    assert_eq!(
        claim("run", "owner", SHORT_TTL).await,
        IdempotencyClaim::Acquired
    );
    // Claiming again as the same attempt (a retried write) is still ours.
    assert_eq!(
        claim("run", "owner", SHORT_TTL).await,
        IdempotencyClaim::Acquired
    );
    let intruder = store
        .start_idempotency(&scope, "run", "intruder", LONG_TTL)
        .await;
    assert!(!intruder.expect("start"));
    assert!(
        store
            .start_idempotency(&scope, "run", "owner", LONG_TTL)
            .await
            .expect("start")
    );
    // Starting twice (a retried write) is fine.
    assert!(
        store
            .start_idempotency(&scope, "run", "owner", LONG_TTL)
            .await
            .expect("start")
    );
    // A lease that ended cannot be started.
    assert_eq!(
        claim("late", "slow", SHORT_TTL).await,
        IdempotencyClaim::Acquired
    );
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert!(
        !store
            .start_idempotency(&scope, "late", "slow", LONG_TTL)
            .await
            .expect("start")
    );
    // The started claim outlived its lease, and says it started.
    assert!(matches!(
        claim("run", "retry", LONG_TTL).await,
        IdempotencyClaim::InFlight { started: true, .. }
    ));
    // A started claim that is released (nothing ran after all) frees the key.
    store
        .release_idempotency(&scope, "run", "owner")
        .await
        .expect("release");
    assert_eq!(
        claim("run", "retry", LONG_TTL).await,
        IdempotencyClaim::Acquired
    );
}
