//! A node type's `input_schema`: the JSON Schema of its default version's
//! parameters, for the common property types. Any parameter may instead be
//! an expression (`"=..."`, evaluated by n8n at run time), so a value that
//! is not a string also admits one. Properties that only show text in the
//! editor (`notice`) are left out; several properties of one name (they
//! differ by displayOptions) give one schema property, the first.

use serde_json::{Map, Value, json};

/// An expression in place of a value.
fn expression() -> Value {
    json!({"type": "string", "pattern": "^="})
}

fn or_expression(schema: Value) -> Value {
    json!({"anyOf": [schema, expression()]})
}

/// The schema of one property's value.
fn property_schema(p: &Value) -> Option<Value> {
    let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
    let loaded = p
        .get("typeOptions")
        .is_some_and(|t| t.get("loadOptionsMethod").is_some() || t.get("loadOptions").is_some());
    let values: Vec<Value> = p
        .get("options")
        .and_then(Value::as_array)
        .map(|o| o.iter().filter_map(|x| x.get("value").cloned()).collect())
        .unwrap_or_default();
    let mut schema = match kind {
        "notice" | "hidden" | "curlImport" | "button" => return None,
        "string" | "json" | "dateTime" | "color" | "credentialsSelect" => json!({"type": "string"}),
        "number" => or_expression(json!({"type": "number"})),
        "boolean" => or_expression(json!({"type": "boolean"})),
        "options" if !loaded && !values.is_empty() => or_expression(json!({"enum": values})),
        "multiOptions" if !loaded && !values.is_empty() => {
            or_expression(json!({"type": "array", "items": {"enum": values}}))
        }
        "multiOptions" => json!({"type": "array"}),
        "collection" | "fixedCollection" | "filter" | "assignmentCollection" | "resourceMapper" => {
            json!({"type": "object"})
        }
        "resourceLocator" => json!({"type": ["object", "string"]}),
        _ => json!({}),
    };
    let obj = schema.as_object_mut()?;
    if let Some(title) = p.get("displayName").and_then(Value::as_str) {
        obj.insert("title".into(), json!(title));
    }
    if let Some(default) = p.get("default")
        && !default.is_null()
    {
        obj.insert("default".into(), default.clone());
    }
    Some(schema)
}

/// The schema of a description's top-level parameters. Required are the
/// properties n8n requires whatever the other parameters say (no
/// displayOptions) and that have no default to fall back on.
pub fn parameters_schema(properties: &[Value]) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for p in properties {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        if props.contains_key(name) {
            continue;
        }
        let Some(schema) = property_schema(p) else {
            continue;
        };
        props.insert(name.to_string(), schema);
        let always = p.get("displayOptions").is_none();
        let needed = p.get("required").and_then(Value::as_bool) == Some(true);
        let no_default = p
            .get("default")
            .is_none_or(|d| d.is_null() || d.as_str() == Some(""));
        if always && needed && no_default {
            required.push(json!(name));
        }
    }
    let mut schema = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_types_map_to_schemas() {
        let schema = parameters_schema(&[
            json!({"name": "url", "displayName": "URL", "type": "string", "default": "", "required": true}),
            json!({"name": "method", "type": "options", "default": "GET",
                   "options": [{"name": "GET", "value": "GET"}, {"name": "POST", "value": "POST"}]}),
            json!({"name": "amount", "type": "number", "default": 1}),
            json!({"name": "note", "type": "notice", "default": ""}),
            json!({"name": "options", "type": "collection", "default": {}}),
        ]);
        assert_eq!(schema["required"], json!(["url"]));
        assert_eq!(schema["properties"]["url"]["title"], "URL");
        assert_eq!(
            schema["properties"]["method"]["anyOf"][0]["enum"],
            json!(["GET", "POST"])
        );
        assert_eq!(schema["properties"]["amount"]["anyOf"][0]["type"], "number");
        assert!(schema["properties"].get("note").is_none());
        assert_eq!(schema["properties"]["options"]["type"], "object");
    }
}
