//! An execution as the language reads it (docs/n8n-v1.md, "Events"): one
//! event per node run from `data.resultData.runData`, in start order, then
//! a final event with the execution's status. The items themselves never
//! become events, only how many left on each output.

use serde_json::{Value, json};

/// The events of a stored execution (`GET /api/v1/executions/:id?includeData=true`).
pub fn events(execution: &Value) -> Vec<Value> {
    let mut runs: Vec<(f64, usize, Value)> = Vec::new();
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
                let failed = error.is_some()
                    || task.get("executionStatus").and_then(Value::as_str) == Some("error");
                let items: Vec<usize> = task
                    .pointer("/data/main")
                    .and_then(Value::as_array)
                    .map(|outputs| {
                        outputs
                            .iter()
                            .map(|o| o.as_array().map_or(0, Vec::len))
                            .collect()
                    })
                    .unwrap_or_default();
                let event = json!({
                    "node": node,
                    "run": run,
                    "status": if failed { "error" } else { "success" },
                    "started_ms": task.get("startTime").cloned().unwrap_or(Value::Null),
                    "duration_ms": task.get("executionTime").cloned().unwrap_or(Value::Null),
                    "items": items,
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
    fn one_event_per_node_run_in_start_order_then_the_execution() {
        let e = events(&execution());
        let nodes: Vec<&str> = e.iter().filter_map(|x| x["node"].as_str()).collect();
        assert_eq!(nodes, ["Start", "If", "Yes"]);
        assert_eq!(
            e[1],
            json!({"node": "If", "run": 0, "status": "success", "started_ms": 1764600000002u64,
                   "duration_ms": 3, "items": [1, 0], "error": null})
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
