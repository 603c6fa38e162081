//! How many outputs and inputs a node has, and what its outputs are called.
//! The caller's catalog entry says it for node types with a fixed list
//! (`n8n.outputs`, `n8n.inputs`); for the types whose ports n8n computes
//! from the parameters, the rules are written here: Switch (one output per
//! rule, or `numberOutputs`), Merge (`numberInputs`, default 2), If (`true`,
//! `false`), Loop Over Items (`done`, `loop` from version 3). A node set to
//! continue on error through an output of its own has one more output.
//! `None` means unknown: nothing is checked against it.

use super::document::{IF, LOOP_OVER_ITEMS, MERGE, Node, SWITCH};
use serde_json::Value;

/// What the catalog says of a node type: its entry's `n8n` object.
pub type Described<'v> = Option<&'v Value>;

/// The number of outputs of `node`.
pub fn outputs(node: &Node, described: Described) -> Option<usize> {
    // The version-aware rules first: one catalog entry covers every
    // version of a type, and Loop Over Items 1 has one output, 3 two.
    let base = match node.kind {
        SWITCH => switch_outputs(node),
        _ => built_in_outputs(node).or_else(|| count(described, "outputs")),
    }?;
    Some(base + usize::from(error_output(node)))
}

/// The number of inputs of `node`.
pub fn inputs(node: &Node, described: Described) -> Option<usize> {
    match node.kind {
        MERGE if node.version.is_none_or(|v| v >= 3.0) => match node.parameter("numberInputs") {
            None => Some(2),
            Some(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        },
        MERGE => Some(2),
        _ => count(described, "inputs"),
    }
}

/// Whether `node` sends failed items to an extra last output.
pub fn error_output(node: &Node) -> bool {
    node.raw.get("onError").and_then(Value::as_str) == Some("continueErrorOutput")
}

/// The name of output `k` of `node`, as a plan arm or a trace decision
/// calls it: `true`/`false`, a Switch rule's output key, `done`/`loop`, or
/// the output's number.
pub fn output_name(node: &Node, k: usize) -> String {
    let named: Option<String> = match node.kind {
        IF => ["true", "false"].get(k).map(|s| s.to_string()),
        LOOP_OVER_ITEMS => loop_outputs(node)
            .and_then(|names| names.get(k))
            .map(|s| s.to_string()),
        SWITCH => switch_output_name(node, k),
        _ => None,
    };
    match named {
        Some(name) => name,
        None if error_output(node) && outputs(node, None) == Some(k + 1) => "error".into(),
        None => k.to_string(),
    }
}

/// Loop Over Items' `loop` output, when the version has one.
pub fn loop_output(node: &Node) -> Option<usize> {
    loop_outputs(node)?.iter().position(|n| *n == "loop")
}

fn loop_outputs(node: &Node) -> Option<&'static [&'static str]> {
    match node.version {
        Some(v) if v < 2.0 => None,
        Some(v) if v < 3.0 => Some(&["loop", "done"]),
        _ => Some(&["done", "loop"]),
    }
}

fn count(described: Described, key: &str) -> Option<usize> {
    described?
        .get(key)?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
}

fn built_in_outputs(node: &Node) -> Option<usize> {
    match node.kind {
        IF => Some(2),
        LOOP_OVER_ITEMS => Some(loop_outputs(node).map_or(1, <[_]>::len)),
        _ => None,
    }
}

fn number(value: Option<&Value>, default: usize) -> Option<usize> {
    match value {
        None => Some(default),
        Some(v) => v.as_u64().and_then(|n| usize::try_from(n).ok()),
    }
}

fn switch_rules<'v>(node: &'v Node) -> Option<&'v Vec<Value>> {
    let key = if node.version.is_some_and(|v| v < 3.0) {
        "rules"
    } else {
        "values"
    };
    node.parameter("rules")?.get(key)?.as_array()
}

fn switch_outputs(node: &Node) -> Option<usize> {
    let version = node.version.unwrap_or(3.0);
    if version < 2.0 {
        return Some(4);
    }
    match node.parameter("mode").map(Value::as_str) {
        None | Some(Some("rules")) => {}
        Some(Some("expression")) => {
            let key = if version < 3.0 {
                "outputsAmount"
            } else {
                "numberOutputs"
            };
            return number(node.parameter(key), 4);
        }
        // A mode n8n does not have (the adapter's finding): unknown.
        Some(_) => return None,
    }
    let rules = match node.parameter("rules") {
        None => 0,
        Some(_) => switch_rules(node)?.len(),
    };
    let fallback = node
        .parameter("options")
        .and_then(|o| o.get("fallbackOutput"))
        .and_then(Value::as_str)
        == Some("extra");
    Some(rules + usize::from(fallback && version >= 3.0))
}

fn switch_output_name(node: &Node, k: usize) -> Option<String> {
    let rule = switch_rules(node)?.get(k)?;
    let key = rule.get("outputKey").and_then(Value::as_str)?;
    let renamed = node.version.is_some_and(|v| v < 3.0)
        || rule.get("renameOutput").and_then(Value::as_bool) == Some(true);
    (renamed && !key.is_empty()).then(|| key.to_string())
}
