//! The tenant's own workflows as catalog entries, so a `workflow:` task can
//! call them: `GET /v2/workflows` (its `next` link works, unlike the
//! actions'), each workflow's `interface.input` (a JSON list of names and
//! one-entry `{name: default}` objects; its `input` string is not JSON) as
//! the input schema (it comes as JSON in a string). Gateway-owned workflows (deleted right after their
//! start anyway) are never offered, nor a workflow named like an action.

use super::MistralEngine;
use super::client::{Body, Call};
use super::rename::PREFIX;
use super::risk::effect;
use super::text::decode;
use crate::engines::EngineError;
use serde_json::{Map, Value, json};

impl MistralEngine {
    /// The workflows `tenant` can call, page by page.
    pub(super) async fn workflows(&self, tenant: &str) -> Result<Vec<Value>, EngineError> {
        let limit = self.settings.page_size.max(1);
        // Whole entries, definitions included: with `fields=` Mistral 23
        // drops `interface` and misreads the fields after it.
        let mut path =
            format!("/workflows?limit={limit}&sort_keys=created_at,id&sort_dirs=asc,asc");
        // Name → (the tenant's own, entry): a public workflow of another
        // project may share a name with the tenant's own, which wins.
        let own = super::project(tenant);
        let mut out: std::collections::BTreeMap<String, (bool, Value)> = Default::default();
        for _ in 0..self.settings.max_pages.max(1) {
            let body = self
                .call_json(
                    tenant,
                    Call::get("catalog", &path),
                    Body::None,
                    "listing workflows",
                )
                .await?;
            let Some(page) = body.get("workflows").and_then(Value::as_array) else {
                return Err(EngineError::Failed(
                    "listing workflows: the answer has no 'workflows' array".into(),
                ));
            };
            for w in page {
                let Some(entry) = self.workflow_entry(w) else {
                    continue;
                };
                let mine = w.get("project_id").and_then(Value::as_str) == Some(own.as_str());
                let name = entry["name"].as_str().unwrap_or("").to_string();
                if out.get(&name).is_none_or(|(had_own, _)| mine && !had_own) {
                    out.insert(name, (mine, entry));
                }
            }
            // The next link is absolute; only its path after the base is ours.
            match body
                .get("next")
                .and_then(Value::as_str)
                .and_then(|n| n.find("/workflows?").map(|i| n[i..].to_string()))
            {
                Some(next) if !page.is_empty() && next != path => path = next,
                _ => return Ok(out.into_values().map(|(_, e)| e).collect()),
            }
        }
        Err(EngineError::Failed(format!(
            "listing workflows: more than {} pages of {limit} (engine.mistral.max_pages)",
            self.settings.max_pages
        )))
    }

    fn workflow_entry(&self, workflow: &Value) -> Option<Value> {
        let name = workflow.get("name").and_then(Value::as_str)?;
        if name.starts_with(PREFIX) {
            return None;
        }
        let interface = decode(workflow.get("interface"));
        let mut e = Map::new();
        e.insert("name".into(), json!(name));
        e.insert("input_schema".into(), interface_schema(&interface["input"]));
        if let Some(effect) = effect(&self.settings.risk, name) {
            e.insert("effect".into(), json!(effect));
        }
        let mut tags: Vec<Value> = decode(workflow.get("tags"))
            .as_array()
            .cloned()
            .unwrap_or_default();
        tags.insert(0, json!("workflow"));
        e.insert("tags".into(), Value::Array(tags));
        Some(Value::Object(e))
    }
}

/// The JSON Schema of a workflow's `interface.input`.
pub fn interface_schema(input: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for item in input.as_array().into_iter().flatten() {
        match item {
            Value::String(name) => {
                properties.insert(name.clone(), json!({}));
                required.push(json!(name));
            }
            Value::Object(one) => {
                for (name, default) in one {
                    properties.insert(name.clone(), json!({ "default": default }));
                }
            }
            _ => {}
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_required_and_objects_carry_defaults() {
        assert_eq!(
            interface_schema(&json!(["name", {"punct": "!"}, {"opts": {"a": [1]}}])),
            json!({
                "type": "object",
                "properties": {"name": {}, "punct": {"default": "!"}, "opts": {"default": {"a": [1]}}},
                "required": ["name"],
                "additionalProperties": false
            })
        );
        assert_eq!(
            interface_schema(&Value::Null),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
