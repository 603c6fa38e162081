//! The behavioural contract of [`Store`], as executable checks.
//!
//! Every backend must behave the same, because the execute code is written
//! once against the trait. Rather than two copies of the same tests, each
//! check lives here once and [`store_conformance_tests!`](crate::store_conformance_tests)
//! turns the whole list into `#[tokio::test]`s for a given backend: the memory
//! backend's unit tests and the Redis integration tests both invoke it.
//!
//! Each check works in a scope of its own (containing `:`, like real principal
//! scopes), so checks may share one backend instance and run in parallel.
//! Checks panic on failure, like any test assertion.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::{IdempotencyClaim, Store, now_ms};

/// Expiry used by the TTL checks: long enough that "still there right after
/// the write" holds on a loaded machine, short enough to keep the suite quick.
const SHORT_TTL: Duration = Duration::from_millis(300);
/// How long the TTL checks wait before expecting a record to be gone.
const PAST_SHORT_TTL: Duration = Duration::from_millis(700);
/// Expiry for records that must outlive the check.
const LONG_TTL: Duration = Duration::from_secs(600);
/// Concurrent claimers in the race check.
const CLAIMERS: usize = 50;

/// A scope no other check (or earlier run against the same Redis) uses.
fn fresh_scope(check: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("tenant:{check}:{}:{n}", now_ms())
}

/// Generates one `#[tokio::test]` per conformance check for a backend.
///
/// `$setup` is an async fn returning `(Arc<dyn Store>, guard)`; the guard is
/// kept alive for the duration of the test (e.g. a child Redis server).
#[macro_export]
macro_rules! store_conformance_tests {
    ($setup:path) => {
        $crate::store_conformance_tests!(@with_checks (@checks $setup));
    };
    // Every check in one test against one store: for a backend that is
    // expensive to start (a whole Redis Cluster), started once.
    (sequential $name:ident, $setup:path) => {
        $crate::store_conformance_tests!(@with_checks (@sequence $name $setup));
    };
    (@with_checks ($($head:tt)*)) => {
        $crate::store_conformance_tests!($($head)*;
            ping_succeeds,
            run_round_trip_and_scope_isolation,
            run_expires_after_ttl,
            values_round_trip_exactly,
            claim_is_exclusive_under_concurrency,
            claims_are_scoped,
            in_flight_claim_reports_first_owner,
            completed_claim_replays_response,
            complete_only_by_owner,
            release_drops_only_own_pending_claim,
            claim_expires_after_ttl,
            start_turns_a_lease_into_a_window,
            programs_listed_in_ref_order,
            program_expires_after_ttl,
            catalog_snapshots_round_trip_and_expire,
            session_revocation_round_trip_and_expires,
        );
    };
    (@checks $setup:path; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (store, _guard) = $setup().await;
                $crate::store::conformance::$check(store).await;
            }
        )+
    };
    (@sequence $name:ident $setup:path; $($check:ident),+ $(,)?) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let (store, _guard) = $setup().await;
            $(
                eprintln!("conformance check: {}", stringify!($check));
                $crate::store::conformance::$check(store.clone()).await;
            )+
        }
    };
}

/// A healthy backend answers `ping` and names itself.
pub async fn ping_succeeds(store: Arc<dyn Store>) {
    assert!(store.ping().await.is_ok());
    assert!(matches!(store.backend(), "memory" | "redis"));
}

/// Runs come back as written, are replaced by a rewrite, and are invisible from any other scope (even one that extends the name).
pub async fn run_round_trip_and_scope_isolation(store: Arc<dyn Store>) {
    let scope = fresh_scope("runs");
    // A scope that extends the first one: must not see its records.
    let longer = format!("{scope}:sub");
    let record = json!({"run_id": "r1", "status": "completed", "trace": [{"step": "a"}]});

    assert_eq!(store.get_run(&scope, "r1").await.expect("get"), None);
    store
        .put_run(&scope, "r1", &record, LONG_TTL)
        .await
        .expect("put_run");
    assert_eq!(
        store.get_run(&scope, "r1").await.expect("get"),
        Some(record.clone())
    );
    assert_eq!(store.get_run(&longer, "r1").await.expect("get"), None);
    assert_eq!(store.get_run(&scope, "r2").await.expect("get"), None);

    let replaced = json!({"run_id": "r1", "status": "failed"});
    store
        .put_run(&scope, "r1", &replaced, LONG_TTL)
        .await
        .expect("put_run");
    assert_eq!(
        store.get_run(&scope, "r1").await.expect("get"),
        Some(replaced)
    );
}

/// A run is gone after its own ttl; a longer-lived neighbour stays.
pub async fn run_expires_after_ttl(store: Arc<dyn Store>) {
    let scope = fresh_scope("run-ttl");
    let record = json!({"run_id": "short"});
    store
        .put_run(&scope, "short", &record, SHORT_TTL)
        .await
        .expect("put_run");
    store
        .put_run(&scope, "long", &record, LONG_TTL)
        .await
        .expect("put_run");
    assert_eq!(
        store.get_run(&scope, "short").await.expect("get"),
        Some(record.clone())
    );
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert_eq!(store.get_run(&scope, "short").await.expect("get"), None);
    assert_eq!(
        store.get_run(&scope, "long").await.expect("get"),
        Some(record)
    );
}

