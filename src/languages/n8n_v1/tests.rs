//! The language against the n8n corpus (`tests/n8n/corpus/`, docs/n8n.md):
//! every broken workflow whose mistake is one of the language's own checks
//! gives its code at its JSON Pointer, the others draw no error from the
//! language, and the valid workflows draw none at all. The catalog is built
//! from n8n's own descriptions of the corpus's node types
//! (`tests/n8n/node-types.json`).

use super::N8nV1;
use crate::catalog::CatalogView;
use crate::classify::{Diagnostic, Severity};
use crate::languages::Language;
use crate::validate::visibility::HiddenSteps;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The corpus cases the language reports itself. Every other case is the
/// adapter's (docs/n8n-v1.md, "Who does what"): a node type's versions
/// (`type-version-too-high-*`, `type-version-between`), its parameters
/// (`http-missing-url`, `http-empty-url`, `webhook-missing-path`,
/// `code-empty`, the `*-invalid-*` values, the `wrong-type-*` values,
/// `set-assignment-type-mismatch`, `unknown-extra-parameter`,
/// `unknown-http-option`), filter operators (`if-unknown-operator*`,
/// `switch-unknown-operator`), cron expressions (`cron-*`) and credentials
/// (`credentials-*`): all need n8n's full node descriptions.
const LANGUAGE_CASES: &[&str] = &[
    // The catalog-visibility path: a type the caller cannot see.
    "unknown-node-type",
    "unknown-node-type-typo",
    "unknown-package",
    // The document's form.
    "type-version-string",
    "duplicate-node-names",
    "duplicate-node-ids",
    "node-without-name",
    "node-without-type",
    "nodes-not-a-list",
    "settings-bad-execution-order",
    // Connections.
    "connection-missing-target",
    "connection-missing-source",
    "connection-target-case",
    "connection-bad-type",
    "switch-output-to-nowhere",
    "if-third-output",
    "merge-input-out-of-range",
    // The flow of a run.
    "cycle-no-exit",
    "cycle-self-loop",
    "cycle-if-both-arms-back",
    "disconnected-node",
    "no-trigger",
    "two-manual-triggers",
    // JavaScript.
    "unclosed-expression",
    "expression-syntax-error",
    "expression-unknown-node",
    "expression-unknown-node-legacy",
    "expression-downstream-node",
    "expression-other-branch",
    "code-syntax-error",
    "code-syntax-error-each-item",
    "code-unknown-node-reference",
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/n8n/corpus")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// A view with one capability per node type n8n described, its ports as
/// the adapter's entries give them: a number when n8n lists them.
pub(super) fn corpus_view() -> CatalogView {
    let descriptions =
        read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/n8n/node-types.json"));
    let mut entries: Vec<Value> = Vec::new();
    for d in descriptions.as_array().into_iter().flatten() {
        let Some(id) = d["name"].as_str() else {
            continue;
        };
        if entries.iter().any(|e| e["id"] == id) {
            continue;
        }
        let trigger = d["group"]
            .as_array()
            .is_some_and(|g| g.iter().any(|x| x == "trigger"));
        let mut n8n = json!({"trigger": trigger});
        if let Some(max) = d["maxNodes"].as_u64() {
            n8n["max_nodes"] = json!(max);
        }
        for key in ["inputs", "outputs"] {
            if let Some(list) = d[key].as_array() {
                n8n[key] = json!(list.len());
            }
        }
        entries.push(json!({"id": id, "kind": "capability", "risk": "safe",
            "risk_hints": {"readOnly": true, "destructive": false, "openWorld": false},
            "n8n": n8n}));
    }
    CatalogView::from_capabilities(entries)
}

/// What the language itself finds, the way the validate operation asks:
/// the structure problem alone, or the native checks and the steps
/// calling types the caller cannot see.
pub(super) fn findings(program: &Value, view: &CatalogView) -> Vec<Diagnostic> {
    let l = N8nV1;
    if let Some(problem) = l.structure_problem(program) {
        return vec![problem];
    }
    let steps = l.steps(program);
    let mut out = l.native_checks(program, &steps, view);
    out.extend(HiddenSteps::find(&l, &steps, view).findings);
    out
}

fn cases() -> Vec<toml::Table> {
    let text = std::fs::read_to_string(corpus().join("cases.toml")).expect("cases.toml");
    let table: toml::Table = toml::from_str(&text).expect("cases.toml parses");
    table["case"]
        .as_array()
        .expect("[[case]]")
        .iter()
        .filter_map(|c| c.as_table().cloned())
        .collect()
}

fn text<'t>(case: &'t toml::Table, key: &str) -> &'t str {
    case.get(key).and_then(|v| v.as_str()).unwrap_or("")
}

fn show(found: &[Diagnostic]) -> String {
    found
        .iter()
        .map(|d| format!("\n  {:?} {} {} — {}", d.severity, d.code, d.path, d.message))
        .collect()
}

#[test]
fn every_language_case_gives_its_code_at_its_pointer() {
    let view = corpus_view();
    let cases = cases();
    for id in LANGUAGE_CASES {
        let case = cases
            .iter()
            .find(|c| text(c, "id") == *id)
            .unwrap_or_else(|| panic!("no case {id}"));
        let program = read_json(&corpus().join(text(case, "file")));
        let found = findings(&program, &view);
        let severity = match text(case, "severity") {
            "warning" => Severity::Warning,
            _ => Severity::Error,
        };
        assert!(
            found.iter().any(|d| d.code == text(case, "code")
                && d.path == text(case, "where")
                && d.severity == severity),
            "{id}: expected {} at {} ({:?}), found:{}",
            text(case, "code"),
            text(case, "where"),
            severity,
            show(&found)
        );
        // Nothing else is an error: one mistake, one finding.
        let others: Vec<Diagnostic> = found
            .iter()
            .filter(|d| d.severity == Severity::Error && d.path != text(case, "where"))
            .cloned()
            .collect();
        assert!(others.is_empty(), "{id}: more errors:{}", show(&others));
    }
}

