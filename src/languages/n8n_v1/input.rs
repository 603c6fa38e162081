//! The JSON Schema of a workflow's input (docs/n8n-v1.md, "Input"): an
//! Execute Workflow Trigger whose `inputSource` is `workflowInputs` (the
//! default from typeVersion 1.1) declares typed fields, and that is the
//! only way an n8n workflow declares what it takes. Every other trigger
//! takes any object, so it declares nothing.

use super::document::{Workflow, trigger_by_name};
use serde_json::{Map, Value, json};

/// The Execute Workflow Trigger: the trigger of a sub-workflow.
const EXECUTE_WORKFLOW_TRIGGER: &str = "n8n-nodes-base.executeWorkflowTrigger";
/// The trigger version from which `inputSource` defaults to `workflowInputs`.
const TYPED_FROM_VERSION: f64 = 1.1;

/// The schema the run's `input` binds against, when the trigger a run
/// starts from declares one.
pub fn schema(wf: &Workflow) -> Option<Value> {
    // The adapter runs from the first enabled trigger; so does this.
    let trigger = wf
        .nodes
        .iter()
        .filter(|n| n.raw.get("disabled").and_then(Value::as_bool) != Some(true))
        .find(|n| trigger_by_name(n.kind))?;
    if trigger.kind != EXECUTE_WORKFLOW_TRIGGER {
        return None;
    }
    let default_source = if trigger.version.unwrap_or(1.0) >= TYPED_FROM_VERSION {
        "workflowInputs"
    } else {
        "passthrough"
    };
    let source = trigger
        .parameter("inputSource")
        .and_then(Value::as_str)
        .unwrap_or(default_source);
    if source != "workflowInputs" {
        return None;
    }
    let mut properties = Map::new();
    let fields = trigger
        .parameter("workflowInputs")
        .and_then(|w| w.get("values"))
        .and_then(Value::as_array);
    for field in fields.into_iter().flatten() {
        let Some(name) = field.get("name").and_then(Value::as_str) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        // n8n's field type defaults to a string; `any` takes every type.
        let kind = field
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        let property = match kind {
            "string" | "number" | "boolean" | "array" | "object" => json!({"type": kind}),
            _ => json!({}),
        };
        properties.insert(name.to_string(), property);
    }
    // None is required: n8n hands a field left out on as null.
    Some(json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trigger(version: f64, parameters: Value) -> Value {
        json!({"nodes": [
            {"name": "Start", "type": EXECUTE_WORKFLOW_TRIGGER, "typeVersion": version,
             "parameters": parameters},
            {"name": "Set", "type": "n8n-nodes-base.set", "typeVersion": 3.4, "parameters": {}}
        ], "connections": {}})
    }

    #[test]
    fn typed_fields_are_the_properties_and_nothing_else_is_accepted() {
        let doc = trigger(
            1.1,
            json!({"workflowInputs": {"values": [
                {"name": "name", "type": "string"},
                {"name": "amount", "type": "number"},
                {"name": "anything", "type": "any"},
                {"name": "plain"}
            ]}}),
        );
        let s = schema(&Workflow::read(&doc)).expect("a schema");
        assert_eq!(
            s,
            json!({"type": "object", "additionalProperties": false, "properties": {
                "name": {"type": "string"}, "amount": {"type": "number"},
                "anything": {}, "plain": {"type": "string"}}})
        );
        let v = jsonschema::validator_for(&s).unwrap();
        assert!(v.is_valid(&json!({})));
        assert!(v.is_valid(&json!({"name": "x", "amount": 2, "anything": [1]})));
        assert!(!v.is_valid(&json!({"name": 5})));
        assert!(!v.is_valid(&json!({"nom": "x"})));
    }

    #[test]
    fn other_triggers_and_sources_declare_nothing() {
        let passthrough = trigger(1.1, json!({"inputSource": "passthrough"}));
        assert_eq!(schema(&Workflow::read(&passthrough)), None);
        // Version 1 has no typed fields: it passes everything through.
        assert_eq!(schema(&Workflow::read(&trigger(1.0, json!({})))), None);
        let manual = json!({"nodes": [
            {"name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1}
        ]});
        assert_eq!(schema(&Workflow::read(&manual)), None);
        // A disabled trigger does not start the run.
        let mut disabled = trigger(1.1, json!({}));
        disabled["nodes"][0]["disabled"] = json!(true);
        assert_eq!(schema(&Workflow::read(&disabled)), None);
    }
}
