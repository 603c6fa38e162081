//! Typed fields of request bodies. The dialects name their fields differently, so
//! every helper takes the field name and words its error with it.

use serde_json::{Map, Value};

/// A boolean field, false when absent or null.
pub fn flag(body: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("field '{name}' must be a boolean")),
    }
}

/// An optional object field.
pub fn object(body: &Map<String, Value>, name: &str) -> Result<Option<Map<String, Value>>, String> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map.clone())),
        Some(_) => Err(format!("field '{name}' must be an object")),
    }
}

/// An optional positive integer field (milliseconds).
pub fn millis(body: &Map<String, Value>, name: &str) -> Result<Option<u64>, String> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|ms| *ms > 0)
            .map(Some)
            .ok_or_else(|| format!("field '{name}' must be a positive integer")),
    }
}

/// Any field, null when absent.
pub fn any(body: &Map<String, Value>, name: &str) -> Value {
    body.get(name).cloned().unwrap_or(Value::Null)
}

/// The run input: any JSON, an empty object when absent or null.
pub fn input(body: &Map<String, Value>, name: &str) -> Value {
    match body.get(name) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v.clone(),
    }
}
