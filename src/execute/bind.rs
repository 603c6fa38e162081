//! Step 4 of execute (Part II §6.5.5): the input binds to the program's input
//! schema, and a promoted program's context to the language's context schema.

use super::record::refuse;
use super::{Exec, Halt};
use crate::classify::Diagnostic;
use crate::languages::binding;
use crate::pilotage::RunStatus;
use crate::validate;
use serde_json::{Value, json};

pub(super) fn binds(ex: &Exec<'_>, program: &Value) -> Result<(), Halt> {
    let record = ex.checked.program_record.as_ref();
    // Installing binds no input: the body runs later, with its own.
    let mut findings = if ex.checked.installs() {
        Vec::new()
    } else {
        input_findings(ex, program, record, &run_input(ex))
    };
    if record.is_some() {
        findings.extend(validate::context_findings(ex.lang, ex.req.context.as_ref()));
    }
    if findings.is_empty() {
        return Ok(());
    }
    Err(refuse(
        ex,
        RunStatus::ValidationError,
        "input or context does not bind; nothing was executed",
        Some(&findings),
    ))
}

/// The run's input; an absent one is the empty object.
pub(super) fn run_input(ex: &Exec<'_>) -> Value {
    ex.req.input.clone().unwrap_or_else(|| json!({}))
}

/// A promoted program binds against its entry's `input_schema`; an inline one
/// against the workflow's own `input` schema (the convention the closed-sets
/// guide documents).
fn input_findings(
    ex: &Exec<'_>,
    program: &Value,
    record: Option<&Value>,
    input: &Value,
) -> Vec<Diagnostic> {
    let schema = match record {
        Some(r) => r.get("entry").and_then(|e| e.get("input_schema")).cloned(),
        None => ex.lang.language.input_schema(program),
    };
    let Some(schema) = schema else {
        return Vec::new();
    };
    match ex.gw.input_schemas.compiled(&schema).as_ref() {
        Ok(v) => binding::bind(v, input, "input_binding", "input"),
        Err(e) => vec![binding::binding_root(
            "input_binding",
            format!("the program's input schema is not a valid JSON Schema: {e}"),
        )],
    }
}
