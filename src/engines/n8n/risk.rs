//! The risk table: n8n's node descriptions say nothing about side effects,
//! so the configuration names each node type's risk by type globs, in
//! order, the first match winning. A row may add a parameter condition
//! (`parameter` + `in`): it then becomes one of the entry's `risk_when`
//! rules instead of its plain risk (the operations read those with the
//! step's parameters). A node type no unconditional row matches is
//! destructive (fail closed).

use crate::engines::mistral::risk::{glob_match, glob_problem};
use serde::Deserialize;
use serde_json::{Value, json};

/// The four Pilotage risks a row may name.
pub const RISKS: [&str; 4] = ["safe", "write", "external", "destructive"];

/// The risk of a node type no row names.
pub const UNNAMED: &str = "destructive";

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RiskRow {
    /// Node types this row covers (`*` any text, `?` one character).
    pub node: String,
    /// With `in`: the row holds only when this parameter's value (or its
    /// default) is one of `in`.
    #[serde(default)]
    pub parameter: Option<String>,
    /// The values of `parameter` for which this row's risk holds.
    #[serde(default, rename = "in")]
    pub values: Option<Vec<Value>>,
    /// `safe`, `write`, `external` or `destructive`.
    pub risk: String,
}

impl RiskRow {
    /// (key under the row, problem, fix) for a row that cannot work.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        if let Some(why) = glob_problem(&self.node) {
            out.push((
                "node".into(),
                why,
                "write a node type with * and ? wildcards, e.g. \"n8n-nodes-base.http*\"".into(),
            ));
        }
        match (&self.parameter, &self.values) {
            (Some(p), None) => out.push((
                "in".into(),
                format!("the condition on '{p}' lists no values"),
                "add in = [...] with the values for which this risk holds".into(),
            )),
            (None, Some(_)) => out.push((
                "parameter".into(),
                "'in' without a parameter".into(),
                "name the parameter the values belong to, or remove 'in'".into(),
            )),
            (Some(p), Some(_)) if p.trim().is_empty() => out.push((
                "parameter".into(),
                "an empty parameter name".into(),
                "name a parameter of the node type, e.g. \"method\"".into(),
            )),
            _ => {}
        }
        out
    }
}

/// A node type's place in the table: its plain risk and its conditions.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRisk {
    pub risk: String,
    /// `{"parameter", "default"?, "in", "risk"}` rules, in table order.
    pub when: Vec<Value>,
}

/// The risk of `node_type`: conditional rows before its first plain match
/// become `when` rules (`default_of` gives a parameter's default value).
pub fn node_risk(
    rows: &[RiskRow],
    node_type: &str,
    default_of: impl Fn(&str) -> Option<Value>,
) -> NodeRisk {
    let mut when = Vec::new();
    for row in rows.iter().filter(|r| glob_match(&r.node, node_type)) {
        match (&row.parameter, &row.values) {
            (Some(parameter), Some(values)) => {
                let mut rule = json!({"parameter": parameter});
                if let Some(d) = default_of(parameter) {
                    rule["default"] = d;
                }
                rule["in"] = Value::Array(values.clone());
                rule["risk"] = json!(row.risk);
                when.push(rule);
            }
            _ => {
                return NodeRisk {
                    risk: row.risk.clone(),
                    when,
                };
            }
        }
    }
    NodeRisk {
        risk: UNNAMED.into(),
        when,
    }
}

/// The built-in table: n8n's core nodes that only move items inside the
/// execution are safe; nodes that reach other systems are external, or
/// destructive when they can change anything there.
pub fn default_rows() -> Vec<RiskRow> {
    let row = |node: &str, risk: &str| RiskRow {
        node: node.into(),
        parameter: None,
        values: None,
        risk: risk.into(),
    };
    let mut rows = vec![RiskRow {
        node: "n8n-nodes-base.httpRequest".into(),
        parameter: Some("method".into()),
        values: Some(vec![json!("GET"), json!("HEAD"), json!("OPTIONS")]),
        risk: "safe".into(),
    }];
    // Triggers start a run; they change nothing themselves.
    for node in [
        "manualTrigger",
        "scheduleTrigger",
        "webhook",
        "respondToWebhook",
        "executeWorkflowTrigger",
        "errorTrigger",
    ] {
        rows.push(row(&format!("n8n-nodes-base.{node}"), "safe"));
    }
    // Items in, items out, inside the execution.
    for node in [
        "noOp",
        "stickyNote",
        "set",
        "if",
        "switch",
        "filter",
        "merge",
        "splitInBatches",
        "wait",
        "dateTime",
        "itemLists",
        "sort",
        "limit",
        "aggregate",
        "removeDuplicates",
        "splitOut",
        "summarize",
        "renameKeys",
        "crypto",
        "html",
        "markdown",
        "xml",
        "compareDatasets",
        "stopAndError",
    ] {
        rows.push(row(&format!("n8n-nodes-base.{node}"), "safe"));
    }
    // JavaScript may call out (`this.helpers.httpRequest`); mail leaves.
    rows.push(row("n8n-nodes-base.code", "external"));
    rows.push(row("n8n-nodes-base.emailSend", "external"));
    // Any method but a read may change the other side.
    rows.push(row("n8n-nodes-base.httpRequest", "destructive"));
    // A shell, files and other workflows can do anything.
    rows.push(row("n8n-nodes-base.executeCommand", "destructive"));
    rows.push(row("n8n-nodes-base.ssh", "destructive"));
    rows.push(row("n8n-nodes-base.executeWorkflow", "destructive"));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_request_is_safe_only_for_reads() {
        let r = node_risk(&default_rows(), "n8n-nodes-base.httpRequest", |p| {
            (p == "method").then(|| json!("GET"))
        });
        assert_eq!(r.risk, "destructive");
        assert_eq!(
            r.when,
            vec![json!({"parameter": "method", "default": "GET",
                        "in": ["GET", "HEAD", "OPTIONS"], "risk": "safe"})]
        );
    }

    #[test]
    fn unnamed_node_types_are_destructive_and_named_ones_keep_their_risk() {
        let rows = default_rows();
        assert_eq!(
            node_risk(&rows, "n8n-nodes-base.set", |_| None).risk,
            "safe"
        );
        assert_eq!(
            node_risk(&rows, "n8n-nodes-base.code", |_| None).risk,
            "external"
        );
        let unnamed = node_risk(&rows, "n8n-nodes-base.postgres", |_| None);
        assert_eq!(unnamed.risk, "destructive");
        assert!(unnamed.when.is_empty());
        for row in &rows {
            assert!(row.problems().is_empty(), "{row:?}");
            assert!(RISKS.contains(&row.risk.as_str()), "{row:?}");
        }
    }

    #[test]
    fn a_condition_without_values_is_a_problem() {
        let row = RiskRow {
            node: "n8n-nodes-base.x".into(),
            parameter: Some("method".into()),
            values: None,
            risk: "safe".into(),
        };
        assert_eq!(row.problems()[0].0, "in");
    }
}
