//! Gateway-native checks for what Mistral's validator lets through
//! (docs/mistral.md, "Let through by the validator"): each of these passes
//! `POST /v2/workflows/validate` and fails, or silently changes the
//! program, only when the task is reached, after earlier tasks ran.
//!
//! Every finding is located at a range of the actual text. The checks only
//! report what is certain from the document and the caller's catalog;
//! whatever depends on run-time values is left alone.
//!
//! One file per kind of finding: the document's form ([`form`]), task names
//! and transitions ([`tasks`]), action inputs ([`inputs`]) and variables
//! ([`variables`]).

mod form;
mod inputs;
mod tasks;
#[cfg(test)]
mod tests;
mod variables;

pub use form::{structure, unreadable};
pub use inputs::{action_inputs, dropped_parameters};
pub use tasks::{duplicate_tasks, generated_id_clashes, reserved_names, unknown_tasks};
pub use variables::undefined_variables;

use super::workflow::Document;
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use crate::languages::steps::{StepInfo, diagnostics};
use crate::pilotage::text_range::TextRange;

/// An error finding located at `at`.
pub(super) fn error(
    code: &str,
    at: TextRange,
    message: String,
    hint: Option<String>,
) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        code: code.into(),
        path: at.encode(),
        message,
        hint,
    }
}

/// Every native finding on `doc`, in document order per check.
pub fn all(doc: &Document, catalog: &CatalogView) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    out.extend(structure(doc));
    let Some(wf) = doc.workflows.first() else {
        return out;
    };
    out.extend(reserved_names(wf));
    out.extend(generated_id_clashes(wf));
    out.extend(duplicate_tasks(wf));
    out.extend(unknown_tasks(wf));
    out.extend(dropped_parameters(wf));
    out.extend(action_inputs(wf, &|name| {
        inputs::visible_input_schema(catalog, name)
    }));
    out.extend(undefined_variables(wf));
    out
}

/// The diagnostic for an action or sub-workflow the caller cannot see,
/// located at the task.
pub fn unknown_capability(step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
    diagnostics::unknown_capability(step.pointer.clone(), "action or workflow", name, visible)
}
