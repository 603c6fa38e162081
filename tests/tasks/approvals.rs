//! A run riskier than its caller may start alone is held: as a task it
//! waits in `input_required` showing its plan, until another person with
//! the `approve` permission (or, on the extension form, the caller's own
//! client answering the approval form) decides. Approved, exactly the held
//! program runs once, on the catalog it was checked on; declined, nothing
//! runs. A plain call, which cannot wait, is refused with the way to be held.

use super::wire::*;
use crate::common::engine_env::key_entry;
use crate::common::{ACME_OPS, FEATURES, TestEnv};
use serde_json::{Value, json};
use std::time::Duration;

const APPROVER: &str = "acme-approver-key";

/// The feature gateway, with acme's ops key held above `write` and a
/// second person of acme who may approve.
async fn gateway() -> TestEnv {
    TestEnv::with_config(FEATURES, |c| {
        for key in &mut c.auth.keys {
            if key.name == "ops" {
                key.approve_above = Some("write".into());
            }
        }
        let mut approver = key_entry("approver", "acme", APPROVER);
        approver.permissions = Some(vec!["learn".into(), "validate".into(), "approve".into()]);
        c.auth.keys.push(approver);
    })
    .await
}

/// Naps, then deletes a customer: destructive.
fn deleting() -> Value {
    json!({"steps": [
        {"id": "nap", "kind": "call", "capability": "util.sleep", "with": {"ms": 200}},
        {"id": "drop", "kind": "call", "capability": "crm.delete_customer", "with": {"id": "cus_2"}}
    ]})
}

