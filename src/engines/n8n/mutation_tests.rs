//! The adapter's checks against the mutation corpus (tests/n8n/mutations),
//! without n8n: its 32 seeds give no problem, and every case of the kinds
//! the adapter alone catches (a number above its maximum, a parameter its
//! `displayOptions` hide) gives one at the case's pointer, but the one
//! in `LEFT`. The descriptions
//! are the two stored lists: tests/n8n/node-types.json and the mutation
//! corpus's own.

use super::check::check_workflow;
use super::nodes::NodeCatalog;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).expect(path);
    serde_json::from_str(&text).expect(path)
}

fn catalog() -> &'static NodeCatalog {
    static CATALOG: OnceLock<NodeCatalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut list = read("tests/n8n/node-types.json")
            .as_array()
            .cloned()
            .unwrap_or_default();
        let more = read("tests/n8n/mutations/node-types.json");
        list.extend(more["descriptions"].as_array().cloned().unwrap_or_default());
        NodeCatalog::from_descriptions(&list)
    })
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(repo().join("tests/n8n/mutations/cases.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_seeds_give_no_problem() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(repo().join("tests/n8n/mutations/seeds")).unwrap() {
        let path = entry.unwrap().path();
        let seed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for p in check_workflow(catalog(), &seed, None) {
            found.push(format!(
                "{}: {} at {:?}",
                path.display(),
                p.text,
                p.location
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Cases the adapter leaves: Convert to File's `addBOM` shows with an
/// `encoding` option that is absent but defaults to `utf8`, and the node
/// reads it so (`options.encoding || 'utf8'`): the option takes effect.
const LEFT: [&str; 1] = ["parameter-not-shown.compression.1"];

#[test]
fn hidden_parameters_and_numbers_above_their_maximum_are_found_where_they_are() {
    let mut missed = Vec::new();
    let mut seen = 0;
    for case in cases() {
        let kind = case["kind"].as_str().unwrap_or("");
        let id = case["id"].as_str().unwrap_or("");
        if kind != "parameter-not-shown" && kind != "above-maximum" || LEFT.contains(&id) {
            continue;
        }
        seen += 1;
        let at = case["where"].as_str().unwrap_or("");
        let found = check_workflow(catalog(), &case["workflow"], None);
        if !found.iter().any(|p| p.location.as_deref() == Some(at)) {
            missed.push(format!("{}: want {at}, got {found:?}", case["id"]));
        }
    }
    assert_eq!(seen, 29);
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}
