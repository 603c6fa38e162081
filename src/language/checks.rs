//! Gateway-native checks, run before the engine is called:
//! validation bounds (Part II §10.1, a `bounds_exceeded` request error),
//! reserved characters in step ids (Part II §3.4), names the caller cannot see
//! (Part II §6.3, identical to unknown ones), and JSON Schema binding of
//! `context` and `input` (Part II §6.4, §6.5.5).

use super::program::{StepInfo, depth};
use crate::classify::{Diagnostic, Severity};
use crate::config::language::Bounds;
use crate::pilotage::RequestError;
use serde_json::Value;

/// Checks the bounds of a program value before anything else looks at it.
pub fn bounds(program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
    let d = depth(program);
    if d > bounds.max_depth {
        return Err(RequestError::bounds(format!(
            "program nesting depth {d} exceeds the bound of {}",
            bounds.max_depth
        )));
    }
    let size = program.to_string().len();
    if size > bounds.max_program_bytes {
        return Err(RequestError::bounds(format!(
            "program size {size} bytes exceeds the bound of {} bytes",
            bounds.max_program_bytes
        )));
    }
    Ok(())
}

/// Step-count bound, counted over the walked steps.
pub fn step_count(steps: &[StepInfo], bounds: &Bounds) -> Result<(), RequestError> {
    if steps.len() > bounds.max_steps {
        return Err(RequestError::bounds(format!(
            "program has {} steps; the bound is {}",
            steps.len(),
            bounds.max_steps
        )));
    }
    Ok(())
}

/// `#` and `/` are reserved for trace identity.
pub fn reserved_ids(steps: &[StepInfo]) -> Vec<Diagnostic> {
    steps
        .iter()
        .filter_map(|s| {
            let id = s.id.as_ref()?;
            (id.contains('#') || id.contains('/')).then(|| Diagnostic {
                severity: Severity::Error,
                code: "reserved_character".into(),
                path: format!("{}/id", s.pointer),
                message: format!(
                    "step id '{id}' contains a reserved character ('#' and '/' are reserved for trace identity)"
                ),
                hint: Some(format!(
                    "rename the step, e.g. '{}'",
                    id.replace(['#', '/'], "_")
                )),
            })
        })
        .collect()
}

/// The diagnostic for a capability the caller cannot see: the same whether it
/// exists for someone else or nowhere, and hints name only visible entries.
pub fn unknown_capability(step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
    let close = crate::classify::close_matches(name, visible);
    Diagnostic {
        severity: Severity::Error,
        code: "unknown_capability".into(),
        path: format!("{}/capability", step.pointer),
        message: format!("unknown capability '{name}'"),
        hint: (!close.is_empty()).then(|| format!("close match: {}", close.join(", "))),
    }
}

/// JSON Schema binding of a request value; every violation becomes a
/// diagnostic whose path points into that value.
pub fn bind(
    validator: &jsonschema::Validator,
    value: &Value,
    code: &str,
    what: &str,
) -> Vec<Diagnostic> {
    validator
        .iter_errors(value)
        .map(|e| Diagnostic {
            severity: Severity::Error,
            code: code.into(),
            path: e.instance_path().to_string(),
            message: format!("{what} does not match its schema: {e}"),
            hint: None,
        })
        .collect()
}

/// A single binding diagnostic at the root of the value.
pub fn binding_root(code: &str, message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        code: code.into(),
        path: String::new(),
        message,
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounds_by_depth() {
        let b = Bounds {
            max_depth: 3,
            max_steps: 2,
            max_program_bytes: 1000,
        };
        assert!(bounds(&json!({"a": {"b": {}}}), &b).is_ok());
        assert!(bounds(&json!({"a": {"b": {"c": {}}}}), &b).is_err());
    }
}
