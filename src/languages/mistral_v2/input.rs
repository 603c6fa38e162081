//! The JSON Schema of a workflow's `input` list (Part II §6.5.5): each
//! name a property, a name without a default required, a default kept as
//! `default`; nothing else accepted, as Mistral refuses unexpected inputs
//! (`Invalid input [..., unexpected=[...]]`).

use super::workflow::Workflow;
use serde_json::{Map, Value, json};

/// The schema an execution's `input` binds against.
pub fn schema(workflow: &Workflow) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in &workflow.inputs {
        let mut prop = Map::new();
        match &p.default {
            Some(d) => {
                prop.insert("default".into(), d.clone());
            }
            None => required.push(Value::String(p.name.clone())),
        }
        properties.insert(p.name.clone(), Value::Object(prop));
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::workflow::read;
    use super::*;

    #[test]
    fn no_default_is_required_and_nothing_else_is_accepted() {
        let doc = read("version: '2.0'\nwf:\n  input:\n    - name\n    - punct: '!'\n    - n: null\n  tasks:\n    t: {action: std.noop}\n").unwrap();
        let s = schema(&doc.workflows[0]);
        assert_eq!(
            s,
            json!({"type": "object",
                "properties": {"name": {}, "punct": {"default": "!"}, "n": {"default": null}},
                "required": ["name"], "additionalProperties": false})
        );
        let v = jsonschema::validator_for(&s).unwrap();
        assert!(v.is_valid(&json!({"name": "x"})));
        assert!(!v.is_valid(&json!({})));
        assert!(!v.is_valid(&json!({"name": "x", "other": 1})));
    }
}
