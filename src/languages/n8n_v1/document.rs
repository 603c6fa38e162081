//! The workflow document read once into what every check, the plan and the
//! trace share: its nodes (with their index in `nodes`, so every locator is
//! `/nodes/<i>`) and its `main` connections resolved to node indexes.
//! Reading never fails: what is malformed is left out here and reported by
//! the checks, which look at the raw value again where they need to.

use serde_json::Value;
use std::collections::HashMap;

/// Node types that start a run although their name says nothing of it.
const TRIGGERS_BY_NAME: &[&str] = &["n8n-nodes-base.webhook", "n8n-nodes-base.start"];

/// A sticky note: a comment on the canvas, never run.
pub const STICKY_NOTE: &str = "n8n-nodes-base.stickyNote";
/// If: two outputs, `true` and `false`.
pub const IF: &str = "n8n-nodes-base.if";
/// Switch: one output per rule (or `numberOutputs`).
pub const SWITCH: &str = "n8n-nodes-base.switch";
/// Merge: `numberInputs` inputs (default 2).
pub const MERGE: &str = "n8n-nodes-base.merge";
/// Loop Over Items: outputs `done` and `loop` (version 3).
pub const LOOP_OVER_ITEMS: &str = "n8n-nodes-base.splitInBatches";
/// Code: a JavaScript function body in `jsCode`.
pub const CODE: &str = "n8n-nodes-base.code";

/// One node with a name.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    /// Its position in `nodes`.
    pub index: usize,
    pub name: &'a str,
    /// The node type (`""` when absent: a finding of its own).
    pub kind: &'a str,
    pub version: Option<f64>,
    pub parameters: Option<&'a Value>,
    pub raw: &'a Value,
}

impl Node<'_> {
    /// `/nodes/<i>`.
    pub fn pointer(&self) -> String {
        format!("/nodes/{}", self.index)
    }

    /// A parameter's value.
    pub fn parameter(&self, name: &str) -> Option<&Value> {
        self.parameters?.get(name)
    }

    pub fn is_sticky_note(&self) -> bool {
        self.kind == STICKY_NOTE
    }

    /// Whether the node is disabled (`"disabled": true`): n8n passes its
    /// input through without running it, and a run cannot start from it.
    pub fn is_disabled(&self) -> bool {
        self.raw.get("disabled").and_then(Value::as_bool) == Some(true)
    }
}

/// One `main` connection between two nodes of the workflow.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Source node (position in [`Workflow::nodes`]).
    pub from: usize,
    /// The source's output.
    pub output: usize,
    /// Target node (position in [`Workflow::nodes`]).
    pub to: usize,
    /// The target's input.
    pub input: usize,
    /// `/connections/<source>/main/<output>/<k>`.
    pub pointer: String,
}

/// The document as the language reads it.
#[derive(Debug)]
pub struct Workflow<'a> {
    pub name: Option<&'a str>,
    /// Named nodes, in document order.
    pub nodes: Vec<Node<'a>>,
    /// Name → position in `nodes` (the first node of a name).
    by_name: HashMap<&'a str, usize>,
    /// The `main` connections whose two ends exist, in document order.
    pub edges: Vec<Edge>,
    /// The `connections` value as written.
    pub connections: Option<&'a Value>,
}

impl<'a> Workflow<'a> {
    /// Reads `program`; an empty workflow when it is not a document at all.
    pub fn read(program: &'a Value) -> Workflow<'a> {
        let nodes: Vec<Node<'a>> = program
            .get("nodes")
            .and_then(Value::as_array)
            .map(|list| list.iter().enumerate().filter_map(node).collect())
            .unwrap_or_default();
        let mut by_name = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            by_name.entry(n.name).or_insert(i);
        }
        let mut wf = Workflow {
            name: program.get("name").and_then(Value::as_str),
            nodes,
            by_name,
            edges: Vec::new(),
            connections: program.get("connections"),
        };
        wf.edges = main_connections(program)
            .into_iter()
            .filter_map(|c| {
                Some(Edge {
                    from: wf.position(c.source)?,
                    output: c.output,
                    to: wf.position(c.target?)?,
                    input: c.input,
                    pointer: c.pointer,
                })
            })
            .collect();
        wf
    }

    /// The position in [`Self::nodes`] of the node named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn node(&self, name: &str) -> Option<&Node<'a>> {
        self.position(name).and_then(|i| self.nodes.get(i))
    }

    /// The edges leaving node `i`.
    pub fn out_edges(&self, i: usize) -> impl Iterator<Item = &Edge> {
        self.edges.iter().filter(move |e| e.from == i)
    }
}

fn node((index, raw): (usize, &Value)) -> Option<Node<'_>> {
    Some(Node {
        index,
        name: raw.get("name")?.as_str()?,
        kind: raw.get("type").and_then(Value::as_str).unwrap_or(""),
        version: raw.get("typeVersion").and_then(Value::as_f64),
        parameters: raw.get("parameters").filter(|p| p.is_object()),
        raw,
    })
}

/// One `main` connection as written, its target possibly missing.
#[derive(Debug, Clone)]
pub struct RawConnection<'a> {
    pub source: &'a str,
    pub output: usize,
    pub target: Option<&'a str>,
    pub input: usize,
    /// `/connections/<source>/main/<output>/<k>`.
    pub pointer: String,
}

/// Every `main` connection of the document, in document order.
pub fn main_connections(program: &Value) -> Vec<RawConnection<'_>> {
    let Some(sources) = program.get("connections").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (source, kinds) in sources {
        let Some(outputs) = kinds.get("main").and_then(Value::as_array) else {
            continue;
        };
        for (output, targets) in outputs.iter().enumerate() {
            let Some(targets) = targets.as_array() else {
                continue;
            };
            for (k, target) in targets.iter().enumerate() {
                out.push(RawConnection {
                    source,
                    output,
                    target: target.get("node").and_then(Value::as_str),
                    input: target
                        .get("index")
                        .and_then(Value::as_u64)
                        .and_then(|i| usize::try_from(i).ok())
                        .unwrap_or(0),
                    pointer: format!("/connections/{}/main/{output}/{k}", escape(source)),
                });
            }
        }
    }
    out
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Whether a node of type `kind` starts runs, by its name alone (the
/// catalog's `n8n.trigger` decides first when the caller can see the type).
pub fn trigger_by_name(kind: &str) -> bool {
    let local = kind.rsplit('.').next().unwrap_or(kind);
    local.to_ascii_lowercase().ends_with("trigger") || TRIGGERS_BY_NAME.contains(&kind)
}
