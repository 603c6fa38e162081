//! `check-config --probe`: asks the configured engine and shows, field by
//! field, what the mapping reads from it: the catalog, the error body of a
//! refused call, a check of a deliberately broken program, and a dry run of a
//! harmless program (or one the operator names). Every finding names the key
//! to look at; anything missing or unknown makes the probe fail.

use crate::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use crate::config::{ArmMeaning, Config, EventKind, pick, pick_field, value_text};
use crate::engine::{CatalogFetch, EngineClient, EngineError, RawProblem, RunState};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// How bad one finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Found,
    Note,
    Missing,
    Unknown,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Finding {
    pub verdict: Verdict,
    pub key: String,
    pub detail: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = match self.verdict {
            Verdict::Found => "found  ",
            Verdict::Note => "note   ",
            Verdict::Missing => "MISSING",
            Verdict::Unknown => "UNKNOWN",
        };
        write!(f, "{tag} {}: {}", self.key, self.detail)
    }
}

/// What the probe runs with.
pub struct ProbeInput {
    pub tenant: String,
    /// The program dry-run (default: a harmless one using every step kind but calls).
    pub program: Value,
    pub input: Value,
    /// The rule tables of the configured languages (file name, table).
    pub rules: Vec<(String, Arc<RuleTable>)>,
}

/// The harmless program: a set, a branch and a loop of two items, no calls.
pub fn harmless_program() -> (Value, Value) {
    (
        json!({"name": "pilotage-probe", "steps": [
            {"id": "probe_set", "kind": "set", "value": 1},
            {"id": "probe_branch", "kind": "branch",
             "when": {"op": "eq", "left": "$.input.flag", "right": true},
             "then": [{"id": "probe_then", "kind": "set", "value": 2}],
             "else": [{"id": "probe_else", "kind": "set", "value": 3}]},
            {"id": "probe_loop", "kind": "for_each", "items": "$.input.items", "as": "item",
             "do": [{"id": "probe_item", "kind": "set", "value": "$.item"}]}],
            "output": {"probe": "$.steps.probe_set.output"}}),
        json!({"flag": true, "items": [1, 2]}),
    )
}

/// A program with two flaws every validator reports: an unknown capability
/// and a set step without its value.
fn broken_program() -> Value {
    json!({"steps": [
        {"id": "probe_unknown", "kind": "call", "capability": "pilotage.probe.no_such_capability", "with": {}},
        {"id": "probe_bad_set", "kind": "set"}]})
}

/// Runs every probe and returns the report.
pub async fn probe(config: &Config, input: &ProbeInput) -> Vec<Finding> {
    let client = EngineClient::new(&config.engine);
    let mut out = Report::default();
    catalog(&client, config, &input.tenant, &mut out).await;
    error_body(&client, &mut out).await;
    check(&client, &input.tenant, &input.rules, &mut out).await;
    dry_run(&client, config, input, &mut out).await;
    out.0
}

#[derive(Default)]
struct Report(Vec<Finding>);

impl Report {
    fn push(&mut self, verdict: Verdict, key: &str, detail: impl Into<String>) {
        self.0.push(Finding {
            verdict,
            key: key.to_string(),
            detail: detail.into(),
        });
    }
}

async fn catalog(client: &EngineClient, config: &Config, tenant: &str, out: &mut Report) {
    let m = &config.engine.mapping;
    let caps = match client.catalog(tenant, None).await {
        Ok(CatalogFetch::Fresh { capabilities, .. }) => capabilities,
        Ok(CatalogFetch::NotModified) => Vec::new(),
        Err(e) => {
            out.push(
                Verdict::Missing,
                "engine.mapping.catalog.path",
                format!("the catalog of tenant '{tenant}' could not be read: {e}"),
            );
            return;
        }
    };
    out.push(
        Verdict::Found,
        "engine.mapping.catalog.list",
        format!("{} capabilities for tenant '{tenant}'", caps.len()),
    );
    if caps.is_empty() {
        out.push(
            Verdict::Missing,
            "engine.mapping.catalog.list",
            "the list is empty: no field below can be checked",
        );
        return;
    }
    let f = &m.catalog;
    for (key, path) in [
        ("name", &f.name),
        ("title", &f.title),
        ("description", &f.description),
        ("params", &f.params),
        ("returns", &f.returns),
        ("effect", &f.effect),
        ("tags", &f.tags),
        ("deprecated", &f.deprecated),
    ] {
        let key = format!("engine.mapping.catalog.{key}");
        if path.is_empty() {
            out.push(
                Verdict::Note,
                &key,
                "not mapped (the engine has no such field)",
            );
            continue;
        }
        let n = caps
            .iter()
            .filter(|c| pick_field(c, path).is_some())
            .count();
        if n == 0 {
            let fields = caps[0]
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            out.push(
                Verdict::Missing,
                &key,
                format!(
                    "'{path}' is in none of {} capabilities (the first has: {fields})",
                    caps.len()
                ),
            );
        } else {
            out.push(
                Verdict::Found,
                &key,
                format!("'{path}' in {n} of {}", caps.len()),
            );
        }
    }
    let mut unknown = BTreeSet::new();
    for cap in &caps {
        if let Some(effect) = pick_field(cap, &f.effect).and_then(value_text)
            && m.effect_risk(&effect).is_none()
        {
            unknown.insert(effect);
        }
    }
    if unknown.is_empty() {
        out.push(
            Verdict::Found,
            "engine.mapping.effects",
            "every effect value is in the table",
        );
    } else {
        out.push(
            Verdict::Unknown,
            "engine.mapping.effects",
            format!(
                "{} not in the table (such capabilities count as destructive)",
                quoted(&unknown)
            ),
        );
    }
}

