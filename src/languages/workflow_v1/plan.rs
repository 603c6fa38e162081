//! Static plan derivation (Part II §5.6): every step in document order,
//! branches and loops as steps of their own, every arm's steps marked with
//! `arm`, loop bodies once with `loop`, and `max_risk_hints` aggregated from
//! hints (never from risk strings).

use super::program::{StepInfo, StepKind};
use crate::pilotage::RiskHints;
use serde_json::{Map, Value, json};

/// Builds the plan; `risk_of` gives a visible capability's risk (callers only
/// plan valid programs, so every called capability is visible).
pub fn derive(steps: &[StepInfo], risk_of: impl Fn(&str) -> Option<(String, RiskHints)>) -> Value {
    let mut max = RiskHints::SAFE;
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let Some(id) = &step.id else { continue };
        let mut entry = Map::new();
        entry.insert("id".into(), Value::String(id.clone()));
        let (risk, hints) = match (&step.kind, &step.capability) {
            (StepKind::Call, Some(cap)) => {
                entry.insert("calls".into(), Value::String(cap.clone()));
                // Unknown risk is treated as the worst case: fail closed.
                risk_of(cap).unwrap_or_else(|| {
                    (
                        "destructive".into(),
                        RiskHints {
                            read_only: false,
                            destructive: true,
                            open_world: true,
                        },
                    )
                })
            }
            _ => ("safe".to_string(), RiskHints::SAFE),
        };
        if let Some((branch, label)) = &step.arm {
            entry.insert("arm".into(), json!({"branch": &**branch, "label": label}));
        }
        if let Some(l) = &step.in_loop {
            entry.insert("loop".into(), Value::String(l.to_string()));
        }
        entry.insert("risk".into(), Value::String(risk));
        entry.insert("risk_hints".into(), hints.to_json());
        max = max.combine(hints);
        out.push(Value::Object(entry));
    }
    json!({"steps": out, "max_risk": max.level(), "max_risk_hints": max.to_json()})
}

/// Aggregate risk of a plan (used for promoted-program entries).
pub fn max_hints(plan: &Value) -> RiskHints {
    plan.get("max_risk_hints")
        .and_then(RiskHints::from_json)
        .unwrap_or(RiskHints {
            read_only: false,
            destructive: true,
            open_world: true,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::workflow_v1::program::steps;

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
