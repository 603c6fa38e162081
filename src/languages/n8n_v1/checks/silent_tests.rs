//! The checks of what n8n runs silently (docs/n8n-v1.md, "What n8n runs
//! silently"): nodes a run never reaches, inputs connected to nothing, and
//! data pinned where it stands in for nothing; each with the look-alikes it
//! must leave alone.

use super::all;
use super::tests::{SET, START, node, to, workflow};
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use serde_json::{Value, json};

const MERGE: &str = "n8n-nodes-base.merge";
const MODEL: &str = "@n8n/n8n-nodes-langchain.lmChatOpenAi";
const CHAIN: &str = "@n8n/n8n-nodes-langchain.chainLlm";

/// The node types these workflows use, as the adapter's entries give them.
fn view() -> CatalogView {
    CatalogView::from_capabilities(vec![
        json!({"id": START, "n8n": {"trigger": true, "inputs": 0, "outputs": 1, "max_nodes": 1}}),
        json!({"id": SET, "n8n": {"trigger": false, "inputs": 1, "outputs": 1}}),
        json!({"id": MERGE, "n8n": {"trigger": false, "outputs": 1}}),
        json!({"id": MODEL, "n8n": {"trigger": false, "inputs": 0, "outputs": 0}}),
        json!({"id": CHAIN, "n8n": {"trigger": false}}),
    ])
}

/// (severity, code, pointer) of every finding.
fn found(program: &Value) -> Vec<(Severity, String, String)> {
    all(program, &view())
        .into_iter()
        .map(|d: Diagnostic| (d.severity, d.code, d.path))
        .collect()
}

fn warning_at(path: &str) -> (Severity, String, String) {
    (Severity::Warning, "invalid_structure".into(), path.into())
}

#[test]
fn a_connected_node_no_trigger_leads_to_is_a_warning() {
    let program = workflow(
        vec![
            node("Start", START),
            node("A", SET),
            node("B", SET),
            node("C", SET),
        ],
        json!({"Start": {"main": [[to("A")]]}, "B": {"main": [[to("C")]]}}),
    );
    assert_eq!(
        found(&program),
        [warning_at("/nodes/2"), warning_at("/nodes/3")]
    );
}

#[test]
fn an_ai_sub_node_attached_to_a_reached_node_is_reached() {
    let program = workflow(
        vec![
            node("Start", START),
            node("Chain", CHAIN),
            node("Model", MODEL),
        ],
        json!({"Start": {"main": [[to("Chain")]]},
               "Model": {"ai_languageModel": [[{"node": "Chain", "type": "ai_languageModel", "index": 0}]]}}),
    );
    assert_eq!(found(&program), []);
}

#[test]
fn an_input_connected_to_nothing_is_a_warning_at_its_node() {
    let merge = |inputs: Option<u64>| {
        let mut m = node("Merge", MERGE);
        m["typeVersion"] = json!(3.2);
        if let Some(n) = inputs {
            m["parameters"] = json!({"numberInputs": n});
        }
        m
    };
    let one_input = workflow(
        vec![node("Start", START), node("A", SET), merge(None)],
        json!({"Start": {"main": [[to("A")]]}, "A": {"main": [[to("Merge")]]}}),
    );
    let all_found = all(&one_input, &view());
    assert_eq!(all_found.len(), 1, "{all_found:?}");
    assert_eq!(all_found[0].path, "/nodes/2");
    assert_eq!(all_found[0].severity, Severity::Warning);
    assert!(
        all_found[0].message.contains("input 2"),
        "{}",
        all_found[0].message
    );
    // Both inputs fed: nothing to say.
    let both = workflow(
        vec![
            node("Start", START),
            node("A", SET),
            node("B", SET),
            merge(None),
        ],
        json!({"Start": {"main": [[to("A"), to("B")]]}, "A": {"main": [[to("Merge")]]},
               "B": {"main": [[{"node": "Merge", "type": "main", "index": 1}]]}}),
    );
    assert_eq!(found(&both), []);
    // Three inputs, two fed.
    let three = workflow(
        vec![
            node("Start", START),
            node("A", SET),
            node("B", SET),
            merge(Some(3)),
        ],
        json!({"Start": {"main": [[to("A"), to("B")]]}, "A": {"main": [[to("Merge")]]},
               "B": {"main": [[{"node": "Merge", "type": "main", "index": 1}]]}}),
    );
    assert_eq!(found(&three), [warning_at("/nodes/3")]);
}

#[test]
fn pinned_data_must_stand_in_for_a_node_as_items() {
    let mut program = workflow(
        vec![node("Start", START), node("Fetch", SET)],
        json!({"Start": {"main": [[to("Fetch")]]}}),
    );
    program["pinData"] = json!({"Fetch": [{"json": {"n": 1}}]});
    assert_eq!(found(&program), []);
    program["pinData"] = json!({"Fetsh": [{"json": {"n": 1}}], "Fetch": {"json": {}},
                                "Start": [{"json": {}}, {"n": 2}]});
    let findings = all(&program, &view());
    let at: Vec<_> = findings
        .iter()
        .map(|d| (d.severity, d.code.as_str(), d.path.as_str()))
        .collect();
    assert_eq!(
        at,
        [
            (Severity::Error, "unknown_task", "/pinData/Fetsh"),
            (Severity::Error, "type_mismatch", "/pinData/Fetch"),
            (Severity::Error, "invalid_structure", "/pinData/Start/1"),
            // The run's input replaces what is pinned on its trigger.
            (Severity::Warning, "invalid_structure", "/pinData/Start"),
        ]
    );
    assert_eq!(findings[0].hint.as_deref(), Some("close match: Fetch"));
    program["pinData"] = json!([1]);
    assert_eq!(
        found(&program),
        [(Severity::Error, "type_mismatch".into(), "/pinData".into())]
    );
}
