//! Revision 2025-11-25: what a peer is told of tasks, a run held by a task
//! and read back exactly as a plain execute answers it, another principal's
//! task indistinguishable from none, and a cancel that stops the engine.

use super::wire::*;
use crate::common::{ACME_OPS, FEATURES, GLOBEX, Mcp, TestEnv};
use serde_json::{Value, json};
use std::time::Duration;

async fn gateway() -> TestEnv {
    TestEnv::with_config(FEATURES, |_| {}).await
}

#[tokio::test(flavor = "multi_thread")]
async fn initialize_and_tools_list_declare_tasks_for_the_execute_tools() {
    let env = gateway().await;
    let mut client = env.client(ACME_OPS);
    let init = client.initialize().await;
    let tasks = &init["capabilities"]["tasks"];
    assert!(tasks["requests"]["tools"]["call"].is_object(), "{init}");
    assert!(
        tasks["list"].is_object() && tasks["cancel"].is_object(),
        "{init}"
    );
    for tool in client.list_tools().await {
        let name = tool["name"].as_str().unwrap_or_default();
        let support = &tool["execution"]["taskSupport"];
        if name.starts_with("run_") {
            assert_eq!(support, "optional", "{tool}");
        } else {
            assert!(support.is_null(), "{name} must not offer tasks: {tool}");
        }
    }
    // An earlier revision is told nothing of tasks.
    let mut older = env.client(ACME_OPS);
    older.protocol = "2025-06-18".into();
    let init = older.initialize().await;
    assert!(init["capabilities"]["tasks"].is_null(), "{init}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_held_by_a_task_answers_what_a_plain_execute_answers() {
    let env = gateway().await;
    let client = env.client(ACME_OPS);
    let arguments = |marker: &str| json!({"mode": "immediate", "workflow": long_program(2, 1200, marker), "trace_level": "full", "store": true});
    let created = create_task(&client, arguments("held")).await;
    let task_id = created_id(&created);
    assert!(
        task_id.len() >= 32,
        "a task id carries 128 random bits: {task_id}"
    );
    let first = client.rpc("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(first["result"]["status"], "working", "{first}");
    assert!(first["result"].get("result").is_none(), "{first}");

    let ended = poll_until_ended(&client, &task_id).await;
    assert_eq!(ended["status"], "completed", "{ended}");
    let result = client.rpc("tasks/result", json!({"taskId": task_id})).await;
    let held = &result["result"];
    assert_eq!(
        held["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
        "{result}"
    );
    assert!(
        held.get("resultType").is_none(),
        "no resultType before 2026-07-28: {result}"
    );

    let plain = client.call("run_workflow", arguments("held")).await;
    let (held_answer, plain_answer) = (&held["structuredContent"], &plain.structured);
    assert_eq!(held_answer["outcome"], plain_answer["outcome"]);
    assert_eq!(held_answer["output"], json!({"said": "held"}));
    assert_eq!(held_answer["output"], plain_answer["output"]);
    assert_eq!(
        held_answer["trace"]["level"],
        plain_answer["trace"]["level"]
    );
    assert_eq!(
        held_answer["trace"]["events"].as_array().map(Vec::len),
        plain_answer["trace"]["events"].as_array().map(Vec::len),
        "the same trace: {held_answer}"
    );
    // The run was stored as a plain one is: its trace can be fetched.
    let run_id = held_answer["run_id"].as_str().expect("run_id");
    let fetched = client
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert_eq!(fetched.structured["run_id"], run_id);

    let listed = client.rpc("tasks/list", json!({})).await;
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    assert!(ids.contains(&task_id.as_str()), "{listed}");
    // An ended task cannot be cancelled.
    let late = client.rpc("tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(late["error"]["code"], -32602, "{late}");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_principals_task_is_indistinguishable_from_none() {
    let env = gateway().await;
    let owner = env.client(ACME_OPS);
    let created = create_task(
        &owner,
        json!({"mode": "immediate", "workflow": long_program(1, 300, "mine")}),
    )
    .await;
    let task_id = created_id(&created);
    let stranger = env.client(GLOBEX);
    let unknown = "task_00000000000000000000000000000000";
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let theirs = stranger.rpc(method, json!({"taskId": task_id})).await;
        let none = stranger.rpc(method, json!({"taskId": unknown})).await;
        assert_eq!(theirs["error"]["code"], -32602, "{method}: {theirs}");
        assert_eq!(
            theirs["error"]["message"]
                .as_str()
                .map(|m| m.replace(&task_id, "ID")),
            none["error"]["message"]
                .as_str()
                .map(|m| m.replace(unknown, "ID")),
            "{method}: another's task reads as no task"
        );
    }
    let listed = stranger.rpc("tasks/list", json!({})).await;
    assert!(!listed.to_string().contains(&task_id), "{listed}");
    assert_eq!(
        poll_until_ended(&owner, &task_id).await["status"],
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_ends_the_task_at_once_and_stops_the_engines_run() {
    let env = gateway().await;
    let client = env.client(ACME_OPS);
    let before = env.engine.digest("acme").await;
    let created = create_task(
        &client,
        json!({"mode": "immediate", "workflow": long_write(2, 1500, "gold")}),
    )
    .await;
    let task_id = created_id(&created);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let cancelled = client.rpc("tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let got = client.rpc("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let result = client.rpc("tasks/result", json!({"taskId": task_id})).await;
    assert_eq!(
        result["error"]["code"], -32602,
        "a cancelled task has no result: {result}"
    );
    // Past the moment the write would have happened, the engine's world is
    // as it was: the run stopped at the engine.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "the cancelled run wrote"
    );
    let again = client.rpc("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(
        again["result"]["status"], "cancelled",
        "a cancelled task stays so: {again}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn task_requests_that_cannot_be_are_refused_with_pilotage_errors() {
    let env = gateway().await;
    let client = env.client(ACME_OPS);
    // Only execute tools run as tasks.
    let validate = client
        .rpc(
            "tools/call",
            json!({"name": "validate_workflow", "arguments": {"mode": "immediate", "workflow": long_program(1, 10, "v")}, "task": {}}),
        )
        .await;
    assert_eq!(validate["error"]["code"], -32601, "{validate}");
    // Arguments the tool refuses are refused before any task exists.
    let wrong = client
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {"mode": "immediate", "workflow": 3}, "task": {}}),
        )
        .await;
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    let listed = client.rpc("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    // A caller no later request can be could never read its task.
    let passing = env.anonymous();
    let refused = create_task(
        &passing,
        json!({"mode": "immediate", "workflow": long_program(1, 10, "p")}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("API key")),
        "{refused}"
    );
    // Malformed task methods.
    let no_id = client.rpc("tasks/get", json!({})).await;
    assert_eq!(no_id["error"]["code"], -32602, "{no_id}");
    let cursor = client
        .rpc("tasks/list", json!({"cursor": "nonsense"}))
        .await;
    assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
}

/// A plain call is untouched by all of this.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_without_a_task_is_the_bounded_execute() {
    let env = gateway().await;
    let client: Mcp = env.client(ACME_OPS);
    let plain = client
        .call(
            "run_workflow",
            json!({"mode": "immediate", "workflow": long_program(1, 200, "plain")}),
        )
        .await;
    assert_eq!(plain.structured["outcome"]["status"], "success");
    assert!(plain.raw["result"].get("task").is_none());
    let _: &Value = &plain.raw;
}
