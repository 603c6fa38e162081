//! Dotted paths into an engine's JSON (`stats.calls`), as every mapping
//! names the fields it reads, and the text of a scalar value as the value
//! tables see it.

use serde_json::Value;

/// Reads a dotted path (`stats.calls`) out of a JSON value.
pub fn pick<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| v.get(key))
}

/// Like `pick`, but an empty path means "the engine has no such field".
pub fn pick_field<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        None
    } else {
        pick(value, path)
    }
}

/// The text of a scalar engine value as value tables see it.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}
