//! `catalog_drift` recovery end to end (Part II §7.5): the catalog really
//! moves between the Host's validation and its execute request (the test's
//! HTTP front renames a capability in the engine just before the first
//! execute reaches the gateway), the gateway refuses with `catalog_drift`,
//! and the Host re-validates against the new snapshot and executes with the
//! new token. Nothing runs on the refused attempt.

mod common;

use common::Env;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn catalog_drift_is_recovered_by_revalidating() {
    let env = Env::start().await;
    let program = json!({"steps": [
        {"id": "say", "kind": "call", "capability": "util.echo", "with": {"value": "hello"}}
    ], "output": {"said": "$.steps.say.output.value"}});
    let file = env.program("echo", &program);
    let before = env.engine.runs_and_digest("acme").await;
    env.front.drift_before(&env.engine, "run_workflow");
    let r = env.pilotage(&["--json", "run", &file]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    let validations = doc["validations"].as_array().expect("validations");
    let executions = doc["executions"].as_array().expect("executions");
    assert_eq!(validations.len(), 2, "validated again after the drift");
    assert_eq!(executions.len(), 2);
    assert_eq!(
        executions[0]["answer"]["outcome"]["status"],
        "catalog_drift"
    );
    assert_eq!(executions[1]["answer"]["outcome"]["status"], "success");
    let cv1 = &validations[0]["answer"]["catalog_version"];
    let cv2 = &validations[1]["answer"]["catalog_version"];
    assert_ne!(cv1, cv2, "the catalog moved");
    assert_eq!(&executions[0]["sent"]["expected_catalog_version"], cv1);
    assert_eq!(&executions[1]["sent"]["expected_catalog_version"], cv2);
    assert_eq!(env.front.count("tools/call validate_workflow"), 2);
    assert_eq!(env.front.count("tools/call run_workflow"), 2);
    // The refused attempt ran nothing: one run in all.
    assert_eq!(env.engine.runs_and_digest("acme").await.0, before.0 + 1);
}
