//! Execute vectors (Part II §6.5).

use crate::common::ports::rand_suffix;
use crate::common::{assert_shape, valid_program, write_program};
use crate::support::{catalog_version, codes, error_kind, run, session, status, validate};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_success_g() {
    let (env, c) = session().await;
    let v = validate(&c, valid_program()).await;
    let cv = v.structured["catalog_version"].clone();
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "trace_level": "full", "expected_catalog_version": cv}),
    )
    .await;
    assert!(!r.is_error);
    assert_shape(&r.structured, "ExecuteResponse");
    assert_eq!(
        r.structured["outcome"],
        json!({"ok": true, "status": "success", "error": null})
    );
    assert_eq!(r.structured["output"], json!({"name": "Ada"}));
    let trace = &r.structured["trace"];
    assert_eq!(trace["level"], "full");
    assert_eq!(trace["run_id"], r.structured["run_id"]);
    let ids: Vec<&str> = trace["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["get", "echo"], "each step once, in execution order");
    for s in trace["steps"].as_array().unwrap() {
        assert!(s["calls"].is_string(), "invoking step names its entry: {s}");
        assert!(s.get("input").is_some() && s.get("output").is_some());
    }
    assert_eq!(trace["steps"][0]["calls"], "crm.get_customer");
    assert_eq!(trace["steps"][1]["input"], json!({"value": "Ada"}));
    crate::support::assert_corresponds(&v.structured["plan"], trace, true);
    // Effective level is the lower of requested and declared: staging's ceiling is summary.
    if !crate::support::staging_served("PIL-EXECUTE-SUCCESS-G (trace level ceiling)") {
        return;
    }
    let s = c
        .call(
            "run_staging_workflow",
            json!({"workflow": valid_program(), "input": {"id": "cus_2"},
            "trace_level": "full", "context": {"environment": "staging"}}),
        )
        .await;
    assert_eq!(status(&s), "success", "{}", s.structured);
    assert_eq!(s.structured["trace"]["level"], "summary");
    assert!(s.structured["trace"]["steps"][0].get("input").is_none());
    let _ = env;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_guard_b() {
    let (env, c) = session().await;
    let before = env.engine.digest("acme").await;
    let invalid = json!({"steps": [
        {"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_3", "tier": "platinum"}}]});
    let r = run(&c, invalid, json!({})).await;
    assert!(!r.is_error);
    assert_shape(&r.structured, "ExecuteResponse");
    assert_eq!(status(&r), "validation_error");
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert!(!codes(&r).is_empty());
    assert!(
        codes(&r).contains(&"type_mismatch".to_string()),
        "{}",
        r.structured
    );
    assert!(r.structured["run_id"].as_str().unwrap().starts_with("run_"));
    assert!(
        r.structured.get("trace").is_none(),
        "a refused run has no trace"
    );
    assert_eq!(env.engine.digest("acme").await, before, "no side effects");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_b() {
    let (env, c) = session().await;
    let stale = catalog_version(&c).await;
    let mut cap = env.engine.capability("acme", "util.echo").await;
    cap["title"] = json!("Echo (renamed)");
    env.engine
        .put_capability("util.echo", &cap, Some("acme"))
        .await;
    let before = env.engine.digest("acme").await;
    let r = run(
        &c,
        write_program("gold"),
        json!({"expected_catalog_version": stale}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift");
    // The refusal names the next step and the token to use.
    let fresh = catalog_version(&c).await;
    let error = r.structured["outcome"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(error.starts_with("catalog version mismatch"), "{error}");
    assert!(error.contains("validate again"), "{error}");
    assert!(error.contains(fresh.as_str()), "{error}");
    assert_eq!(r.structured["catalog_version"], json!(fresh));
    assert_eq!(env.engine.digest("acme").await, before, "no side effects");
    // Recovery: the current token runs.
    let ok = run(
        &c,
        write_program("gold"),
        json!({"expected_catalog_version": fresh}),
    )
    .await;
    assert_eq!(status(&ok), "success");
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_before_validation_b() {
    let (_env, c) = session().await;
    let invalid = json!({"steps": [{"id": "x", "kind": "call", "capability": "no.such"}]});
    let r = run(&c, invalid, json!({"expected_catalog_version": "cv_stale"})).await;
    assert_eq!(
        status(&r),
        "catalog_drift",
        "drift check precedes re-validation"
    );
}

/// Deploys `program` and returns its program_ref.
pub async fn deploy(c: &crate::common::Mcp, program: Value) -> String {
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": program, "mode": "deploy"}),
        )
        .await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    r.structured["output"]["program_ref"]
        .as_str()
        .expect("program_ref")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_promotion_drift_b() {
    let (env, c) = session().await;
    let program_ref = deploy(&c, write_program("silver")).await;
    // The promoted program is a catalog entry with honest risk.
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "get", "id": program_ref}),
        )
        .await;
    assert_eq!(entry.structured["entry"]["kind"], "program");
    assert_eq!(entry.structured["entry"]["risk"], "write");
    // Runs while the baseline holds.
    let ok = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_eq!(status(&ok), "success", "{}", ok.structured);
    // A load-bearing field of a referenced entry changes.
    let mut cap = env.engine.capability("acme", "crm.set_tier").await;
    cap["returns"]["properties"]["changed_at"] = json!({"type": "string"});
    env.engine
        .put_capability("crm.set_tier", &cap, Some("acme"))
        .await;
    let before = env.engine.digest("acme").await;
    let r = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate", "input": {}}),
        )
        .await;
    assert!(!r.is_error);
    assert_eq!(status(&r), "promotion_drift");
    assert_eq!(env.engine.digest("acme").await, before, "no side effects");
    // Promoting again gives a new reference.
    let again = deploy(&c, write_program("silver")).await;
    assert_ne!(again, program_ref);
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_both_runnables_b() {
    let (_env, c) = session().await;
    let program_ref = deploy(&c, valid_program()).await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_no_runnable_b() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "run_workflow",
            json!({"input": {"x": 1}, "mode": "immediate"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_input_binding_b() {
    let (env, c) = session().await;
    let program_ref = deploy(&c, valid_program()).await;
    let before = env.engine.digest("acme").await;
    let r = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"id": 5}}),
        )
        .await;
    assert!(!r.is_error);
    assert_eq!(status(&r), "validation_error");
    let d = r.structured["diagnostics"].as_array().unwrap();
    assert!(
        d.iter()
            .any(|d| d["code"] == "input_binding" && d["path"] == "/id"),
        "{d:?}"
    );
    assert_eq!(env.engine.digest("acme").await, before);
    // Missing required input points at the root of the input.
    let r = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate", "input": {}}),
        )
        .await;
    assert_eq!(r.structured["diagnostics"][0]["code"], "input_binding");
    // The accepted side: the program runs with a binding input.
    let ok = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"id": "cus_2"}}),
        )
        .await;
    assert_eq!(ok.structured["output"], json!({"name": "Grace"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_unknown_trace_level_b() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"trace_level": "verbose", "input": {"id": "cus_1"}}),
    )
    .await;
    assert!(r.raw.get("error").is_none(), "not a carrier error");
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_test_run_undeclared_b() {
    let (env, c) = session().await;
    let before = env.engine.digest("acme").await;
    if crate::support::staging_served("PIL-EXECUTE-TEST-RUN-UNDECLARED-B") {
        let r = c
            .call(
                "run_staging_workflow",
                json!({"workflow": write_program("gold"), "test_run": true,
                "context": {"environment": "staging"}}),
            )
            .await;
        assert_eq!(error_kind(&r), "invalid_request");
        assert_shape(&r.structured, "RequestError");
    }
    // Where declared, a test run changes nothing.
    let t = run(&c, write_program("gold"), json!({"test_run": true})).await;
    assert_eq!(status(&t), "success", "{}", t.structured);
    assert_eq!(env.engine.digest("acme").await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_mode_missing_b() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "input": {"id": "cus_1"}}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "later"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    if !crate::support::staging_served("PIL-EXECUTE-MODE-MISSING-B (mode on a non-both language)") {
        return;
    }
    let r = c
        .call("run_staging_workflow", json!({"workflow": valid_program(), "mode": "immediate", "context": {"environment": "staging"}}))
        .await;
    assert_eq!(
        error_kind(&r),
        "invalid_request",
        "mode on a non-both language"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_replay_g() {
    let (env, c) = session().await;
    let key = format!("key-{}", rand_suffix());
    let first = run(
        &c,
        write_program("gold"),
        json!({"idempotency_key": key, "input": {"n": 1}}),
    )
    .await;
    let after_first = env.engine.state("acme").await;
    let second = run(
        &c,
        write_program("gold"),
        json!({"idempotency_key": key, "input": {"n": 1}}),
    )
    .await;
    let after_second = env.engine.state("acme").await;
    assert_eq!(status(&first), "success");
    assert_eq!(
        first.structured, second.structured,
        "identical, including run_id"
    );
    assert_eq!(
        after_first["runs"], after_second["runs"],
        "exactly one execution"
    );
    assert_eq!(after_first["digest"], after_second["digest"]);
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_conflict_b() {
    let (env, c) = session().await;
    let key = format!("key-{}", rand_suffix());
    let first = run(
        &c,
        write_program("gold"),
        json!({"idempotency_key": key, "input": {"n": 1}}),
    )
    .await;
    assert_eq!(status(&first), "success");
    let r = run(
        &c,
        write_program("gold"),
        json!({"idempotency_key": key, "input": {"n": 2}}),
    )
    .await;
    assert_eq!(error_kind(&r), "idempotency_conflict");
    assert_shape(&r.structured, "RequestError");
    // A refused run does not consume the key.
    let key2 = format!("key-{}", rand_suffix());
    let refused = run(
        &c,
        write_program("gold"),
        json!({"idempotency_key": key2, "expected_catalog_version": "cv_old"}),
    )
    .await;
    assert_eq!(status(&refused), "catalog_drift");
    let retry = run(&c, write_program("gold"), json!({"idempotency_key": key2})).await;
    assert_eq!(
        status(&retry),
        "success",
        "an unchanged retry after drift executes"
    );
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_trace_none_g() {
    let (_env, c) = session().await;
    let r = run(
        &c,
        valid_program(),
        json!({"input": {"id": "cus_1"}, "trace_level": "none"}),
    )
    .await;
    assert_eq!(status(&r), "success");
    assert!(r.structured["run_id"].is_string());
    assert!(r.structured.get("trace").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_store_unsupported_b() {
    let (env, c) = session().await;
    if !crate::support::staging_served("PIL-EXECUTE-STORE-UNSUPPORTED-B") {
        return;
    }
    let before = env.engine.digest("acme").await;
    let r = c
        .call(
            "run_staging_workflow",
            json!({"workflow": write_program("gold"), "store": true,
            "context": {"environment": "staging"}}),
        )
        .await;
    assert_eq!(error_kind(&r), "unsupported");
    assert_shape(&r.structured, "RequestError");
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "rejected before any side effect"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_engine_error_b() {
    let (_env, c) = session().await;
    let program = json!({"steps": [{"id": "boom", "kind": "call", "capability": "util.fail", "with": {"message": "card declined"}}]});
    let r = run(&c, program, json!({"trace_level": "full"})).await;
    assert!(!r.is_error, "not a request error");
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert_eq!(status(&r), "error");
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("card declined")
    );
    assert_eq!(
        r.structured["trace"]["steps"][0]["outcome"]["status"],
        "error"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_internal_b() {
    let (env, c) = session().await;
    env.engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let before = env.engine.digest("acme").await;
    let program = json!({"name": format!("fresh-{}", rand_suffix()), "steps": [
        {"id": "set", "kind": "call", "capability": "crm.set_tier", "with": {"id": "cus_1", "tier": "bronze"}}]});
    let r = run(&c, program, json!({})).await;
    assert_eq!(error_kind(&r), "internal");
    assert_shape(&r.structured, "RequestError");
    env.engine.faults(json!({})).await;
    assert_eq!(env.engine.digest("acme").await, before, "no side effects");
}