/// JSON comes back identical, key order included (content digests are taken over it).
pub async fn values_round_trip_exactly(store: Arc<dyn Store>) {
    let scope = fresh_scope("values");
    // Key order (the crate keeps insertion order), Unicode, extreme numbers,
    // empty containers and a bare null must all come back unchanged.
    let record = json!({
        "z": 1, "a": 2, "m": {"y": [], "b": {}},
        "text": "héllo \u{1F600} \"quoted\" \\ \n\t\u{0001}",
        "numbers": [0, -1, 1.5, 1e300, u64::MAX, i64::MIN],
        "null": null,
    });
    for (id, value) in [("full", record), ("null", Value::Null), ("str", json!("s"))] {
        store
            .put_run(&scope, id, &value, LONG_TTL)
            .await
            .expect("put_run");
        let back = store.get_run(&scope, id).await.expect("get");
        assert_eq!(back, Some(value.clone()));
        let back = back.unwrap_or_default();
        assert_eq!(
            serde_json::to_string(&back).ok(),
            serde_json::to_string(&value).ok(),
            "key order must survive the store"
        );
    }
}

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

/// Programs list in byte order of their ref, upserts keep one entry, scopes are separate.
pub async fn programs_listed_in_ref_order(store: Arc<dyn Store>) {
    let scope = fresh_scope("programs");
    let other = fresh_scope("programs-other");
    assert!(store.list_programs(&scope).await.expect("list").is_empty());

    // Inserted out of order; byte order puts "a10" before "a2".
    for program_ref in ["prog_b", "prog_a2", "prog_c", "prog_a10"] {
        let record = json!({"program_ref": program_ref, "version": 1});
        store
            .put_program(&scope, program_ref, &record, LONG_TTL)
            .await
            .expect("put_program");
    }
    // Overwriting keeps one entry and its place.
    let updated = json!({"program_ref": "prog_b", "version": 2});
    store
        .put_program(&scope, "prog_b", &updated, LONG_TTL)
        .await
        .expect("put_program");

    let listed = store.list_programs(&scope).await.expect("list");
    let refs: Vec<&str> = listed
        .iter()
        .filter_map(|p| p.get("program_ref").and_then(Value::as_str))
        .collect();
    assert_eq!(refs, ["prog_a10", "prog_a2", "prog_b", "prog_c"]);
    assert_eq!(listed.get(2), Some(&updated));

    assert_eq!(
        store.get_program(&scope, "prog_b").await.expect("get"),
        Some(updated)
    );
    assert_eq!(
        store.get_program(&scope, "missing").await.expect("get"),
        None
    );
    assert_eq!(
        store.get_program(&other, "prog_b").await.expect("get"),
        None
    );
    assert!(store.list_programs(&other).await.expect("list").is_empty());
}

/// A promoted program is gone, from lookups and from the listing, after its
/// own ttl; a longer-lived neighbour stays.
pub async fn program_expires_after_ttl(store: Arc<dyn Store>) {
    let scope = fresh_scope("program-ttl");
    let short = json!({"program_ref": "prog_short"});
    let long = json!({"program_ref": "prog_long"});
    store
        .put_program(&scope, "prog_short", &short, SHORT_TTL)
        .await
        .expect("put_program");
    store
        .put_program(&scope, "prog_long", &long, LONG_TTL)
        .await
        .expect("put_program");
    assert_eq!(store.list_programs(&scope).await.expect("list").len(), 2);
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert_eq!(
        store.get_program(&scope, "prog_short").await.expect("get"),
        None
    );
    assert_eq!(
        store.list_programs(&scope).await.expect("list"),
        vec![long.clone()]
    );
    assert_eq!(
        store.get_program(&scope, "prog_long").await.expect("get"),
        Some(long)
    );
}

/// Snapshots round-trip per scope and expire after their ttl.
pub async fn catalog_snapshots_round_trip_and_expire(store: Arc<dyn Store>) {
    let scope = fresh_scope("snapshots");
    let other = fresh_scope("snapshots-other");
    let snapshot = json!({"cap_a": "d1", "cap_b": "d2"});
    store
        .put_catalog_snapshot(&scope, "cv_long", &snapshot, LONG_TTL)
        .await
        .expect("put");
    store
        .put_catalog_snapshot(&scope, "cv_short", &snapshot, SHORT_TTL)
        .await
        .expect("put");
    assert_eq!(
        store
            .get_catalog_snapshot(&scope, "cv_short")
            .await
            .expect("get"),
        Some(snapshot.clone())
    );
    assert_eq!(
        store
            .get_catalog_snapshot(&other, "cv_long")
            .await
            .expect("get"),
        None
    );
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert_eq!(
        store
            .get_catalog_snapshot(&scope, "cv_short")
            .await
            .expect("get"),
        None
    );
    assert_eq!(
        store
            .get_catalog_snapshot(&scope, "cv_long")
            .await
            .expect("get"),
        Some(snapshot)
    );
}

/// A revocation is seen until its ttl ends; other ids are not revoked.
pub async fn session_revocation_round_trip_and_expires(store: Arc<dyn Store>) {
    // Session ids are global (not scoped): make them unique per run instead.
    let prefix = fresh_scope("sessions");
    let short = format!("{prefix}-short");
    let long = format!("{prefix}-long");
    let never = format!("{prefix}-never");
    assert!(!store.is_session_revoked(&short).await.expect("check"));
    store
        .revoke_session(&short, SHORT_TTL)
        .await
        .expect("revoke");
    store.revoke_session(&long, LONG_TTL).await.expect("revoke");
    assert!(store.is_session_revoked(&short).await.expect("check"));
    assert!(store.is_session_revoked(&long).await.expect("check"));
    assert!(!store.is_session_revoked(&never).await.expect("check"));
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert!(!store.is_session_revoked(&short).await.expect("check"));
    assert!(store.is_session_revoked(&long).await.expect("check"));
}
