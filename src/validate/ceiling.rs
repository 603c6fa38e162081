//! The risk-ceiling finding (a gateway-native check): a step calling a
//! capability above the principal's ceiling is refused before the engine is
//! asked, so execute never starts it, whatever the Host's own gate does.

use crate::auth::policy::RiskCeiling;
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use crate::languages::StepInfo;

/// Steps whose risk is above the principal's ceiling (a gateway-native
/// check, so execute refuses such a program before any side effect, whatever
/// the Host's own gate does). Risk is judged from the step's `risk_hints`.
pub fn ceiling_findings(
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
            let why = ceiling.breach(view.capability_risk(cap)?)?;
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
