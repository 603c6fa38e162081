//! Every declared capability is real, and switching one off in configuration
//! makes the gateway stop declaring it and refuse its use the way the
//! specification says (Part II §4.3, §6.4; Part III §4).

use crate::common::{TestEnv, valid_program};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn without_plan_validate_returns_references() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.languages[0].capabilities.plan = false;
    })
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    let m = c.call("pilotage_manifest", json!({})).await.structured;
    assert_eq!(m["languages"][0]["capabilities"]["plan"], false);
    let v = c
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await
        .structured;
    assert_eq!(v["valid"], true);
    assert!(v.get("plan").is_none(), "no plan when plan is not declared");
    assert_eq!(v["references"], json!(["crm.get_customer", "util.echo"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_execute_there_is_no_execute_or_trace_tool() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.languages[0].capabilities.execute.enabled = false;
        c.languages[0].capabilities.trace_fetch = false;
    })
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    let m = c.call("pilotage_manifest", json!({})).await.structured;
    let lang = &m["languages"][0];
    assert!(lang["loop"].get("execute").is_none() && lang["loop"].get("trace").is_none());
    assert!(lang["capabilities"].get("execute").is_none());
    assert!(lang.get("retention").is_none() && lang.get("execution").is_none());
    let tools = c.list_tools().await;
    assert!(
        !tools
            .iter()
            .any(|t| t["name"] == "run_workflow" || t["name"] == "trace_workflow")
    );
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {}}),
        )
        .await;
    assert_eq!(
        r["error"]["code"], -32602,
        "an undeclared tool does not exist: {r}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_idempotency_a_key_is_refused() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.languages[0].capabilities.execute.idempotency = false;
    })
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate",
            "input": {"id": "cus_1"}, "idempotency_key": "k"}),
        )
        .await;
    assert_eq!(r.structured["error"]["kind"], "invalid_request");
    let tools = c.list_tools().await;
    let run = tools.iter().find(|t| t["name"] == "run_workflow").unwrap();
    assert!(
        run["inputSchema"]["properties"]
            .get("idempotency_key")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_schema_binds_and_reaches_the_engine() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    let program = json!({"steps": [{"id": "e", "kind": "call", "capability": "util.echo",
        "with": {"value": "$.context.environment"}}], "output": {"env": "$.steps.e.output.value"}});
    let r = c
        .call(
            "run_staging_workflow",
            json!({"workflow": program, "context": {"environment": "staging"}}),
        )
        .await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_eq!(r.structured["output"], json!({"env": "staging"}));
    let bad = c
        .call(
            "run_staging_workflow",
            json!({"workflow": program, "context": {"environment": "moon"}}),
        )
        .await;
    assert_eq!(bad.structured["outcome"]["status"], "validation_error");
    assert_eq!(bad.structured["diagnostics"][0]["code"], "context_binding");
}
