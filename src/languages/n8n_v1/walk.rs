//! The program seen as its steps: one [`StepInfo`] per named node, in
//! document order. A node's id is its name, its locator `/nodes/<i>`, its
//! capability its type (a sticky note, a comment, calls nothing); If and
//! Switch nodes are branches, a Loop Over Items a loop, every other node a
//! call. The enclosing arm and loop come from the graph walked from the
//! triggers ([`super::graph`]).

use super::document::{IF, Node, Workflow, trigger_by_name};
use super::graph::{Construct, Graph, is_branch, is_loop};
use crate::languages::steps::{Ancestors, StepInfo, StepKind};
use std::sync::Arc;

/// Output labels of a Switch as a step's arm carries them (the plan and
/// the trace give the rule's own output name).
const OUTPUT_NUMBERS: [&str; 32] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
    "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
];

/// The graph every reader of the program walks: triggers by their type's
/// name (the language's plan and trace have no catalog).
pub fn graph(wf: &Workflow) -> Graph {
    Graph::new(wf, &|n: &Node| trigger_by_name(n.kind))
}

/// Every named node as a step.
pub fn steps(wf: &Workflow) -> Vec<StepInfo> {
    let graph = graph(wf);
    wf.nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let enclosing = &graph.enclosing[i];
            let ancestors: Ancestors = enclosing
                .iter()
                .map(|c| match *c {
                    Construct::Arm { branch, .. } => (Arc::from(wf.nodes[branch].name), false),
                    Construct::Loop { node } => (Arc::from(wf.nodes[node].name), true),
                })
                .collect();
            let arm = match enclosing.last() {
                Some(&Construct::Arm { branch, output }) => Some((
                    Arc::from(wf.nodes[branch].name),
                    static_label(&wf.nodes[branch], output),
                )),
                _ => None,
            };
            let in_loop = enclosing.iter().rev().find_map(|c| match *c {
                Construct::Loop { node } => Some(Arc::from(wf.nodes[node].name)),
                Construct::Arm { .. } => None,
            });
            StepInfo {
                id: Some(node.name.to_string()),
                kind: kind(node),
                pointer: node.pointer(),
                capability: (!node.is_sticky_note() && !node.kind.is_empty())
                    .then(|| node.kind.to_string()),
                arm,
                in_loop,
                ancestors,
            }
        })
        .collect()
}

fn kind(node: &Node) -> StepKind {
    if node.is_sticky_note() {
        StepKind::Other
    } else if is_branch(node) {
        StepKind::Branch
    } else if is_loop(node) {
        StepKind::Loop
    } else {
        StepKind::Call
    }
}

fn static_label(branch: &Node, output: usize) -> &'static str {
    match (branch.kind, output) {
        (IF, 0) => "true",
        (IF, 1) => "false",
        _ => OUTPUT_NUMBERS.get(output).copied().unwrap_or("other"),
    }
}
