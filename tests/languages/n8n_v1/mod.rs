//! `n8n/v1` against a real n8n: the language-loop suite, with its programs
//! built from the shapes of the n8n corpus (`tests/n8n/corpus/`), one
//! rejected and one corrected workflow per diagnostic code of
//! `guides/n8n-v1/closed-sets.md`, and the engine-run tests, its table in
//! `engine_runs` (runs counted through `hook`); and what only this
//! language checks: `three_languages` (`workflow/v1`, `mistral/v2` and
//! `n8n/v1` on one gateway).

mod approval;
mod engine_runs;
mod hook;
mod three_languages;

use crate::common::answers::codes;
use crate::common::n8n_gateway::{
    N8nEnv, chain, greet_program, manual_trigger, node, set_node, workflow,
};
use crate::suite::LoopLanguage;
use serde_json::{Value, json};

pub struct N8nV1 {
    n: N8nEnv,
}

/// Start → Say, a Set whose one field is `value`.
fn say(value: Value) -> Value {
    let mut set = set_node("Say", 240, &[("said", "x")]);
    set["parameters"]["assignments"]["assignments"][0]["value"] = value;
    workflow("say", vec![manual_trigger(), set], chain(&["Start", "Say"]))
}

/// Start → Say with `edit` applied to the Set node.
fn say_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut doc = say(json!("hi"));
    edit(&mut doc["nodes"][1]);
    doc
}

/// Start → Code with `js` as its JavaScript.
fn code(js: &str) -> Value {
    workflow(
        "code",
        vec![
            manual_trigger(),
            node("Code", "code", 2.0, 240, json!({"jsCode": js})),
        ],
        chain(&["Start", "Code"]),
    )
}

/// (code, rejected program, accepted program) for every code validate gives.
fn cases() -> Vec<(&'static str, Value, Value)> {
    let good = say(json!("hi"));
    let mut to_nowhere = good.clone();
    to_nowhere["connections"]["Start"]["main"][0][0]["node"] = json!("Nowhere");
    let mut mian = good.clone();
    mian["connections"]["Start"] = json!({"mian": [[{"node": "Say", "type": "main", "index": 0}]]});
    let twice = workflow(
        "twice",
        vec![
            manual_trigger(),
            set_node("Say", 240, &[("said", "a")]),
            set_node("Say", 480, &[("said", "b")]),
        ],
        chain(&["Start", "Say"]),
    );
    let mut hashed = good.clone();
    hashed["nodes"][1]["name"] = json!("Say #1");
    hashed["connections"] = chain(&["Start", "Say #1"]);
    let mut once = twice.clone();
    once["nodes"][2] = set_node("Again", 480, &[("said", "b")]);
    once["connections"] = chain(&["Start", "Say", "Again"]);
    vec![
        ("invalid_structure", mian, good.clone()),
        (
            "type_mismatch",
            say_with(|n| n["typeVersion"] = json!("3.4")),
            good.clone(),
        ),
        ("duplicate_id", twice, once),
        ("reserved_character", hashed, good.clone()),
        ("unknown_task", to_nowhere, good.clone()),
        (
            "unknown_capability",
            say_with(|n| n["type"] = json!("n8n-nodes-base.sett")),
            good.clone(),
        ),
        ("missing_parameter", code(""), code("return $input.all();")),
        (
            "unexpected_parameter",
            say_with(|n| n["parameters"]["colour"] = json!("red")),
            good.clone(),
        ),
        (
            "invalid_value",
            say_with(|n| n["parameters"]["mode"] = json!("bogus")),
            good.clone(),
        ),
        (
            "malformed_expression",
            say(json!("={{ 1 + }}")),
            say(json!("={{ 1 + 1 }}")),
        ),
        (
            "unresolved_reference",
            say(json!("={{ $('Customer').item.json.name }}")),
            say(json!("={{ $('Start').item.json.name }}")),
        ),
    ]
}

impl LoopLanguage for N8nV1 {
    crate::engine_loop_language!();

