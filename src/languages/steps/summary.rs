//! A `full` trace cut down to level `summary` (Part II §5.8), the same for
//! every language: inputs dropped, long outputs truncated per the
//! closed-sets guide.

use serde_json::Value;

/// Largest output kept whole in a summary trace.
pub const SUMMARY_OUTPUT_LIMIT: usize = 256;
/// Bytes of JSON kept when an output is cut.
pub const SUMMARY_OUTPUT_KEEP: usize = 200;

/// Lowers a `full` trace's steps to `summary`: no inputs, outputs truncated.
pub fn summarize(steps: &[Value]) -> Vec<Value> {
    steps
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if let Some(obj) = s.as_object_mut() {
                obj.remove("input");
                if let Some(output) = obj.get_mut("output") {
                    *output = truncate_output(output);
                }
            }
            s
        })
        .collect()
}

/// `<first 200 bytes of the compact JSON>…(+N bytes)` when longer than 256.
pub fn truncate_output(output: &Value) -> Value {
    let text = output.to_string();
    if text.len() <= SUMMARY_OUTPUT_LIMIT {
        return output.clone();
    }
    let mut cut = SUMMARY_OUTPUT_KEEP;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Value::String(format!("{}…(+{} bytes)", &text[..cut], text.len() - cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_truncates_long_outputs() {
        let long = json!({"s": "x".repeat(300)});
        let cut = truncate_output(&long);
        let s = cut.as_str().unwrap();
        assert!(s.ends_with("…(+108 bytes)"), "{s}");
        assert_eq!(truncate_output(&json!({"a": 1})), json!({"a": 1}));
        let summary = summarize(&[json!({"id": "a", "input": {"x": 1}, "output": long})]);
        assert_eq!(summary[0].get("input"), None);
        assert_eq!(summary[0]["output"], cut);
    }
}
