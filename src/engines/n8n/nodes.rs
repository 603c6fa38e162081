//! n8n's node descriptions (`GET /types/nodes.json`, 17.8 MB) read once into
//! a compact form: per node type its descriptions (one per version or
//! list of versions) with only what the catalog and the checks use. The
//! texts for the editor (descriptions of properties, hints, placeholders,
//! routing, icons, codex) are dropped.

use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;

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

/// `typeOptions` keys kept.
const KEPT_TYPE_OPTIONS: [&str; 4] = [
    "multipleValues",
    "loadOptionsMethod",
    "loadOptions",
    "minValue",
];

/// One description: the versions it covers and what they declare.
#[derive(Debug, Clone)]
pub struct Description {
    pub versions: Vec<Number>,
    pub inputs: Value,
    pub outputs: Value,
    pub output_names: Option<Value>,
    pub credentials: Vec<Value>,
    pub properties: Vec<Value>,
    /// Whether the node starts runs: n8n's own rule (`isTriggerNode` of
    /// n8n-workflow's node helpers) is that the description's `group`
    /// holds `trigger`; webhook and polling triggers are in that group
    /// too. A node with no inputs is not one by that alone: AI sub-nodes
    /// and tools have none and only serve the node they are attached to.
    pub trigger: bool,
    /// How many nodes of the type a workflow may hold (`maxNodes`), when
    /// the description limits it.
    pub max_nodes: Option<u64>,
}

/// One node type, every version.
#[derive(Debug, Clone)]
pub struct NodeType {
    pub name: String,
    pub display_name: String,
    pub description: String,
    pub default_version: Number,
    /// Newest first as n8n lists them; `versions()` sorts.
    pub descriptions: Vec<Description>,
}

impl NodeType {
    /// Every version, ascending.
    pub fn versions(&self) -> Vec<Number> {
        let mut all: Vec<Number> = self
            .descriptions
            .iter()
            .flat_map(|d| d.versions.iter().cloned())
            .collect();
        all.sort_by(|a, b| num(a).total_cmp(&num(b)));
        all.dedup_by(|a, b| num(a) == num(b));
        all
    }

    /// The description covering `version`.
    pub fn at(&self, version: f64) -> Option<&Description> {
        self.descriptions
            .iter()
            .find(|d| d.versions.iter().any(|v| num(v) == version))
    }

    /// The description of the default version.
    pub fn default_description(&self) -> Option<&Description> {
        self.at(num(&self.default_version))
            .or_else(|| self.descriptions.first())
    }
}

/// Every node type an n8n serves, by name.
#[derive(Debug, Clone, Default)]
pub struct NodeCatalog {
    pub types: BTreeMap<String, NodeType>,
}

/// A version as a number to compare.
pub fn num(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

impl NodeCatalog {
    /// Reads the list `/types/nodes.json` answers (or the same list as a
    /// test fixture); descriptions without a name are skipped.
    pub fn from_descriptions(list: &[Value]) -> Self {
        let mut types: BTreeMap<String, NodeType> = BTreeMap::new();
        for d in list {
            let Some(name) = d.get("name").and_then(Value::as_str) else {
                continue;
            };
            let versions: Vec<Number> = match d.get("version") {
                Some(Value::Number(n)) => vec![n.clone()],
                Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_number().cloned()).collect(),
                _ => vec![Number::from(1)],
            };
            let trigger = d
                .get("group")
                .and_then(Value::as_array)
                .is_some_and(|g| g.iter().any(|x| x == "trigger"));
            let description = Description {
                versions: versions.clone(),
                inputs: d.get("inputs").cloned().unwrap_or(Value::Null),
                outputs: d.get("outputs").cloned().unwrap_or(Value::Null),
                output_names: d.get("outputNames").cloned(),
                credentials: d
                    .get("credentials")
                    .and_then(Value::as_array)
                    .map(|c| c.iter().map(compact).collect())
                    .unwrap_or_default(),
                properties: d
                    .get("properties")
                    .and_then(Value::as_array)
                    .map(|p| p.iter().map(compact).collect())
                    .unwrap_or_default(),
                trigger,
                max_nodes: d.get("maxNodes").and_then(Value::as_u64),
            };
            let default_version = d.get("defaultVersion").and_then(Value::as_number).cloned();
            let entry = types.entry(name.to_string()).or_insert_with(|| NodeType {
                name: name.to_string(),
                display_name: d
                    .get("displayName")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_string(),
                description: d
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                default_version: default_version.clone().unwrap_or(Number::from(1)),
                descriptions: Vec::new(),
            });
            entry.descriptions.push(description);
            match default_version {
                Some(v) => entry.default_version = v,
                None => {
                    // No declared default: the newest version.
                    if let Some(newest) = entry.versions().last() {
                        entry.default_version = newest.clone();
                    }
                }
            }
        }
        Self { types }
    }

    /// The closest known node type names to `name` (for hints).
    pub fn closest(&self, name: &str) -> Option<&str> {
        self.types
            .keys()
            .map(|k| (strsim::normalized_damerau_levenshtein(k, name), k))
            .filter(|(score, _)| *score >= 0.7)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| k.as_str())
    }
}

