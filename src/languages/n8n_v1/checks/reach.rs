//! What a run never reaches, and what reaches a node only in part. n8n
//! runs all of these silently (measured on 2.41.1; docs/n8n-v1.md, "What
//! n8n runs silently"), so each is a warning: the run does what the rest
//! of the workflow says, and the trace shows what did not run.
//!
//! - A node connected to nothing never runs.
//! - A node no enabled trigger reaches (through `main` connections, or as
//!   an AI sub-node attached to a node that is reached) never runs.
//! - A node with several inputs, one of them connected to nothing, runs
//!   with the items of the others alone: a Merge appending passes them on,
//!   one combining by position or by fields sends nothing, a Compare
//!   Datasets compares them with nothing.

use super::{NodeTypes, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::{Node, Workflow};
use crate::languages::n8n_v1::ports;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};

/// One connection as written, of any type: (type, source, target).
type Link<'a> = (&'a str, &'a str, &'a str);

/// Every connection of the document whose target is named, in any type.
fn links<'a>(wf: &Workflow<'a>) -> Vec<Link<'a>> {
    let Some(sources) = wf.connections.and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (source, kinds) in sources {
        let Some(kinds) = kinds.as_object() else {
            continue;
        };
        for (kind, outputs) in kinds {
            let targets = outputs
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|t| t.get("node").and_then(Value::as_str));
            out.extend(targets.map(|target| (kind.as_str(), source.as_str(), target)));
        }
    }
    out
}

/// A warning at a node.
fn warning(node: &Node, message: String, hint: &str) -> Diagnostic {
    finding(
        Severity::Warning,
        "invalid_structure",
        node.pointer(),
        message,
        Some(hint.into()),
    )
}

/// Nodes connected to nothing, in any connection type (sticky notes are
/// comments; a workflow of one node has nothing to connect).
pub fn disconnected(wf: &Workflow) -> Vec<Diagnostic> {
    let runnable: Vec<_> = wf.nodes.iter().filter(|n| !n.is_sticky_note()).collect();
    if runnable.len() < 2 {
        return Vec::new();
    }
    // Compared regardless of case: a connection naming 'set' for 'Set'
    // is reported as such, not as a node connected to nothing.
    let connected: HashSet<String> = links(wf)
        .into_iter()
        .flat_map(|(_, source, target)| [source, target])
        .map(str::to_lowercase)
        .collect();
    runnable
        .into_iter()
        .filter(|n| !connected.contains(&n.name.to_lowercase()))
        .map(|n| {
            warning(
                n,
                format!(
                    "the node '{}' is connected to nothing: it never runs",
                    n.name
                ),
                "connect it, or remove it",
            )
        })
        .collect()
}

/// Which nodes a run can reach: from every enabled trigger along `main`
/// connections (through disabled nodes too: n8n passes items through them),
/// then every sub-node attached by an `ai_*` connection to a reached node.
fn reached(wf: &Workflow, types: &NodeTypes) -> Vec<bool> {
    let mut seen = vec![false; wf.nodes.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, node) in wf.nodes.iter().enumerate() {
        if types.is_trigger(node) && !node.is_disabled() {
            seen[i] = true;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for edge in wf.out_edges(i) {
            if !seen[edge.to] {
                seen[edge.to] = true;
                queue.push_back(edge.to);
            }
        }
    }
    // A sub-node serves the node it is attached to, which may itself be a
    // sub-node (a model attached to a tool that is attached in turn): attach until nothing
    // changes.
    let attached: Vec<(usize, usize)> = links(wf)
        .into_iter()
        .filter(|(kind, _, _)| *kind != "main")
        .filter_map(|(_, source, target)| Some((wf.position(source)?, wf.position(target)?)))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &(sub, served) in &attached {
            if seen[served] && !seen[sub] {
                seen[sub] = true;
                changed = true;
            }
        }
    }
    seen
}

/// Nodes that are connected but that no enabled trigger reaches. Nothing
/// is said when no trigger is enabled (the workflow is refused for that)
/// or of a node connected to nothing ([`disconnected`] says it).
pub fn unreachable(wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    if !wf
        .nodes
        .iter()
        .any(|n| types.is_trigger(n) && !n.is_disabled())
    {
        return Vec::new();
    }
    let connected: HashSet<&str> = links(wf)
        .into_iter()
        .flat_map(|(_, source, target)| [source, target])
        .collect();
    let seen = reached(wf, types);
    wf.nodes
        .iter()
        .enumerate()
        .filter(|&(i, n)| !seen[i] && !n.is_sticky_note() && connected.contains(n.name))
        .map(|(_, n)| {
            warning(
                n,
                format!(
                    "no enabled trigger leads to the node '{}': it never runs",
                    n.name
                ),
                "connect it to a path that starts at the trigger, or remove it",
            )
        })
        .collect()
}

/// Inputs connected to nothing on a node with several inputs and at least
/// one connected: one warning per node, naming the inputs (1-based, as
/// n8n's editor shows them).
pub fn unconnected_inputs(wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, node) in wf.nodes.iter().enumerate() {
        let Some(count) = ports::inputs(node, types.described(node.kind)) else {
            continue;
        };
        if count < 2 {
            continue;
        }
        let fed: HashSet<usize> = wf
            .edges
            .iter()
            .filter(|e| e.to == i)
            .map(|e| e.input)
            .collect();
        if fed.is_empty() {
            continue;
        }
        let empty: Vec<String> = (0..count)
            .filter(|k| !fed.contains(k))
            .map(|k| (k + 1).to_string())
            .collect();
        if empty.is_empty() {
            continue;
        }
        out.push(warning(
            node,
            format!(
                "'{}' has {count} inputs and nothing is connected to input {}: n8n runs it with the items of the others alone",
                node.name,
                empty.join(", ")
            ),
            "connect every input, or lower the node's number of inputs",
        ));
    }
    out
}
