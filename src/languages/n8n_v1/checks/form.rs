//! The document's form: a workflow object whose `nodes` is a list, each
//! node an object with a name and a type, names and ids unique, names
//! without the characters trace ids reserve (`#`, `/`), numeric
//! `typeVersion`s, and `settings.executionOrder` one n8n knows. n8n refuses
//! most of these at creation (`Workflow structure is invalid`); reporting
//! them here says where, with every problem at once.

use super::{error, finding};
use crate::classify::Diagnostic;
use crate::classify::Severity;
use crate::languages::binding;
use serde_json::Value;
use std::collections::HashMap;

/// The execution orders n8n knows.
const EXECUTION_ORDERS: &[&str] = &["v0", "v1"];

/// Why `program` is no workflow document the checks can read at all.
pub fn structure_problem(program: &Value) -> Option<Diagnostic> {
    let Some(doc) = program.as_object() else {
        return Some(binding::binding_root(
            "invalid_structure",
            "an n8n/v1 program is one workflow document: a JSON object with `nodes` and `connections`"
                .into(),
        ));
    };
    match doc.get("nodes") {
        None => {
            return Some(error(
                "invalid_structure",
                String::new(),
                "the workflow has no `nodes` list".into(),
            ));
        }
        Some(nodes) if !nodes.is_array() => {
            return Some(error(
                "type_mismatch",
                "/nodes".into(),
                format!("`nodes` is {}, not a list of nodes", kind_of(nodes)),
            ));
        }
        Some(_) => {}
    }
    match doc.get("connections") {
        Some(c) if !c.is_object() && !c.is_null() => Some(error(
            "type_mismatch",
            "/connections".into(),
            format!(
                "`connections` is {}, not an object keyed by source node name",
                kind_of(c)
            ),
        )),
        _ => None,
    }
}

/// A JSON value's type, in words.
pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Findings on each node's own form: an object with a name and a type,
/// names and ids used once, `typeVersion` a number, `parameters` an object.
pub fn nodes(program: &Value) -> Vec<Diagnostic> {
    let Some(list) = program.get("nodes").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (i, node) in list.iter().enumerate() {
        let at = format!("/nodes/{i}");
        let Some(fields) = node.as_object() else {
            out.push(error(
                "invalid_structure",
                at,
                format!("node {i} is {}, not an object", kind_of(node)),
            ));
            continue;
        };
        match fields.get("name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() => {
                if let Some(reserved) = reserved_in(name) {
                    out.push(finding(
                        Severity::Error,
                        "reserved_character",
                        format!("{at}/name"),
                        format!(
                            "node {i} is named '{name}', which contains '{reserved}': trace ids reserve '#' and '/'"
                        ),
                        Some(format!("rename it, for example '{}'", renamed(name))),
                    ));
                }
                if let Some(first) = names.insert(name, i) {
                    names.insert(name, first);
                    out.push(error(
                        "duplicate_id",
                        format!("{at}/name"),
                        format!("node {i} is named '{name}' like node {first}; node names must be unique"),
                    ));
                }
            }
            _ => out.push(error(
                "invalid_structure",
                at.clone(),
                format!("node {i} has no name"),
            )),
        }
        if fields
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            out.push(error(
                "invalid_structure",
                at.clone(),
                format!("node {i} has no type"),
            ));
        }
        if let Some(id) = fields.get("id").and_then(Value::as_str)
            && let Some(first) = ids.insert(id, i)
        {
            ids.insert(id, first);
            out.push(error(
                "duplicate_id",
                format!("{at}/id"),
                format!("node {i} has the id '{id}' of node {first}; node ids must be unique"),
            ));
        }
        if let Some(version) = fields.get("typeVersion")
            && !version.is_number()
        {
            out.push(error(
                "type_mismatch",
                format!("{at}/typeVersion"),
                format!("typeVersion is {}, not a number", kind_of(version)),
            ));
        }
        if let Some(parameters) = fields.get("parameters")
            && !parameters.is_object()
        {
            out.push(error(
                "type_mismatch",
                format!("{at}/parameters"),
                format!("parameters is {}, not an object", kind_of(parameters)),
            ));
        }
    }
    out
}

/// The characters Part II §3.4 reserves in step ids: a client reads a
/// trace entry's base id up to them. n8n itself allows them in names.
const RESERVED: [char; 2] = ['#', '/'];

/// The first reserved character of a node name.
fn reserved_in(name: &str) -> Option<char> {
    name.chars().find(|c| RESERVED.contains(c))
}

/// `name` with every reserved character replaced by a space, once.
fn renamed(name: &str) -> String {
    let spaced: String = name
        .chars()
        .map(|c| if RESERVED.contains(&c) { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `settings.executionOrder` other than `v0` or `v1`.
pub fn settings(program: &Value) -> Vec<Diagnostic> {
    let Some(order) = program
        .get("settings")
        .and_then(|s| s.get("executionOrder"))
    else {
        return Vec::new();
    };
    match order.as_str() {
        Some(o) if EXECUTION_ORDERS.contains(&o) => Vec::new(),
        _ => vec![error(
            "invalid_value",
            "/settings/executionOrder".into(),
            format!("settings.executionOrder is {order}; n8n knows \"v0\" and \"v1\""),
        )],
    }
}
