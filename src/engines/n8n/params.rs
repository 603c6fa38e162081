//! Parameters against a node description: unknown parameters and options,
//! required ones missing or empty, values of the wrong JSON type, values
//! not among a property's options, and inside the nested forms
//! (`collection`, `fixedCollection`, `filter`, `assignmentCollection`).
//! Only properties shown (displayOptions, evaluated with the defaults
//! filled in) are required or checked; a parameter is unknown only when no
//! property of the version has its name, and hidden when every property of
//! its name is certainly hidden (n8n drops it without a word). A value that is an expression
//! (`"=..."`) is n8n's to evaluate at run time and passes.

use super::display::{Scope, shown, why_hidden, with_defaults};
use crate::engines::RawProblem;
use serde_json::{Map, Value};

/// Where a level sits.
pub struct Level<'a> {
    pub node_type: &'a str,
    pub version: f64,
    /// The node's own `parameters` (else inside a collection).
    pub top: bool,
}

/// Parameters n8n needs although their description does not say
/// `required`: (node type, parameter). Empty code fails the run; a Webhook
/// with an empty path can never be called.
const NEEDED: [(&str, &str); 3] = [
    ("n8n-nodes-base.code", "jsCode"),
    ("n8n-nodes-base.code", "pythonCode"),
    ("n8n-nodes-base.webhook", "path"),
];

/// A JSON Pointer reference token.
pub fn token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// `a string`, `a number`, ... of a JSON value.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// What n8n counts as no value for a required parameter (its activation
/// refuses a required `events` list left empty, as a blank string).
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

fn is_expression(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.starts_with('='))
}

