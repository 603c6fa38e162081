//! JSON Schema binding of request values (`context`, `input`; Part II §6.4,
//! §6.5.5): the same for every language, so it lives beside the trait.

use crate::classify::{Diagnostic, Severity};
use serde_json::Value;

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
