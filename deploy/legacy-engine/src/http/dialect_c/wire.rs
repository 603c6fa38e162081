//! Dialect c's JSON shapes: actions, findings, step records and run status.
//!
//! Its quirks on purpose: capitalised enumerations (`Read`, `Fatal`, `Invoke`,
//! `THEN`), locations as `flow.steps.2.then.1` counted from 1, loop counters
//! counted from 0, and results and step records as JSON encoded inside strings.

use serde_json::{Map, Value, json};

use super::wording;
use crate::runtime::event::{Arm, Event};
use crate::validate::problem::{Level, Problem};
use crate::world::capability::{Capability, Effect};

fn effect(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "Read",
        Effect::Write => "Write",
        Effect::Delete => "Delete",
        Effect::External => "External",
    }
}

pub fn action(c: &Capability, usage: u64) -> Value {
    json!({
        "key": c.name,
        "meta": {"title": c.title, "summary": c.doc, "labels": c.tags, "sunset": c.deprecated},
        "schema": {"input": c.params, "output": c.returns},
        "effect": effect(c.effect),
        "metrics": {"invocations": usage},
        "revisedAt": c.updated_at,
    })
}

pub fn finding(p: &Problem) -> Value {
    let mut out = Map::new();
    let severity = match p.level() {
        Level::Error => "Fatal",
        Level::Warn => "Advisory",
    };
    out.insert("severity".into(), severity.into());
    out.insert("message".into(), wording::text(&p.kind).into());
    if let Some(at) = &p.at {
        let rest = at.dotted(1);
        let path = if rest.is_empty() {
            "flow".to_owned()
        } else {
            format!("flow.{rest}")
        };
        out.insert("path".into(), path.into());
    }
    Value::Object(out)
}

pub fn findings(list: &[Problem]) -> Value {
    Value::Array(list.iter().map(finding).collect())
}

/// Loop counters from 0.
fn loops(iter: &[usize]) -> Value {
    Value::from(iter.iter().map(|n| n.saturating_sub(1)).collect::<Vec<_>>())
}

pub fn step_record(e: &Event) -> Value {
    match e {
        Event::Call {
            step,
            capability,
            args,
            outcome,
            ms,
            iter,
        } => {
            let (returned, verdict, problem) = match outcome {
                Ok(result) => (result.clone(), "OK", Value::Null),
                Err(f) => (Value::Null, "ERROR", wording::failure(f).into()),
            };
            json!({"what": "Invoke", "node": step, "action": capability, "arguments": args,
                "returned": returned, "verdict": verdict, "problem": problem,
                "elapsedMs": ms, "loops": loops(iter)})
        }
        Event::Set {
            step,
            value,
            ms,
            iter,
        } => {
            json!({"what": "Assign", "node": step, "returned": value, "elapsedMs": ms, "loops": loops(iter)})
        }
        Event::Branch {
            step,
            arm,
            cond,
            value,
            ms,
            iter,
        } => {
            let branch = match arm {
                Arm::Then => "THEN",
                Arm::Else => "ELSE",
            };
            json!({"what": "Decide", "node": step, "branch": branch, "condition": cond,
                "conditionValue": value, "elapsedMs": ms, "loops": loops(iter)})
        }
        Event::LoopEnter { step, count, iter } => {
            json!({"what": "LoopStart", "node": step, "itemCount": count, "loops": loops(iter)})
        }
        Event::LoopNext {
            step,
            index,
            item,
            iter,
        } => {
            json!({"what": "LoopItem", "node": step, "position": index, "item": item, "loops": loops(iter)})
        }
        Event::LoopExit {
            step,
            iterations,
            reason,
            ms,
            iter,
        } => json!({"what": "LoopDone", "node": step, "visited": iterations,
            "reason": reason.as_str(), "elapsedMs": ms, "loops": loops(iter)}),
    }
}

/// Each step record as a JSON string (the log's own quirk).
pub fn encoded_records(list: &[Event]) -> Vec<Value> {
    list.iter()
        .map(|e| Value::String(step_record(e).to_string()))
        .collect()
}