#[test]
fn the_adapters_cases_draw_no_error_from_the_language() {
    let view = corpus_view();
    for case in cases() {
        let id = text(&case, "id");
        if LANGUAGE_CASES.contains(&id) || !text(&case, "file").starts_with("broken/") {
            continue;
        }
        let program = read_json(&corpus().join(text(&case, "file")));
        let errors: Vec<Diagnostic> = findings(&program, &view)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{id}:{}", show(&errors));
    }
}

#[test]
fn every_valid_workflow_draws_no_error() {
    let view = corpus_view();
    let mut seen = 0;
    for case in cases() {
        if !text(&case, "file").starts_with("valid/") {
            continue;
        }
        seen += 1;
        let program = read_json(&corpus().join(text(&case, "file")));
        let errors: Vec<Diagnostic> = findings(&program, &view)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{}:{}", text(&case, "id"), show(&errors));
        let l = N8nV1;
        let steps = l.steps(&program);
        let plan = l.plan(&program, &steps, &|_, _| {
            Some(("safe".into(), crate::pilotage::RiskHints::SAFE))
        });
        assert_eq!(plan["max_risk"], "safe");
    }
    assert_eq!(seen, 12);
}

#[test]
fn a_name_that_differs_in_case_is_named_in_the_hint() {
    let program = read_json(&corpus().join("broken/connection-target-case.json"));
    let found = findings(&program, &corpus_view());
    assert_eq!(found.len(), 1, "{}", show(&found));
    assert_eq!(
        found[0].hint.as_deref(),
        Some("node names are case-sensitive: the node is named 'Set'")
    );
}

/// Asserts `value` has the shape of `$defs[name]` of the specification's
/// schema, when the schema is next to the repository (CI has it).
fn assert_shape(value: &Value, name: &str) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pilotage/pilotage.schema.json");
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let mut root: Value = serde_json::from_str(&text).expect("the schema is JSON");
    root["$ref"] = json!(format!("#/$defs/{name}"));
    if let Some(obj) = root.as_object_mut() {
        obj.remove("$id");
    }
    let validator = jsonschema::validator_for(&root).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value:#}");
}

#[test]
fn plans_and_traces_have_the_specifications_shape() {
    let l = N8nV1;
    let p = super::fixtures::shapes();
    let plan = l.plan(&p, &l.steps(&p), &|_, _| None);
    assert_shape(&plan, "Plan");
    let events = vec![
        json!({"node": "Loop", "run": 0, "status": "success", "duration_ms": 1, "items": [0, 2]}),
        json!({"node": "Check", "run": 0, "status": "success", "duration_ms": 1, "items": [1, 0]}),
        json!({"node": "Big", "run": 0, "status": "error", "error": "refused"}),
    ];
    let trace = l.trace(
        &p,
        &events,
        &crate::engines::profile::EngineProfile::default(),
        &[],
        crate::languages::RunEnd::Failed,
    );
    for step in trace.iter().chain(&l.summarize(&trace)) {
        assert_shape(step, "TraceStep");
    }
}

/// Every corpus workflow with parts of it swapped for odd values (wrong
/// types, missing nodes, deep nesting, cycles) goes through every method
/// without a panic.
#[test]
fn damaged_workflows_never_panic() {
    let odd = [
        json!(null),
        json!(7),
        json!("={{ $('"),
        json!("={{ }}"),
        json!([[{"node": "Start", "index": 99}]]),
        json!({"main": [[{"node": "Start"}], null, 3]}),
        json!([1, [2, {"a": "={{ $node.Start }}"}]]),
        json!(""),
    ];
    let view = corpus_view();
    let l = N8nV1;
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for case in cases() {
        let original = read_json(&corpus().join(text(&case, "file")));
        for _ in 0..40 {
            let mut program = original.clone();
            let mut at = &mut program;
            // Walk down a random path, then swap what is there.
            for _ in 0..(next() % 6) {
                let len = match &*at {
                    Value::Object(m) => m.len(),
                    Value::Array(a) => a.len(),
                    _ => 0,
                };
                if len == 0 {
                    break;
                }
                let k = (next() % len as u64) as usize;
                at = match at {
                    Value::Object(m) => m.values_mut().nth(k).expect("k < len"),
                    Value::Array(a) => &mut a[k],
                    _ => unreachable!("a container"),
                };
            }
            *at = odd[(next() % odd.len() as u64) as usize].clone();
            let _ = findings(&program, &view);
            let steps = l.steps(&program);
            let plan = l.plan(&program, &steps, &|_, _| None);
            assert!(plan["steps"].is_array());
            let events: Vec<Value> = steps
                .iter()
                .map(|s| json!({"node": s.id, "status": "success", "items": [1, 0, 2]}))
                .collect();
            let _ = l.trace(
                &program,
                &events,
                &crate::engines::profile::EngineProfile::default(),
                &steps,
                crate::languages::RunEnd::Completed,
            );
            let _ = l.program_name(&program);
        }
    }
}
