//! The whole loop of Part IV §4.3 through the real endpoint, and every
//! runnable example of every guide validated and executed against the real
//! engine (a guide whose example stops working fails the build).

mod common;

use common::{LANG, TestEnv, assert_shape, repo_path};
use pilotage_gateway::guides::GuideSet;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn discover_learn_lookup_validate_execute_fetch() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    // discover
    let init = c.initialize().await;
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("pilotage_manifest")
    );
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    let lang = &manifest["languages"][0];
    let (validate, execute, trace) = (
        lang["loop"]["validate"].as_str().unwrap().to_string(),
        lang["loop"]["execute"].as_str().unwrap().to_string(),
        lang["loop"]["trace"].as_str().unwrap().to_string(),
    );
    // learn: the core guide first
    let index = c
        .call("pilotage_get_guide", json!({"language": LANG}))
        .await
        .structured;
    let core = index["guides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["level"] == "core")
        .unwrap();
    let body = c
        .call(
            "pilotage_get_guide",
            json!({"language": LANG, "id": core["id"]}),
        )
        .await
        .structured["guide"]["body"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(body.contains("for_each") && body.contains("branch"));
    // lookup the names the task needs
    let found = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list", "q": "invoice"}),
        )
        .await
        .structured;
    let ids: Vec<&str> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"billing.create_invoice"), "{ids:?}");
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "billing.create_invoice"}),
        )
        .await
        .structured;
    assert_eq!(entry["entry"]["risk"], "write");
    // validate an invalid program
    let mut program = json!({"name": "invoice gold customers", "steps": [
        {"id": "find", "kind": "call", "capability": "crm.find_customer", "with": {"query": "a"}},
        {"id": "each", "kind": "for_each", "items": "$.steps.find.output.matches", "as": "c", "do": [
            {"id": "gold", "kind": "branch", "when": {"op": "eq", "left": "$.item.tier", "right": "gold"},
             "then": [{"id": "bill", "kind": "call", "capability": "billing.create_invoice",
                       "with": {"customer_id": "$.item.id", "amount_cents": "1000"}}]}]}
    ], "output": {"billed": "$.steps.each.output"}});
    let bad = c.call(&validate, json!({"workflow": program})).await;
    assert!(!bad.is_error);
    assert_eq!(bad.structured["valid"], false);
    let d = &bad.structured["diagnostics"][0];
    assert_eq!(d["code"], "type_mismatch");
    assert_eq!(d["path"], "/steps/1/do/0/then/0/with/amount_cents");
    // validate the corrected one
    program["steps"][1]["do"][0]["then"][0]["with"]["amount_cents"] = json!(1000);
    let good = c.call(&validate, json!({"workflow": program})).await;
    assert_eq!(good.structured["valid"], true, "{}", good.structured);
    let plan = &good.structured["plan"];
    assert_eq!(plan["max_risk"], "write");
    let cv = good.structured["catalog_version"].clone();
    // execute with store: true
    let before = env.engine.state("acme").await;
    let run = c
        .call(
            &execute,
            json!({"workflow": program, "mode": "immediate", "store": true,
            "trace_level": "full", "expected_catalog_version": cv}),
        )
        .await;
    assert_eq!(
        run.structured["outcome"]["status"], "success",
        "{}",
        run.structured
    );
    assert_ne!(
        env.engine.state("acme").await["digest"],
        before["digest"],
        "the invoice exists"
    );
    let steps = run.structured["trace"]["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["id"].as_str().unwrap().starts_with("bill#")),
        "{steps:?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s["id"].as_str().unwrap().starts_with("gold#")
                && s["decisions"][0]["took"] == "then")
    );
    // fetch the same trace
    let fetched = c
        .call(&trace, json!({"run_id": run.structured["run_id"]}))
        .await;
    assert_shape(&fetched.structured, "TraceFetchResponse");
    assert_eq!(fetched.structured, run.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_guide_example_validates_and_executes() {
    let guides = GuideSet::load(&repo_path("guides/workflow-v1"), LANG, "").expect("guides load");
    let examples = guides.examples();
    assert!(
        examples.iter().any(|e| e.guide_id == "core"),
        "the core guide has a runnable example"
    );
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    for ex in examples {
        let name = format!("{} example #{}", ex.guide_id, ex.index);
        let v = c
            .call("validate_workflow", json!({"workflow": ex.workflow}))
            .await;
        assert_eq!(
            v.structured["valid"], true,
            "{name} does not validate: {}",
            v.structured
        );
        let mut args = json!({"workflow": ex.workflow, "mode": "immediate", "trace_level": "full",
            "expected_catalog_version": v.structured["catalog_version"]});
        if let Some(input) = ex.input {
            args["input"] = input;
        }
        let r = c.call("run_workflow", args).await;
        assert_eq!(
            r.structured["outcome"]["status"], "success",
            "{name} does not run: {}",
            r.structured
        );
    }
}
