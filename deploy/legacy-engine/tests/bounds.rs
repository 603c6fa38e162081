//! Bounds and bad input: body size, malformed JSON, nesting, step budget, loop
//! iteration cap, deadline, event and data budgets. Each answers with the engine's
//! own error; none may panic or hang.

mod common;

use common::{Engine, call, set};
use reqwest::StatusCode;
use serde_json::{Value, json};

const RUN: &str = "/api/v1/workflows/run";
const CHECK: &str = "/api/v1/workflows/check";

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let engine = Engine::start();
    let padding = "x".repeat(1024 * 1024 + 10);
    let body = json!({"workflow": {"steps": []}, "padding": padding}).to_string();
    let (status, answer) = engine
        .post_raw(CHECK, Some(("X-Tenant", "acme")), body)
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        answer,
        json!({"error": "request body exceeds the limit of 1048576 bytes"})
    );

    let padding = "x".repeat(1000 * 1000);
    let body = json!({"workflow": {"steps": []}, "padding": padding}).to_string();
    let (status, answer) = engine
        .post_raw(CHECK, Some(("X-Tenant", "acme")), body)
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "just under the limit is fine: {answer}"
    );
}

#[tokio::test]
async fn malformed_bodies_are_400_with_a_message() {
    let engine = Engine::start();
    let tenant = Some(("X-Tenant", "acme"));
    for raw in ["{\"workflow\": ", "", "not json"] {
        let (status, body) = engine.post_raw(RUN, tenant, raw.to_owned()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{raw:?}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("malformed JSON: ")),
            "{body}"
        );
    }
    let (status, body) = engine.post_raw(RUN, tenant, "[1, 2]".to_owned()).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({"error": "request body must be a JSON object"})
        )
    );

    let deep = format!("{{\"workflow\": {}{}}}", "[".repeat(300), "]".repeat(300));
    let (status, body) = engine.post_raw(CHECK, tenant, deep).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("recursion limit")),
        "{body}"
    );

    let workflow = json!({"steps": []});
    for (field, value, message) in [
        ("trace", json!("yes"), "field 'trace' must be a boolean"),
        ("dry_run", json!(1), "field 'dry_run' must be a boolean"),
        (
            "deadline_ms",
            json!(0),
            "field 'deadline_ms' must be a positive integer",
        ),
        (
            "deadline_ms",
            json!(1.5),
            "field 'deadline_ms' must be a positive integer",
        ),
        ("context", json!([1]), "field 'context' must be an object"),
    ] {
        let mut request = json!({"workflow": workflow});
        request[field] = value;
        let (status, body) = engine.post(RUN, Some("acme"), &request).await;
        assert_eq!(
            (status, body),
            (StatusCode::BAD_REQUEST, json!({"error": message}))
        );
    }
    // The engine is still healthy afterwards.
    assert_eq!(engine.get("/healthz", None).await.0, StatusCode::OK);
}

#[tokio::test]
async fn step_budget_and_nesting_depth_reject_runs() {
    let engine = Engine::start();
    let steps: Vec<Value> = (0..1000).map(|i| set(&format!("s{i}"), json!(i))).collect();
    let body = engine
        .run("acme", json!({"workflow": {"steps": steps}}))
        .await;
    assert_eq!(body["state"], "REJECTED");
    assert_eq!(
        body["problems"],
        json!([{"level": "ERROR", "text": "E_LIMIT_0042: step budget exhausted (1000/200)"}])
    );

    let exactly: Vec<Value> = (0..200).map(|i| set(&format!("s{i}"), json!(i))).collect();
    assert_eq!(
        engine
            .run("acme", json!({"workflow": {"steps": exactly}}))
            .await["state"],
        "COMPLETED"
    );

    let mut steps = json!([set("leaf", json!(1))]);
    for level in 0..16 {
        steps = json!([{"id": format!("l{level}"), "kind": "for_each", "items": [1], "as": format!("v{level}"), "do": steps}]);
    }
    let body = engine
        .run("acme", json!({"workflow": {"steps": steps}}))
        .await;
    assert_eq!(
        body["problems"][0]["text"],
        "E_LIMIT_0043: nesting depth exhausted (17/16)"
    );
}

