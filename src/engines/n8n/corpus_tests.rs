//! The adapter's checks against the n8n corpus (tests/n8n/corpus): every
//! broken workflow about node types, versions, parameters, filter
//! operators, cron or credentials gives, through classifiers/n8n-v1.toml,
//! its expected closed code at its expected JSON Pointer; the valid
//! workflows give no problem at all.

use super::check::{TenantCredential, check_workflow};
use super::nodes::tests::fixture;
use crate::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The cases that are the adapter's (docs/n8n-v1.md, "Who does what").
const ADAPTER_CASES: [&str; 30] = [
    "unknown-node-type",
    "unknown-node-type-typo",
    "unknown-package",
    "type-version-too-high-set",
    "type-version-too-high-http",
    "type-version-between",
    "type-version-string",
    "http-missing-url",
    "http-empty-url",
    "webhook-missing-path",
    "code-empty",
    "set-invalid-mode",
    "http-invalid-method",
    "webhook-invalid-method",
    "wait-invalid-unit",
    "datetime-invalid-operation",
    "switch-invalid-mode",
    "if-unknown-operator",
    "if-unknown-operator-type",
    "switch-unknown-operator",
    "unknown-extra-parameter",
    "unknown-http-option",
    "cron-invalid-hour",
    "cron-garbage",
    "wrong-type-wait-amount",
    "wrong-type-include-other-fields",
    "wrong-type-http-url",
    "wrong-type-batch-size",
    "set-assignment-type-mismatch",
    "credentials-missing",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn cases() -> Vec<toml::Table> {
    let text = std::fs::read_to_string(repo().join("tests/n8n/corpus/cases.toml")).unwrap();
    let file: toml::Table = toml::from_str(&text).unwrap();
    file["case"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_table().unwrap().clone())
        .collect()
}

fn program(case: &toml::Table) -> Value {
    let path = repo()
        .join("tests/n8n/corpus")
        .join(case["file"].as_str().unwrap());
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rules() -> RuleTable {
    let codes: BTreeSet<String> = [
        "unknown_capability",
        "type_mismatch",
        "missing_parameter",
        "invalid_value",
        "malformed_expression",
        "invalid_structure",
        "unexpected_parameter",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    RuleTable::load(&repo().join("classifiers/n8n-v1.toml"), &codes).expect("the rule file loads")
}

/// The tenant's credentials in the corpus runs: one it owns.
fn tenant_credentials() -> Vec<TenantCredential> {
    vec![TenantCredential {
        id: "owned1".into(),
        name: "Echo".into(),
        kind: "httpBasicAuth".into(),
    }]
}

/// (code, pointer) of every problem of a case, through the rule file.
fn classified(case: &toml::Table, rules: &RuleTable) -> Vec<(String, String, String)> {
    let visible: Vec<String> = fixture().types.keys().cloned().collect();
    let steps = HashMap::new();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    check_workflow(fixture(), &program(case), Some(&tenant_credentials()))
        .into_iter()
        .map(|p| {
            let d = rules
                .classify(
                    &EngineProblem {
                        level: Severity::Error,
                        text: p.text.clone(),
                        location: p.location.clone(),
                    },
                    &ctx,
                )
                .diagnostic;
            (d.code, d.path, p.text)
        })
        .collect()
}

#[test]
fn every_adapter_case_gives_its_code_at_its_pointer() {
    let rules = rules();
    let mut failures = Vec::new();
    let mut seen = 0;
    for case in cases() {
        let id = case["id"].as_str().unwrap();
        if !ADAPTER_CASES.contains(&id) && id != "credentials-unknown" {
            continue;
        }
        seen += 1;
        let (code, at) = (
            case["code"].as_str().unwrap(),
            case["where"].as_str().unwrap(),
        );
        let found = classified(&case, &rules);
        if !found.iter().any(|(c, p, _)| c == code && p == at) {
            failures.push(format!("{id}: want {code} at {at}, got {found:?}"));
        }
    }
    assert_eq!(seen, ADAPTER_CASES.len() + 1);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_workflows_give_no_problem() {
    let rules = rules();
    for case in cases() {
        if case.contains_key("code") {
            continue;
        }
        let found = classified(&case, &rules);
        assert!(found.is_empty(), "{}: {found:?}", case["id"]);
    }
}

#[test]
fn no_adapter_problem_falls_to_constraint() {
    let rules = rules();
    for case in cases() {
        for (code, _, text) in classified(&case, &rules) {
            assert_ne!(code, "constraint", "{}: {text}", case["id"]);
        }
    }
}

#[test]
fn named_credentials_are_checked_only_against_a_known_list() {
    let case = cases()
        .into_iter()
        .find(|c| c["id"].as_str() == Some("credentials-unknown"))
        .unwrap();
    let unknown_list = check_workflow(fixture(), &program(&case), None);
    assert!(unknown_list.is_empty(), "{unknown_list:?}");
}