    const GUIDES: &'static str = "guides/n8n-v1";
    const MIN_EXAMPLES: usize = 8;
    const CORE_GUIDE_MARKS: [&'static str; 2] = ["connections", "typeVersion"];
    // The id itself: "set" alone is in hundreds of n8n's descriptions.
    const LOOKUP: (&'static str, &'static str, &'static str) =
        ("n8n-nodes-base.set", "n8n-nodes-base.set", "safe");
    const PLAN_RISK: &'static str = "safe";

    fn check_entry(&self, entry: &Value) {
        let n8n = &entry["entry"]["n8n"];
        assert_eq!(n8n["trigger"], false, "{entry}");
        assert!(
            n8n["versions"]
                .as_array()
                .is_some_and(|v| v.contains(&json!(3.4))),
            "{entry}"
        );
        assert_eq!(entry["entry"]["input_schema"]["type"], "object", "{entry}");
    }

    fn mistaken_program(&self) -> Value {
        let mut doc = greet_program();
        // `Greet` reads a node the workflow does not have.
        doc["nodes"][1]["parameters"]["assignments"]["assignments"][0]["value"] =
            json!("=hello {{ $('Input').item.json.name }}");
        doc
    }

    fn check_mistake(&self, answer: &Value) {
        assert!(
            codes(answer).contains(&"unresolved_reference".to_string()),
            "{answer}"
        );
        let d = answer["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "unresolved_reference")
            .unwrap();
        assert_eq!(
            d["path"], "/nodes/1/parameters/assignments/assignments/0/value",
            "a JSON Pointer to the parameter: {d}"
        );
    }

    fn program(&self) -> Value {
        greet_program()
    }

    fn run_extra(&self) -> Value {
        json!({"input": {"name": "ada"}})
    }

    async fn engine_mark(&self) -> Value {
        json!(self.n.n8n.gateway_workflows(&self.n.a.n8n_key).await)
    }

    fn check_ran(&self, _before: &Value, after: &Value, answer: &Value) {
        assert_eq!(
            answer["output"],
            json!([{"greeting": "hello ada"}]),
            "{answer}"
        );
        let steps = answer["trace"]["steps"].as_array().unwrap();
        let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
        assert_eq!(ids, ["Start", "Greet"], "{steps:?}");
        assert_eq!(steps[1]["calls"], "n8n-nodes-base.set");
        // The node's items themselves, with their count per output.
        assert_eq!(
            steps[1]["output"],
            json!({"items": [1], "data": [[{"greeting": "hello ada"}]]}),
            "{steps:?}"
        );
        // The run's workflow was created in the caller's n8n project and
        // deleted again (other tests may be running their own meanwhile).
        assert!(after.is_array(), "{after}");
    }

    fn check_example_program(&self, name: &str, program: &Value) {
        assert!(program["nodes"].is_array(), "{name} is a workflow document");
    }

    fn program_cases(&self) -> Vec<(&'static str, Value, Value)> {
        cases()
    }

    fn input_binding(&self) -> (Value, Value, Value) {
        (greet_program(), json!({"nom": "x"}), json!({"name": "x"}))
    }

    fn ceiling(&self) -> (Value, Value) {
        // An HTTP Request that is not a read: destructive. Only validated.
        let post = workflow(
            "post",
            vec![
                manual_trigger(),
                node(
                    "Post",
                    "httpRequest",
                    4.2,
                    240,
                    json!({"method": "POST", "url": "http://127.0.0.1:1/", "options": {}}),
                ),
            ],
            chain(&["Start", "Post"]),
        );
        (post, greet_program())
    }

    fn catch_all_by_rules(&self) -> Option<(&'static str, &'static str)> {
        // Every finding of the adapter has a rule, and so has every refusal
        // of n8n's that validate can meet.
        Some((
            "classifiers/n8n-v1.toml",
            "n8n said something no rule of this file describes",
        ))
    }
}

crate::language_loop_tests!(N8nV1);
crate::engine_run_tests!(N8nV1);
