//! What the task suites send: long programs, and the calls of each form.

use crate::common::Mcp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long any test waits for a task to end; far above what runs take.
pub const ENDS_WITHIN: Duration = Duration::from_secs(40);

/// A run of about `naps` × `ms` that ends by echoing `marker`.
pub fn long_program(naps: usize, ms: u64, marker: &str) -> Value {
    let mut steps: Vec<Value> = (0..naps)
        .map(|i| json!({"id": format!("nap{i}"), "kind": "call", "capability": "util.sleep", "with": {"ms": ms}}))
        .collect();
    steps.push(
        json!({"id": "echo", "kind": "call", "capability": "util.echo", "with": {"value": marker}}),
    );
    json!({"steps": steps, "output": {"said": "$.steps.echo.output.value"}})
}

/// Naps, then a write: whether the write happened shows whether the run
/// went on after a cancel.
pub fn long_write(naps: usize, ms: u64, tier: &str) -> Value {
    let mut steps: Vec<Value> = (0..naps)
        .map(|i| json!({"id": format!("nap{i}"), "kind": "call", "capability": "util.sleep", "with": {"ms": ms}}))
        .collect();
    steps.push(json!({"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_3", "tier": tier}}));
    json!({"steps": steps})
}

/// A 2025-11-25 `tools/call` of `run_workflow` as a task; the whole answer.
pub async fn create_task(client: &Mcp, arguments: Value) -> Value {
    client
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": arguments, "task": {"ttl": 600_000}}),
        )
        .await
}

/// The task id of a `CreateTaskResult` (2025-11-25), asserting its shape.
pub fn created_id(answer: &Value) -> String {
    let task = &answer["result"]["task"];
    assert_eq!(task["status"], "working", "a new task is working: {answer}");
    for member in ["createdAt", "lastUpdatedAt"] {
        assert!(
            task[member].as_str().is_some_and(|t| t.ends_with('Z')),
            "{member}: {answer}"
        );
    }
    assert!(task["ttl"].as_u64().is_some(), "ttl: {answer}");
    assert!(
        task["pollInterval"].as_u64().is_some(),
        "pollInterval: {answer}"
    );
    task["taskId"].as_str().expect("taskId").to_owned()
}

/// Polls `tasks/get` (2025-11-25) until the task leaves `working`; its state.
pub async fn poll_until_ended(client: &Mcp, task_id: &str) -> Value {
    until(
        || client.rpc("tasks/get", json!({"taskId": task_id})),
        |s| s != "working",
    )
    .await
}

/// Polls `tasks/get` (2025-11-25) until the task is `status`; its state.
pub async fn until_status(client: &Mcp, task_id: &str, status: &str) -> Value {
    until(
        || client.rpc("tasks/get", json!({"taskId": task_id})),
        |s| s == status,
    )
    .await
}

/// Polls `tasks/get` (2026-07-28, tasks declared) until `done` holds of the
/// task's status; its state.
pub async fn until_stateless(
    url: &str,
    key: &str,
    task_id: &str,
    done: impl Fn(&str) -> bool,
) -> Value {
    until(
        || stateless(url, key, "tasks/get", json!({"taskId": task_id}), true),
        done,
    )
    .await
}

/// Asks `get` for the task until `done` holds of its status (bounded by
/// [`ENDS_WITHIN`]); the task's state.
async fn until<F: std::future::Future<Output = Value>>(
    get: impl Fn() -> F,
    done: impl Fn(&str) -> bool,
) -> Value {
    let deadline = Instant::now() + ENDS_WITHIN;
    loop {
        let got = get().await;
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(!status.is_empty(), "tasks/get: {got}");
        if done(&status) {
            return got["result"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "task still {status} after {ENDS_WITHIN:?}: {got}"
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// One 2026-07-28 request (no session): with `tasks`, the client declares
/// the tasks extension in the request's capabilities.
pub async fn stateless(
    url: &str,
    key: &str,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> Value {
    let mut extensions = json!({"io.github.jafarsa0/pilotage": {}});
    if tasks {
        extensions["io.modelcontextprotocol/tasks"] = json!({});
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
    });
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(key)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .timeout(ENDS_WITHIN);
    let named = params.get("name").or_else(|| params.get("taskId"));
    if let Some(name) = named.and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.expect("post");
    response.json().await.expect("json answer")
}
