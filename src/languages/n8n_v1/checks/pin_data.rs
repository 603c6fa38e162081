//! The workflow's `pinData`: `{"<node name>": [{"json": {...}}, ...]}`,
//! items a node hands on in place of running (execute passes them to n8n
//! with the run's input pinned on the trigger it starts from). n8n takes
//! data pinned to a node the workflow does not have without a word and a
//! malformed item as it is (measured on 2.41.1); a pin that is not a list
//! fails the node only when the run reaches it.

use super::form::kind_of;
use super::scripts::name_hint;
use super::{NodeTypes, error, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::{Workflow, escape};
use serde_json::Value;

/// Every finding on `pinData`.
pub fn all(program: &Value, wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let Some(pins) = program.get("pinData") else {
        return Vec::new();
    };
    if pins.is_null() {
        return Vec::new();
    }
    let Some(pins) = pins.as_object() else {
        return vec![error(
            "type_mismatch",
            "/pinData".into(),
            format!(
                "`pinData` is {}, not an object keyed by node name",
                kind_of(pins)
            ),
        )];
    };
    let start = wf
        .nodes
        .iter()
        .find(|n| types.is_trigger(n) && !n.is_disabled());
    let mut out = Vec::new();
    for (name, items) in pins {
        let at = format!("/pinData/{}", escape(name));
        if wf.node(name).is_none() {
            // The node it was meant to stand in for runs for real.
            out.push(finding(
                Severity::Error,
                "unknown_task",
                at,
                format!(
                    "data is pinned to '{name}', which the workflow does not have: it stands in for no node"
                ),
                name_hint(wf, name),
            ));
            continue;
        }
        let Some(list) = items.as_array() else {
            out.push(error(
                "type_mismatch",
                at,
                format!(
                    "the data pinned to '{name}' is {}, not a list of items",
                    kind_of(items)
                ),
            ));
            continue;
        };
        for (k, item) in list.iter().enumerate() {
            if !item.get("json").is_some_and(Value::is_object) {
                out.push(finding(
                    Severity::Error,
                    "invalid_structure",
                    format!("{at}/{k}"),
                    format!(
                        "item {k} pinned to '{name}' has no `json` object: the next node would read nothing of it"
                    ),
                    Some("wrap it: {\"json\": {...}}".into()),
                ));
            }
        }
        if start.is_some_and(|s| s.name == name) {
            out.push(finding(
                Severity::Warning,
                "invalid_structure",
                format!("/pinData/{}", escape(name)),
                format!(
                    "a run starts from '{name}' with the execute request's input pinned on it: the data pinned here is not used"
                ),
                Some("pass it as the execute request's `input` instead".into()),
            ));
        }
    }
    out
}
