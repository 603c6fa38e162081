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
                    decisions.push(json!({"at": name, "took": NO_OUTPUT, "because": "no output had items"}));
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
    let message = event
        .get("error")
        .and_then(|e| e.as_str().map(str::to_string).or_else(|| {
            e.get("message").and_then(Value::as_str).map(str::to_string)
        }));
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
