//! How a run flows: cycles it can never leave, and what starts it. n8n lets
//! both through: a cycle without a way out hangs its main process
//! (docs/n8n.md), a workflow without a trigger cannot be started, and a
//! disabled trigger ignores the data pinned on it (the run's input). What
//! a run never reaches is [`super::reach`]'s.

use super::{NodeTypes, error, finding};
use crate::classify::{Diagnostic, Severity};
use crate::languages::n8n_v1::document::Workflow;
use crate::languages::n8n_v1::graph::{Graph, is_loop};
use std::collections::HashSet;

/// A cycle that passes no Loop Over Items node and that no output leads
/// out of: items go round forever. A cycle with a way out (an If's arm
/// leaving it) may end, and is left alone. Located at the connection that
/// closes the cycle, seen from the trigger.
pub fn cycles(wf: &Workflow, graph: &Graph) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for members in graph.cycles() {
        if members.iter().any(|&i| is_loop(&wf.nodes[i])) {
            continue;
        }
        let inside: HashSet<usize> = members.iter().copied().collect();
        let leaves = members.iter().any(|&i| {
            let outputs: HashSet<usize> = graph.succ[i].iter().map(|&(o, _)| o).collect();
            outputs
                .into_iter()
                .any(|k| graph.targets(i, k).iter().all(|t| !inside.contains(t)))
        });
        if leaves {
            continue;
        }
        let within = || {
            wf.edges
                .iter()
                .filter(|e| inside.contains(&e.from) && inside.contains(&e.to))
        };
        let backwards = within().find(|e| match (graph.dist[e.from], graph.dist[e.to]) {
            (Some(from), Some(to)) => to <= from,
            _ => false,
        });
        let Some(closing) = backwards.or_else(|| within().next()) else {
            continue;
        };
        let names: Vec<&str> = members.iter().map(|&i| wf.nodes[i].name).collect();
        out.push(error(
            "invalid_structure",
            closing.pointer.clone(),
            format!(
                "'{}' → '{}' closes a cycle ({}) that passes no Loop Over Items node and that nothing leads out of: a run never ends",
                wf.nodes[closing.from].name,
                wf.nodes[closing.to].name,
                names.join(", ")
            ),
        ));
    }
    out
}

/// No trigger at all, or none enabled: the run pins its input on the first
/// enabled trigger and starts there, and execute refuses a workflow that has
/// none. n8n itself would start a manual run from a disabled trigger but
/// hand on an empty item instead of the data pinned on it (measured on
/// 2.41.1), so the run's input would be lost.
pub fn triggers(wf: &Workflow, types: &NodeTypes) -> Vec<Diagnostic> {
    let triggers: Vec<_> = wf.nodes.iter().filter(|n| types.is_trigger(n)).collect();
    let Some(first) = triggers.first() else {
        return vec![error(
            "invalid_structure",
            "/nodes".into(),
            "the workflow has no trigger node: nothing can start it".into(),
        )];
    };
    if triggers.iter().any(|n| !n.is_disabled()) {
        return Vec::new();
    }
    vec![finding(
        Severity::Error,
        "invalid_structure",
        format!("{}/disabled", first.pointer()),
        format!(
            "every trigger of the workflow is disabled ('{}' first): a run starts from an enabled trigger only",
            first.name
        ),
        Some(format!("enable '{}' (remove `disabled`)", first.name)),
    )]
}