/// A property (or credential, or option) with only the kept keys, at every
/// level.
fn compact(v: &Value) -> Value {
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    let mut out = Map::new();
    for (k, val) in obj {
        if !KEPT.contains(&k.as_str()) {
            continue;
        }
        let kept = match k.as_str() {
            "options" | "values" => match val {
                Value::Array(items) => Value::Array(items.iter().map(compact).collect()),
                other => other.clone(),
            },
            "typeOptions" => Value::Object(
                val.as_object()
                    .map(|t| {
                        t.iter()
                            .filter(|(k, _)| KEPT_TYPE_OPTIONS.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => val.clone(),
        };
        out.insert(k.clone(), kept);
    }
    Value::Object(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::OnceLock;

    /// The descriptions of the 15 node types the corpus uses.
    pub fn fixture() -> &'static NodeCatalog {
        static CATALOG: OnceLock<NodeCatalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            let path =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/n8n/node-types.json");
            let text = std::fs::read_to_string(path).expect("tests/n8n/node-types.json");
            let list: Vec<Value> = serde_json::from_str(&text).expect("a list");
            NodeCatalog::from_descriptions(&list)
        })
    }

    #[test]
    fn versions_are_joined_sorted_and_the_default_is_kept() {
        let set = &fixture().types["n8n-nodes-base.set"];
        let versions: Vec<String> = set.versions().iter().map(Number::to_string).collect();
        assert_eq!(versions, ["1", "2", "3", "3.1", "3.2", "3.3", "3.4", "3.5"]);
        assert_eq!(set.default_version.to_string(), "3.5");
        assert!(set.at(3.4).is_some() && set.at(99.0).is_none());
        let schedule = &fixture().types["n8n-nodes-base.scheduleTrigger"];
        assert_eq!(schedule.default_version.to_string(), "1.4");
        assert!(schedule.default_description().unwrap().trigger);
        assert!(!fixture().types["n8n-nodes-base.stickyNote"].descriptions[0].trigger);
        let manual = fixture().types["n8n-nodes-base.manualTrigger"].default_description();
        assert_eq!(manual.and_then(|d| d.max_nodes), Some(1));
        assert_eq!(schedule.default_description().unwrap().max_nodes, None);
    }

    #[test]
    fn a_node_without_inputs_outside_the_trigger_group_is_no_trigger() {
        // As n8n serves an AI sub-node and a tool: no inputs, no trigger group.
        let catalog = NodeCatalog::from_descriptions(&[
            serde_json::json!({"name": "@n8n/n8n-nodes-langchain.lmChatOpenAi",
                "group": ["transform"], "version": 1, "inputs": [], "outputs": ["ai_languageModel"]}),
            serde_json::json!({"name": "n8n-nodes-base.httpRequestTool",
                "group": ["output"], "version": 4.2, "inputs": [], "outputs": ["ai_tool"]}),
            serde_json::json!({"name": "n8n-nodes-base.gmailTrigger",
                "group": ["trigger"], "version": 1, "polling": true, "inputs": [], "outputs": ["main"]}),
        ]);
        let trigger = |name: &str| catalog.types[name].descriptions[0].trigger;
        assert!(!trigger("@n8n/n8n-nodes-langchain.lmChatOpenAi"));
        assert!(!trigger("n8n-nodes-base.httpRequestTool"));
        assert!(trigger("n8n-nodes-base.gmailTrigger"));
    }

    #[test]
    fn editor_texts_are_dropped() {
        let http = &fixture().types["n8n-nodes-base.httpRequest"];
        let text = serde_json::to_string(&http.descriptions[0].properties).unwrap();
        assert!(!text.contains("\"description\""));
        assert!(!text.contains("\"placeholder\""));
        assert!(text.contains("\"url\""));
    }

    #[test]
    fn the_closest_name_is_offered() {
        assert_eq!(
            fixture().closest("n8n-nodes-base.htpRequest"),
            Some("n8n-nodes-base.httpRequest")
        );
        assert_eq!(fixture().closest("zzz"), None);
    }
}
