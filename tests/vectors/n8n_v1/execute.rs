//! The `n8n/v1` vectors of execute (runnables, drift, binding, idempotency, engine failures).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_success_g() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let cv = catalog_version(&c).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "world"}, "trace_level": "full", "expected_catalog_version": cv}),
    )
    .await;
    assert_shape(&r.structured, "ExecuteToolOutput");
    assert_eq!(
        r.structured["outcome"],
        json!({"ok": true, "status": "success", "error": null})
    );
    assert_eq!(r.structured["trace"]["level"], "full");
    assert_eq!(r.structured["output"], json!([{"greeting": "hello world"}]));
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let greet: Vec<&Value> = steps.iter().filter(|s| s["id"] == "Greet").collect();
    assert_eq!(greet.len(), 1, "{steps:?}");
    assert_eq!(greet[0]["calls"], "n8n-nodes-base.set");
    // Nothing of the run is left in n8n.
    assert!(n.n8n.gateway_workflows(&n.a.n8n_key).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_guard_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let mut program = greet_program();
    program["nodes"][1]["type"] = json!("n8n-nodes-base.nope");
    let r = run(&c, &program, json!({"input": {"name": "x"}})).await;
    assert_eq!(status(&r), "validation_error");
    assert!(!codes(&r.structured).is_empty());
    assert!(r.structured["run_id"].is_string());
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let current = catalog_version(&c).await;
    let stale = format!("{current}-before");
    let before = observable(&n, &n.a).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "expected_catalog_version": stale}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_before_validation_b() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let mut program = greet_program();
    program["nodes"][1]["type"] = json!("n8n-nodes-base.nope");
    let r = run(
        &c,
        &program,
        json!({"expected_catalog_version": "cv_stale"}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_input_binding_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let deployed = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "mode": "deploy"}),
        )
        .await;
    assert_eq!(status(&deployed), "success", "{}", deployed.structured);
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    let before = observable(&n, &n.a).await;
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": 5, "extra": true}}),
        )
        .await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    let d = r.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "input_binding")
        .unwrap_or_else(|| panic!("{}", r.structured))
        .clone();
    assert!(
        d["path"]
            .as_str()
            .is_some_and(|p| p.is_empty() || p.starts_with('/')),
        "{d}"
    );
    // Inline too: the Execute Workflow Trigger's `name` is a string.
    let r = run(&c, &greet_program(), json!({"input": {"name": 5}})).await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_test_run_undeclared_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "test_run": true}),
    )
    .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_replay_g() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    let first = c.call(EXECUTE, args.clone()).await;
    let second = c.call(EXECUTE, args).await;
    assert_eq!(status(&first), "success", "{}", first.structured);
    assert_eq!(first.structured, second.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_conflict_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let mut args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    c.call(EXECUTE, args.clone()).await;
    args["input"] = json!({"name": "y"});
    let r = c.call(EXECUTE, args).await;
    assert_eq!(error_kind(&r), "idempotency_conflict");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_engine_error_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let r = run(&c, &first_fails_program(), json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "error", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("card declined")),
        "{}",
        r.structured
    );
    let boom = r.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "Boom")
        .unwrap_or_else(|| panic!("{}", r.structured))
        .clone();
    assert_eq!(boom["outcome"]["status"], "error", "{boom}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_internal_b() {
    // n8n unreachable: a closed port.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let n = N8nEnv::start_with(|cfg| {
        cfg.engines
            .get_mut(crate::common::n8n_gateway::ENGINE)
            .unwrap()
            .url = dead;
    })
    .await;
    let c = n.anonymous_session().await;
    let r = run(&c, &say_program("hi"), json!({})).await;
    assert_eq!(error_kind(&r), "internal");
    assert_shape(&r.structured, "RequestError");
}
