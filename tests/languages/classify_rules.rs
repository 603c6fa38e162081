//! The shipped rule files: they load, every inline example passes, every engine
//! message shape of both dialects maps to the code the closed-sets guide promises
//! (the expected table below is written independently of the rule files), and an
//! edit to a rule file reaches a running classifier.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pilotage_gateway::classify::{
    Classified, Classifiers, ClassifyContext, EngineProblem, RuleSource, RuleTable, Severity,
    check_examples,
};
use pilotage_gateway::reload::spawn_reload_watcher;

/// The closed diagnostic codes of workflow/v1 (closed-sets guide), reserved ones included.
const WORKFLOW_V1_CODES: &[&str] = &[
    "unknown_capability",
    "missing_parameter",
    "type_mismatch",
    "unexpected_parameter",
    "duplicate_id",
    "missing_id",
    "reserved_character",
    "unknown_kind",
    "malformed_expression",
    "unresolved_reference",
    "invalid_structure",
    "deprecated_capability",
    "unused_output",
    "constraint",
    "input_binding",
    "context_binding",
];

const DIALECT_A: &str = "classifiers/workflow-v1.toml";
const DIALECT_B: &str = "classifiers/workflow-v1.dialect-b.toml";

fn codes() -> BTreeSet<String> {
    WORKFLOW_V1_CODES.iter().map(|c| c.to_string()).collect()
}

