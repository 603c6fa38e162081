//! An action's `input` string (`url, method="GET", params=null`) as a JSON
//! Schema: parameters split at top-level commas (outside strings and
//! brackets, since defaults are JSON literals that may hold commas), a bare
//! name required, `name=VALUE` optional with the JSON-decoded default, and
//! no other property allowed (Mistral refuses unexpected inputs at run time).

use serde_json::{Map, Value, json};

/// The JSON Schema of an action input spec.
pub fn schema(spec: &str) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut open = false;
    for part in split_top_level(spec) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        // `**kwargs` takes any further input; `*args` cannot be named.
        if part.starts_with('*') {
            open |= part.starts_with("**");
            continue;
        }
        match part.split_once('=') {
            Some((name, default)) => {
                let default = default.trim();
                let value = serde_json::from_str(default)
                    .unwrap_or_else(|_| Value::String(default.to_string()));
                properties.insert(name.trim().to_string(), json!({ "default": value }));
            }
            None => {
                properties.insert(part.to_string(), json!({}));
                required.push(Value::String(part.to_string()));
            }
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(open));
    Value::Object(schema)
}

/// `spec` cut at the commas outside quotes and brackets.
fn split_top_level(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in spec.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&spec[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_are_required_and_defaults_are_json() {
        assert_eq!(
            schema("url, method=\"GET\", params=null, verify=false, delay=0"),
            json!({
                "type": "object",
                "properties": {
                    "url": {},
                    "method": {"default": "GET"},
                    "params": {"default": null},
                    "verify": {"default": false},
                    "delay": {"default": 0}
                },
                "required": ["url"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn an_empty_spec_takes_no_input() {
        assert_eq!(
            schema(""),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[test]
    fn commas_inside_strings_and_brackets_do_not_split() {
        let s = schema(
            r#"plain, opts={"a": [1, "x,y"], "b": null}, quoted="say \"hi\", then go", flag=true, ratio=0.5, empty=[], text="two words""#,
        );
        assert_eq!(s["required"], json!(["plain"]));
        let p = &s["properties"];
        assert_eq!(p["opts"]["default"], json!({"a": [1, "x,y"], "b": null}));
        assert_eq!(p["quoted"]["default"], json!("say \"hi\", then go"));
        assert_eq!(p["flag"]["default"], json!(true));
        assert_eq!(p["ratio"]["default"], json!(0.5));
        assert_eq!(p["empty"]["default"], json!([]));
        assert_eq!(p["text"]["default"], json!("two words"));
        assert_eq!(p.as_object().unwrap().len(), 7);
    }

    #[test]
    fn keyword_arguments_open_the_schema() {
        let s = schema("cmd, **kwargs");
        assert_eq!(s["additionalProperties"], json!(true));
        assert_eq!(s["properties"].as_object().unwrap().len(), 1);
    }

    #[test]
    fn a_default_that_is_not_json_stays_text() {
        assert_eq!(
            schema("mode=fast")["properties"]["mode"]["default"],
            json!("fast")
        );
    }
}