#[tokio::test]
async fn loop_iteration_cap_and_item_type() {
    let engine = Engine::start();
    let workflow = json!({"steps": [{"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x",
        "do": [set("s", json!("$.item"))]}]});
    let many: Vec<u32> = (0..1001).collect();
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"xs": many}, "trace": true}),
        )
        .await;
    assert_eq!(body["state"], "FAILED");
    assert_eq!(
        body["error"],
        "step 'l' failed: for_each 'l' has 1001 items; at most 1000 are allowed"
    );
    assert_eq!(body["events"], json!([]));

    let exactly: Vec<u32> = (0..1000).collect();
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"xs": exactly}}),
        )
        .await;
    assert_eq!(body["state"], "COMPLETED");
    assert_eq!(body["result"].as_array().map(Vec::len), Some(1000));

    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"xs": "abc"}}),
        )
        .await;
    assert_eq!(
        body["error"],
        "step 'l' failed: items of for_each 'l' is not a list (got string)"
    );
    let body = engine
        .run("acme", json!({"workflow": workflow, "input": {}}))
        .await;
    assert_eq!(
        (body["state"].clone(), body["result"].clone()),
        (json!("COMPLETED"), json!([])),
        "null loops zero times"
    );
}

#[tokio::test]
async fn a_huge_loop_nest_times_out_instead_of_hanging() {
    let engine = Engine::start();
    let thousand: Vec<u32> = (0..1000).collect();
    let workflow = json!({"steps": [{"id": "a", "kind": "for_each", "items": "$.input.xs", "as": "a", "do": [
        {"id": "b", "kind": "for_each", "items": "$.input.xs", "as": "b", "do": [
            {"id": "c", "kind": "for_each", "items": "$.input.xs", "as": "c", "do": [set("s", json!("$.item"))]}
        ]}
    ]}]});
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"xs": thousand}, "deadline_ms": 300}),
        )
        .await;
    assert_eq!(body["state"], "TIMED_OUT");
    assert_eq!(body["error"], "deadline of 300 ms exceeded");
}

#[tokio::test]
async fn event_and_data_budgets_fail_the_run() {
    let engine = Engine::start();
    let hundred: Vec<u32> = (0..100).collect();
    let thousand: Vec<u32> = (0..1000).collect();
    let workflow = json!({"steps": [{"id": "a", "kind": "for_each", "items": "$.input.outer", "as": "a", "do": [
        {"id": "b", "kind": "for_each", "items": "$.input.inner", "as": "b", "do": [set("s", json!(1))]}
    ]}]});
    let body = engine
        .run("acme", json!({"workflow": workflow, "input": {"outer": thousand, "inner": hundred}, "deadline_ms": 60000}))
        .await;
    assert_eq!(body["state"], "FAILED");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.ends_with("failed: run exceeded the limit of 100000 events")),
        "{body}"
    );

    let big = "x".repeat(600 * 1000);
    let workflow = json!({"steps": [{"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x", "do": [
        call("e", "util.echo", json!({"value": "$.input.big"}))
    ]}]});
    let xs: Vec<u32> = (0..200).collect();
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"xs": xs, "big": big}}),
        )
        .await;
    assert_eq!(body["state"], "FAILED");
    assert_eq!(
        body["error"],
        "step 'e' failed: run exceeded its data budget of 67108864 bytes"
    );

    let mut deep = json!("bottom");
    let mut template = json!("$.input.deep");
    for _ in 0..100 {
        deep = json!([deep]);
    }
    for _ in 0..60 {
        template = json!([template]);
    }
    let workflow = json!({"steps": [set("s", template)]});
    let body = engine
        .run(
            "acme",
            json!({"workflow": workflow, "input": {"deep": deep}}),
        )
        .await;
    assert_eq!(
        body["error"],
        "step 's' failed: value nested deeper than 128 levels"
    );
}
