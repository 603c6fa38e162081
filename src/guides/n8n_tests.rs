//! The shipped n8n/v1 guides: they load, the core guide stays small and
//! has a runnable example, every example is a workflow document started by
//! the trigger that fits its input, and the closed-sets guide lists exactly the codes the n8n
//! corpus promises (`tests/n8n/corpus/cases.toml`), the reserved ones,
//! the gateway's own `risk_ceiling` and `reserved_character` (the step-id
//! rule of the specification): no more, no fewer.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;

fn shipped() -> GuideSet {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("guides/n8n-v1");
    GuideSet::load(&dir, "n8n/v1", "").unwrap_or_else(|e| panic!("{e}"))
}

/// The codes the corpus's broken workflows expect.
fn corpus_codes() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/n8n/corpus/cases.toml");
    let text = std::fs::read_to_string(&path).expect("the corpus's cases.toml");
    let cases: toml::Table = toml::from_str(&text).expect("cases.toml is TOML");
    cases["case"]
        .as_array()
        .expect("[[case]] entries")
        .iter()
        .filter_map(|case| case.get("code")?.as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_n8n_v1_guides_load_with_a_small_core_and_a_runnable_example() {
    let set = shipped();
    let core = set.fetch("core").expect("a core guide");
    assert!(core["size_bytes"].as_u64().unwrap() < CORE_SIZE_LIMIT as u64);
    let examples = set.examples();
    assert!(examples.iter().any(|e| e.guide_id == "core"));
    assert!(examples.len() >= 6, "{} examples", examples.len());
    for e in &examples {
        let nodes = e.workflow["nodes"].as_array().expect("a node list");
        // A Manual Trigger runs without input; an Execute Workflow Trigger
        // is how a workflow takes one (n8n drops a Manual Trigger's).
        let trigger = if e.input.is_some() {
            "n8n-nodes-base.executeWorkflowTrigger"
        } else {
            "n8n-nodes-base.manualTrigger"
        };
        assert!(
            nodes.iter().any(|n| n["type"] == trigger),
            "{} example #{} starts with {trigger}",
            e.guide_id,
            e.index
        );
        assert!(e.workflow["connections"].is_object());
    }
}

#[test]
fn the_n8n_v1_closed_sets_list_exactly_the_corpus_codes() {
    let mut expected = corpus_codes();
    assert!(expected.len() >= 10, "{expected:?}");
    expected.extend(RESERVED_CODES.iter().map(|c| c.to_string()));
    expected.insert("risk_ceiling".into());
    // Part II §3.4's reserved characters in step ids: n8n allows them in
    // node names, so the corpus of n8n's own mistakes has no such case.
    expected.insert("reserved_character".into());
    assert_eq!(shipped().diagnostic_codes(), expected);
}
