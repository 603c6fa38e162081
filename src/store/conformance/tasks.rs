//! Conformance checks of task records: create once, move only from the
//! revision read, scoped, listed, expired.

use super::support::*;
use crate::store::Store;
use serde_json::{Value, json};
use std::sync::Arc;

fn task(id: &str, revision: u64, status: &str) -> Value {
    json!({"task_id": id, "revision": revision, "status": status})
}

/// A task is created once; it moves only from the revision the writer
/// read, a repeated write of the same record succeeds again, and another
/// scope sees nothing of it.
pub async fn task_moves_only_from_the_revision_read(store: Arc<dyn Store>) {
    let scope = fresh_scope("tasks");
    let other = fresh_scope("tasks-other");
    let first = task("t1", 0, "working");
    assert!(
        store
            .put_task(&scope, "t1", &first, LONG_TTL, None)
            .await
            .expect("create")
    );
    assert!(
        !store
            .put_task(&scope, "t1", &task("t1", 0, "completed"), LONG_TTL, None)
            .await
            .expect("create again"),
        "a second create of one id must not replace the task"
    );
    assert!(
        store
            .put_task(&scope, "t1", &first, LONG_TTL, None)
            .await
            .expect("repeat"),
        "repeating the very write that landed is a success (a retried call)"
    );
    let done = task("t1", 1, "completed");
    assert!(
        store
            .put_task(&scope, "t1", &done, LONG_TTL, Some(0))
            .await
            .expect("move")
    );
    let cancelled = task("t1", 1, "cancelled");
    assert!(
        !store
            .put_task(&scope, "t1", &cancelled, LONG_TTL, Some(0))
            .await
            .expect("stale move"),
        "a writer that read revision 0 must not move a task now at revision 1"
    );
    assert_eq!(store.get_task(&scope, "t1").await.expect("get"), Some(done));
    assert!(
        !store
            .put_task(
                &scope,
                "absent",
                &task("absent", 1, "completed"),
                LONG_TTL,
                Some(0)
            )
            .await
            .expect("move absent"),
        "moving a task that does not exist writes nothing"
    );
    assert_eq!(store.get_task(&scope, "absent").await.expect("get"), None);
    assert_eq!(store.get_task(&other, "t1").await.expect("get other"), None);
    assert!(
        store
            .list_tasks(&other)
            .await
            .expect("list other")
            .is_empty()
    );
}

/// The scope's tasks are listed; an expired one leaves the record and the list.
pub async fn tasks_listed_and_expire(store: Arc<dyn Store>) {
    let scope = fresh_scope("tasks-list");
    for id in ["a", "b"] {
        assert!(
            store
                .put_task(&scope, id, &task(id, 0, "working"), LONG_TTL, None)
                .await
                .expect("create")
        );
    }
    assert!(
        store
            .put_task(
                &scope,
                "short",
                &task("short", 0, "working"),
                SHORT_TTL,
                None
            )
            .await
            .expect("create short")
    );
    let mut ids: Vec<String> = store
        .list_tasks(&scope)
        .await
        .expect("list")
        .iter()
        .filter_map(|t| t.get("task_id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    ids.sort();
    assert_eq!(ids, ["a", "b", "short"]);
    tokio::time::sleep(PAST_SHORT_TTL).await;
    assert_eq!(store.get_task(&scope, "short").await.expect("get"), None);
    assert_eq!(store.list_tasks(&scope).await.expect("list").len(), 2);
}
