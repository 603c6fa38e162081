//! The `mistral/v2` vectors of execute (runnables, drift, binding, idempotency, engine failures).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_success_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
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
    assert_eq!(r.structured["output"], json!({"greeting": "hello world"}));
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let hello: Vec<&Value> = steps.iter().filter(|s| s["id"] == "hello").collect();
    assert_eq!(hello.len(), 1, "{steps:?}");
    assert_eq!(
        hello[0]["input"],
        json!({"output": "hello world"}),
        "{steps:?}"
    );
    assert_eq!(hello[0]["calls"], "std.echo");
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_guard_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = run(
        &c,
        &greet_program().replace("std.echo", "std.nope"),
        json!({}),
    )
    .await;
    assert_eq!(status(&r), "validation_error");
    assert!(!codes(&r.structured).is_empty());
    assert!(r.structured["run_id"].is_string());
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let stale = catalog_version(&c).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action("!"), true)
        .await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "expected_catalog_version": stale}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_before_validation_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = run(
        &c,
        &greet_program().replace("std.echo", "std.nope"),
        json!({"expected_catalog_version": "cv_stale"}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_promotion_drift_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let program = "version: '2.0'\nloud:\n  tasks:\n    say:\n      action: shout text='hey'\n";
    let deployed = c
        .call(EXECUTE, json!({"workflow": program, "mode": "deploy"}))
        .await;
    assert_eq!(status(&deployed), "success", "{}", deployed.structured);
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    // The action's parameters change after promotion.
    let changed = "version: '2.0'\nshout:\n  base: std.echo\n  base-input:\n    output: <% $.text %><% $.mark %>\n  input:\n    - text\n    - mark\n";
    m.mistral.put_action(&m.a.tenant, changed, true).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_eq!(status(&r), "promotion_drift", "{}", r.structured);
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_input_binding_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let deployed = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "mode": "deploy"}),
        )
        .await;
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    let before = observable(&m.mistral, &m.a.tenant).await;
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
    // Inline too: the workflow's input list.
    let r = run(&c, &greet_program(), json!({"input": {}})).await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_test_run_undeclared_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "test_run": true}),
    )
    .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert!(m.mistral.executions(&m.a.tenant).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_replay_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    let first = c.call(EXECUTE, args.clone()).await;
    let second = c.call(EXECUTE, args).await;
    assert_eq!(status(&first), "success", "{}", first.structured);
    assert_eq!(first.structured, second.structured);
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_conflict_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let mut args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    c.call(EXECUTE, args.clone()).await;
    args["input"] = json!({"name": "y"});
    let r = c.call(EXECUTE, args).await;
    assert_eq!(error_kind(&r), "idempotency_conflict");
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_engine_error_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let program = "version: '2.0'\nfails:\n  tasks:\n    boom:\n      action: std.fail error_data='card declined'\n";
    let r = run(&c, program, json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "error", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{}",
        r.structured
    );
    assert_eq!(
        r.structured["trace"]["steps"][0]["outcome"]["status"],
        "error"
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_internal_b() {
    // Mistral unreachable: a closed port.
    let dead = format!("http://127.0.0.1:{}/v2", free_port());
    let m = MistralEnv::start_with(|cfg| {
        cfg.engines
            .get_mut(crate::common::mistral::ENGINE)
            .unwrap()
            .url = dead;
    })
    .await;
    let c = m.anonymous_session().await;
    let r = run(&c, &echo_program("x", "y"), json!({})).await;
    assert_eq!(error_kind(&r), "internal");
    assert_shape(&r.structured, "RequestError");
}