fn shipped(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

fn load(file: &str) -> RuleTable {
    RuleTable::load(&shipped(file), &codes()).unwrap_or_else(|e| panic!("{e}"))
}

/// The program the shape messages below refer to: step ids and their pointers.
fn steps() -> HashMap<String, String> {
    [
        ("a", "/steps/0"),
        ("b", "/steps/1"),
        ("c", "/steps/1/then/0"),
        ("l", "/steps/2"),
    ]
    .map(|(id, pointer)| (id.to_owned(), pointer.to_owned()))
    .into()
}

fn visible() -> Vec<String> {
    ["crm.get_customer", "crm.list_orders", "billing.charge"]
        .map(String::from)
        .to_vec()
}

fn classify(table: &RuleTable, level: Severity, text: &str, location: Option<&str>) -> Classified {
    let steps = steps();
    let visible = visible();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    let problem = EngineProblem {
        level,
        text: text.to_owned(),
        location: location.map(str::to_owned),
    };
    table.classify(&problem, &ctx)
}

/// One engine message shape: (shape, level, text, location, expected code, expected path).
type Shape = (
    &'static str,
    Severity,
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
);

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;

#[rustfmt::skip]
fn dialect_a_shapes() -> Vec<Shape> {
    vec![
        ("1", E, "unknown capability 'crm.get_custmer' (did you mean 'crm.get_customer'?)", Some("steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("1-plain", E, "unknown capability 'zzz'", Some("steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("2", E, "capability 'hr.payroll' is not enabled for tenant acme", Some("steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("3", E, "missing required parameter 'customer_id' for crm.get_customer", Some("steps[0].with"), "missing_parameter", "/steps/0/with"),
        ("4", E, "parameter 'amount' of billing.charge expects integer, got string", Some("steps[1].then[0].with.amount"), "type_mismatch", "/steps/1/then/0/with/amount"),
        ("5", E, "invalid value 'x' for parameter 'mode' of billing.charge (allowed: a, b, c)", Some("steps[0].with.mode"), "type_mismatch", "/steps/0/with/mode"),
        ("6", E, "unexpected parameter 'note' for crm.get_customer", Some("steps[0].with.note"), "unexpected_parameter", "/steps/0/with/note"),
        ("7", E, "duplicate step id 'a'", Some("steps[2].id"), "duplicate_id", "/steps/2/id"),
        ("8", E, "step #1 has no id", Some("steps[1].then[0]"), "missing_id", "/steps/1/then/0"),
        ("9", E, "unknown step kind 'loop'", Some("steps[1].kind"), "unknown_kind", "/steps/1/kind"),
        ("10", E, "step 'c': cannot parse expression '$.steps.'", None, "malformed_expression", "/steps/1/then/0"),
        ("11", E, "step 'a': reference to step 'b' which has not run yet", None, "unresolved_reference", "/steps/0"),
        ("12", E, "step 'b': step 'c' is only visible inside loop 'l'", None, "unresolved_reference", "/steps/1"),
        ("13", E, "branch 'b' needs a 'when' condition and a non-empty 'then' list", Some("steps[1]"), "invalid_structure", "/steps/1"),
        ("14", E, "for_each 'l' needs 'items', 'as' and a non-empty 'do' list", Some("steps[2]"), "invalid_structure", "/steps/2"),
        ("15", E, "set step 'b' needs a 'value'", Some("steps[1]"), "invalid_structure", "/steps/1"),
        ("16", E, "unknown condition operator 'contains'", Some("steps[1].when.and[0]"), "malformed_expression", "/steps/1/when/and/0"),
        ("17", E, "'$.item' used outside of a loop in step 'c'", None, "unresolved_reference", "/steps/1/then/0"),
        ("18", E, "input field 'amount' is not declared in the workflow input schema", Some("steps[0].with.total"), "unresolved_reference", "/steps/0/with/total"),
        ("19", W, "capability 'crm.get_customer_v1' is deprecated: use crm.get_customer", Some("steps[0].capability"), "deprecated_capability", "/steps/0/capability"),
        ("20", W, "output of step 'a' is never used", Some("steps[0]"), "unused_output", "/steps/0"),
        ("21", E, "E_LIMIT_0042: step budget exhausted (201/200)", None, "constraint", ""),
        ("22", E, "step 'c': context value 'locale' is not available", None, "unresolved_reference", "/steps/1/then/0"),
        ("steps", E, "workflow must have a 'steps' list", None, "invalid_structure", ""),
    ]
}

#[rustfmt::skip]
fn dialect_b_shapes() -> Vec<Shape> {
    vec![
        ("1", E, "no function named 'crm.get_custmer' exists; perhaps 'crm.get_customer'", Some("$.steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("1-plain", E, "no function named 'zzz' exists", Some("$.steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("2", E, "function 'hr.payroll' is not licensed for org acme", Some("$.steps[0].capability"), "unknown_capability", "/steps/0/capability"),
        ("3", E, "function crm.get_customer: argument 'customer_id' is required", Some("$.steps[0].with"), "missing_parameter", "/steps/0/with"),
        ("4", E, "function billing.charge: argument 'amount' must be integer (saw string)", Some("$.steps[1].then[0].with.amount"), "type_mismatch", "/steps/1/then/0/with/amount"),
        ("5", E, "function billing.charge: argument 'mode' must be one of a|b|c (saw 'x')", Some("$.steps[0].with.mode"), "type_mismatch", "/steps/0/with/mode"),
        ("6", E, "function crm.get_customer: argument 'note' is not recognised", Some("$.steps[0].with.note"), "unexpected_parameter", "/steps/0/with/note"),
        ("7", E, "node id 'a' appears more than once", Some("$.steps[2].id"), "duplicate_id", "/steps/2/id"),
        ("8", E, "node at position 1 lacks an id", Some("$.steps[1].then[0]"), "missing_id", "/steps/1/then/0"),
        ("9", E, "node kind 'loop' is not supported", Some("$.steps[1].kind"), "unknown_kind", "/steps/1/kind"),
        ("10", E, "node 'c': expression '$.steps.' is malformed", None, "malformed_expression", "/steps/1/then/0"),
        ("11", E, "node 'a' uses 'b' before it has produced output", None, "unresolved_reference", "/steps/0"),
        ("12", E, "node 'b' reads 'c', which only exists inside loop 'l'", None, "unresolved_reference", "/steps/1"),
        ("13", E, "decision node 'b' requires when/then", Some("$.steps[1]"), "invalid_structure", "/steps/1"),
        ("14", E, "loop node 'l' requires items/as/do", Some("$.steps[2]"), "invalid_structure", "/steps/2"),
        ("15", E, "assign node 'b' requires value", Some("$.steps[1]"), "invalid_structure", "/steps/1"),
        ("16", E, "comparison 'contains' is not supported", Some("$.steps[1].when.and[0]"), "malformed_expression", "/steps/1/when/and/0"),
        ("17", E, "node 'c' reads the loop element outside any loop", None, "unresolved_reference", "/steps/1/then/0"),
        ("18", E, "param 'amount' is not part of the declared input", Some("$.steps[0].with.total"), "unresolved_reference", "/steps/0/with/total"),
        ("19", W, "function 'crm.get_customer_v1' is retired; prefer crm.get_customer", Some("$.steps[0].capability"), "deprecated_capability", "/steps/0/capability"),
        ("20", W, "node 'a' result is discarded", Some("$.steps[0]"), "unused_output", "/steps/0"),
        ("21", E, "QUOTA: node budget exceeded 201 of 200", None, "constraint", ""),
        ("22", E, "node 'c': ctx key 'locale' missing", None, "unresolved_reference", "/steps/1/then/0"),
        ("steps", E, "definition has no 'steps' array", None, "invalid_structure", ""),
    ]
}

fn assert_shapes(file: &str, shapes: Vec<Shape>) {
    let table = load(file);
    for (shape, level, text, location, code, path) in shapes {
        let got = classify(&table, level, text, location);
        let d = &got.diagnostic;
        assert_eq!(d.code, code, "{file} shape {shape}: {text}");
        assert_eq!(d.path, path, "{file} shape {shape}: {text}");
        assert_eq!(d.severity, level, "{file} shape {shape}: {text}");
        assert_eq!(
            got.rule.is_none(),
            code == "constraint",
            "{file} shape {shape}"
        );
        if code == "constraint" {
            assert_eq!(
                d.message, text,
                "{file} shape {shape}: the engine text is kept"
            );
        }
    }
}

#[test]
fn shipped_files_load_and_every_example_passes() {
    for file in [DIALECT_A, DIALECT_B] {
        let table = load(file);
        let report = check_examples(&table);
        assert!(report.all_passed(), "{report}");
        assert!(
            report.outcomes.len() >= table.len(),
            "{file}: an example per rule"
        );
        for rule in table.rule_names() {
            assert!(
                report
                    .outcomes
                    .iter()
                    .any(|o| o.rule.as_deref() == Some(rule)),
                "{file}: rule '{rule}' has no example"
            );
        }
    }
}

#[test]
fn every_dialect_a_shape_maps_to_its_closed_code() {
    assert_shapes(DIALECT_A, dialect_a_shapes());
}

#[test]
fn every_dialect_b_shape_maps_to_its_closed_code() {
    assert_shapes(DIALECT_B, dialect_b_shapes());
}

#[test]
fn unknown_and_not_enabled_are_identical_in_both_dialects() {
    let a = load(DIALECT_A);
    let b = load(DIALECT_B);
    let candidates = [
        (
            &a,
            "unknown capability 'crm.get_customerz' (did you mean 'hr.secret'?)",
            "steps[0].capability",
        ),
        (
            &a,
            "capability 'crm.get_customerz' is not enabled for tenant acme",
            "steps[0].capability",
        ),
        (
            &b,
            "no function named 'crm.get_customerz' exists; perhaps 'hr.secret'",
            "$.steps[0].capability",
        ),
        (
            &b,
            "function 'crm.get_customerz' is not licensed for org acme",
            "$.steps[0].capability",
        ),
    ];
    let diagnostics: Vec<String> = candidates
        .iter()
        .map(|(table, text, location)| {
            let got = classify(table, Severity::Error, text, Some(location));
            serde_json::to_string(&got.diagnostic).unwrap()
        })
        .collect();
    assert!(
        diagnostics.iter().all(|d| d == &diagnostics[0]),
        "{diagnostics:#?}"
    );
    assert_eq!(
        diagnostics[0],
        r#"{"severity":"error","code":"unknown_capability","path":"/steps/0/capability","message":"unknown capability 'crm.get_customerz'","hint":"close match: crm.get_customer"}"#
    );
}

#[test]
fn engine_suggestions_never_reach_the_caller() {
    let leaks = [
        (
            DIALECT_A,
            "unknown capability 'hr.payrol' (did you mean 'hr.payroll'?)",
        ),
        (
            DIALECT_A,
            "capability 'crm.old' is deprecated: use hr.payroll",
        ),
        (DIALECT_A, "a new message (did you mean 'hr.payroll'?)"),
        (
            DIALECT_B,
            "no function named 'hr.payrol' exists; perhaps 'hr.payroll'",
        ),
        (
            DIALECT_B,
            "function 'crm.old' is retired; prefer hr.payroll",
        ),
        (DIALECT_B, "a new message; perhaps 'hr.payroll'"),
    ];
    for (file, text) in leaks {
        let got = classify(&load(file), Severity::Error, text, None);
        let json = serde_json::to_string(&got.diagnostic).unwrap();
        assert!(!json.contains("hr.payroll"), "{file}: {json}");
    }
}

/// A scratch copy of a shipped rule file, removed on drop.
struct ScratchCopy {
    dir: PathBuf,
    file: PathBuf,
}

impl ScratchCopy {
    fn of(shipped_file: &str) -> ScratchCopy {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("classify-live-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("workflow-v1.toml");
        std::fs::copy(shipped(shipped_file), &file).unwrap();
        ScratchCopy { dir, file }
    }

    /// Replaces the file the way editors do: write a sibling, rename it over.
    fn replace(&self, content: &str) {
        let staged = self.dir.join(".workflow-v1.toml.swp");
        std::fs::write(&staged, content).unwrap();
        std::fs::rename(&staged, &self.file).unwrap();
    }
}

impl Drop for ScratchCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn live_code(classifiers: &Classifiers, text: &str) -> String {
    let steps = steps();
    let visible = visible();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    let problem = EngineProblem {
        level: Severity::Error,
        text: text.to_owned(),
        location: None,
    };
    classifiers
        .classify("workflow/v1", &problem, &ctx)
        .expect("language configured")
        .diagnostic
        .code
}

async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn editing_the_rule_file_takes_effect_on_a_running_classifier() {
    let copy = ScratchCopy::of(DIALECT_A);
    let classifiers = Arc::new(
        Classifiers::load([RuleSource {
            language: "workflow/v1".into(),
            path: copy.file.clone(),
            allowed_codes: codes(),
        }])
        .unwrap(),
    );
    let watched = Arc::clone(&classifiers);
    let rejected = Arc::new(AtomicUsize::new(0));
    let rejections = Arc::clone(&rejected);
    let _watcher = spawn_reload_watcher(classifiers.paths(), move || {
        if watched.reload().is_err() {
            rejections.fetch_add(1, Ordering::SeqCst);
        }
    })
    .unwrap();
    let budget = "E_LIMIT_0042: step budget exhausted (201/200)";
    assert_eq!(live_code(&classifiers, budget), "constraint");

    // An operator decides the budget message deserves its own rule.
    let original = std::fs::read_to_string(&copy.file).unwrap();
    let tuned = format!(
        "{original}\n[[rule]]\nname = \"step-budget\"\npattern = '''^E_LIMIT_0042: '''\n\
         code = \"invalid_structure\"\n"
    );
    let tuned = tuned.replace(
        "[[unmatched_example]]\nmessage = \"E_LIMIT_0042: step budget exhausted (201/200)\"\n",
        "",
    );
    copy.replace(&tuned);
    eventually("the tuned rule to be live", || {
        live_code(&classifiers, budget) == "invalid_structure"
    })
    .await;

    // A broken edit is rejected; the tuned table keeps serving.
    copy.replace(&tuned.replace("code = \"invalid_structure\"\n", "code = \"bogus\"\n"));
    eventually("the broken edit to be rejected", || {
        rejected.load(Ordering::SeqCst) > 0
    })
    .await;
    assert_eq!(live_code(&classifiers, budget), "invalid_structure");
    assert_eq!(
        live_code(&classifiers, "duplicate step id 'a'"),
        "duplicate_id",
        "the previous table is whole"
    );
    assert!(classifiers.counts()["invalid_structure"] >= 1);
}
