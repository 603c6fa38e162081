//! The validate response (Part II §6.4): validity, diagnostics, the catalog
//! version judged against, and the plan (or, for a language without plans,
//! the capabilities referenced), with the tool's one-line summary. Both are
//! written once per verdict and kept with it, so a repeated program's answer
//! is neither rebuilt nor serialised again.

use crate::classify::Diagnostic;
use crate::gateway::LanguageRuntime;
use crate::languages::StepInfo;
use crate::mcp::answer::Rendered;
use serde_json::{Value, json};
use std::sync::Arc;

/// The validate tool's structured answer and its summary line.
#[derive(Debug)]
pub struct Response {
    pub answer: Arc<Rendered>,
    pub summary: String,
}

impl Response {
    /// The response to a verdict of `valid` with `diagnostics` and `plan`,
    /// judged against `catalog_version`.
    pub fn new(
        lang: &LanguageRuntime,
        valid: bool,
        diagnostics: &[Diagnostic],
        plan: Option<Value>,
        steps: &[StepInfo],
        catalog_version: &str,
    ) -> Self {
        let summary = summary(valid, diagnostics.len(), plan.as_ref());
        let mut out = json!({
            "valid": valid,
            "diagnostics": diagnostics,
            "catalog_version": catalog_version,
        });
        if let Some(plan) = plan {
            out["plan"] = plan;
        } else if valid && !lang.config.capabilities.plan {
            let refs: Vec<&str> = steps
                .iter()
                .filter_map(|s| s.capability.as_deref())
                .collect();
            out["references"] = json!(refs);
        }
        Self {
            answer: Rendered::new(out),
            summary,
        }
    }

    /// Estimated heap bytes (the verdict cache's weigher).
    pub fn weight(&self) -> u64 {
        self.answer.weight() + crate::weigh::text(&self.summary)
    }
}

fn summary(valid: bool, diagnostics: usize, plan: Option<&Value>) -> String {
    if valid {
        let risk = plan
            .and_then(|p| p.get("max_risk"))
            .and_then(|r| r.as_str())
            .unwrap_or("unknown");
        if diagnostics == 0 {
            format!("valid: max risk {risk}")
        } else {
            format!("valid with {diagnostics} warning(s): max risk {risk}")
        }
    } else {
        let n = diagnostics;
        format!("invalid: {n} diagnostic{}", if n == 1 { "" } else { "s" })
    }
}
