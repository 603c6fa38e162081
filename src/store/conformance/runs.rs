//! Conformance checks of run records: ping, round trips, scope isolation,
//! expiry, and values kept exactly.

use super::support::*;
use crate::store::Store;
use serde_json::{Value, json};
use std::sync::Arc;

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
