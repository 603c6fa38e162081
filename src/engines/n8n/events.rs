//! An execution as the language reads it (docs/n8n-v1.md, "Events"): one
//! event per node run from `data.resultData.runData`, in start order, then
//! a final event with the execution's status. Each event counts the items
//! that left on each output and carries the items themselves (their JSON)
//! as its step's output, bounded: at most [`NODE_ITEM_BYTES`] per node run
//! and [`TRACE_ITEM_BYTES`] for the whole run, the rest replaced by a
//! marker that says how many were left out and why. A failed node run
//! carries n8n's message and, when n8n gives one, its description.

use serde_json::{Value, json};

/// Bytes of item JSON one node run's output shows, at most.
pub const NODE_ITEM_BYTES: usize = 16 * 1024;
/// Bytes of item JSON a whole run's trace shows, at most.
pub const TRACE_ITEM_BYTES: usize = 256 * 1024;

/// The events of a stored execution (`GET /api/v1/executions/:id?includeData=true`).
pub fn events(execution: &Value) -> Vec<Value> {
    let mut runs: Vec<(f64, usize, Value)> = Vec::new();
    let mut trace_budget = TRACE_ITEM_BYTES;
    if let Some(run_data) = execution
        .pointer("/data/resultData/runData")
        .and_then(Value::as_object)
    {
        for (node, node_runs) in run_data {
            let Some(node_runs) = node_runs.as_array() else {
                continue;
            };
            for (run, task) in node_runs.iter().enumerate() {
                let started = task.get("startTime").and_then(Value::as_f64).unwrap_or(0.0);
                let error = task
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let description = task
                    .pointer("/error/description")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty());
                let failed = error.is_some()
                    || task.get("executionStatus").and_then(Value::as_str) == Some("error");
                let output = shown_output(task, &mut trace_budget);
                let error = match (error, description) {
                    (Some(message), Some(description)) => Some(format!("{message}: {description}")),
                    (error, _) => error,
                };
                let event = json!({
                    "node": node,
                    "run": run,
                    "status": if failed { "error" } else { "success" },
                    "started_ms": task.get("startTime").cloned().unwrap_or(Value::Null),
                    "duration_ms": task.get("executionTime").cloned().unwrap_or(Value::Null),
                    "items": output["items"].clone(),
                    "output": output,
                    "error": error,
                });
                runs.push((started, runs.len(), event));
            }
        }
    }
    // Start order; nodes started in the same millisecond keep n8n's order.
    runs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<Value> = runs.into_iter().map(|(_, _, e)| e).collect();
    out.push(json!({
        "execution": final_status(execution),
        "error": error_message(execution),
    }));
    out
}

/// A node run's output as its step shows it: the item count per output,
/// and each output's items (their `json`) while the node's and the trace's
/// byte budgets last; what does not fit is counted in `truncated`.
fn shown_output(task: &Value, trace_budget: &mut usize) -> Value {
    let mut node_budget = NODE_ITEM_BYTES.min(*trace_budget);
    let mut left_out = 0usize;
    let mut counts = Vec::new();
    let outputs: Vec<Value> = task
        .pointer("/data/main")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|output| {
            let items = output.as_array().map_or(&[][..], Vec::as_slice);
            counts.push(items.len());
            let mut shown = Vec::new();
            for item in items {
                let json = item.get("json").cloned().unwrap_or(Value::Null);
                let size = serde_json::to_string(&json).map_or(usize::MAX, |t| t.len());
                if left_out == 0 && size <= node_budget {
                    node_budget -= size;
                    shown.push(json);
                } else {
                    left_out += 1;
                }
            }
            Value::Array(shown)
        })
        .collect();
    *trace_budget -= NODE_ITEM_BYTES.min(*trace_budget) - node_budget;
    let mut output = json!({"items": counts, "data": outputs});
    if left_out > 0 {
        output["truncated"] = json!(format!(
            "{left_out} item(s) not shown: a step shows at most {NODE_ITEM_BYTES} bytes of items, a trace {TRACE_ITEM_BYTES}"
        ));
    }
    output
}

/// `success`, `error` or `canceled`.
pub fn final_status(execution: &Value) -> &'static str {
    match execution.get("status").and_then(Value::as_str) {
        Some("success") => "success",
        Some("canceled") => "canceled",
        _ => "error",
    }
}

