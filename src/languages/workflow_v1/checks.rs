//! Gateway-native checks, run before the engine is called:
//! validation bounds (Part II §10.1, a `bounds_exceeded` request error),
//! reserved characters in step ids (Part II §3.4), names the caller cannot see
//! (Part II §6.3, identical to unknown ones).

use super::program::{depth, shape};
use crate::classify::{Diagnostic, Severity};
use crate::config::language::Bounds;
use crate::languages::steps::StepInfo;
use crate::languages::steps::bounds::program_size;
use crate::languages::steps::diagnostics;
use crate::pilotage::RequestError;
use serde_json::Value;

/// Checks every bound of a program value before anything else looks at it,
/// cheapest first, without building anything per step: nesting depth (so the
/// later walks are shallow), serialized size (counted, not written out),
/// then step count and step-id length.
pub fn bounds(program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
    let d = depth(program);
    if d > bounds.max_depth {
        return Err(RequestError::bounds(format!(
            "program nesting depth {d} exceeds the bound of {}",
            bounds.max_depth
        )));
    }
    program_size(program, bounds.max_program_bytes)?;
    let found = shape(program);
    if found.steps > bounds.max_steps {
        return Err(RequestError::bounds(format!(
            "program has {} steps; the bound is {}",
            found.steps, bounds.max_steps
        )));
    }
    if found.longest_id > bounds.max_id_bytes {
        return Err(RequestError::bounds(format!(
            "a step id is {} bytes long; the bound is {} bytes",
            found.longest_id, bounds.max_id_bytes
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

/// The diagnostic for a capability the caller cannot see, located at the
/// step's `capability` member.
pub fn unknown_capability(step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
    diagnostics::unknown_capability(
        format!("{}/capability", step.pointer),
        "capability",
        name,
        visible,
    )
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
            max_id_bytes: 4,
        };
        assert!(bounds(&json!({"a": {"b": {}}}), &b).is_ok());
        assert!(bounds(&json!({"a": {"b": {"c": {}}}}), &b).is_err());
    }

    #[test]
    fn bounds_by_size_steps_and_id_length() {
        let b = Bounds {
            max_depth: 32,
            max_steps: 2,
            max_program_bytes: 150,
            max_id_bytes: 4,
        };
        let step = |id: &str| json!({"id": id, "kind": "set", "value": 1});
        assert!(bounds(&json!({"steps": [step("abcd"), step("b")]}), &b).is_ok());
        let long_id = bounds(&json!({"steps": [step("abcde")]}), &b);
        assert!(long_id.is_err_and(|e| e.message.contains("step id is 5 bytes")));
        let many = bounds(&json!({"steps": [step("a"), step("b"), step("c")]}), &b);
        assert!(many.is_err_and(|e| e.message.contains("3 steps")));
        let big = bounds(&json!({"name": "x".repeat(200)}), &b);
        assert!(big.is_err_and(|e| e.message.contains("exceeds the bound of 150 bytes")));
    }
}
