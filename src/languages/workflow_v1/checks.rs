//! Gateway-native checks, run before the engine is called:
//! validation bounds (Part II §10.1, a `bounds_exceeded` request error),
//! reserved characters in step ids (Part II §3.4), names the caller cannot see
//! (Part II §6.3, identical to unknown ones).

use super::program::{StepInfo, depth, shape};
use crate::classify::{Diagnostic, Severity};
use crate::config::language::Bounds;
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
    if let Err(size) = serialized_size_within(program, bounds.max_program_bytes) {
        return Err(RequestError::bounds(format!(
            "program size {size} bytes exceeds the bound of {} bytes",
            bounds.max_program_bytes
        )));
    }
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

/// `Ok` when the compact JSON of `value` fits in `limit` bytes; otherwise
/// `Err` with the bytes counted before the count stopped (just above the
/// limit, or the whole size). Counting stops early, so an oversized value is
/// never written out in full.
pub fn serialized_size_within(value: &Value, limit: usize) -> Result<(), usize> {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, limit };
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => Ok(()),
        Err(_) => Err(counter.bytes),
    }
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
        assert_eq!(serialized_size_within(&json!({"a": 1}), 7), Ok(()));
        assert!(serialized_size_within(&json!({"a": 1}), 6).is_err());
    }
}
