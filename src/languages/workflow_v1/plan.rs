//! Static plan derivation (Part II §5.6): every step in document order,
//! branches and loops as steps of their own, every arm's steps marked with
//! `arm`, loop bodies once with `loop`, and `max_risk_hints` aggregated from
//! hints (never from risk strings).

use crate::languages::steps::plan::PlanBuilder;
use crate::languages::steps::{StepInfo, StepKind};
use crate::pilotage::RiskHints;
use serde_json::Value;

/// Builds the plan; `risk_of` gives a visible capability's risk (callers only
/// plan valid programs, so every called capability is visible).
pub fn derive(steps: &[StepInfo], risk_of: impl Fn(&str) -> Option<(String, RiskHints)>) -> Value {
    // A workflow/v1 step has no parameters a risk could depend on.
    let by_capability = |cap: &str, _: Option<&Value>| risk_of(cap);
    let mut plan = PlanBuilder::new(&by_capability, steps.len());
    for step in steps {
        let Some(id) = &step.id else { continue };
        let calls = match (&step.kind, &step.capability) {
            (StepKind::Call, Some(cap)) => Some(cap.as_str()),
            _ => None,
        };
        let arm = step.arm.as_ref().map(|(branch, label)| (&**branch, *label));
        plan.step(id.clone(), calls, arm, step.in_loop.as_deref());
    }
    plan.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::workflow_v1::program::steps;
    use serde_json::json;

    #[test]
    fn plan_marks_and_aggregates() {
        let p = json!({"steps": [
            {"id": "f", "kind": "call", "capability": "read"},
            {"id": "b", "kind": "branch", "when": {}, "then": [{"id": "d", "kind": "call", "capability": "del"}]},
            {"id": "l", "kind": "for_each", "do": [{"id": "m", "kind": "call", "capability": "mail"}]}
        ]});
        let plan = derive(&steps(&p), |c| match c {
            "read" => Some(("safe".into(), RiskHints::SAFE)),
            "del" => Some((
                "destructive".into(),
                RiskHints {
                    read_only: false,
                    destructive: true,
                    open_world: false,
                },
            )),
            _ => Some((
                "external".into(),
                RiskHints {
                    read_only: false,
                    destructive: false,
                    open_world: true,
                },
            )),
        });
        assert_eq!(
            plan["steps"][2]["arm"],
            json!({"branch": "b", "label": "then"})
        );
        assert_eq!(plan["steps"][4]["loop"], "l");
        assert!(plan["steps"][1].get("calls").is_none());
        assert_eq!(plan["max_risk"], "destructive");
        assert_eq!(
            plan["max_risk_hints"],
            json!({"readOnly": false, "destructive": true, "openWorld": true})
        );
    }
}
