//! The validate response (Part II §6.4): validity, diagnostics, the catalog
//! version judged against, and the plan (or, for a language without plans,
//! the capabilities referenced).

use super::Verdict;
use crate::catalog::CatalogView;
use crate::gateway::LanguageRuntime;
use serde_json::{Value, json};

/// The validate response (Part II §6.4).
pub fn response(lang: &LanguageRuntime, verdict: &Verdict, view: &CatalogView) -> Value {
    let mut out = json!({
        "valid": verdict.valid,
        "diagnostics": verdict.diagnostics,
        "catalog_version": view.version,
    });
    if let Some(plan) = &verdict.plan {
        out["plan"] = plan.clone();
    } else if verdict.valid && !lang.config.capabilities.plan {
        let refs: Vec<&str> = verdict
            .steps
            .iter()
            .filter_map(|s| s.capability.as_deref())
            .collect();
        out["references"] = json!(refs);
    }
    out
}
