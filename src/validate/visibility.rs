//! Names the caller cannot see (Part II §6.3): a step calling one is
//! reported by the gateway itself, and whatever the engine says under that
//! step is dropped, so "unknown" and "not enabled for this tenant" can
//! never be told apart.

use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::languages::{Language, StepInfo};

/// The steps calling a capability outside the caller's view.
pub struct HiddenSteps {
    /// One `unknown_capability` finding per such step.
    pub findings: Vec<Diagnostic>,
    /// Their locators.
    locators: Vec<String>,
}

impl HiddenSteps {
    pub fn find(language: &dyn Language, steps: &[StepInfo], view: &CatalogView) -> Self {
        let visible = view.callable_names();
        let mut out = HiddenSteps {
            findings: Vec::new(),
            locators: Vec::new(),
        };
        for step in steps {
            if let Some(cap) = &step.capability
                && view.capability_risk(cap).is_none()
            {
                out.findings
                    .push(language.unknown_capability(step, cap, &visible));
                out.locators.push(step.pointer.clone());
            }
        }
        out
    }

    /// Whether a finding at `path` lies under one of these steps.
    pub fn cover(&self, path: &str) -> bool {
        self.locators
            .iter()
            .any(|p| path == *p || path.starts_with(&format!("{p}/")))
    }
}