/// Checks the parameters `given` at one level against `properties`;
/// answers the level's values with defaults filled in.
pub fn check_level(
    properties: &[Value],
    given: &Map<String, Value>,
    root: Option<&Map<String, Value>>,
    level: &Level<'_>,
    pointer: &str,
    out: &mut Vec<RawProblem>,
) -> Map<String, Value> {
    let values = with_defaults(properties, given, root, level.version);
    let root_values = root.unwrap_or(&values);
    let scope = Scope {
        level: &values,
        root: root_values,
        version: level.version,
    };
    for name in given.keys() {
        let definitions: Vec<&Value> = properties
            .iter()
            .filter(|p| p.get("name").and_then(Value::as_str) == Some(name))
            .collect();
        // A name defined several times is shown when any definition is.
        let hidden: Option<Vec<String>> = definitions
            .iter()
            .map(|p| why_hidden(p.get("displayOptions"), &scope))
            .collect();
        if let Some(shows) = hidden.filter(|w| !w.is_empty()) {
            out.push(RawProblem::error_at(
                format!(
                    "parameter '{name}' is hidden by the other settings; it shows with {}",
                    shows.join(", or ")
                ),
                format!("{pointer}/{}", token(name)),
            ));
            continue;
        }
        if definitions.is_empty() {
            let text = if level.top {
                format!(
                    "parameter '{name}' is not a parameter of {} version {}",
                    level.node_type, level.version
                )
            } else {
                format!("option '{name}' is not an option here")
            };
            out.push(RawProblem::error_at(
                text,
                format!("{pointer}/{}", token(name)),
            ));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for p in properties {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        if seen.contains(&name) || !shown(p.get("displayOptions"), &scope) {
            continue;
        }
        seen.push(name);
        let at = format!("{pointer}/{}", token(name));
        let required = p.get("required").and_then(Value::as_bool) == Some(true)
            || (level.top && NEEDED.contains(&(level.node_type, name)));
        match given.get(name) {
            None => {
                let default_empty = p.get("default").is_none_or(is_empty);
                if required && default_empty {
                    out.push(RawProblem::error_at(
                        format!("required parameter '{name}' is missing"),
                        pointer.to_string(),
                    ));
                }
            }
            Some(v) => {
                if required && is_empty(v) {
                    out.push(RawProblem::error_at(
                        format!("required parameter '{name}' is empty"),
                        at,
                    ));
                    continue;
                }
                check_value(p, name, v, &values, root_values, level, &at, out);
            }
        }
    }
    values
}

/// A number against the bounds its description gives
/// (`typeOptions.minValue` / `maxValue`): outside them the node misbehaves
/// (a Loop Over Items of batch size 0 never ends) or fails at run time.
fn check_bounds(p: &Value, name: &str, v: &Value, at: &str, out: &mut Vec<RawProblem>) {
    let (Some(value), Some(options)) = (v.as_f64(), p.get("typeOptions")) else {
        return;
    };
    let bound = |key: &str| options.get(key).and_then(Value::as_f64);
    let text = if let Some(min) = bound("minValue").filter(|min| value < *min) {
        format!("parameter '{name}' value {v} is below its minimum {min}")
    } else if let Some(max) = bound("maxValue").filter(|max| value > *max) {
        format!("parameter '{name}' value {v} is above its maximum {max}")
    } else {
        return;
    };
    out.push(RawProblem::error_at(text, at.to_string()));
}

/// One given value against its property.
#[allow(clippy::too_many_arguments)]
fn check_value(
    p: &Value,
    name: &str,
    v: &Value,
    siblings: &Map<String, Value>,
    root: &Map<String, Value>,
    level: &Level<'_>,
    at: &str,
    out: &mut Vec<RawProblem>,
) {
    if is_expression(v) {
        return;
    }
    let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
    let wrong_type = |expected: &str, out: &mut Vec<RawProblem>| {
        out.push(RawProblem::error_at(
            format!("parameter '{name}' is a {}, not a {expected}", json_type(v)),
            at.to_string(),
        ));
    };
    match kind {
        "string" if !v.is_string() => wrong_type("string", out),
        // The Schedule Trigger's cron rule: `{"field": "cronExpression", "expression"}`.
        "string"
            if name == "expression"
                && siblings.get("field").and_then(Value::as_str) == Some("cronExpression") =>
        {
            let text = v.as_str().unwrap_or("");
            if let Some(why) = super::cron::problem(text) {
                out.push(RawProblem::error_at(
                    format!("cron expression '{text}' is invalid: {why}"),
                    at.to_string(),
                ));
            }
        }
        "number" if !v.is_number() => wrong_type("number", out),
        "number" => check_bounds(p, name, v, at, out),
        "boolean" if !v.is_boolean() => wrong_type("boolean", out),
        "options" => check_option(p, name, v, at, out),
        "multiOptions" => match v.as_array() {
            Some(items) => {
                for (k, item) in items.iter().enumerate() {
                    check_option(p, name, item, &format!("{at}/{k}"), out);
                }
            }
            None => wrong_type("list", out),
        },
        "collection" => match v.as_object() {
            Some(given) => {
                let options = p
                    .get("options")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let inner = Level {
                    top: false,
                    ..*level
                };
                check_level(&options, given, Some(root), &inner, at, out);
            }
            None => wrong_type("object", out),
        },
        "fixedCollection" => match v.as_object() {
            Some(given) => check_fixed(p, given, root, level, at, out),
            None => wrong_type("object", out),
        },
        "filter" => match v.as_object() {
            Some(_) => super::filter::check(v, at, out),
            None => wrong_type("object", out),
        },
        "assignmentCollection" => check_assignments(v, at, out),
        _ => {}
    }
}

/// A value of an `options` property: one of its option values, unless the
/// options are loaded from the engine at edit time.
fn check_option(p: &Value, name: &str, v: &Value, at: &str, out: &mut Vec<RawProblem>) {
    if is_expression(v) {
        return;
    }
    let loaded = p
        .get("typeOptions")
        .is_some_and(|t| t.get("loadOptionsMethod").is_some() || t.get("loadOptions").is_some());
    let Some(options) = p.get("options").and_then(Value::as_array) else {
        return;
    };
    if loaded || options.is_empty() {
        return;
    }
    let allowed: Vec<&Value> = options.iter().filter_map(|o| o.get("value")).collect();
    if allowed.is_empty() || allowed.contains(&v) {
        return;
    }
    let listed: Vec<String> = allowed
        .iter()
        .map(|a| a.to_string().replace('"', "'"))
        .collect();
    out.push(RawProblem::error_at(
        format!(
            "parameter '{name}' value {} is not one of: {}",
            v.to_string().replace('"', "'"),
            listed.join(", ")
        ),
        at.to_string(),
    ));
}

/// A `fixedCollection`: its keys are its options' names; each holds an
/// object of the option's `values`, or a list of them (`multipleValues`).
fn check_fixed(
    p: &Value,
    given: &Map<String, Value>,
    root: &Map<String, Value>,
    level: &Level<'_>,
    at: &str,
    out: &mut Vec<RawProblem>,
) {
    let options = p
        .get("options")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let multiple = p
        .get("typeOptions")
        .and_then(|t| t.get("multipleValues"))
        .and_then(Value::as_bool)
        == Some(true);
    let inner = Level {
        top: false,
        ..*level
    };
    for (key, value) in given {
        let here = format!("{at}/{}", token(key));
        let Some(option) = options
            .iter()
            .find(|o| o.get("name").and_then(Value::as_str) == Some(key))
        else {
            out.push(RawProblem::error_at(
                format!("option '{key}' is not an option here"),
                here,
            ));
            continue;
        };
        let values = option
            .get("values")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match value {
            Value::Array(items) if multiple => {
                for (k, item) in items.iter().enumerate() {
                    if let Some(item) = item.as_object() {
                        check_level(
                            &values,
                            item,
                            Some(root),
                            &inner,
                            &format!("{here}/{k}"),
                            out,
                        );
                    }
                }
            }
            Value::Object(item) => {
                check_level(&values, item, Some(root), &inner, &here, out);
            }
            _ => {}
        }
    }
}

/// A Set's assignments: a value given as text that cannot be of its
/// declared type.
fn check_assignments(v: &Value, at: &str, out: &mut Vec<RawProblem>) {
    let Some(items) = v.get("assignments").and_then(Value::as_array) else {
        return;
    };
    for (k, item) in items.iter().enumerate() {
        let declared = item.get("type").and_then(Value::as_str).unwrap_or("string");
        let Some(text) = item.get("value").and_then(Value::as_str) else {
            continue;
        };
        if text.starts_with('=') {
            continue;
        }
        let fits = match declared {
            "number" => text.trim().parse::<f64>().is_ok(),
            "boolean" => matches!(text.trim(), "true" | "false"),
            "array" => serde_json::from_str::<Value>(text).is_ok_and(|x| x.is_array()),
            "object" => serde_json::from_str::<Value>(text).is_ok_and(|x| x.is_object()),
            _ => true,
        };
        if !fits {
            let field = item.get("name").and_then(Value::as_str).unwrap_or("");
            out.push(RawProblem::error_at(
                format!("field '{field}' is declared a {declared} and given '{text}'"),
                format!("{at}/assignments/{k}/value"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(properties: Value, given: Value) -> Vec<String> {
        let mut out = Vec::new();
        let level = Level {
            node_type: "n8n-nodes-base.x",
            version: 1.0,
            top: true,
        };
        check_level(
            properties.as_array().unwrap(),
            given.as_object().unwrap(),
            None,
            &level,
            "/nodes/0/parameters",
            &mut out,
        );
        out.into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn a_name_defined_twice_is_hidden_only_when_both_are() {
        let properties = json!([
            {"name": "mode", "type": "options", "default": "a",
                "options": [{"value": "a"}, {"value": "b"}, {"value": "c"}]},
            {"name": "size", "type": "number", "default": 1,
                "displayOptions": {"show": {"mode": ["a"]}}},
            {"name": "size", "type": "number", "default": 1,
                "displayOptions": {"show": {"mode": ["b"]}}},
        ]);
        assert!(texts(properties.clone(), json!({"mode": "b", "size": 2})).is_empty());
        assert_eq!(
            texts(properties.clone(), json!({"mode": "c", "size": 2})),
            [
                "parameter 'size' is hidden by the other settings; it shows with mode 'a', or mode 'b'"
            ]
        );
        assert!(texts(properties, json!({"mode": "={{ 'c' }}", "size": 2})).is_empty());
    }
}
