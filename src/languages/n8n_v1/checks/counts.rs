//! How many nodes of one type a workflow holds, against the most its node
//! description allows (`maxNodes`, the catalog entry's `n8n.max_nodes`; no
//! list of types here). n8n's editor refuses to add one more and n8n's own
//! workflow validators call more an error, yet a workflow created through
//! the API with more is accepted and runs silently: n8n 2.41 serves the
//! limit for single-instance triggers (Manual, Error, Execute Workflow and
//! chat triggers, one each), and a run starts from one of them only, so
//! what hangs off the other never runs from it.

use super::{NodeTypes, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::Workflow;
use std::collections::HashMap;

/// One error per node past its type's limit, in document order, at the
/// node: the first nodes of a type are the ones kept. Disabled nodes count,
/// as n8n's own validators count them.
pub fn beyond_max_nodes(wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let mut held: HashMap<&str, (u64, &str)> = HashMap::new();
    let mut out = Vec::new();
    for node in &wf.nodes {
        let Some(max) = types.max_nodes(node.kind) else {
            continue;
        };
        let (count, first) = held.entry(node.kind).or_insert((0, node.name));
        *count += 1;
        if *count <= max {
            continue;
        }
        let (why, hint) = if types.is_trigger(node) {
            (
                format!(": a run starts from one of them only ('{first}' is the first)"),
                format!(
                    "remove '{}' and connect what follows it to '{first}'",
                    node.name
                ),
            )
        } else {
            (String::new(), format!("remove '{}'", node.name))
        };
        out.push(finding(
            Severity::Error,
            "invalid_structure",
            node.pointer(),
            format!(
                "'{}' is node {count} of type {}, of which a workflow may hold {max} (the type's maxNodes){why}",
                node.name, node.kind
            ),
            Some(hint),
        ));
    }
    out
}
