//! What n8n runs silently, through the HTTP endpoint of a gateway in front
//! of a real n8n (docs/n8n-v1.md, "What n8n runs silently"): each mistake
//! the gateway calls an error is refused at validate with its closed code
//! at its pointer, and execute refuses it with the same diagnostic; a
//! warning leaves the program valid and it runs; data the program pins on a
//! node stands in for that node's run.

use crate::common::answers::status;
use crate::common::n8n_gateway::{
    N8nEnv, chain, manual_trigger, node, run, say_program, set_node, validate, workflow,
};
use serde_json::{Value, json};

/// The first error diagnostic of an answer, as (code, path).
fn first_error(answer: &Value) -> (String, String) {
    let d = answer["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["severity"] == "error")
        .unwrap_or_else(|| panic!("no error in {answer}"));
    (
        d["code"].as_str().unwrap_or("").to_string(),
        d["path"].as_str().unwrap_or("").to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_n8n_would_run_silently_are_refused_alike_by_validate_and_execute() {
    let env = N8nEnv::start().await;
    let c = env.session(&env.a).await;

    let mut second_manual = say_program("two starts");
    second_manual["nodes"].as_array_mut().unwrap().push(node(
        "Start again",
        "manualTrigger",
        1.0,
        0,
        json!({}),
    ));
    second_manual["connections"]["Start again"] =
        json!({"main": [[{"node": "Say", "type": "main", "index": 0}]]});

    let misspelt = say_program("={{ $josn.name }}");
    let no_such_method = say_program("={{ $json.name.noSuchFunction() }}");

    let mut pinned_to_nothing = say_program("said");
    pinned_to_nothing["pinData"] = json!({"Sya": [{"json": {"said": "pinned"}}]});

    let mut all_disabled = say_program("said");
    all_disabled["nodes"][0]["disabled"] = json!(true);

    let cases = [
        (second_manual, "invalid_structure", "/nodes/2"),
        (
            misspelt,
            "unresolved_reference",
            "/nodes/1/parameters/assignments/assignments/0/value",
        ),
        (
            no_such_method,
            "unresolved_reference",
            "/nodes/1/parameters/assignments/assignments/0/value",
        ),
        (pinned_to_nothing, "unknown_task", "/pinData/Sya"),
        (all_disabled, "invalid_structure", "/nodes/0/disabled"),
    ];
    for (program, code, path) in cases {
        let verdict = validate(&c, &program).await;
        assert_eq!(verdict.structured["valid"], false, "{}", verdict.structured);
        let expected = (code.to_string(), path.to_string());
        assert_eq!(first_error(&verdict.structured), expected);
        let ran = run(&c, &program, json!({})).await;
        assert_eq!(status(&ran), "validation_error", "{}", ran.structured);
        assert_eq!(first_error(&ran.structured), expected);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warning_leaves_the_program_valid_and_it_runs() {
    let env = N8nEnv::start().await;
    let c = env.session(&env.a).await;
    // `Aside → Never` is connected, but no trigger leads to it.
    let program = workflow(
        "aside",
        vec![
            manual_trigger(),
            set_node("Say", 240, &[("said", "hello")]),
            set_node("Aside", 0, &[("x", "1")]),
            set_node("Never", 240, &[("y", "2")]),
        ],
        json!({"Start": {"main": [[{"node": "Say", "type": "main", "index": 0}]]},
               "Aside": {"main": [[{"node": "Never", "type": "main", "index": 0}]]}}),
    );
    let verdict = validate(&c, &program).await;
    assert_eq!(verdict.structured["valid"], true, "{}", verdict.structured);
    let warned: Vec<&str> = verdict.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "warning")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(warned, ["/nodes/2", "/nodes/3"]);
    let ran = run(&c, &program, json!({})).await;
    assert_eq!(status(&ran), "success", "{}", ran.structured);
    assert_eq!(ran.structured["output"], json!([{"said": "hello"}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn data_pinned_on_a_node_stands_in_for_its_run() {
    let env = N8nEnv::start().await;
    let c = env.session(&env.a).await;
    let mut program = workflow(
        "pinned",
        vec![
            manual_trigger(),
            set_node("Fetch", 240, &[("v", "fetched")]),
            set_node("Use", 480, &[("said", "=got {{ $json.v }}")]),
        ],
        chain(&["Start", "Fetch", "Use"]),
    );
    program["pinData"] = json!({"Fetch": [{"json": {"v": "pinned"}}]});
    let verdict = validate(&c, &program).await;
    assert_eq!(verdict.structured["valid"], true, "{}", verdict.structured);
    let ran = run(&c, &program, json!({})).await;
    assert_eq!(status(&ran), "success", "{}", ran.structured);
    assert_eq!(ran.structured["output"], json!([{"said": "got pinned"}]));
}
