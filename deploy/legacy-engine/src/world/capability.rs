//! A capability as the engine's registry stores it: name, title, doc, params and
//! returns schemas, effect, tags, the deprecated flag (with an optional replacement
//! named in the deprecation warning) and `updated_at`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What calling a capability does to the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Read,
    Write,
    Delete,
    External,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Delete => "delete",
            Effect::External => "external",
        }
    }

    fn parse(text: &str) -> Option<Effect> {
        Some(match text {
            "read" => Effect::Read,
            "write" => Effect::Write,
            "delete" => Effect::Delete,
            "external" => Effect::External,
            _ => return None,
        })
    }
}

/// The timestamp seeded capabilities carry until an admin edit touches them.
pub const SEED_UPDATED_AT: &str = "2026-01-01T00:00:00Z";

fn seed_updated_at() -> String {
    SEED_UPDATED_AT.to_owned()
}

/// A registry entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capability {
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub doc: String,
    pub params: Value,
    #[serde(default)]
    pub returns: Value,
    pub effect: Effect,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub deprecated: bool,
    /// The capability to use instead (named in the deprecation warning). Not part
    /// of the catalog listing: the engine only ever says it in that warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    #[serde(default = "seed_updated_at")]
    pub updated_at: String,
}

impl Capability {
    /// Builds a capability from an admin `PUT /admin/capabilities/{name}` body.
    /// `name` comes from the path; a `name` in the body must agree with it.
    pub fn from_admin(name: &str, body: &Value, now: String) -> Result<Capability, String> {
        let Value::Object(map) = body else {
            return Err("capability body must be a JSON object".to_owned());
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("field '{key}' must be a string")),
            }
        };
        if let Some(body_name) = text("name")?
            && body_name != name
        {
            return Err(format!(
                "capability name '{body_name}' does not match the path '{name}'"
            ));
        }
        let schema = |key: &str| -> Result<Value, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(serde_json::json!({"type": "object"})),
                Some(v @ Value::Object(_)) => Ok(v.clone()),
                Some(_) => Err(format!("field '{key}' must be a JSON Schema object")),
            }
        };
        let effect = text("effect")?
            .as_deref()
            .and_then(Effect::parse)
            .ok_or("field 'effect' must be one of read, write, delete, external")?;
        let tags = match map.get("tags") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|t| t.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("field 'tags' must be a list of strings")?,
            Some(_) => return Err("field 'tags' must be a list of strings".to_owned()),
        };
        let deprecated = match map.get("deprecated") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err("field 'deprecated' must be a boolean".to_owned()),
        };
        Ok(Capability {
            name: name.to_owned(),
            title: text("title")?.unwrap_or_else(|| name.to_owned()),
            doc: text("doc")?.unwrap_or_default(),
            params: schema("params")?,
            returns: schema("returns")?,
            effect,
            tags,
            deprecated,
            replacement: text("replacement")?,
            updated_at: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn admin_bodies_are_checked() {
        let ok = Capability::from_admin(
            "x.y",
            &json!({"name": "x.y", "effect": "write", "params": {"type": "object"}, "tags": ["x"]}),
            "now".into(),
        )
        .expect("valid");
        assert_eq!(ok.effect, Effect::Write);
        assert_eq!(ok.title, "x.y");
        assert!(Capability::from_admin("x.y", &json!({"effect": "boom"}), "now".into()).is_err());
        assert!(
            Capability::from_admin("x.y", &json!({"name": "z", "effect": "read"}), "now".into())
                .is_err()
        );
        assert!(Capability::from_admin("x.y", &json!([]), "now".into()).is_err());
    }
}
