//! An approval gates a destructive n8n workflow. Caller a may run up to
//! `external` alone; an HTTP Request that DELETEs is destructive, so a's run
//! of it waits as a task (`input_required`, nothing sent to n8n's target)
//! until an approver of a's tenant approves it; then it runs once. A GET,
//! within the limit, runs without anyone asked.

use super::engine_runs::{call, calls};
use super::hook::Hook;
use crate::common::engine_env::key_entry;
use crate::common::n8n_gateway::{EXECUTE, N8nEnv, run};
use serde_json::json;
use std::time::{Duration, Instant};

const APPROVER: &str = "n8n-approver-key";

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_gates_a_destructive_workflow() {
    let n = N8nEnv::start_with(|cfg| {
        let a = cfg
            .auth
            .keys
            .iter_mut()
            .find(|k| k.name == "a")
            .expect("key a");
        a.approve_above = Some("external".into());
        let tenant = a.tenant.clone();
        let mut approver = key_entry("approver", &tenant, APPROVER);
        approver.permissions = Some(vec!["learn".into(), "validate".into(), "approve".into()]);
        cfg.auth.keys.push(approver);
    })
    .await;
    let hook = Hook::start().await;
    let a = n.session(&n.a).await;

    // Within the limit: a read runs at once.
    let read = calls("read", vec![call("Look", 240, "GET", &hook.url("/look"))]);
    let answer = run(&a, &read, json!({})).await;
    assert_eq!(
        answer.structured["outcome"]["status"], "success",
        "{}",
        answer.raw
    );
    assert_eq!(hook.next().await, "/look");

    let drop = calls(
        "drop",
        vec![call("Drop", 240, "DELETE", &hook.url("/drop"))],
    );
    let arguments = json!({"workflow": drop, "mode": "immediate"});
    let created = a
        .rpc(
            "tools/call",
            json!({"name": EXECUTE, "arguments": arguments, "task": {"ttl": 600_000}}),
        )
        .await;
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let held = status_until(&a, &task_id, "input_required").await;
    assert!(
        held["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("destructive")),
        "{held}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        hook.paths(),
        ["/look"],
        "nothing reached the target while held"
    );

    let approver = n.env.client(APPROVER);
    let listed = approver
        .call("pilotage_approvals", json!({"verb": "list"}))
        .await;
    let entry = &listed.structured["held"][0];
    assert_eq!(entry["task_id"], task_id.as_str(), "{}", listed.structured);
    assert!(
        entry["steps"].to_string().contains("httpRequest"),
        "{entry}"
    );
    approver
        .call(
            "pilotage_approvals",
            json!({"verb": "approve", "task_id": task_id}),
        )
        .await;
    assert_eq!(hook.next().await, "/drop");
    let ended = status_until(&a, &task_id, "completed").await;
    let result = a.rpc("tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(
        result["result"]["structuredContent"]["outcome"]["status"], "success",
        "{result} {ended}"
    );
    assert_eq!(
        hook.paths(),
        ["/look", "/drop"],
        "the approved run ran once"
    );
}

/// Polls `tasks/get` until the task is `status` (bounded).
async fn status_until(c: &crate::common::Mcp, task_id: &str, status: &str) -> serde_json::Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let got = c.rpc("tasks/get", json!({"taskId": task_id})).await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        assert!(Instant::now() < until, "never {status}: {got}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
