//! The risk-ceiling finding (a gateway-native check): a step calling a
//! capability above the principal's ceiling is refused before the engine is
//! asked, so execute never starts it, whatever the Host's own gate does.

use crate::auth::policy::RiskCeiling;
use crate::catalog::CatalogView;
use crate::catalog::risk_when::step_risk;
use crate::classify::{Diagnostic, Severity};
use crate::languages::{Language, StepInfo};
use serde_json::Value;

/// Steps whose risk is above the principal's ceiling (a gateway-native
/// check, so execute refuses such a program before any side effect, whatever
/// the Host's own gate does). Risk is judged as the plan judges it: the
/// capability's `risk_hints`, or those of its first `risk_when` rule the
/// step's parameters match (a reading HTTP Request stays under a ceiling its
/// writing form breaches).
pub fn ceiling_findings(
    language: &dyn Language,
    program: &Value,
    steps: &[StepInfo],
    view: &CatalogView,
    ceiling: &RiskCeiling,
) -> Vec<Diagnostic> {
    if ceiling.is_none() {
        return Vec::new();
    }
    steps
        .iter()
        .filter_map(|step| {
            let cap = step.capability.as_deref()?;
            let parameters = language.step_parameters(program, step);
            let (_, hints) = step_risk(view, cap, parameters)?;
            let why = ceiling.breach(hints)?;
            let id = step.id.as_deref().unwrap_or("?");
            Some(Diagnostic {
                severity: Severity::Error,
                code: RISK_CEILING.into(),
                path: step.pointer.clone(),
                message: format!("step '{id}' calls '{cap}': {why}"),
                hint: Some(
                    "remove or replace this step, or run the program as a caller whose ceiling allows it".into(),
                ),
            })
        })
        .collect()
}

/// The diagnostic code of [`ceiling_findings`] (closed-sets guide).
pub const RISK_CEILING: &str = "risk_ceiling";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::policy::RiskCeiling;
    use crate::languages::n8n_v1::N8nV1;
    use serde_json::json;

    fn workflow(method: Option<&str>) -> Value {
        let parameters = method.map_or(json!({}), |m| json!({"method": m, "url": "http://x"}));
        json!({
            "nodes": [
                {"name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1,
                 "position": [0, 0], "parameters": {}},
                {"name": "Fetch", "type": "n8n-nodes-base.httpRequest", "typeVersion": 4.2,
                 "position": [200, 0], "parameters": parameters}
            ],
            "connections": {"Start": {"main": [[{"node": "Fetch", "type": "main", "index": 0}]]}}
        })
    }

    #[test]
    fn a_step_is_judged_by_the_risk_its_parameters_give_it() {
        let view = CatalogView::from_capabilities(vec![
            json!({"id": "n8n-nodes-base.manualTrigger", "risk": "safe",
                "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false}}),
            json!({"id": "n8n-nodes-base.httpRequest", "risk": "destructive",
                "risk_hints": {"readOnly": false, "destructive": true, "openWorld": true},
                "risk_when": [{"parameter": "method", "default": "GET",
                    "in": ["GET", "HEAD"], "risk": "safe"}]}),
        ]);
        let ceiling = RiskCeiling::parse(Some("safe"), &[]).unwrap();
        let refused = |program: &Value| {
            let steps = N8nV1.steps(program);
            ceiling_findings(&N8nV1, program, &steps, &view, &ceiling)
        };
        // A GET, and a node leaving the method at its default GET, only read.
        assert!(refused(&workflow(Some("GET"))).is_empty());
        assert!(refused(&workflow(None)).is_empty());
        let delete = refused(&workflow(Some("DELETE")));
        assert_eq!(delete.len(), 1, "{delete:?}");
        assert_eq!(delete[0].code, RISK_CEILING);
        assert_eq!(delete[0].path, "/nodes/1");
    }
}
