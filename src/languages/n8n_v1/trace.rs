//! The adapter's events → the flat trace at level `full` (Part II §5.8).
//! An event is one node run, in start order (docs/n8n-v1.md, "Events"):
//! `{node, run, status, started_ms, duration_ms, items: [per output],
//! error}`; a last `{execution, error}` closes the list and is no step.
//!
//! - Each node run is one entry, id = the node's name (the runs of a node
//!   in a loop body repeat it), calling its type; its output is the item
//!   count per output (or the event's `output` when the adapter gives it).
//! - An If or Switch run carries its decisions: one per output that had
//!   items, `took` = the output's name as in the plan (`true`, `false`, a
//!   rule's output key), or `none` when no output had any.
//! - A Loop Over Items run carries one decision: `continue` when its
//!   `loop` output had items (one more batch), `exit` when its `done`
//!   output had them.
//! - Nodes absent from the events did not run.

use super::document::Workflow;
use super::graph::{is_branch, is_loop};
use super::ports;
use crate::languages::RunEnd;
use crate::pilotage::{Outcome, StepStatus};
use serde_json::{Map, Value, json};

/// The decision label of a branch run whose outputs all stayed empty.
pub const NO_OUTPUT: &str = "none";

/// Maps the events of one run to trace steps.
pub fn map_events(wf: &Workflow, events: &[Value], end: RunEnd) -> Vec<Value> {
    let mut out = Vec::with_capacity(events.len());
    let mut batches: std::collections::HashMap<String, usize> = Default::default();
    for event in events {
        let Some(name) = event.get("node").and_then(Value::as_str) else {
            continue;
        };
        let node = wf.node(name);
        let items: Vec<u64> = event
            .get("items")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|n| n.as_u64().unwrap_or(0)).collect())
            .unwrap_or_default();
        let mut e = Map::new();
        e.insert("id".into(), Value::String(name.to_string()));
        if let Some(node) = node.filter(|n| !n.kind.is_empty()) {
            e.insert("calls".into(), Value::String(node.kind.to_string()));
        }
        e.insert(
            "input".into(),
            event.get("input").cloned().unwrap_or_else(|| json!({})),
        );
        e.insert(
            "output".into(),
            event
                .get("output")
                .cloned()
                .unwrap_or_else(|| json!({"items": items})),
        );
        e.insert("outcome".into(), outcome(event, end).to_json());
        if let Some(ms) = event.get("duration_ms").and_then(Value::as_u64) {
            e.insert("t_ms".into(), Value::from(ms));
        }
        let finished = event.get("status").and_then(Value::as_str) == Some("success");
        match node {
            Some(node) if is_loop(node) && finished => {
                let batch = batches.entry(name.to_string()).or_insert(0);
                *batch += 1;
                let looped = ports::loop_output(node)
                    .and_then(|k| items.get(k))
                    .is_some_and(|&n| n > 0);
                let decision = if looped {
                    json!({"at": name, "took": "continue", "because": format!("batch {batch}")})
                } else {
                    json!({"at": name, "took": "exit", "because": format!("items exhausted after {} batches", *batch - 1)})
                };
                e.insert("decisions".into(), json!([decision]));
            }
            Some(node) if is_branch(node) && finished => {
                let mut decisions: Vec<Value> = items
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, n)| {
                        json!({"at": name, "took": ports::output_name(node, k),
                            "because": format!("{n} item{} on output {k}", if *n == 1 { "" } else { "s" })})
                    })
                    .collect();
                if decisions.is_empty() {
                    decisions.push(
                        json!({"at": name, "took": NO_OUTPUT, "because": "no output had items"}),
                    );
                }
                e.insert("decisions".into(), Value::Array(decisions));
            }
            _ => {}
        }
        out.push(Value::Object(e));
    }
    out
}

/// A node run's status as a step outcome: `success`, `error` with n8n's
/// message, or (not finished) `timeout` when the run's deadline passed.
fn outcome(event: &Value, end: RunEnd) -> Outcome {
    let message = event.get("error").and_then(|e| {
        e.as_str()
            .map(str::to_string)
            .or_else(|| e.get("message").and_then(Value::as_str).map(str::to_string))
    });
    match event.get("status").and_then(Value::as_str) {
        Some("success") => Outcome::step(StepStatus::Success, None),
        Some("error") => Outcome::step(StepStatus::Error, message),
        other => {
            let status = if end == RunEnd::TimedOut {
                StepStatus::Timeout
            } else {
                StepStatus::Error
            };
            Outcome::step(
                status,
                Some(message.unwrap_or_else(|| {
                    format!("the node did not finish ({})", other.unwrap_or("no status"))
                })),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::shapes;
    use super::*;
    use serde_json::json;

    fn run(node: &str, items: Value) -> Value {
        json!({"node": node, "run": 0, "status": "success", "started_ms": 1, "duration_ms": 3, "items": items, "error": null})
    }

    fn decisions(trace: &[Value], i: usize) -> Vec<String> {
        trace[i]["decisions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d["took"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    #[test]
    fn branches_decide_by_the_outputs_with_items_and_loops_by_batches() {
        let p = shapes();
        let wf = Workflow::read(&p);
        let events = vec![
            run("Start", json!([1])),
            run("Items", json!([5])),
            run("Loop", json!([0, 2])),
            run("Mark", json!([2])),
            run("Loop", json!([0, 2])),
            run("Mark", json!([2])),
            run("Loop", json!([5, 0])),
            run("Check", json!([2, 3])),
            run("Big", json!([2])),
            run("Route", json!([3, 0])),
            run("A", json!([3])),
            run("Join", json!([5])),
            json!({"node": "End", "run": 0, "status": "error", "duration_ms": 9, "items": [], "error": "boom"}),
            json!({"execution": "error", "error": "boom"}),
        ];
        let trace = map_events(&wf, &events, RunEnd::Failed);
        assert_eq!(trace.len(), 13);
        assert_eq!(decisions(&trace, 2), ["continue"]);
        assert_eq!(decisions(&trace, 6), ["exit"]);
        assert_eq!(
            trace[6]["decisions"][0]["because"],
            "items exhausted after 2 batches"
        );
        assert_eq!(decisions(&trace, 7), ["true", "false"]);
        assert_eq!(decisions(&trace, 9), ["a"]);
        assert_eq!(trace[0]["calls"], "n8n-nodes-base.manualTrigger");
        assert_eq!(trace[3]["output"], json!({"items": [2]}));
        assert_eq!(trace[3]["t_ms"], 3);
        assert_eq!(trace[12]["outcome"]["status"], "error");
        assert_eq!(trace[12]["outcome"]["error"], "boom");
        assert_eq!(trace[11].get("decisions"), None);
    }

    #[test]
    fn unfinished_runs_and_empty_branches() {
        let p = shapes();
        let wf = Workflow::read(&p);
        let events = vec![
            run("Check", json!([0, 0])),
            json!({"node": "Big", "status": "running"}),
            json!({"node": "Ghost", "status": "success"}),
            json!({"no node": 1}),
        ];
        let trace = map_events(&wf, &events, RunEnd::TimedOut);
        assert_eq!(trace.len(), 3);
        assert_eq!(decisions(&trace, 0), [NO_OUTPUT]);
        assert_eq!(trace[1]["outcome"]["status"], "timeout");
        assert_eq!(trace[2].get("calls"), None);
        let summary = crate::languages::steps::summary::summarize(&trace);
        assert_eq!(summary[0].get("input"), None);
    }
}
