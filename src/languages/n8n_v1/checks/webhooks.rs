//! Two webhook nodes of one workflow on the same path and method. Which
//! node types listen on webhooks comes from their descriptions (the catalog
//! entry's `n8n.webhook`, from the description's `webhooks`); n8n accepts
//! such a workflow when it is created and runs it by hand, but refuses to
//! activate it ("There is a conflict with one of the webhooks"), so its
//! webhooks could never be called: an error, at the second node.

use super::{NodeTypes, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::Workflow;
use serde_json::Value;

/// One error per enabled webhook node whose path and method an earlier
/// one already takes. A node without an `httpMethod` parameter (a Form
/// Trigger answers GET and POST; its path is its `options.path`) takes
/// every method on its path; a path
/// that is an expression or empty (n8n then uses the node's webhook id)
/// is not compared.
pub fn same_path(wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let mut taken: Vec<(&str, Option<&str>, &str)> = Vec::new();
    let mut out = Vec::new();
    for node in &wf.nodes {
        if node.is_disabled() || !types.listens(node.kind) {
            continue;
        }
        // The Form Trigger keeps its path among its options.
        let path = literal(node.parameters, "path")
            .or_else(|| literal(node.parameters.and_then(|p| p.get("options")), "path"));
        let Some(path) = path.map(|p| p.trim_matches('/')) else {
            continue;
        };
        let method = literal(node.parameters, "httpMethod");
        let clash = taken
            .iter()
            .find(|(p, m, _)| *p == path && (m.is_none() || method.is_none() || *m == method));
        if let Some((_, _, first)) = clash {
            out.push(finding(
                Severity::Error,
                "invalid_structure",
                node.pointer(),
                format!(
                    "'{}' listens on webhook path '{path}'{} as '{first}' does: n8n refuses to activate a workflow whose webhooks conflict",
                    node.name,
                    method.map(|m| format!(" ({m})")).unwrap_or_default()
                ),
                Some(format!("give '{}' a path of its own", node.name)),
            ));
        } else {
            taken.push((path, method, node.name));
        }
    }
    out
}

/// A member's literal, non-empty text in `parameters` (not an expression).
fn literal<'a>(parameters: Option<&'a Value>, name: &str) -> Option<&'a str> {
    parameters?
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && !s.starts_with('='))
}
