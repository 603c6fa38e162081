//! n8n's node descriptions (`GET /types/nodes.json`, 17.8 MB) read once into
//! a compact form: per node type its descriptions (one per version or
//! list of versions) with only what the catalog and the checks use. The
//! texts for the editor (descriptions of properties, hints, placeholders,
//! routing, icons, codex) are dropped while reading ([`super::served`]).
//!
//! A description's properties, most of what is kept, stay compact JSON text
//! (10 MB for all of n8n 2.41.1's) and are read into values only when a
//! check or an entry needs that description: as JSON values all at once
//! they took 165 MB, for a workflow that uses a handful of node types.

use super::served::{self, Served};
use serde_json::{Number, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many bytes (estimated heap) of properties read into values a
/// catalog keeps for the next check: the node types of the workflows being
/// checked, not all of n8n's.
const RECENT_PROPERTIES_BYTES: u64 = 24 << 20;

/// One description: the versions it covers and what they declare.
#[derive(Debug, Clone)]
pub struct Description {
    /// Its position among the catalog's descriptions.
    id: usize,
    pub versions: Vec<Number>,
    pub inputs: Value,
    pub outputs: Value,
    pub output_names: Option<Value>,
    pub credentials: Vec<Value>,
    /// The properties as one compact JSON list ([`Description::properties`]
    /// reads it).
    properties: Box<str>,
    /// Whether the node starts runs: n8n's own rule (`isTriggerNode` in
    /// n8n-workflow) is that the description's `group`
    /// holds `trigger`; webhook and polling triggers are in that group
    /// too. A node with no inputs is not one by that alone: AI sub-nodes
    /// and tools have none and only serve the node they are attached to.
    pub trigger: bool,
    /// How many nodes of the type a workflow may hold (`maxNodes`), when
    /// the description limits it.
    pub max_nodes: Option<u64>,
    /// Whether the node listens on webhooks (the description's `webhooks`):
    /// two of them on one path conflict when the workflow is activated.
    pub webhook: bool,
}

impl Description {
    /// The description's properties (parameters), each with only the kept
    /// keys, read from their compact text.
    pub fn properties(&self) -> Vec<Value> {
        serde_json::from_str(&self.properties).unwrap_or_default()
    }
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
#[derive(Debug, Clone)]
pub struct NodeCatalog {
    pub types: BTreeMap<String, NodeType>,
    /// The properties of recently checked descriptions, read into values.
    recent: moka::sync::Cache<usize, Arc<Vec<Value>>>,
}

impl Default for NodeCatalog {
    fn default() -> Self {
        Self {
            types: BTreeMap::new(),
            recent: moka::sync::Cache::builder()
                .max_capacity(RECENT_PROPERTIES_BYTES)
                .weigher(|_: &usize, properties: &Arc<Vec<Value>>| {
                    crate::weigh::as_weight(properties.iter().map(crate::weigh::json).sum())
                })
                .build(),
        }
    }
}

/// A version as a number to compare.
pub fn num(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

impl NodeCatalog {
    /// Reads the text `/types/nodes.json` answers, keeping only what the
    /// catalog and the checks use.
    pub fn from_text(text: &str) -> Result<Self, serde_json::Error> {
        Ok(Self::from_served(served::read_list(text)?))
    }

    /// Reads the same list given as JSON values (a test fixture).
    pub fn from_descriptions(list: &[Value]) -> Self {
        Self::from_served(list.iter().map(served::from_value).collect())
    }

    /// The properties of `description`, read into values once while it is
    /// checked often.
    pub fn properties(&self, description: &Description) -> Arc<Vec<Value>> {
        self.recent
            .get_with(description.id, || Arc::new(description.properties()))
    }

    /// The descriptions by node type; those without a name are skipped.
    fn from_served(list: Vec<Served>) -> Self {
        let mut types: BTreeMap<String, NodeType> = BTreeMap::new();
        for (id, d) in list.into_iter().enumerate() {
            let Some(name) = d.name.as_ref().and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            let versions: Vec<Number> = match &d.version {
                Some(Value::Number(n)) => vec![n.clone()],
                Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_number().cloned()).collect(),
                _ => vec![Number::from(1)],
            };
            let trigger = d
                .group
                .as_ref()
                .and_then(Value::as_array)
                .is_some_and(|g| g.iter().any(|x| x == "trigger"));
            let description = Description {
                id,
                versions,
                inputs: d.inputs.unwrap_or(Value::Null),
                outputs: d.outputs.unwrap_or(Value::Null),
                output_names: d.output_names,
                credentials: d
                    .credentials
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| c.0)
                    .collect(),
                properties: properties_text(d.properties.unwrap_or_default()),
                trigger,
                max_nodes: d.max_nodes.as_ref().and_then(Value::as_u64),
                webhook: d
                    .webhooks
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|w| !w.is_empty()),
            };
            let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_string);
            let display_name = text(&d.display_name).unwrap_or_else(|| name.clone());
            let summary = text(&d.description).unwrap_or_default();
            let entry = types.entry(name.clone()).or_insert_with(|| NodeType {
                name,
                display_name,
                description: summary,
                default_version: d.default_version.clone().unwrap_or(Number::from(1)),
                descriptions: Vec::new(),
            });
            entry.descriptions.push(description);
            match d.default_version {
                Some(v) => entry.default_version = v,
                None => {
                    // No declared default: the newest version.
                    if let Some(newest) = entry.versions().last() {
                        entry.default_version = newest.clone();
                    }
                }
            }
        }
        Self {
            types,
            ..Self::default()
        }
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

/// One JSON list of properties already written as text.
fn properties_text(list: Vec<served::KeptText>) -> Box<str> {
    let mut text = String::from("[");
    for (i, property) in list.into_iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&property.0);
    }
    text.push(']');
    text.into_boxed_str()
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
        let text = serde_json::to_string(&http.descriptions[0].properties()).unwrap();
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
