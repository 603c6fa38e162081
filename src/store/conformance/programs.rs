//! Conformance checks of promoted programs, catalog snapshots and session
//! revocations: round trips, order and expiry.

use super::support::*;
use crate::store::Store;
use serde_json::{Value, json};
use std::sync::Arc;

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