async fn error_body(client: &EngineClient, out: &mut Report) {
    let stranger = "pilotage-probe-no-such-tenant";
    match client.error_answer(stranger).await {
        Ok(None) => out.push(
            Verdict::Note,
            "engine.mapping.error_paths",
            format!("the engine served tenant '{stranger}': no error body to read"),
        ),
        Ok(Some((status, Some(text)))) => out.push(
            Verdict::Found,
            "engine.mapping.error_paths",
            format!("HTTP {status} for an unknown tenant reads \"{text}\""),
        ),
        Ok(Some((status, None))) => out.push(
            Verdict::Missing,
            "engine.mapping.error_paths",
            format!("HTTP {status} for an unknown tenant: no error text at any of the paths"),
        ),
        Err(e) => out.push(Verdict::Missing, "engine.url", e.to_string()),
    }
}

async fn check(
    client: &EngineClient,
    tenant: &str,
    rules: &[(String, Arc<RuleTable>)],
    out: &mut Report,
) {
    let m = &client.mapping().check;
    let program = broken_program();
    let problems = match client.check(tenant, &program, None).await {
        Ok(p) => p,
        Err(e) => {
            out.push(
                Verdict::Missing,
                "engine.mapping.check",
                format!("the check of a broken program failed ({e}); look at check.path, check.body and check.status"),
            );
            return;
        }
    };
    if problems.is_empty() {
        out.push(
            Verdict::Missing,
            "engine.mapping.check.problems",
            format!(
                "no problem at '{}' for a program with an unknown capability",
                m.problems
            ),
        );
        return;
    }
    out.push(
        Verdict::Found,
        "engine.mapping.check.problems",
        format!("{} problems for a broken program", problems.len()),
    );
    let levels: BTreeSet<String> = problems
        .iter()
        .filter_map(|p| p.unknown_level.clone())
        .collect();
    if !levels.is_empty() {
        out.push(
            Verdict::Unknown,
            "engine.mapping.check.error_level",
            format!(
                "level {} is neither error_level '{}' nor warning_level '{}' nor in check.levels (counted as an error)",
                quoted(&levels),
                m.error_level,
                m.warning_level
            ),
        );
    } else if !problems.iter().any(|p| p.is_error) {
        out.push(
            Verdict::Missing,
            "engine.mapping.check.error_level",
            "no problem of a broken program reads as an error",
        );
    } else {
        out.push(
            Verdict::Found,
            "engine.mapping.check.level",
            "every level is in the tables",
        );
    }
    if problems.iter().any(|p| p.text.is_empty()) {
        out.push(
            Verdict::Missing,
            "engine.mapping.check.text",
            format!("a problem has no text at '{}'", m.text),
        );
    }
    if !m.location.is_empty() && problems.iter().all(|p| p.location.is_none()) {
        out.push(
            Verdict::Missing,
            "engine.mapping.check.location",
            format!("no problem has a location at '{}'", m.location),
        );
    }
    for (file, table) in rules {
        classify(&program, &problems, file, table, out);
    }
}

/// Every problem through one rule file: a rule must match, and a location
/// must become a pointer inside the program.
fn classify(
    program: &Value,
    problems: &[RawProblem],
    file: &str,
    table: &RuleTable,
    out: &mut Report,
) {
    let steps: HashMap<String, String> = crate::language::program::steps(program)
        .into_iter()
        .filter_map(|s| Some((s.id?, s.pointer)))
        .collect();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &[],
    };
    for p in problems {
        if let Some(location) = &p.location {
            match table.location_syntax().to_pointer(location) {
                Some(pointer) if program.pointer(&pointer).is_some() => out.push(
                    Verdict::Found,
                    &format!("{file}: location_syntax"),
                    format!("'{location}' is {pointer}"),
                ),
                Some(pointer) => out.push(
                    Verdict::Missing,
                    &format!("{file}: location_syntax"),
                    format!("'{location}' becomes '{pointer}', which is outside the program"),
                ),
                None => out.push(
                    Verdict::Missing,
                    &format!("{file}: location_syntax"),
                    format!("'{location}' does not follow the declared syntax"),
                ),
            }
        }
        let classified = table.classify(
            &EngineProblem {
                level: if p.is_error {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                text: p.text.clone(),
                location: p.location.clone(),
            },
            &ctx,
        );
        match classified.rule {
            Some(rule) => out.push(
                Verdict::Found,
                &format!("{file}: rules"),
                format!(
                    "\"{}\" → {} (rule {rule})",
                    p.text, classified.diagnostic.code
                ),
            ),
            None => out.push(
                Verdict::Missing,
                &format!("{file}: rules"),
                format!("no rule matches \"{}\" (it would be a constraint)", p.text),
            ),
        }
    }
}

async fn dry_run(client: &EngineClient, config: &Config, input: &ProbeInput, out: &mut Report) {
    let m = client.mapping();
    let deadline = Duration::from_millis(config.engine.run_deadline_ms);
    let reply = match client
        .run(
            &input.tenant,
            &input.program,
            &input.input,
            None,
            true,
            deadline,
        )
        .await
    {
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
    events(&reply.events, config, out);
}

fn events(events: &[Value], config: &Config, out: &mut Report) {
    let m = &config.engine.mapping;
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

fn quoted(values: &BTreeSet<String>) -> String {
    values
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
