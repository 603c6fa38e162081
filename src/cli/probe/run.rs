//! A dry run of a harmless program: state, run id, result, and every event
//! read through the value tables and the counter base.

use super::{ProbeInput, Report, Verdict, quoted};
use crate::config::Config;
use crate::engines::json_path::{pick, value_text};
use crate::engines::profile::{ArmMeaning, EngineProfile, EventKind};
use crate::engines::rest::EngineClient;
use crate::engines::{Engine, EngineError, RunOrder, RunState};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

pub(super) async fn dry_run(
    client: &EngineClient,
    config: &Config,
    input: &ProbeInput,
    out: &mut Report,
) {
    let m = client.mapping();
    let deadline = Duration::from_millis(config.engine.run_deadline_ms);
    let order = RunOrder {
        program: &input.program,
        input: &input.input,
        context: None,
        dry_run: true,
        deadline,
        stop: None,
    };
    let reply = match client.run(&input.tenant, &order).await {
        Ok(r) => r,
        Err(e) => {
            let key = match &e {
                EngineError::NotStarted(_) => "engine.mapping.run.body",
                EngineError::RunBroken { .. } => "engine.mapping.run.states",
                _ => "engine.mapping.run",
            };
            out.push(
                Verdict::Missing,
                key,
                format!("the dry run failed: {e} (look at run.path, run.body, run.encodings, run.status, run.states)"),
            );
            return;
        }
    };
    if reply.state != RunState::Completed {
        let problems: Vec<&str> = reply.problems.iter().map(|p| p.text.as_str()).collect();
        out.push(
            Verdict::Missing,
            "engine.mapping.run.states",
            format!(
                "the dry run of a harmless program ended {:?}: {} {problems:?}",
                reply.state,
                reply.error.as_deref().unwrap_or("")
            ),
        );
        return;
    }
    out.push(
        Verdict::Found,
        "engine.mapping.run.states",
        "the dry run completed",
    );
    match &reply.engine_run_id {
        Some(id) => out.push(
            Verdict::Found,
            "engine.mapping.run.run_id",
            format!("'{id}'"),
        ),
        None => out.push(
            Verdict::Missing,
            "engine.mapping.run.run_id",
            format!("no run id at '{}'", m.run.run_id),
        ),
    }
    if reply.result.is_null() && input.program.get("output").is_some() {
        out.push(
            Verdict::Missing,
            "engine.mapping.run.result",
            "the program has an output but no result was read (run.result, or run.output for asynchronous runners)",
        );
    } else {
        out.push(
            Verdict::Found,
            "engine.mapping.run.result",
            reply.result.to_string(),
        );
    }
    events(&reply.events, client.profile(), out);
}

fn events(events: &[Value], m: &EngineProfile, out: &mut Report) {
    if events.is_empty() {
        out.push(
            Verdict::Missing,
            "engine.mapping.run.events",
            "the dry run returned no events (run.events, run.log, or the trace switch's encoding)",
        );
        return;
    }
    out.push(
        Verdict::Found,
        "engine.mapping.run.events",
        format!("{} events", events.len()),
    );
    let mut kinds: BTreeSet<&str> = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    let mut arms = BTreeSet::new();
    let mut no_step = 0;
    let mut first_iteration: Option<u64> = None;
    let mut in_loop_without_counter = 0;
    for e in events {
        match m.event_kind(e) {
            Ok(k) => {
                kinds.insert(k.as_str());
                if k == EventKind::Branch
                    && let Err(a) = m.arm(e)
                {
                    arms.insert(a);
                }
                if k == EventKind::Call
                    && !m.call_ok(e)
                    && let Some(v) = pick(e, &m.events.ok_field).and_then(value_text)
                    && m.lookup(&m.events.outcomes, &v).is_none()
                {
                    unknown.insert(format!(
                        "call outcome '{v}' (engine.mapping.events.outcomes)"
                    ));
                }
            }
            Err(k) => {
                unknown.insert(format!("kind '{k}' (engine.mapping.events.kinds)"));
            }
        }
        let step = pick(e, &m.events.step)
            .and_then(Value::as_str)
            .unwrap_or("");
        if step.is_empty() {
            no_step += 1;
        }
        if step == "probe_item" {
            match m.counters(e).first() {
                Some(&n) => first_iteration = Some(first_iteration.map_or(n, |f| f.min(n))),
                None => in_loop_without_counter += 1,
            }
        }
    }
    if unknown.is_empty() {
        out.push(
            Verdict::Found,
            "engine.mapping.events.kinds",
            format!(
                "read as {}",
                kinds.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    for u in unknown {
        out.push(
            Verdict::Unknown,
            "engine.mapping.events",
            format!("{u} not in the table"),
        );
    }
    if !arms.is_empty() {
        out.push(
            Verdict::Unknown,
            "engine.mapping.events.arms",
            format!(
                "{} not in the table ({} expected)",
                quoted(&arms),
                [ArmMeaning::Then, ArmMeaning::Else]
                    .map(|a| a.as_str())
                    .join(" or ")
            ),
        );
    }
    if no_step > 0 {
        out.push(
            Verdict::Missing,
            "engine.mapping.events.step",
            format!("{no_step} events name no step at '{}'", m.events.step),
        );
    }
    if in_loop_without_counter > 0 {
        out.push(
            Verdict::Missing,
            "engine.mapping.events.iter",
            format!(
                "a step inside the loop has no counters at '{}'",
                m.events.iter
            ),
        );
    }
    match first_iteration {
        Some(1) => out.push(Verdict::Found, "engine.mapping.events.counter_base", "the first iteration reads as #1"),
        Some(n) => out.push(
            Verdict::Missing,
            "engine.mapping.events.counter_base",
            format!("the first iteration reads as #{n}; Pilotage counts from #1 (set counter_base to the engine's first count)"),
        ),
        None => {}
    }
}
