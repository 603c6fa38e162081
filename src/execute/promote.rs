//! Deploy (Part II §5.4): the program is promoted as a catalog entry with its
//! recorded baseline — the load-bearing fields of every entry it calls — and
//! answered with an installation trace. A later run of its `program_ref` is
//! held to that baseline (`baseline_drift`).

use super::{Exec, Finished, Runnable, now_ms, store_internal};
use crate::catalog::{CatalogView, KIND_PROGRAM, canonical_json};
use crate::pilotage::{Outcome, RequestError};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::time::Instant;

pub(super) async fn install(
    ex: &Exec<'_>,
    view: &CatalogView,
    runnable: &Runnable,
) -> Result<Finished, RequestError> {
    let started = Instant::now();
    let (lang, program) = (ex.lang, &runnable.program);
    let baseline = baseline(view, runnable);
    let program_ref = program_ref(program, &baseline);
    let name = lang
        .language
        .program_name(program)
        .unwrap_or_else(|| program_ref.clone());
    let entry = entry(ex, view, runnable, &program_ref, &name);
    let record = json!({"entry": entry, "program": program, "baseline": baseline,
        "language": lang.config.name, "promoted_at_ms": now_ms()});
    ex.gw
        .store
        .put_program(
            &ex.principal.scope,
            &program_ref,
            &record,
            lang.config.promotion_lifetime(),
        )
        .await
        .map_err(store_internal)?;
    // The next view of this principal shows the program, on every engine.
    for engine in ex.gw.engines.values() {
        engine.catalog.forget_programs(&ex.principal.scope);
    }
    let output = json!({"program_ref": program_ref});
    let trace = vec![json!({
        "id": "install",
        "input": {"name": name},
        "output": output,
        "outcome": Outcome::success().to_json(),
        "t_ms": started.elapsed().as_millis() as u64,
    })];
    Ok(Finished {
        outcome: Outcome::success(),
        output: Some(output),
        trace,
        stats: json!({"installed": program_ref}),
    })
}

/// The load-bearing fields of every entry the program calls.
fn baseline(view: &CatalogView, runnable: &Runnable) -> Value {
    let mut baseline = Map::new();
    for cap in runnable
        .steps
        .iter()
        .filter_map(|s| s.capability.as_deref())
    {
        if let Some(entry) = view.get(cap) {
            baseline.insert(cap.to_string(), load_bearing(&entry.to_json()));
        }
    }
    Value::Object(baseline)
}

/// The same program over the same baseline is the same `program_ref`.
fn program_ref(program: &Value, baseline: &Value) -> String {
    let digest = Sha256::digest(
        format!(
            "{}\u{0}{}",
            canonical_json(program),
            canonical_json(baseline)
        )
        .as_bytes(),
    );
    format!("wf_{}", &hex::encode(digest)[..24])
}

/// The catalog entry of the promoted program, its risk the highest of its
/// planned calls.
fn entry(
    ex: &Exec<'_>,
    view: &CatalogView,
    runnable: &Runnable,
    program_ref: &str,
    name: &str,
) -> Value {
    let (lang, program) = (ex.lang, &runnable.program);
    let body_plan = lang
        .language
        .plan(program, &runnable.steps, &|cap, parameters| {
            crate::catalog::risk_when::step_risk(view, cap, parameters)
        });
    let hints = lang.language.plan_max_hints(&body_plan);
    json!({
        "id": program_ref,
        "kind": KIND_PROGRAM,
        "name": name,
        "description": format!("Promoted {} program; run it with program_ref and mode \"immediate\".", lang.config.name),
        "input_schema": lang.language.input_schema(program).unwrap_or_else(|| json!({"type": "object"})),
        "output_schema": Value::Null,
        "risk": hints.level(),
        "risk_hints": hints.to_json(),
        "tags": ["program"],
        "languages": [lang.config.name],
    })
}

/// The load-bearing fields of an entry (Part II §5.4 baseline).
fn load_bearing(entry: &Value) -> Value {
    let mut out = Map::new();
    for k in [
        "kind",
        "input_schema",
        "output_schema",
        "risk",
        "risk_hints",
        "languages",
    ] {
        if let Some(v) = entry.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The first referenced entry whose load-bearing fields changed or vanished.
pub(super) fn baseline_drift(record: &Value, view: &CatalogView) -> Option<String> {
    let baseline = record.get("baseline")?.as_object()?;
    baseline.iter().find_map(|(id, recorded)| {
        let current = view.get(id).map(|e| load_bearing(&e.to_json()));
        (current.as_ref() != Some(recorded)).then(|| id.clone())
    })
}
