//! Dialect a's JSON shapes: catalog entries, problems, events and run answers.

use serde_json::{Map, Value, json};

use super::wording;
use crate::runtime::event::Event;
use crate::service::{RunReport, RunState};
use crate::validate::problem::{Level, Problem};
use crate::world::capability::Capability;

/// `r-000042`.
pub fn run_id(run: u64) -> String {
    format!("r-{run:06}")
}

pub fn capability(c: &Capability, usage: u64) -> Value {
    json!({
        "name": c.name,
        "title": c.title,
        "doc": c.doc,
        "params": c.params,
        "returns": c.returns,
        "effect": c.effect.as_str(),
        "tags": c.tags,
        "deprecated": c.deprecated,
        "usage_count": usage,
        "updated_at": c.updated_at,
    })
}

pub fn problem(p: &Problem) -> Value {
    let mut out = Map::new();
    let level = match p.level() {
        Level::Error => "ERROR",
        Level::Warn => "WARN",
    };
    out.insert("level".into(), level.into());
    out.insert("text".into(), wording::text(&p.kind).into());
    if let Some(at) = &p.at {
        out.insert("where".into(), at.to_string().into());
    }
    Value::Object(out)
}

pub fn problems(list: &[Problem]) -> Value {
    Value::Array(list.iter().map(problem).collect())
}

pub fn event(e: &Event) -> Value {
    match e {
        Event::Call {
            step,
            capability,
            args,
            outcome,
            ms,
            iter,
        } => {
            let (result, status, error) = match outcome {
                Ok(result) => (result.clone(), "ok", Value::Null),
                Err(f) => (Value::Null, "failed", wording::failure(f).into()),
            };
            json!({"type": "call", "step": step, "capability": capability, "args": args, "result": result,
                   "status": status, "error": error, "ms": ms, "iter": iter})
        }
        Event::Set {
            step,
            value,
            ms,
            iter,
        } => {
            json!({"type": "set", "step": step, "value": value, "ms": ms, "iter": iter})
        }
        Event::Branch {
            step,
            arm,
            cond,
            value,
            ms,
            iter,
        } => json!({"type": "branch", "step": step,
            "arm": arm.as_str(), "cond": cond, "value": value, "ms": ms, "iter": iter}),
        Event::LoopEnter { step, count, iter } => {
            json!({"type": "loop_enter", "step": step, "count": count, "iter": iter})
        }
        Event::LoopNext {
            step,
            index,
            item,
            iter,
        } => {
            json!({"type": "loop_next", "step": step, "index": index, "item": item, "iter": iter})
        }
        Event::LoopExit {
            step,
            iterations,
            reason,
            ms,
            iter,
        } => json!({"type": "loop_exit", "step": step,
            "iterations": iterations, "reason": reason.as_str(), "ms": ms, "iter": iter}),
    }
}

pub fn events(list: &[Event]) -> Value {
    Value::Array(list.iter().map(event).collect())
}

pub fn report(r: &RunReport) -> Value {
    let (state, error) = match &r.state {
        RunState::Completed => ("COMPLETED", None),
        RunState::Failed { step, failure } => ("FAILED", Some(wording::step_failed(step, failure))),
        RunState::TimedOut { deadline_ms } => ("TIMED_OUT", Some(wording::timed_out(*deadline_ms))),
        RunState::Rejected => ("REJECTED", Some(wording::REJECTED.to_owned())),
    };
    let mut body = json!({
        "run": run_id(r.run),
        "state": state,
        "result": r.result,
        "error": error,
        "events": r.events.as_deref().map(events),
    });
    if r.state == RunState::Rejected
        && let Value::Object(map) = &mut body
    {
        map.insert("problems".into(), problems(&r.problems));
    }
    body
}
