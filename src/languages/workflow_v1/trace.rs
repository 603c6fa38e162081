//! Engine event log → Pilotage flat trace (Part II §5.8).
//!
//! One entry per executed step, in the order execution reached it; ids carry
//! one `#n` per enclosing loop (outermost first, 1-based); a branch entry
//! carries its decision; a loop entry appears once per activation with one
//! `continue` decision per iteration and a final `exit`. Call and set entries
//! carry input, output, outcome and `t_ms`. A construct whose body did not
//! complete gets the step status `partial` (or `timeout`).

use crate::engines::json_path::pick;
use crate::engines::profile::{EngineProfile, EventKind};
use crate::languages::steps::{RunEnd, StepInfo};
use crate::pilotage::{Outcome, StepStatus};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// Maps the engine's events to trace steps at level `full`.
pub fn map_events(
    events: &[Value],
    mapping: &EngineProfile,
    steps: &[StepInfo],
    end: RunEnd,
) -> Vec<Value> {
    let m = &mapping.events;
    let ancestors: HashMap<&str, &[(Arc<str>, bool)]> = steps
        .iter()
        .filter_map(|s| Some((s.id.as_deref()?, &s.ancestors[..])))
        .collect();
    let mut out: Vec<Map<String, Value>> = Vec::with_capacity(events.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut open_loops: Vec<usize> = Vec::new();
    for event in events {
        let kind = match mapping.event_kind(event) {
            Ok(kind) => kind,
            Err(unknown) => {
                tracing::warn!(kind = %unknown, key = "engine.mapping.events.kinds",
                    "engine event kind in no value table; the event is left out of the trace");
                continue;
            }
        };
        let step = pick(event, &m.step).and_then(Value::as_str).unwrap_or("");
        let iters = mapping.counters(event);
        let id = qualified(step, &iters);
        let ms = pick(event, &m.ms).and_then(Value::as_u64);
        if kind == EventKind::Call {
            let ok = mapping.call_ok(event);
            let error = pick(event, &m.error)
                .and_then(Value::as_str)
                .map(str::to_string);
            let status = match (ok, end) {
                (true, _) => StepStatus::Success,
                (false, RunEnd::TimedOut) => StepStatus::Timeout,
                (false, _) => StepStatus::Error,
            };
            let mut e = Map::new();
            e.insert("id".into(), Value::String(id.clone()));
            if let Some(cap) = pick(event, &m.capability).and_then(Value::as_str) {
                e.insert("calls".into(), Value::String(cap.to_string()));
            }
            e.insert(
                "input".into(),
                pick(event, &m.args).cloned().unwrap_or(json!({})),
            );
            e.insert(
                "output".into(),
                pick(event, &m.result).cloned().unwrap_or(Value::Null),
            );
            e.insert("outcome".into(), Outcome::step(status, error).to_json());
            insert_ms(&mut e, ms);
            if !ok {
                mark_ancestors(&mut out, &index, &ancestors, step, &iters, status);
            }
            push(&mut out, &mut index, id, e);
        } else if kind == EventKind::Set {
            let value = pick(event, &m.set_value).cloned().unwrap_or(Value::Null);
            let mut e = Map::new();
            e.insert("id".into(), Value::String(id.clone()));
            e.insert("input".into(), json!({"value": value}));
            e.insert("output".into(), value);
            e.insert("outcome".into(), Outcome::success().to_json());
            insert_ms(&mut e, ms);
            push(&mut out, &mut index, id, e);
        } else if kind == EventKind::Branch {
            // An arm no table lists is kept as the engine wrote it (and logged):
            // an honest trace beats an invented decision.
            let arm = match mapping.arm(event) {
                Ok(arm) => arm.as_str().to_string(),
                Err(unknown) => {
                    tracing::warn!(arm = %unknown, key = "engine.mapping.events.arms",
                        "engine branch arm in no value table");
                    unknown
                }
            };
            let mut because = pick(event, &m.cond)
                .map(|c| match c {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            if let Some(v) = pick(event, &m.cond_value).and_then(Value::as_bool) {
                because = format!("{because} is {v}");
            }
            let mut e = Map::new();
            e.insert("id".into(), Value::String(id.clone()));
            e.insert("outcome".into(), Outcome::success().to_json());
            insert_ms(&mut e, ms);
            e.insert(
                "decisions".into(),
                json!([{"at": id, "took": arm, "because": because}]),
            );
            push(&mut out, &mut index, id, e);
        } else if kind == EventKind::LoopEnter {
            let mut e = Map::new();
            e.insert("id".into(), Value::String(id.clone()));
            e.insert("outcome".into(), Outcome::success().to_json());
            e.insert("decisions".into(), json!([]));
            if let Some(n) = pick(event, &m.loop_count).and_then(Value::as_u64) {
                e.insert("_count".into(), Value::from(n));
            }
            open_loops.push(out.len());
            push(&mut out, &mut index, id, e);
        } else if kind == EventKind::LoopNext {
            if let Some(&i) = index.get(&id) {
                let entry = &mut out[i];
                let n = entry
                    .get("decisions")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
                    + 1;
                let because = match entry.get("_count").and_then(Value::as_u64) {
                    Some(total) => format!("item {n} of {total}"),
                    None => format!("item {n}"),
                };
                if let Some(Value::Array(d)) = entry.get_mut("decisions") {
                    d.push(json!({"at": id, "took": "continue", "because": because}));
                }
            }
        } else if kind == EventKind::LoopExit
            && let Some(&i) = index.get(&id)
        {
            open_loops.retain(|&o| o != i);
            let entry = &mut out[i];
            let n = entry
                .get("decisions")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let because = if n == 0 {
                "no items".to_string()
            } else {
                format!("items exhausted after {n}")
            };
            if let Some(Value::Array(d)) = entry.get_mut("decisions") {
                d.push(json!({"at": id, "took": "exit", "because": because}));
            }
            insert_ms(entry, ms);
        }
    }
    // Loops the run never left did not complete.
    if end != RunEnd::Completed {
        let status = if end == RunEnd::TimedOut {
            StepStatus::Timeout
        } else {
            StepStatus::Partial
        };
        for i in open_loops {
            out[i].insert(
                "outcome".into(),
                Outcome::step(status, Some("the loop body did not complete".into())).to_json(),
            );
        }
    }
    out.into_iter()
        .map(|mut e| {
            e.remove("_count");
            Value::Object(e)
        })
        .collect()
}

fn qualified(step: &str, iters: &[u64]) -> String {
    let mut id = step.to_string();
    for n in iters {
        id.push('#');
        id.push_str(&n.to_string());
    }
    id
}

fn insert_ms(e: &mut Map<String, Value>, ms: Option<u64>) {
    if let Some(ms) = ms {
        e.insert("t_ms".into(), Value::from(ms));
    }
}

fn push(
    out: &mut Vec<Map<String, Value>>,
    index: &mut HashMap<String, usize>,
    id: String,
    e: Map<String, Value>,
) {
    index.insert(id, out.len());
    out.push(e);
}

/// A failed step leaves every enclosing branch/loop activation incomplete.
fn mark_ancestors(
    out: &mut [Map<String, Value>],
    index: &HashMap<String, usize>,
    ancestors: &HashMap<&str, &[(Arc<str>, bool)]>,
    step: &str,
    iters: &[u64],
    status: StepStatus,
) {
    let Some(chain) = ancestors.get(step) else {
        return;
    };
    let mut loops_above = 0;
    for (ancestor, is_loop) in chain.iter() {
        // An ancestor's own id carries the counters of the loops above it.
        let id = qualified(ancestor, &iters[..loops_above.min(iters.len())]);
        if let Some(&i) = index.get(&id) {
            let status = if status == StepStatus::Timeout {
                StepStatus::Timeout
            } else {
                StepStatus::Partial
            };
            out[i].insert(
                "outcome".into(),
                Outcome::step(status, Some(format!("step '{step}' did not complete"))).to_json(),
            );
        }
        if *is_loop {
            loops_above += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::workflow_v1::program::steps;

    #[test]
    fn maps_calls_branches_loops() {
        let program = json!({"steps": [
            {"id": "b", "kind": "branch", "when": {}, "then": [{"id": "l", "kind": "for_each", "do": [{"id": "c", "kind": "call", "capability": "x"}]}]}
        ]});
        let events = vec![
            json!({"type": "branch", "step": "b", "arm": "then", "cond": "1 eq 1 -> true", "ms": 0, "iter": []}),
            json!({"type": "loop_enter", "step": "l", "count": 2, "iter": []}),
            json!({"type": "loop_next", "step": "l", "index": 1, "iter": []}),
            json!({"type": "call", "step": "c", "capability": "x", "args": {"a": 1}, "result": {"r": 1}, "status": "ok", "ms": 2, "iter": [1]}),
            json!({"type": "loop_next", "step": "l", "index": 2, "iter": []}),
            json!({"type": "call", "step": "c", "capability": "x", "args": {"a": 2}, "result": null, "status": "failed", "error": "boom", "ms": 1, "iter": [2]}),
        ];
        let t = map_events(
            &events,
            &EngineProfile::default(),
            &steps(&program),
            RunEnd::Failed,
        );
        let ids: Vec<_> = t.iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["b", "l", "c#1", "c#2"]);
        assert_eq!(t[0]["decisions"][0]["took"], "then");
        assert_eq!(t[1]["decisions"].as_array().unwrap().len(), 2);
        assert_eq!(t[1]["outcome"]["status"], "partial");
        assert_eq!(t[0]["outcome"]["status"], "partial");
        assert_eq!(t[3]["outcome"]["status"], "error");
        assert_eq!(t[2]["calls"], "x");
    }

    #[test]
    fn value_tables_and_the_counter_base_are_honoured() {
        let program = json!({"steps": [
            {"id": "l", "kind": "for_each", "do": [
                {"id": "b", "kind": "branch", "when": {}, "then": [{"id": "c", "kind": "call", "capability": "x"}]}]}
        ]});
        let mut mapping = EngineProfile {
            case_insensitive_values: true,
            ..EngineProfile::default()
        };
        mapping.events.counter_base = 0;
        mapping.events.outcomes =
            [("OK".to_string(), crate::engines::profile::CallOutcome::Ok)].into();
        let events = vec![
            json!({"type": "LOOP_ENTER", "step": "l", "count": 1, "iter": []}),
            json!({"type": "Loop_Next", "step": "l", "iter": []}),
            json!({"type": "BRANCH", "step": "b", "arm": "THEN", "iter": [0]}),
            json!({"type": "heartbeat", "step": "l", "iter": []}),
            json!({"type": "CALL", "step": "c", "capability": "x", "status": "ok", "iter": [0]}),
            json!({"type": "CALL", "step": "c", "capability": "x", "status": "MAYBE", "iter": [0]}),
        ];
        let t = map_events(&events, &mapping, &steps(&program), RunEnd::Failed);
        let ids: Vec<_> = t.iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            ["l", "b#1", "c#1", "c#1"],
            "counted from 1; the unknown kind left out"
        );
        assert_eq!(t[1]["decisions"][0]["took"], "then", "THEN read as then");
        assert_eq!(t[2]["outcome"]["status"], "success", "ok read as OK");
        assert_eq!(
            t[3]["outcome"]["status"], "error",
            "an unknown outcome fails"
        );
    }

    #[test]
    fn zero_iteration_loop_exits_once() {
        let events = vec![
            json!({"type": "loop_enter", "step": "l", "count": 0, "iter": []}),
            json!({"type": "loop_exit", "step": "l", "iterations": 0, "ms": 0, "iter": []}),
        ];
        let t = map_events(&events, &EngineProfile::default(), &[], RunEnd::Completed);
        assert_eq!(
            t[0]["decisions"],
            json!([{"at": "l", "took": "exit", "because": "no items"}])
        );
    }
}
