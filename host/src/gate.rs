//! The Host risk gate (Part II §7.3): policy code, never the Model's job.
//!
//! The gate decides from `risk_hints` only (never from engine-defined risk
//! strings or MCP tool annotations): with a plan, from `max_risk_hints`;
//! without a plan, from the aggregate of the catalog entries the *server*
//! listed in `references`; with neither, every execution needs approval.
//! Missing or malformed risk information counts as risky (fail closed).

use serde_json::Value;

/// What the approval context must say (Part II §7.3, honest presentation).
pub const UNVERIFIED_NOTICE: &str = "Risk labels, plan descriptions and entry descriptions are unverified claims made by the server; the Host cannot check them.";

/// Risk hints as received; `None` is "not stated", which the gate treats as
/// the risky value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub open_world: Option<bool>,
}

impl Hints {
    pub const UNKNOWN: Hints = Hints {
        read_only: None,
        destructive: None,
        open_world: None,
    };

    /// The neutral element of [`Hints::max`]: the aggregate of no steps.
    pub const NONE: Hints = Hints {
        read_only: Some(true),
        destructive: Some(false),
        open_world: Some(false),
    };

    pub fn parse(v: Option<&Value>) -> Hints {
        let b = |k: &str| v.and_then(|h| h.get(k)).and_then(Value::as_bool);
        Hints {
            read_only: b("readOnly"),
            destructive: b("destructive"),
            open_world: b("openWorld"),
        }
    }

    /// The maximum of two hint sets (Part II §5.3): AND of `readOnly`, OR of
    /// `destructive` and `openWorld`. "Unknown" absorbs everything except a
    /// definite risky value.
    pub fn max(self, other: Hints) -> Hints {
        fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
            match (a, b) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            }
        }
        fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
            match (a, b) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }
        }
        Hints {
            read_only: and(self.read_only, other.read_only),
            destructive: or(self.destructive, other.destructive),
            open_world: or(self.open_world, other.open_world),
        }
    }

    /// Why these hints need approval; empty when they do not.
    pub fn reasons(&self) -> Vec<String> {
        let mut r = Vec::new();
        match self.destructive {
            Some(true) => r.push("destructive: true".to_string()),
            None => r.push("destructive: not stated (treated as risky)".to_string()),
            Some(false) => {}
        }
        match self.open_world {
            Some(true) => r.push("openWorld: true".to_string()),
            None => r.push("openWorld: not stated (treated as risky)".to_string()),
            Some(false) => {}
        }
        r
    }
}

/// One line of the risk picture: a plan step or a referenced entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRisk {
    pub id: String,
    pub calls: Option<String>,
    /// The engine-defined level, shown to people, never used for policy.
    pub risk: Option<String>,
    pub hints: Hints,
    /// Where the step sits (`then of branch b`, `loop l`), for display.
    pub place: Option<String>,
}

/// What the risk decision rests on.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    Plan,
    References,
    Nothing(String),
}

/// The gate's view of one validated program.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub basis: Basis,
    pub hints: Hints,
    pub max_risk: Option<String>,
    pub items: Vec<ItemRisk>,
    /// Why approval is required; empty when it is not.
    pub reasons: Vec<String>,
}

impl Assessment {
    pub fn requires_approval(&self) -> bool {
        !self.reasons.is_empty()
    }

    /// From a plan: `max_risk_hints` decides. The steps' own aggregate is
    /// folded in as well, so a plan whose summary understates its steps
    /// cannot lower the bar.
    pub fn from_plan(plan: &Value) -> Assessment {
        let steps = plan.get("steps").and_then(Value::as_array);
        let items: Vec<ItemRisk> = steps
            .map(|s| s.iter().map(plan_item).collect())
            .unwrap_or_default();
        let mut hints = Hints::parse(plan.get("max_risk_hints"));
        for i in &items {
            hints = hints.max(i.hints);
        }
        let mut reasons = hints.reasons();
        if steps.is_none() {
            reasons.push("the plan has no steps array (treated as risky)".into());
        }
        Assessment {
            basis: Basis::Plan,
            hints,
            max_risk: plan
                .get("max_risk")
                .and_then(Value::as_str)
                .map(str::to_string),
            items,
            reasons,
        }
    }

