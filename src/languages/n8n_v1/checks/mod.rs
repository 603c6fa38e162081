//! Gateway-native checks of an n8n workflow (docs/n8n-v1.md, "Who does
//! what"): what needs only the document and the catalog entries of its
//! node types. Node descriptions (types, versions, parameters, credentials)
//! are the adapter's. n8n itself accepts most of these mistakes when the
//! workflow is created, and either fails only when the node is reached,
//! after earlier nodes ran, or never says anything (docs/n8n.md, "The
//! corpus").
//!
//! One file per kind of finding: the document's form ([`form`]), the
//! connections ([`connections`]), how many nodes of a type the workflow
//! holds ([`counts`]), the flow of a run ([`flow`]), what a run never
//! reaches ([`reach`]), the data pinned on nodes ([`pin_data`]) and the
//! JavaScript of expressions and Code nodes ([`scripts`]). Every finding is
//! located by a JSON Pointer to the node, its parameter or its connection.

mod connections;
mod counts;
mod flow;
mod form;
mod pin_data;
mod reach;
mod scripts;
#[cfg(test)]
mod silent_tests;
#[cfg(test)]
mod tests;
mod webhooks;

pub use form::structure_problem;

use super::document::{Node, Workflow, trigger_by_name};
use super::graph::Graph;
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use crate::languages::steps::{StepInfo, diagnostics};
use serde_json::Value;

/// A finding of `severity` at `path`.
pub(super) fn finding(
    severity: Severity,
    code: &str,
    path: String,
    message: String,
    hint: Option<String>,
) -> Diagnostic {
    Diagnostic {
        severity,
        code: code.into(),
        path,
        message,
        hint,
    }
}

/// An error finding at `path`.
pub(super) fn error(code: &str, path: String, message: String) -> Diagnostic {
    finding(Severity::Error, code, path, message, None)
}

/// What the caller's catalog says of node types: their entries' `n8n`
/// objects.
pub struct NodeTypes<'c> {
    catalog: Option<&'c CatalogView>,
}

impl<'c> NodeTypes<'c> {
    pub fn new(catalog: Option<&'c CatalogView>) -> Self {
        Self { catalog }
    }

    /// The `n8n` object of the entry of `kind`, when the caller sees one.
    pub fn described(&self, kind: &str) -> Option<&'c Value> {
        self.catalog?.get(kind)?.member("n8n")
    }

    /// How many nodes of type `kind` a workflow may hold: its entry's
    /// `n8n.max_nodes` (n8n's `maxNodes`), when the entry has one.
    pub fn max_nodes(&self, kind: &str) -> Option<u64> {
        self.described(kind)?.get("max_nodes")?.as_u64()
    }

    /// Whether nodes of type `kind` listen on webhooks: its entry's
    /// `n8n.webhook`.
    pub fn listens(&self, kind: &str) -> bool {
        self.described(kind)
            .and_then(|d| d.get("webhook"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// Whether a node starts runs: its entry's `n8n.trigger`, else its
    /// type's name.
    pub fn is_trigger(&self, node: &Node) -> bool {
        self.described(node.kind)
            .and_then(|d| d.get("trigger"))
            .and_then(Value::as_bool)
            .unwrap_or_else(|| trigger_by_name(node.kind))
    }
}

/// Every native finding on `program`, a value [`structure_problem`]
/// accepted.
pub fn all(program: &Value, catalog: &CatalogView) -> Vec<Diagnostic> {
    let types = NodeTypes::new(Some(catalog));
    let wf = Workflow::read(program);
    let graph = Graph::new(&wf, &|n| types.is_trigger(n));
    let mut out = Vec::new();
    out.extend(form::nodes(program));
    out.extend(form::settings(program));
    out.extend(connections::all(program, &wf, &types));
    out.extend(flow::cycles(&wf, &graph));
    out.extend(flow::triggers(&wf, &types));
    out.extend(counts::beyond_max_nodes(&wf, &types));
    out.extend(webhooks::same_path(&wf, &types));
    out.extend(reach::disconnected(&wf));
    out.extend(reach::unreachable(&wf, &types));
    out.extend(reach::unconnected_inputs(&wf, &types));
    out.extend(pin_data::all(program, &wf, &types));
    out.extend(scripts::all(&wf, &graph));
    out
}

/// A node whose type the caller cannot see, located at its `type`.
pub fn unknown_capability(step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
    diagnostics::unknown_capability(format!("{}/type", step.pointer), "node type", name, visible)
}
