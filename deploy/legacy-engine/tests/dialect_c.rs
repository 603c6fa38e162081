//! Dialect c (`--dialect c`): the asynchronous runner. A run is accepted with
//! 202 and a run id, its phase is polled, its output (a JSON string) and its
//! step records (JSON strings, four a page) are read from their own
//! endpoints, and an unfinished run can be cancelled without committing.

mod common;

use common::{Engine, call, set};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const WS: &str = "X-Workspace";

fn run_body(workflow: &Value, arguments: Value, mode: &str) -> Value {
    json!({"spec": {"document": workflow.to_string(), "arguments": arguments},
        "options": {"events": "ALL", "mode": mode, "timeoutSeconds": 5}})
}

/// Polls until the phase is final (bounded: 200 polls of 10 ms).
async fn settle(engine: &Engine, id: &str) -> Value {
    for _ in 0..200 {
        let (status, body) = engine
            .get_with(&format!("/v3/runs/{id}"), Some((WS, "acme")))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if !matches!(body["phase"].as_str(), Some("Queued" | "Running")) {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("run {id} never finished");
}

#[tokio::test]
async fn a_run_is_accepted_polled_and_read_back_in_pages() {
    let engine = Engine::start_with(&["--dialect", "c"], &[]);
    let workflow = json!({"steps": [
        {"id": "l", "kind": "for_each", "items": "$.input.xs", "as": "x", "do": [set("s", json!("$.item"))]}],
        "output": {"xs": "$.input.xs"}});
    let (status, start) = engine
        .post_with(
            "/v3/runs",
            Some((WS, "acme")),
            &run_body(&workflow, json!({"xs": [1, 2, 3]}), "SIMULATE"),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{start}");
    let id = start["runId"].as_str().expect("run id").to_owned();
    assert_eq!(settle(&engine, &id).await["phase"], "Succeeded");
    let (_, output) = engine
        .get_with(&format!("/v3/runs/{id}/output"), Some((WS, "acme")))
        .await;
    let decoded: Value =
        serde_json::from_str(output["output"].as_str().expect("a string")).unwrap();
    assert_eq!(decoded, json!({"xs": [1, 2, 3]}));
    let mut records = Vec::new();
    let mut cursor = "0".to_owned();
    for _ in 0..10 {
        let (_, page) = engine
            .get_with(
                &format!("/v3/runs/{id}/steps?cursor={cursor}"),
                Some((WS, "acme")),
            )
            .await;
        let items = page["items"].as_array().expect("items");
        assert!(items.len() <= 4);
        records.extend(
            items
                .iter()
                .map(|i| serde_json::from_str::<Value>(i.as_str().unwrap()).unwrap()),
        );
        match page["nextCursor"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => break,
        }
    }
    let what: Vec<&str> = records
        .iter()
        .map(|r| r["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        what,
        [
            "LoopStart",
            "LoopItem",
            "Assign",
            "LoopItem",
            "Assign",
            "LoopItem",
            "Assign",
            "LoopDone"
        ]
    );
    assert_eq!(records[2]["loops"], json!([0]), "counted from 0");
    // Another workspace does not see the run.
    let (status, _) = engine
        .get_with(&format!("/v3/runs/{id}"), Some((WS, "globex")))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn invalid_documents_are_422_and_a_failing_validator_503_without_a_run_id() {
    let engine = Engine::start_with(&["--dialect", "c"], &[]);
    let bad = json!({"steps": [call("a", "crm.get_custmer", json!({"id": "cus_1"}))]});
    let (status, body) = engine
        .post_with(
            "/v3/validations",
            Some((WS, "acme")),
            &json!({"spec": {"document": bad.to_string()}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["verdict"]["findings"][0]["severity"], "Fatal");
    assert_eq!(
        body["verdict"]["findings"][0]["path"],
        "flow.steps.1.capability"
    );
    let (status, body) = engine
        .post_with(
            "/v3/runs",
            Some((WS, "acme")),
            &run_body(&bad, json!({}), "LIVE"),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.get("runId").is_none());
    engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let good = json!({"steps": [set("a", json!(1))]});
    let (status, body) = engine
        .post_with(
            "/v3/runs",
            Some((WS, "acme")),
            &run_body(&good, json!({}), "LIVE"),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        body,
        json!({"fault": {"message": "internal validator failure"}})
    );
    assert_eq!(engine.state("acme").await["runs"], 0);
}

#[tokio::test]
async fn a_cancelled_run_never_commits() {
    let engine = Engine::start_with(&["--dialect", "c"], &[]);
    let before = engine.digest("acme").await;
    let write =
        json!({"steps": [call("t", "crm.set_tier", json!({"id": "cus_1", "tier": "gold"}))]});
    engine
        .faults(json!({"tenant": "acme", "slow_ms": 300}))
        .await;
    let (status, start) = engine
        .post_with(
            "/v3/runs",
            Some((WS, "acme")),
            &run_body(&write, json!({}), "LIVE"),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{start}");
    let id = start["runId"].as_str().unwrap().to_owned();
    let (status, cancelled) = engine
        .post_with(
            &format!("/v3/runs/{id}/cancel"),
            Some((WS, "acme")),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(cancelled["phase"], "Cancelled");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(settle(&engine, &id).await["phase"], "Cancelled");
    assert_eq!(engine.digest("acme").await, before);
}
