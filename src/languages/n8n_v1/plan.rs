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

#[cfg(test)]
mod tests {
    use super::super::N8nV1;
    use super::super::fixtures::shapes;
    use crate::languages::Language;
    use crate::languages::steps::StepKind;
    use crate::pilotage::RiskHints;
    use serde_json::Value;

    fn rows(plan: &Value) -> Vec<String> {
        plan["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let mut row = s["id"].as_str().unwrap_or("?").to_string();
                if let Some(a) = s.get("arm") {
                    row += &format!(
                        " arm {}/{}",
                        a["branch"].as_str().unwrap_or("?"),
                        a["label"].as_str().unwrap_or("?")
                    );
                }
                if let Some(l) = s.get("loop") {
                    row += &format!(" loop {}", l.as_str().unwrap_or("?"));
                }
                row + &format!(" {}", s["risk"].as_str().unwrap_or("?"))
            })
            .collect()
    }

    /// An HTTP Request is safe when it only reads: a `risk_when` rule as
    /// the operations evaluate it, given the node's parameters.
    fn risks(cap: &str, parameters: Option<&Value>) -> Option<(String, RiskHints)> {
        let reads = parameters
            .map(|p| p.get("method").and_then(Value::as_str).unwrap_or("GET") == "GET")
            .unwrap_or(false);
        if cap == "n8n-nodes-base.httpRequest" && !reads {
            return None;
        }
        Some(("safe".into(), RiskHints::SAFE))
    }

    #[test]
    fn arms_joins_and_loops_walked_from_the_trigger() {
        let l = N8nV1;
        let p = shapes();
        let plan = l.plan(&p, &l.steps(&p), &risks);
        assert_eq!(
            rows(&plan),
            [
                "Start safe",
                "Items safe",
                "Loop safe",
                "Mark loop Loop safe",
                "Check safe",
                "Big arm Check/true destructive",
                "Route arm Check/false safe",
                "A arm Route/a safe",
                "B arm Route/1 safe",
                "Join safe",
                "End safe",
            ]
        );
        assert_eq!(plan["max_risk"], "destructive");
        assert_eq!(plan["steps"][0]["calls"], "n8n-nodes-base.manualTrigger");
    }

    #[test]
    fn steps_carry_kinds_arms_loops_and_ancestors() {
        let l = N8nV1;
        let p = shapes();
        let steps = l.steps(&p);
        assert_eq!(steps.len(), 12);
        let by = |name: &str| {
            steps
                .iter()
                .find(|s| s.id.as_deref() == Some(name))
                .unwrap()
        };
        assert_eq!(by("Check").kind, StepKind::Branch);
        assert_eq!(by("Route").kind, StepKind::Branch);
        assert_eq!(by("Loop").kind, StepKind::Loop);
        assert_eq!(by("Big").kind, StepKind::Call);
        assert_eq!(by("Note").kind, StepKind::Other);
        assert_eq!(by("Note").capability, None);
        assert_eq!(by("Mark").in_loop.as_deref(), Some("Loop"));
        assert_eq!(by("Mark").arm, None);
        assert_eq!(by("A").arm, Some(("Route".into(), "0")));
        assert_eq!(by("Big").arm, Some(("Check".into(), "true")));
        let ancestors: Vec<_> = by("A")
            .ancestors
            .iter()
            .map(|(id, l)| (id.to_string(), *l))
            .collect();
        assert_eq!(
            ancestors,
            [("Check".to_string(), false), ("Route".to_string(), false)]
        );
        assert_eq!(by("Join").arm, None);
        assert_eq!(by("Big").pointer, "/nodes/5");
        assert_eq!(l.step_locators(&steps)["End"], "/nodes/10");
        assert_eq!(l.program_name(&p).as_deref(), Some("shapes"));
        assert_eq!(l.input_schema(&p), None);
        assert_eq!(
            (l.kind(), l.program_json_type(), l.locator()),
            ("n8n/v1", "object", "json-pointer")
        );
    }

    #[test]
    fn a_trigger_that_succeeded_is_no_completed_call() {
        let l = N8nV1;
        let step = |calls: &str, ok: bool| serde_json::json!({"id": "x", "calls": calls, "outcome": {"ok": ok}});
        assert!(!l.completed_a_call(&step("n8n-nodes-base.manualTrigger", true)));
        assert!(!l.completed_a_call(&step("n8n-nodes-base.webhook", true)));
        assert!(l.completed_a_call(&step("n8n-nodes-base.set", true)));
        assert!(!l.completed_a_call(&step("n8n-nodes-base.set", false)));
        assert!(!l.completed_a_call(&serde_json::json!({"id": "x", "outcome": {"ok": true}})));
    }
}
