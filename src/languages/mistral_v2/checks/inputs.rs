//! Action inputs: inline parameters Mistral silently drops, and missing or
//! unexpected inputs of a visible action against its catalog entry.

use super::super::workflow::{InputKeys, Workflow};
use super::error;
use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::pilotage::text_range::TextRange;
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

/// An unquoted word as an inline parameter value: Mistral drops the
/// parameter without a word (`std.echo output=red` runs without `output`).
pub fn dropped_parameters(wf: &Workflow) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for task in &wf.tasks {
        let Some(action) = &task.action else { continue };
        for p in action.params.iter().filter(|p| !p.kept) {
            let digits: String = p.raw.chars().take_while(char::is_ascii_digit).collect();
            let (what, hint) = if digits.is_empty() {
                (
                    "is an unquoted string: Mistral would silently drop it".to_string(),
                    format!("quote the value: {}='{}'", p.name, p.raw),
                )
            } else {
                (
                    format!("is not plain digits: Mistral would read it as {digits}"),
                    format!("write it as an expression: {}=<% {} %>", p.name, p.raw),
                )
            };
            out.push(error(
                "dropped_parameter",
                p.range,
                format!(
                    "inline parameter '{}={}' of task '{}' {what}",
                    p.name, p.raw, task.name
                ),
                Some(hint),
            ));
        }
    }
    out
}

/// The `input_schema` of an action the caller can see. Invisible actions
/// are reported as unknown by the validate operation, identically to
/// nonexistent ones: nothing here may tell them apart.
pub(super) fn visible_input_schema(catalog: &CatalogView, name: &str) -> Option<Value> {
    catalog.capability_risk(name)?;
    catalog.get(name)?.input_schema()
}

/// Missing required and unexpected inputs of a visible action, against its
/// catalog entry's `input_schema` (`schema_of` answers only for visible
/// actions). Tasks whose `input` is an expression are skipped: their keys
/// are only known at run time.
pub fn action_inputs(wf: &Workflow, schema_of: &dyn Fn(&str) -> Option<Value>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for task in &wf.tasks {
        let Some(action) = &task.action else { continue };
        let Some(schema) = schema_of(&action.name) else {
            continue;
        };
        let mut given: Vec<(&str, TextRange)> = action
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.range))
            .collect();
        match &task.input {
            Some(InputKeys::Unknown) => continue,
            Some(InputKeys::Keys(keys)) => {
                given.extend(keys.iter().map(|k| (k.value.as_str(), k.range)));
            }
            None => {}
        }
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let names: HashSet<&str> = given.iter().map(|(n, _)| *n).collect();
        let missing: Vec<&str> = required
            .iter()
            .filter(|r| !names.contains(*r))
            .copied()
            .collect();
        if !missing.is_empty() {
            out.push(error(
                "missing_input",
                action.name_range,
                format!(
                    "task '{}' calls '{}' without its required input {}",
                    task.name,
                    action.name,
                    quoted_list(&missing)
                ),
                Some(format!(
                    "add {} inline or under input:",
                    missing
                        .iter()
                        .map(|m| format!("{m}=..."))
                        .collect::<Vec<_>>()
                        .join(" ")
                )),
            ));
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let open = matches!(
            schema.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        );
        let Some(properties) = properties.filter(|_| !open) else {
            continue;
        };
        let mut known: Vec<String> = properties.keys().cloned().collect();
        known.sort();
        for (name, at) in &given {
            if properties.contains_key(*name) {
                continue;
            }
            let close = crate::classify::close_matches(name, &known);
            out.push(error(
                "unexpected_input",
                *at,
                format!(
                    "'{}' has no input '{name}' (task '{}')",
                    action.name, task.name
                ),
                Some(if close.is_empty() {
                    format!(
                        "its inputs are {}",
                        quoted_list(&known.iter().map(String::as_str).collect::<Vec<_>>())
                    )
                } else {
                    format!("close match: {}", close.join(", "))
                }),
            ));
        }
    }
    out
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