/// The execution's error message, if it failed.
pub fn error_message(execution: &Value) -> Option<String> {
    execution
        .pointer("/data/resultData/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The error's name (`WorkflowHasIssuesError`, `NodeOperationError`).
pub fn error_name(execution: &Value) -> Option<String> {
    let error = execution.pointer("/data/resultData/error")?;
    error
        .get("name")
        .or_else(|| error.get("constructor"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The JSON of the items the last node sent on its first output.
pub fn result(execution: &Value) -> Value {
    let Some(last) = execution
        .pointer("/data/resultData/lastNodeExecuted")
        .and_then(Value::as_str)
    else {
        return Value::Null;
    };
    let Some(runs) = execution
        .pointer("/data/resultData/runData")
        .and_then(|r| r.get(last))
        .and_then(Value::as_array)
    else {
        return Value::Null;
    };
    let items = runs
        .last()
        .and_then(|t| t.pointer("/data/main/0"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("json").cloned())
                .collect()
        })
        .unwrap_or_default();
    Value::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execution() -> Value {
        json!({"status": "success", "data": {"resultData": {
        "lastNodeExecuted": "Yes",
        "runData": {
            "Yes": [{"startTime": 1764600000005u64, "executionTime": 1, "executionStatus": "success",
                      "data": {"main": [[{"json": {"a": 1}}]]}}],
            "Start": [{"startTime": 1764600000000u64, "executionTime": 0, "executionStatus": "success",
                        "data": {"main": [[{"json": {}}]]}}],
            "If": [{"startTime": 1764600000002u64, "executionTime": 3, "executionStatus": "success",
                     "data": {"main": [[{"json": {}}], []]}}]
        }}}})
    }

    #[test]
    fn a_steps_items_are_shown_within_their_budgets_and_the_rest_is_counted() {
        let big = "x".repeat(NODE_ITEM_BYTES / 4);
        let items: Vec<Value> = (0..6)
            .map(|i| json!({"json": {"i": i, "pad": big}}))
            .collect();
        let task = json!({"data": {"main": [items]}});
        let mut trace = TRACE_ITEM_BYTES;
        let output = shown_output(&task, &mut trace);
        let shown = output["data"][0].as_array().unwrap().len();
        assert_eq!(
            shown, 3,
            "three quarter-budget items fit, the fourth does not"
        );
        assert_eq!(output["items"], json!([6]));
        assert!(
            output["truncated"]
                .as_str()
                .unwrap()
                .starts_with("3 item(s) not shown")
        );
        assert!((TRACE_ITEM_BYTES - NODE_ITEM_BYTES..TRACE_ITEM_BYTES).contains(&trace));
        // An exhausted trace budget shows nothing more, and says so.
        let mut spent = 0;
        let none = shown_output(&task, &mut spent);
        assert_eq!(none["data"][0], json!([]));
        assert!(none["truncated"].as_str().unwrap().starts_with("6 item(s)"));
    }

    #[test]
    fn a_failed_node_carries_its_message_and_description() {
        let execution = json!({"status": "error", "data": {"resultData": {"runData": {
            "Fetch": [{"startTime": 1, "executionTime": 2, "executionStatus": "error",
                "error": {"message": "The resource you are requesting could not be found",
                          "description": "404 - not here"}}]}}}});
        assert_eq!(
            events(&execution)[0]["error"],
            "The resource you are requesting could not be found: 404 - not here"
        );
    }

    #[test]
    fn one_event_per_node_run_in_start_order_then_the_execution() {
        let e = events(&execution());
        let nodes: Vec<&str> = e.iter().filter_map(|x| x["node"].as_str()).collect();
        assert_eq!(nodes, ["Start", "If", "Yes"]);
        assert_eq!(
            e[1],
            json!({"node": "If", "run": 0, "status": "success", "started_ms": 1764600000002u64,
                   "duration_ms": 3, "items": [1, 0],
                   "output": {"items": [1, 0], "data": [[{}], []]}, "error": null})
        );
        assert_eq!(e[3], json!({"execution": "success", "error": null}));
        assert_eq!(result(&execution()), json!([{"a": 1}]));
    }

    #[test]
    fn a_failed_node_carries_its_message() {
        let x = json!({"status": "error", "data": {"resultData": {
            "error": {"message": "boom", "name": "NodeOperationError"},
            "runData": {"Code": [{"startTime": 1, "executionTime": 2, "executionStatus": "error",
                                   "error": {"message": "boom"}}]}}}});
        let e = events(&x);
        assert_eq!(e[0]["status"], "error");
        assert_eq!(e[0]["error"], "boom");
        assert_eq!(e[1], json!({"execution": "error", "error": "boom"}));
        assert_eq!(error_name(&x).as_deref(), Some("NodeOperationError"));
    }
}
