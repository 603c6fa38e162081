//! Small helpers over JSON values shared by the validator and the runner: the type
//! names used in messages, how a value is quoted in a message, and how big a value is.

use serde_json::Value;

/// The type name the engine prints in messages
/// (`integer`, `number`, `string`, `boolean`, `object`, `array`, `null`).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// How a value appears inside quotes in a message: strings verbatim, the rest as
/// compact JSON.
pub fn quote(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Roughly how many bytes the value takes when serialized, or `None` when it is
/// nested deeper than `max_depth`. Used to bound what a run may produce; it never
/// recurses deeper than `max_depth + 1`, so a pathological value cannot overflow the
/// stack while being measured.
pub fn measure(value: &Value, max_depth: usize) -> Option<usize> {
    fn go(value: &Value, depth: usize, max_depth: usize) -> Option<usize> {
        if depth > max_depth {
            return None;
        }
        Some(match value {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => 12,
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                let mut total = 2;
                for item in items {
                    total += go(item, depth + 1, max_depth)? + 1;
                }
                total
            }
            Value::Object(map) => {
                let mut total = 2;
                for (key, item) in map {
                    total += key.len() + 4 + go(item, depth + 1, max_depth)?;
                }
                total
            }
        })
    }
    go(value, 1, max_depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_types_like_the_messages_do() {
        assert_eq!(type_name(&json!(1)), "integer");
        assert_eq!(type_name(&json!(1.5)), "number");
        assert_eq!(type_name(&json!("x")), "string");
        assert_eq!(type_name(&json!(null)), "null");
        assert_eq!(quote(&json!("gold")), "gold");
        assert_eq!(quote(&json!(12)), "12");
    }

    #[test]
    fn measure_stops_at_the_depth_limit() {
        assert!(measure(&json!({"a": [1, 2]}), 3).is_some());
        assert!(measure(&json!([[[[1]]]]), 3).is_none());
    }
}