    /// Without a plan: the aggregate of the server-provided references'
    /// catalog entries. `None` is an entry the Host could not look up.
    pub fn from_references(entries: &[(String, Option<Value>)]) -> Assessment {
        let mut hints = Hints::NONE;
        let mut items = Vec::new();
        for (id, entry) in entries {
            let h = Hints::parse(entry.as_ref().and_then(|e| e.get("risk_hints")));
            hints = hints.max(h);
            items.push(ItemRisk {
                id: id.clone(),
                calls: Some(id.clone()),
                risk: entry
                    .as_ref()
                    .and_then(|e| e.get("risk"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                hints: h,
                place: entry.is_none().then(|| {
                    "not in the catalog, or the lookup failed: treated as risky".to_string()
                }),
            });
        }
        Assessment {
            basis: Basis::References,
            reasons: hints.reasons(),
            hints,
            max_risk: None,
            items,
        }
    }

    /// Nothing known: every execution needs approval.
    pub fn nothing_known(why: &str) -> Assessment {
        Assessment {
            basis: Basis::Nothing(why.to_string()),
            hints: Hints::UNKNOWN,
            max_risk: None,
            items: Vec::new(),
            reasons: vec![format!("no risk information: {why}")],
        }
    }
}

fn plan_item(step: &Value) -> ItemRisk {
    let s = |k: &str| step.get(k).and_then(Value::as_str).map(str::to_string);
    let place = match (step.get("arm"), s("loop")) {
        (Some(arm), _) => Some(format!(
            "arm {} of branch {}",
            arm.get("label").and_then(Value::as_str).unwrap_or("?"),
            arm.get("branch").and_then(Value::as_str).unwrap_or("?")
        )),
        (None, Some(l)) => Some(format!("in loop {l}")),
        _ => None,
    };
    ItemRisk {
        id: s("id").unwrap_or_else(|| "?".into()),
        calls: s("calls"),
        risk: s("risk"),
        hints: Hints::parse(step.get("risk_hints")),
        place,
    }
}

/// The outcome of asking for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Granted outside the Model: by a standing Host policy (`--approve`) or
    /// by a person at a terminal.
    Granted(String),
    /// Not granted; the execute request is not transmitted.
    Refused(String),
}

/// What an approver is shown.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    pub language: &'a str,
    pub program: &'a Value,
    pub assessment: &'a Assessment,
}

/// A source of approval outside the Model.
pub trait Approver {
    fn approve(&mut self, request: &ApprovalRequest<'_>) -> Approval;
}

/// The standing policy given on the command line (`--approve`).
pub struct PolicyApproval;

impl Approver for PolicyApproval {
    fn approve(&mut self, _request: &ApprovalRequest<'_>) -> Approval {
        Approval::Granted("--approve (Host policy given on the command line)".into())
    }
}

/// No one to ask: refuse.
pub struct NoApprover(pub String);

impl Approver for NoApprover {
    fn approve(&mut self, _request: &ApprovalRequest<'_>) -> Approval {
        Approval::Refused(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn destructive_or_open_world_plans_need_approval() {
        let plan = json!({"steps": [], "max_risk": "destructive",
            "max_risk_hints": {"readOnly": false, "destructive": true, "openWorld": false}});
        let a = Assessment::from_plan(&plan);
        assert!(a.requires_approval());
        assert_eq!(a.reasons, vec!["destructive: true".to_string()]);

        let plan = json!({"steps": [], "max_risk_hints": {"readOnly": false, "destructive": false, "openWorld": true}});
        assert!(Assessment::from_plan(&plan).requires_approval());

        let plan = json!({"steps": [], "max_risk_hints": {"readOnly": false, "destructive": false, "openWorld": false}});
        assert!(!Assessment::from_plan(&plan).requires_approval());
    }

    #[test]
    fn missing_risk_information_is_risky() {
        let a = Assessment::from_plan(&json!({"steps": []}));
        assert!(a.requires_approval());
        let a = Assessment::from_plan(&json!({"steps": [],
            "max_risk_hints": {"readOnly": true, "destructive": false}}));
        assert!(a.requires_approval(), "openWorld not stated");
        assert!(Assessment::nothing_known("no plan").requires_approval());
    }

    #[test]
    fn a_step_riskier_than_the_summary_raises_the_bar() {
        let plan = json!({"max_risk_hints": {"readOnly": true, "destructive": false, "openWorld": false},
            "steps": [{"id": "d", "calls": "crm.delete_customer", "risk": "destructive",
                "risk_hints": {"readOnly": false, "destructive": true, "openWorld": false}}]});
        let a = Assessment::from_plan(&plan);
        assert_eq!(a.hints.destructive, Some(true));
        assert!(a.requires_approval());
    }

    #[test]
    fn references_aggregate_and_unknown_entries_fail_closed() {
        let safe = json!({"risk": "safe", "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false}});
        let mail = json!({"risk": "external", "risk_hints": {"readOnly": false, "destructive": false, "openWorld": true}});
        let a = Assessment::from_references(&[("a".into(), Some(safe.clone()))]);
        assert!(!a.requires_approval());
        assert_eq!(a.hints, Hints::NONE);
        let a = Assessment::from_references(&[
            ("a".into(), Some(safe.clone())),
            ("m".into(), Some(mail)),
        ]);
        assert!(a.requires_approval());
        assert_eq!(a.hints.read_only, Some(false));
        let a = Assessment::from_references(&[("a".into(), Some(safe)), ("x".into(), None)]);
        assert!(
            a.requires_approval(),
            "an entry that could not be looked up is risky"
        );
    }

    #[test]
    fn hint_maximum_follows_the_aggregation_rule() {
        let ro = Hints::NONE;
        let write = Hints {
            read_only: Some(false),
            destructive: Some(false),
            open_world: Some(false),
        };
        assert_eq!(ro.max(write), write);
        assert_eq!(ro.max(Hints::UNKNOWN), Hints::UNKNOWN);
        let d = Hints {
            read_only: Some(false),
            destructive: Some(true),
            open_world: None,
        };
        assert_eq!(Hints::UNKNOWN.max(d).destructive, Some(true));
        assert_eq!(Hints::UNKNOWN.max(d).read_only, Some(false));
    }
}
