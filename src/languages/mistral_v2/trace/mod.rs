//! The engine adapter's events → the flat trace at level `full` (Part II
//! §5.8). An event is one task execution, in execution order:
//! `{task, task_id, state, state_info, triggered_by: [{task, event}],
//! published, result, with_items, duration_ms, actions: [{name, state,
//! input, output, state_info}]}`.
//!
//! - A task is one entry per action execution, id = the task name (retries
//!   of a task repeat its id); a task that ran no action (a sub-workflow,
//!   or one that failed before its action started) is one entry with the
//!   task's result.
//! - A `with-items` task is its loop entry `T.items` (one `continue` per
//!   action execution, then `exit` once the task finished) followed by
//!   `T#1`, `T#2`, ... in the order Mistral ran them (the REST API exposes
//!   no item index, so this is not necessarily the item order).
//! - After a task with transitions to tasks, its branch entry `T.next`
//!   carries one decision per arm taken, read from the later tasks'
//!   `triggered_by`: `took` is the plan's arm label, `because` the
//!   condition text or "T succeeded" / "T failed" / "T completed". When no
//!   transition was taken, and that is certain (the run completed, or the
//!   task failed with no `on-error`/`on-complete`), the decision is `none`;
//!   otherwise, in a run that ended early, the entry is left out rather
//!   than invented.
//! - Tasks absent from the events were not reached.

use super::plan::{NO_TRANSITION, arm_label, branch_id, capability, loop_id, task_transitions};
use super::workflow::{On, Task, Workflow};
use crate::languages::RunEnd;
use crate::pilotage::{Outcome, StepStatus};
use serde_json::{Map, Value, json};

