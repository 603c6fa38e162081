//! A check of a deliberately broken program: problems, levels, locations
//! under the rule file's syntax, and whether a rule matches each message.

use super::{Report, Verdict, quoted};
use crate::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use crate::engines::RawProblem;
use crate::engines::rest::EngineClient;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The language of the probe's programs: the one the REST engine speaks.
const PROBE_LANGUAGE: &str = "workflow/v1";

/// A program with two flaws every validator reports: an unknown capability
/// and a set step without its value.
fn broken_program() -> Value {
    json!({"steps": [
        {"id": "probe_unknown", "kind": "call", "capability": "pilotage.probe.no_such_capability", "with": {}},
        {"id": "probe_bad_set", "kind": "set"}]})
}

pub(super) async fn check(
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
    let steps: HashMap<String, String> = crate::languages::registry::lookup(PROBE_LANGUAGE)
        .map(|language| language.step_locators(&language.steps(program)))
        .unwrap_or_default();
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
