//! The connections: `{<source name>: {main: [[{node, type, index}]]}}`.
//! Both ends must be nodes of the workflow (n8n refuses a missing target at
//! creation and ignores a missing source), the connection type must be one
//! n8n runs (`main`, or an AI sub-node's `ai_*`), and the source's output
//! and the target's input must exist: n8n silently never sends items
//! through an output a node does not have.

use super::form::kind_of;
use super::{NodeTypes, error, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::{Workflow, escape};
use crate::languages::n8n_v1::ports;
use serde_json::Value;

/// Every finding on `connections`.
pub fn all(program: &Value, wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let Some(sources) = program.get("connections").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (source, kinds) in sources {
        let at = format!("/connections/{}", escape(source));
        let Some(node) = wf.node(source) else {
            out.push(missing_node(
                wf,
                at,
                source,
                format!("the connections name a source node '{source}' the workflow does not have"),
            ));
            continue;
        };
        let Some(kinds) = kinds.as_object() else {
            out.push(error(
                "type_mismatch",
                at,
                format!(
                    "the connections of '{source}' are {}, not an object",
                    kind_of(kinds)
                ),
            ));
            continue;
        };
        for (kind, outputs) in kinds {
            let at = format!("{at}/{}", escape(kind));
            if kind != "main" {
                if !kind.starts_with("ai_") {
                    out.push(error(
                        "invalid_structure",
                        at,
                        format!(
                            "'{kind}' is not a connection type: a node's items travel on 'main'"
                        ),
                    ));
                }
                continue;
            }
            let Some(outputs) = outputs.as_array() else {
                out.push(error(
                    "type_mismatch",
                    at,
                    format!(
                        "the outputs of '{source}' are {}, not a list",
                        kind_of(outputs)
                    ),
                ));
                continue;
            };
            let count = ports::outputs(node, types.described(node.kind));
            for (k, targets) in outputs.iter().enumerate() {
                let at = format!("{at}/{k}");
                if targets.is_null() {
                    continue;
                }
                let Some(targets) = targets.as_array() else {
                    out.push(error(
                        "type_mismatch",
                        at,
                        format!(
                            "output {k} of '{source}' is {}, not a list",
                            kind_of(targets)
                        ),
                    ));
                    continue;
                };
                if let Some(count) = count
                    && k >= count
                    && !targets.is_empty()
                {
                    out.push(error(
                        "invalid_structure",
                        at.clone(),
                        format!(
                            "'{source}' has {count} output{}; its output {k} never sends items",
                            if count == 1 { "" } else { "s" }
                        ),
                    ));
                }
                for (j, target) in targets.iter().enumerate() {
                    out.extend(target_findings(
                        wf,
                        types,
                        source,
                        target,
                        format!("{at}/{j}"),
                    ));
                }
            }
        }
    }
    out
}

/// Findings on one `{node, type, index}` target.
fn target_findings(
    wf: &Workflow,
    types: &NodeTypes,
    source: &str,
    target: &Value,
    at: String,
) -> Vec<Diagnostic> {
    let Some(fields) = target.as_object() else {
        return vec![error(
            "type_mismatch",
            at,
            format!(
                "a connection of '{source}' is {}, not an object",
                kind_of(target)
            ),
        )];
    };
    let Some(name) = fields.get("node").and_then(Value::as_str) else {
        return vec![error(
            "invalid_structure",
            at,
            format!("a connection of '{source}' names no target node"),
        )];
    };
    let Some(node) = wf.node(name) else {
        return vec![missing_node(
            wf,
            format!("{at}/node"),
            name,
            format!("'{source}' is connected to '{name}', which the workflow does not have"),
        )];
    };
    let index = match fields.get("index") {
        None => 0,
        Some(i) => match i.as_u64().and_then(|i| usize::try_from(i).ok()) {
            Some(i) => i,
            None => {
                return vec![error(
                    "type_mismatch",
                    format!("{at}/index"),
                    format!("the input index is {i}, not a whole number"),
                )];
            }
        },
    };
    match ports::inputs(node, types.described(node.kind)) {
        Some(count) if index >= count => vec![error(
            "invalid_structure",
            format!("{at}/index"),
            format!(
                "'{name}' has {count} input{}; '{source}' is connected to its input {index}",
                if count == 1 { "" } else { "s" }
            ),
        )],
        _ => Vec::new(),
    }
}

/// `unknown_task` for a node name the workflow does not have; the hint
/// names the node when only the letter case differs.
fn missing_node(wf: &Workflow, at: String, name: &str, message: String) -> Diagnostic {
    finding(
        Severity::Error,
        "unknown_task",
        at,
        message,
        super::scripts::name_hint(wf, name),
    )
}