fn run_args(program: Value) -> Value {
    json!({"mode": "immediate", "workflow": program})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_run_approved_by_another_person_runs_once() {
    let env = gateway().await;
    let (owner, approver) = (env.client(ACME_OPS), env.client(APPROVER));
    let before = env.engine.digest("acme").await;
    let runs_before = env.engine.runs("acme").await;
    let task_id = created_id(&create_task(&owner, run_args(deleting())).await);
    let held = until_status(&owner, &task_id, "input_required").await;
    assert!(
        held["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("approval")),
        "{held}"
    );
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "nothing runs while held"
    );

    let listed = approver
        .call("pilotage_approvals", json!({"verb": "list"}))
        .await;
    let entry = listed.structured["held"]
        .as_array()
        .and_then(|h| h.iter().find(|e| e["task_id"] == task_id.as_str()).cloned())
        .unwrap_or_else(|| panic!("the approver sees the held run: {}", listed.structured));
    assert_eq!(entry["risk"], "destructive", "{entry}");
    assert_eq!(entry["requested_by"], "key:acme:ops", "{entry}");
    assert!(
        entry["steps"].to_string().contains("crm.delete_customer"),
        "{entry}"
    );
    assert!(
        entry["program_digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:"))
    );

    // The caller cannot approve its own run: it has no such tool.
    let own = owner
        .rpc(
            "tools/call",
            json!({"name": "pilotage_approvals", "arguments": {"verb": "list"}}),
        )
        .await;
    assert_eq!(own["error"]["code"], -32602, "{own}");

    let approved = approver
        .call(
            "pilotage_approvals",
            json!({"verb": "approve", "task_id": task_id}),
        )
        .await;
    assert!(!approved.is_error, "{}", approved.raw);
    assert_eq!(approved.structured["decided_by"], "key:acme:approver");
    let ended = until_status(&owner, &task_id, "completed").await;
    let result = owner.rpc("tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(
        result["result"]["structuredContent"]["outcome"]["status"], "success",
        "{result} {ended}"
    );
    assert_ne!(
        env.engine.digest("acme").await,
        before,
        "the approved run ran"
    );
    assert_eq!(
        env.engine.runs("acme").await - runs_before,
        1,
        "exactly one run"
    );
    // Decided runs leave the list; deciding again is refused.
    let listed = approver
        .call("pilotage_approvals", json!({"verb": "list"}))
        .await;
    assert!(!listed.structured.to_string().contains(&task_id));
    let again = approver
        .call(
            "pilotage_approvals",
            json!({"verb": "decline", "task_id": task_id}),
        )
        .await;
    assert!(again.is_error, "{}", again.raw);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_run_runs_nothing() {
    let env = gateway().await;
    let (owner, approver) = (env.client(ACME_OPS), env.client(APPROVER));
    let before = env.engine.digest("acme").await;
    let task_id = created_id(&create_task(&owner, run_args(deleting())).await);
    until_status(&owner, &task_id, "input_required").await;
    let declined = approver
        .call(
            "pilotage_approvals",
            json!({"verb": "decline", "task_id": task_id}),
        )
        .await;
    assert_eq!(
        declined.structured["status"], "cancelled",
        "{}",
        declined.raw
    );
    let ended = until_status(&owner, &task_id, "cancelled").await;
    assert!(
        ended["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("declined by key:acme:approver")),
        "{ended}"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "a declined run ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_holds_only_on_the_catalog_it_was_given_on() {
    let env = gateway().await;
    let (owner, approver) = (env.client(ACME_OPS), env.client(APPROVER));
    let before = env.engine.digest("acme").await;
    let task_id = created_id(&create_task(&owner, run_args(deleting())).await);
    until_status(&owner, &task_id, "input_required").await;
    // The catalog moves while the run waits.
    let added = json!({"name": "util.added_while_held", "title": "Added while held",
        "doc": "Added while a run waits for approval.", "params": {"type": "object"},
        "effect": "read", "tags": []});
    env.engine
        .put_capability("util.added_while_held", &added, Some("acme"))
        .await;
    approver
        .call(
            "pilotage_approvals",
            json!({"verb": "approve", "task_id": task_id}),
        )
        .await;
    until_status(&owner, &task_id, "completed").await;
    let result = owner.rpc("tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(
        result["result"]["structuredContent"]["outcome"]["status"], "catalog_drift",
        "{result}"
    );
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "a drifted approval ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_call_is_refused_and_runs_within_the_limit_are_not_held() {
    let env = gateway().await;
    let owner = env.client(ACME_OPS);
    let before = env.engine.digest("acme").await;
    let refused = owner.call("run_workflow", run_args(deleting())).await;
    assert!(refused.is_error, "{}", refused.raw);
    assert_eq!(refused.structured["error"]["kind"], "invalid_request");
    assert!(refused.text.contains("as a task"), "{}", refused.text);
    assert_eq!(env.engine.digest("acme").await, before);
    // A write is within `write`: it runs without anyone asked.
    let write = owner
        .call(
            "run_workflow",
            run_args(crate::common::write_program("gold")),
        )
        .await;
    assert_eq!(
        write.structured["outcome"]["status"], "success",
        "{}",
        write.raw
    );
    // A test run takes no effect: it needs no approval.
    let mut test_run = run_args(deleting());
    test_run["test_run"] = json!(true);
    let simulated = owner.call("run_workflow", test_run).await;
    assert!(!simulated.is_error, "{}", simulated.raw);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_callers_own_client_answers_the_approval_form() {
    let env = gateway().await;
    let before = env.engine.digest("acme").await;
    let call = json!({"name": "run_workflow", "arguments": run_args(deleting())});
    let created = stateless(&env.url, ACME_OPS, "tools/call", call, true).await;
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("a held run is a task")
        .to_owned();
    let held = until_stateless(&env.url, ACME_OPS, &task_id, |s| s == "input_required").await;
    let form = &held["inputRequests"]["approval"];
    assert_eq!(form["method"], "elicitation/create", "{held}");
    assert!(
        form["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("crm.delete_customer")),
        "{held}"
    );
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["decision"]["enum"],
        json!(["approve", "decline"])
    );
    let answer = json!({"taskId": task_id, "inputResponses": {"approval": {"action": "accept", "content": {"decision": "approve"}}}});
    let updated = stateless(&env.url, ACME_OPS, "tasks/update", answer, true).await;
    assert!(updated.get("error").is_none(), "{updated}");
    let got = until_stateless(&env.url, ACME_OPS, &task_id, |s| s == "completed").await;
    assert_eq!(
        got["result"]["structuredContent"]["outcome"]["status"], "success",
        "{got}"
    );
    assert_ne!(
        env.engine.digest("acme").await,
        before,
        "the approved run ran"
    );
}
