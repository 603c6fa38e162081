//! Reading handler arguments. Arguments were checked against the params schema
//! before the call, but an admin may have loosened that schema, so handlers still
//! fail politely instead of assuming.

use serde_json::Value;

/// A required string argument.
pub fn text<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("parameter '{key}' must be a string"))
}

/// An optional string argument.
pub fn optional_text<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(args, key).map(Some),
    }
}

/// A required integer argument.
pub fn integer(args: &Value, key: &str) -> Result<i64, String> {
    args.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("parameter '{key}' must be an integer"))
}
