//! Static plan derivation (Part II §5.6) for a workflow, walked from its
//! triggers: nodes in the order a run first reaches them (then the nodes no
//! run reaches, in document order), each a step calling its node type with
//! its parameters (the catalog's `risk_when` rules may read them).
//!
//! - A node on an If or Switch arm carries `arm`: the branch node's name and
//!   the output's name (`true`/`false`, a Switch rule's output key or the
//!   output number).
//! - A node reached from several arms of a branch is a join: it belongs to
//!   none of them, so it carries the arm enclosing the branch, if any.
//! - A node the `loop` output of a Loop Over Items leads to carries
//!   `loop`: that node's name.
//! - Sticky notes are comments: no steps.

use super::document::Workflow;
use super::graph::{Construct, Graph};
use super::ports;
use crate::languages::steps::plan::{PlanBuilder, RiskOf};
use serde_json::Value;

/// Builds the plan of `wf` over its `graph`.
pub fn derive(wf: &Workflow, graph: &Graph, risk_of: RiskOf) -> Value {
    let mut order: Vec<usize> = (0..wf.nodes.len()).collect();
    order.sort_by_key(|&i| (graph.dist[i].unwrap_or(usize::MAX), i));
    let mut plan = PlanBuilder::new(risk_of, order.len());
    // A node without parameters leaves every parameter at its default.
    let none = Value::Object(serde_json::Map::new());
    for i in order {
        let node = &wf.nodes[i];
        if node.is_sticky_note() {
            continue;
        }
        let enclosing = &graph.enclosing[i];
        let arm = match enclosing.last() {
            Some(&Construct::Arm { branch, output }) => Some((
                wf.nodes[branch].name,
                ports::output_name(&wf.nodes[branch], output),
            )),
            _ => None,
        };
        let in_loop = enclosing.iter().rev().find_map(|c| match *c {
            Construct::Loop { node } => Some(wf.nodes[node].name),
            Construct::Arm { .. } => None,
        });
        let calls = (!node.kind.is_empty()).then_some(node.kind);
        plan.step_with_parameters(
            node.name.to_string(),
            calls,
            Some(node.parameters.unwrap_or(&none)),
            arm.as_ref().map(|(b, l)| (*b, l.as_str())),
            in_loop,
        );
    }
    plan.finish()
}
