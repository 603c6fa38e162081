//! Dialect b's JSON shapes: functions, issues, log entries and job answers.

use serde_json::{Map, Value, json};

use super::wording;
use crate::runtime::event::Event;
use crate::service::{RunReport, RunState};
use crate::validate::problem::{Level, Problem};
use crate::world::capability::{Capability, Effect};

/// `J-42`.
pub fn job_id(run: u64) -> String {
    format!("J-{run}")
}

fn impact(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "none",
        Effect::Write => "modify",
        Effect::Delete => "remove",
        Effect::External => "outbound",
    }
}

pub fn function(c: &Capability, usage: u64) -> Value {
    json!({
        "id": c.name,
        "label": c.title,
        "help": c.doc,
        "input_schema": c.params,
        "output_schema": c.returns,
        "impact": impact(c.effect),
        "labels": c.tags,
        "retired": c.deprecated,
        "stats": {"calls": usage},
        "modified": c.updated_at,
    })
}

pub fn issue(p: &Problem) -> Value {
    let mut out = Map::new();
    let severity = match p.level() {
        Level::Error => "error",
        Level::Warn => "warning",
    };
    out.insert("severity".into(), severity.into());
    out.insert("msg".into(), wording::text(&p.kind).into());
    if let Some(at) = &p.at {
        out.insert("loc".into(), format!("$.{at}").into());
    }
    Value::Object(out)
}

pub fn issues(list: &[Problem]) -> Value {
    Value::Array(list.iter().map(issue).collect())
}

pub fn entry(e: &Event) -> Value {
    match e {
        Event::Call {
            step,
            capability,
            args,
            outcome,
            ms,
            iter,
        } => {
            let (out, ok, err) = match outcome {
                Ok(result) => (result.clone(), true, Value::Null),
                Err(f) => (Value::Null, false, wording::failure(f).into()),
            };
            json!({"kind": "invoke", "node": step, "function": capability, "in": args, "out": out,
                   "ok": ok, "err": err, "duration_ms": ms, "counters": iter})
        }
        Event::Set {
            step,
            value,
            ms,
            iter,
        } => {
            json!({"kind": "assign", "node": step, "out": value, "duration_ms": ms, "counters": iter})
        }
        Event::Branch {
            step,
            arm,
            cond,
            value,
            ms,
            iter,
        } => json!({"kind": "decide", "node": step,
            "path": arm.as_str(), "reason": cond, "value": value, "duration_ms": ms, "counters": iter}),
        Event::LoopEnter { step, count, iter } => {
            json!({"kind": "iterate_begin", "node": step, "size": count, "counters": iter})
        }
        Event::LoopNext {
            step,
            index,
            item,
            iter,
        } => {
            json!({"kind": "iterate_step", "node": step, "n": index, "elem": item, "counters": iter})
        }
        Event::LoopExit {
            step,
            iterations,
            reason,
            ms,
            iter,
        } => json!({"kind": "iterate_end", "node": step,
            "n": iterations, "why": reason.as_str(), "duration_ms": ms, "counters": iter}),
    }
}

pub fn log(list: &[Event]) -> Value {
    Value::Array(list.iter().map(entry).collect())
}

pub fn report(r: &RunReport) -> Value {
    let (status, failure) = match &r.state {
        RunState::Completed => ("done", None),
        RunState::Failed { step, failure } => ("failed", Some(wording::node_failed(step, failure))),
        RunState::TimedOut { deadline_ms } => ("timeout", Some(wording::timed_out(*deadline_ms))),
        RunState::Rejected => ("rejected", Some(wording::REJECTED.to_owned())),
    };
    json!({
        "job_id": job_id(r.run),
        "status": status,
        "output": r.result,
        "failure": failure,
        "log": r.events.as_deref().map(log),
        "issues": issues(&r.problems),
    })
}
