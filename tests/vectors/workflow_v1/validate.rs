//! Validate vectors (Part II §5.5, §6.4, §10.1).

use crate::common::{LANG, assert_shape, nested, valid_program, write_program};
use crate::support::{closed_codes, codes, error_kind, session, validate};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_good_g() {
    let (_env, c) = session().await;
    let r = validate(&c, valid_program()).await;
    assert!(!r.is_error);
    assert_shape(&r.structured, "ValidateResponse");
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    assert!(codes(&r).is_empty(), "{}", r.structured);
    assert_shape(&r.structured["plan"], "Plan");
    assert!(
        r.structured["catalog_version"]
            .as_str()
            .unwrap()
            .starts_with("cv_")
    );
    let plan = &r.structured["plan"];
    assert_eq!(plan["steps"][0]["calls"], "crm.get_customer");
    assert_eq!(plan["max_risk"], "safe");
    assert_eq!(
        plan["max_risk_hints"],
        json!({"readOnly": true, "destructive": false, "openWorld": false})
    );
    assert_eq!(r.text, "valid: max risk safe");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_unknown_name_b() {
    let (_env, c) = session().await;
    let program = json!({"steps": [{"id": "get", "kind": "call", "capability": "crm.get_custmer", "with": {"id": "cus_1"}}]});
    let r = validate(&c, program).await;
    assert!(!r.is_error);
    assert_shape(&r.structured, "ValidateResponse");
    assert_eq!(r.structured["valid"], false);
    let closed = closed_codes(&c, LANG).await;
    for d in r.structured["diagnostics"].as_array().unwrap() {
        assert!(
            closed.contains(&d["code"].as_str().unwrap().to_string()),
            "{d} not in {closed:?}"
        );
        let path = d["path"].as_str().unwrap();
        assert!(
            path.is_empty() || path.starts_with('/'),
            "JSON Pointer: {path}"
        );
    }
    let d = &r.structured["diagnostics"][0];
    assert_eq!(d["code"], "unknown_capability");
    assert_eq!(d["path"], "/steps/0/capability");
    let hint = d["hint"].as_str().expect("hint");
    assert!(
        hint.starts_with("close match: crm.get_customer"),
        "best match first: {hint}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_warnings_only_g() {
    let (_env, c) = session().await;
    let program = json!({"steps": [{"id": "up", "kind": "call", "capability": "crm.update_tier",
        "with": {"id": "cus_2", "tier": "gold"}}], "output": {"tier": "$.steps.up.output.tier"}});
    let r = validate(&c, program).await;
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    let diags = r.structured["diagnostics"].as_array().unwrap();
    assert!(!diags.is_empty());
    assert!(
        diags.iter().all(|d| d["severity"] == "warning"),
        "{diags:?}"
    );
    assert!(codes(&r).contains(&"deprecated_capability".to_string()));
    assert_shape(&r.structured["plan"], "Plan");
    assert_eq!(r.structured["plan"]["max_risk"], "write");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_side_effect_free_g() {
    let (env, c) = session().await;
    let before = env.engine.state("acme").await;
    for program in [
        write_program("gold"),
        write_program("gold"),
        valid_program(),
    ] {
        let r = validate(&c, program).await;
        assert_eq!(r.structured["valid"], true, "{}", r.structured);
    }
    let after = env.engine.state("acme").await;
    assert_eq!(
        before["digest"], after["digest"],
        "no externally observable change"
    );
    assert_eq!(
        before["runs"], after["runs"],
        "no catalog entry was invoked"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_reserved_chars_b() {
    let (_env, c) = session().await;
    for id in ["a#1", "a/b"] {
        let program = json!({"steps": [{"id": id, "kind": "call", "capability": "util.echo", "with": {"value": 1}}],
            "output": {"v": format!("$.steps.{id}.output")}});
        let r = validate(&c, program).await;
        assert!(!r.is_error);
        assert_eq!(r.structured["valid"], false);
        let d = r.structured["diagnostics"].as_array().unwrap();
        let reserved = d
            .iter()
            .find(|d| d["code"] == "reserved_character")
            .expect("reserved diagnostic");
        assert_eq!(reserved["path"], "/steps/0/id");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_context_undeclared_b() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "validate_workflow",
            json!({"workflow": valid_program(), "context": {"any": "value"}}),
        )
        .await;
    assert!(!r.is_error, "not a request error");
    assert_eq!(r.structured["valid"], false);
    let d = r.structured["diagnostics"].as_array().unwrap();
    assert!(
        d.iter()
            .any(|d| d["code"] == "context_binding" && d["path"] == ""),
        "{d:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_context_missing_b() {
    let (_env, c) = session().await;
    if !crate::support::staging_served("PIL-VALIDATE-CONTEXT-MISSING-B") {
        return;
    }
    let r = c
        .call(
            "validate_staging_workflow",
            json!({"workflow": valid_program()}),
        )
        .await;
    assert!(!r.is_error);
    assert_eq!(r.structured["valid"], false);
    assert!(codes(&r).contains(&"context_binding".to_string()));
    // A context that breaks the schema points into the context.
    let bad = c
        .call(
            "validate_staging_workflow",
            json!({"workflow": valid_program(), "context": {"environment": "moon"}}),
        )
        .await;
    let d = &bad.structured["diagnostics"][0];
    assert_eq!(d["code"], "context_binding");
    assert_eq!(d["path"], "/environment");
    // The accepted side: a valid context.
    let ok = c
        .call(
            "validate_staging_workflow",
            json!({"workflow": valid_program(), "context": {"environment": "staging"}}),
        )
        .await;
    assert_eq!(ok.structured["valid"], true, "{}", ok.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_bounds_b() {
    let (_env, c) = session().await;
    let started = std::time::Instant::now();
    let r = validate(&c, nested(20)).await;
    assert_eq!(error_kind(&r), "bounds_exceeded");
    assert_shape(&r.structured, "RequestError");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "terminates within the bound"
    );
    // Too many steps is a bound too.
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": i}))
        .collect();
    let r = validate(&c, json!({"steps": many})).await;
    assert_eq!(error_kind(&r), "bounds_exceeded");
    // Just under the depth bound is an ordinary answer.
    let r = validate(&c, nested(9)).await;
    assert!(!r.is_error, "{}", r.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_constraint_fallback_b() {
    let (_env, c) = session().await;
    let steps: Vec<Value> = (0..201)
        .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": i}))
        .collect();
    let r = validate(&c, json!({"steps": steps})).await;
    assert!(!r.is_error);
    assert_eq!(r.structured["valid"], false);
    let closed = closed_codes(&c, LANG).await;
    let d = r.structured["diagnostics"].as_array().unwrap();
    assert!(
        d.iter()
            .all(|d| closed.contains(&d["code"].as_str().unwrap().to_string()))
    );
    let constraint = d
        .iter()
        .find(|d| d["code"] == "constraint")
        .expect("constraint diagnostic");
    assert!(
        constraint["message"].as_str().unwrap().contains("200"),
        "engine message kept: {constraint}"
    );
    assert_eq!(constraint["path"], "");
}
