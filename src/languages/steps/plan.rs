//! The static plan's shape and risk aggregation (Part II §5.6), the same for
//! every language: one entry per planned step (`id`, `calls`, `arm`, `loop`,
//! `risk`, `risk_hints`), `max_risk_hints` aggregated from hints (never
//! from risk strings), and an unknown risk counted as the worst case.

use crate::pilotage::RiskHints;
use serde_json::{Map, Value, json};

/// The risk of a capability whose risk is unknown: fail closed.
pub const FAIL_CLOSED: RiskHints = RiskHints {
    read_only: false,
    destructive: true,
    open_world: true,
};

/// A visible capability's risk level and hints, as the caller's catalog
/// gives them for a step with these parameters (when the language has any).
pub type RiskOf<'a> = &'a dyn Fn(&str, Option<&Value>) -> Option<(String, RiskHints)>;

/// Builds a plan step by step, aggregating the hints as it goes.
pub struct PlanBuilder<'a> {
    risk_of: RiskOf<'a>,
    steps: Vec<Value>,
    max: RiskHints,
}

impl<'a> PlanBuilder<'a> {
    pub fn new(risk_of: RiskOf<'a>, capacity: usize) -> Self {
        Self {
            risk_of,
            steps: Vec::with_capacity(capacity),
            max: RiskHints::SAFE,
        }
    }

    /// One planned step: what it calls (if anything), the branch arm it
    /// sits in as `(branch id, label)`, and the loop whose body it is.
    pub fn step(
        &mut self,
        id: String,
        calls: Option<&str>,
        arm: Option<(&str, &str)>,
        in_loop: Option<&str>,
    ) {
        self.step_with_parameters(id, calls, None, arm, in_loop);
    }

    /// [`Self::step`] for a step whose call has `parameters`, which the
    /// risk of its capability may depend on.
    pub fn step_with_parameters(
        &mut self,
        id: String,
        calls: Option<&str>,
        parameters: Option<&Value>,
        arm: Option<(&str, &str)>,
        in_loop: Option<&str>,
    ) {
        let mut entry = Map::new();
        entry.insert("id".into(), Value::String(id));
        let (risk, hints) = match calls {
            Some(cap) => {
                entry.insert("calls".into(), Value::String(cap.to_string()));
                (self.risk_of)(cap, parameters)
                    .unwrap_or_else(|| (FAIL_CLOSED.level().to_string(), FAIL_CLOSED))
            }
            None => (RiskHints::SAFE.level().to_string(), RiskHints::SAFE),
        };
        if let Some((branch, label)) = arm {
            entry.insert("arm".into(), json!({"branch": branch, "label": label}));
        }
        if let Some(l) = in_loop {
            entry.insert("loop".into(), Value::String(l.to_string()));
        }
        entry.insert("risk".into(), Value::String(risk));
        entry.insert("risk_hints".into(), hints.to_json());
        self.max = self.max.combine(hints);
        self.steps.push(Value::Object(entry));
    }

    /// The plan: its steps, `max_risk` and `max_risk_hints`.
    pub fn finish(self) -> Value {
        // The steps move into the plan: `json!` would copy every one.
        let mut plan = Map::new();
        plan.insert("steps".into(), Value::Array(self.steps));
        plan.insert("max_risk".into(), json!(self.max.level()));
        plan.insert("max_risk_hints".into(), self.max.to_json());
        Value::Object(plan)
    }
}

/// The hints aggregated over a plan (used for promoted-program entries); a
/// plan without them counts as the worst case.
pub fn max_hints(plan: &Value) -> RiskHints {
    plan.get("max_risk_hints")
        .and_then(RiskHints::from_json)
        .unwrap_or(FAIL_CLOSED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_risk_fails_closed_and_hints_aggregate() {
        let risk_of = |cap: &str, parameters: Option<&Value>| {
            (cap == "read" || parameters.is_some_and(|p| p["method"] == "GET"))
                .then(|| ("safe".to_string(), RiskHints::SAFE))
        };
        let mut plan = PlanBuilder::new(&risk_of, 3);
        plan.step("a".into(), Some("read"), None, None);
        plan.step("b".into(), None, Some(("a.next", "then")), Some("l"));
        let safe = PlanBuilder::new(&risk_of, 0);
        let mut closed = PlanBuilder::new(&risk_of, 1);
        closed.step("c".into(), Some("nobody.knows"), None, None);
        let mut by_parameter = PlanBuilder::new(&risk_of, 1);
        by_parameter.step_with_parameters(
            "d".into(),
            Some("http"),
            Some(&json!({"method": "GET"})),
            None,
            None,
        );
        assert_eq!(by_parameter.finish()["max_risk"], "safe");
        let (plan, safe, closed) = (plan.finish(), safe.finish(), closed.finish());
        assert_eq!(plan["max_risk"], "safe");
        assert_eq!(
            plan["steps"][1]["arm"],
            json!({"branch": "a.next", "label": "then"})
        );
        assert_eq!(plan["steps"][1]["loop"], "l");
        assert_eq!(max_hints(&safe), RiskHints::SAFE);
        assert_eq!(closed["steps"][0]["risk"], "destructive");
        assert_eq!(max_hints(&closed), FAIL_CLOSED);
        assert_eq!(max_hints(&json!({})), FAIL_CLOSED);
    }
}
