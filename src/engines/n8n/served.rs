//! One node description as n8n serves it (`/types/nodes.json`, 17.8 MB for
//! 919 descriptions), read straight into what the catalog and the checks
//! keep: the top-level fields they use, and properties and credentials with
//! only the kept keys at every level of `options` and `values`. Everything
//! else (editor texts, icons, codex, routing) is skipped while reading,
//! never built as a JSON tree first: reading the whole list as values would
//! hold every text of the editor at once, hundreds of megabytes for a
//! moment. Properties are kept as their compact JSON text, one at a time.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Property keys kept (at every level of `options` and `values`).
const KEPT: [&str; 10] = [
    "name",
    "displayName",
    "type",
    "default",
    "required",
    "options",
    "displayOptions",
    "typeOptions",
    "values",
    "value",
];

/// `typeOptions` keys kept: the bounds both, or a number above its
/// maximum passes unseen.
const KEPT_TYPE_OPTIONS: [&str; 5] = [
    "multipleValues",
    "loadOptionsMethod",
    "loadOptions",
    "minValue",
    "maxValue",
];

/// The fields of a description the catalog and the checks read.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Served {
    pub name: Option<Value>,
    pub display_name: Option<Value>,
    pub description: Option<Value>,
    pub group: Option<Value>,
    pub version: Option<Value>,
    pub default_version: Option<Number>,
    pub inputs: Option<Value>,
    pub outputs: Option<Value>,
    pub output_names: Option<Value>,
    pub max_nodes: Option<Value>,
    pub webhooks: Option<Value>,
    pub credentials: Option<Vec<Kept>>,
    pub properties: Option<Vec<KeptText>>,
}

/// A property, option or credential with only the kept keys, at every
/// level; any other value as it is.
#[derive(Debug, Clone)]
pub struct Kept(pub Value);

impl<'de> Deserialize<'de> for Kept {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeptVisitor).map(Kept)
    }
}

/// A property with only the kept keys, as its JSON text: read one at a
/// time, so the whole list is never held as a tree.
#[derive(Debug, Clone)]
pub struct KeptText(pub String);

impl<'de> Deserialize<'de> for KeptText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Kept(value) = Kept::deserialize(d)?;
        Ok(KeptText(value.to_string()))
    }
}

/// The values of `options` or `values`: a list's items kept as properties,
/// anything else as it is.
struct KeptItems(Value);

impl<'de> Deserialize<'de> for KeptItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemsVisitor).map(KeptItems)
    }
}

struct KeptVisitor;
struct ItemsVisitor;

/// Scalars read as JSON values, the same in both visitors.
macro_rules! scalars {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

impl<'de> Visitor<'de> for KeptVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a node property")
    }

    scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            out.push(item);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "options" | "values" => {
                    let KeptItems(items) = map.next_value()?;
                    out.insert(key, items);
                }
                "typeOptions" => {
                    let options: Value = map.next_value()?;
                    let kept: Map<String, Value> = options
                        .as_object()
                        .into_iter()
                        .flatten()
                        .filter(|(k, _)| KEPT_TYPE_OPTIONS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    out.insert(key, Value::Object(kept));
                }
                k if KEPT.contains(&k) => {
                    let value: Value = map.next_value()?;
                    out.insert(key, value);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of options or values")
    }

    scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Kept(item)) = seq.next_element()? {
            out.push(item);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

/// Every description of the list `/types/nodes.json` answers.
pub fn read_list(text: &str) -> Result<Vec<Served>, serde_json::Error> {
    serde_json::from_str(text)
}

/// One description given as a JSON value (a test fixture); a value that is
/// not an object reads as an empty description.
pub fn from_value(description: &Value) -> Served {
    Served::deserialize(description).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_kept_keys_are_read_at_every_level() {
        let text = json!([{
            "name": "n8n-nodes-base.x", "version": [1, 2], "codex": {"big": "text"},
            "iconUrl": "icons/x.svg",
            "properties": [{
                "name": "mode", "displayName": "Mode", "type": "options", "default": "a",
                "description": "shown in the editor", "placeholder": "pick one",
                "typeOptions": {"minValue": 1, "maxValue": 9, "editor": "code"},
                "options": [{"name": "A", "value": "a", "description": "the first", "action": "Do A"}]
            }]
        }])
        .to_string();
        let list = read_list(&text).unwrap();
        assert_eq!(list.len(), 1);
        let property: Value =
            serde_json::from_str(&list[0].properties.as_ref().unwrap()[0].0).unwrap();
        assert_eq!(
            property,
            json!({"name": "mode", "displayName": "Mode", "type": "options", "default": "a",
                    "typeOptions": {"minValue": 1, "maxValue": 9},
                    "options": [{"name": "A", "value": "a"}]})
        );
        assert_eq!(list[0].version, Some(json!([1, 2])));
    }
}