/// Maps the events of one run to trace steps.
pub fn map_events(wf: Option<&Workflow>, events: &[Value], end: RunEnd) -> Vec<Value> {
    let task_of = |name: &str| wf.and_then(|w| w.tasks.iter().find(|t| t.name == name));
    let mut out = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let Some(name) = event.get("task").and_then(Value::as_str) else {
            tracing::warn!("mistral task event without a task name; left out of the trace");
            continue;
        };
        let task = task_of(name);
        let state = event.get("state").and_then(Value::as_str).unwrap_or("");
        let state_info = event
            .get("state_info")
            .and_then(Value::as_str)
            .map(str::to_string);
        let actions: &[Value] = event
            .get("actions")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let calls = task.and_then(capability).map(str::to_string).or_else(|| {
            actions
                .first()
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        let ms = event.get("duration_ms").and_then(Value::as_u64);
        let with_items = event.get("with_items").and_then(Value::as_bool) == Some(true)
            || task.is_some_and(|t| t.with_items.is_some());
        if with_items {
            out.push(loop_entry(
                name,
                state,
                state_info.clone(),
                actions.len(),
                ms,
                end,
            ));
            for (k, a) in actions.iter().enumerate() {
                let id = format!("{name}#{}", k + 1);
                out.push(call_entry(
                    id,
                    calls.as_deref(),
                    a,
                    None,
                    state_info.as_deref(),
                    None,
                    end,
                ));
            }
        } else if actions.is_empty() {
            let mut e = Map::new();
            e.insert("id".into(), Value::String(name.to_string()));
            if let Some(c) = &calls {
                e.insert("calls".into(), Value::String(c.clone()));
            }
            e.insert("input".into(), json!({}));
            e.insert(
                "output".into(),
                event.get("result").cloned().unwrap_or(Value::Null),
            );
            e.insert(
                "outcome".into(),
                outcome(state, state_info.clone(), end).to_json(),
            );
            if let Some(ms) = ms {
                e.insert("t_ms".into(), Value::from(ms));
            }
            out.push(Value::Object(e));
        } else {
            let last = actions.len() - 1;
            for (k, a) in actions.iter().enumerate() {
                // The task's own state decides the last try: a task can fail
                // after its action succeeded (a failing publish).
                let (task_state, task_ms) = if k == last {
                    (Some((state, state_info.clone())), ms)
                } else {
                    (None, None)
                };
                out.push(call_entry(
                    name.to_string(),
                    calls.as_deref(),
                    a,
                    task_state,
                    state_info.as_deref(),
                    task_ms,
                    end,
                ));
            }
        }
        if let (Some(wf), Some(task)) = (wf, task)
            && task_transitions(wf, task).next().is_some()
            && let Some(entry) = branch_entry(wf, task, state, &events[i + 1..], end)
        {
            out.push(entry);
        }
    }
    out
}

fn terminal(state: &str) -> bool {
    matches!(state, "SUCCESS" | "ERROR")
}

/// A task or action state as a step outcome. The step status set is
/// `success`, `error`, `timeout` (not finished when the run's deadline
/// passed) and `partial` (a loop whose body did not complete).
fn outcome(state: &str, info: Option<String>, end: RunEnd) -> Outcome {
    match state {
        "SUCCESS" => Outcome::step(StepStatus::Success, None),
        "ERROR" => Outcome::step(StepStatus::Error, info),
        other => {
            let status = if end == RunEnd::TimedOut {
                StepStatus::Timeout
            } else {
                StepStatus::Error
            };
            Outcome::step(
                status,
                Some(info.unwrap_or_else(|| format!("the task did not finish ({other})"))),
            )
        }
    }
}

fn call_entry(
    id: String,
    calls: Option<&str>,
    action: &Value,
    task_state: Option<(&str, Option<String>)>,
    task_reason: Option<&str>,
    ms: Option<u64>,
    end: RunEnd,
) -> Value {
    let text = |k: &str| action.get(k).and_then(Value::as_str).map(str::to_string);
    let a_state = text("state").unwrap_or_default();
    let result = match task_state {
        Some((state, info)) if state != "SUCCESS" && a_state == "SUCCESS" => {
            outcome(state, info, end)
        }
        // A failed action without a reason of its own (a with-items
        // iteration, say) carries its task's.
        _ => outcome(
            &a_state,
            text("state_info").or_else(|| task_reason.map(str::to_string)),
            end,
        ),
    };
    let mut e = Map::new();
    e.insert("id".into(), Value::String(id));
    if let Some(c) = calls.map(str::to_string).or_else(|| text("name")) {
        e.insert("calls".into(), Value::String(c));
    }
    e.insert(
        "input".into(),
        action.get("input").cloned().unwrap_or(json!({})),
    );
    e.insert(
        "output".into(),
        action.get("output").cloned().unwrap_or(Value::Null),
    );
    e.insert("outcome".into(), result.to_json());
    if let Some(ms) = ms {
        e.insert("t_ms".into(), Value::from(ms));
    }
    Value::Object(e)
}

fn loop_entry(
    task: &str,
    state: &str,
    info: Option<String>,
    iterations: usize,
    ms: Option<u64>,
    end: RunEnd,
) -> Value {
    let at = loop_id(task);
    let mut decisions: Vec<Value> = (1..=iterations)
        .map(|n| json!({"at": at, "took": "continue", "because": format!("item {n}")}))
        .collect();
    if terminal(state) {
        let because = match (iterations, state) {
            (0, _) => "no items".to_string(),
            (n, "SUCCESS") => format!("items exhausted after {n}"),
            (n, _) => format!("stopped after {n}: an item failed"),
        };
        decisions.push(json!({"at": at, "took": "exit", "because": because}));
    }
    let result = match state {
        "SUCCESS" => Outcome::step(StepStatus::Success, None),
        "ERROR" => Outcome::step(StepStatus::Error, info),
        _ if end == RunEnd::TimedOut => Outcome::step(
            StepStatus::Timeout,
            Some("the loop body did not complete".into()),
        ),
        _ => Outcome::step(
            StepStatus::Partial,
            Some("the loop body did not complete".into()),
        ),
    };
    let mut e = Map::new();
    e.insert("id".into(), Value::String(at));
    e.insert("outcome".into(), result.to_json());
    if let Some(ms) = ms {
        e.insert("t_ms".into(), Value::from(ms));
    }
    e.insert("decisions".into(), Value::Array(decisions));
    Value::Object(e)
}

/// The decisions of `task`'s transitions, from the events after it (up to
/// its next execution, which a later loop back to it would start).
fn branch_entry(
    wf: &Workflow,
    task: &Task,
    state: &str,
    later: &[Value],
    end: RunEnd,
) -> Option<Value> {
    let at = branch_id(&task.name);
    let mut decisions: Vec<Value> = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    for event in later {
        let name = event.get("task").and_then(Value::as_str).unwrap_or("");
        if name == task.name {
            break;
        }
        let triggers = event
            .get("triggered_by")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for trigger in triggers {
            if trigger.get("task").and_then(Value::as_str) != Some(task.name.as_str()) {
                continue;
            }
            let Some(on) = trigger
                .get("event")
                .and_then(Value::as_str)
                .and_then(On::from_event)
            else {
                continue;
            };
            let candidates: Vec<_> = task_transitions(wf, task)
                .filter(|t| t.on == on && t.target == name)
                .collect();
            // An unconditional target fires whatever the conditions say.
            let Some(t) = candidates
                .iter()
                .find(|t| t.condition.is_none())
                .or_else(|| candidates.first())
            else {
                continue;
            };
            let label = arm_label(t);
            if taken.contains(&label) {
                continue;
            }
            let because = match &t.condition {
                Some(c) => c.clone(),
                None => format!(
                    "{} {}",
                    task.name,
                    match on {
                        On::Success => "succeeded",
                        On::Error => "failed",
                        On::Complete => "completed",
                    }
                ),
            };
            decisions.push(json!({"at": at, "took": label, "because": because}));
            taken.push(label);
        }
    }
    if decisions.is_empty() {
        let handled = task_transitions(wf, task).any(|t| t.on != On::Success);
        let certain = (end == RunEnd::Completed && terminal(state))
            || (end == RunEnd::Failed && state == "ERROR" && !handled);
        if !certain {
            return None;
        }
        decisions.push(json!({"at": at, "took": NO_TRANSITION,
            "because": format!("no transition of {} was taken", task.name)}));
    }
    let mut e = Map::new();
    e.insert("id".into(), Value::String(at));
    e.insert(
        "outcome".into(),
        Outcome::step(StepStatus::Success, None).to_json(),
    );
    e.insert("decisions".into(), Value::Array(decisions));
    Some(Value::Object(e))
}

#[cfg(test)]
mod tests;
