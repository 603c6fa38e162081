//! Dialect b (`--dialect b`): the same engine behind `/v2/...`, `X-Org-Id`, other
//! field names and other wording. Every issue text must match a dialect b shape
//! documented in README.md, and every documented shape must be produced.

mod common;

use common::cases::cases;
use common::{Engine, call, set, shapes};
use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_NONE_MATCH};
use serde_json::{Value, json};

const ORG: &str = "X-Org-Id";

async fn validate(engine: &Engine, org: &str, body: Value) -> Value {
    let (status, answer) = engine
        .post_with("/v2/jobs/validate", Some((ORG, org)), &body)
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

async fn execute(engine: &Engine, org: &str, body: Value) -> (StatusCode, Value) {
    engine
        .post_with("/v2/jobs/execute", Some((ORG, org)), &body)
        .await
}

fn kinds(log: &Value) -> Vec<String> {
    log.as_array()
        .expect("log")
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[tokio::test]
async fn ping_and_the_function_registry() {
    let engine = Engine::start_b();
    assert_eq!(
        engine.get("/v2/ping", None).await,
        (StatusCode::OK, json!({"pong": true}))
    );
    assert_eq!(
        engine.get("/healthz", None).await.0,
        StatusCode::NOT_FOUND,
        "dialect a paths are gone"
    );

    let (status, body) = engine
        .get_with("/v2/registry/functions", Some((ORG, "public")))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body.as_object().map(|o| o.len()),
        Some(1),
        "only `functions`"
    );
    let functions = body["functions"].as_array().expect("functions");
    let ids: Vec<&str> = functions.iter().filter_map(|f| f["id"].as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "crm.find_customer",
            "crm.get_customer",
            "util.echo",
            "util.fail",
            "util.sleep"
        ]
    );
    let get = &functions[1];
    let keys: Vec<&String> = get.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        vec![
            "id",
            "label",
            "help",
            "input_schema",
            "output_schema",
            "impact",
            "labels",
            "retired",
            "stats",
            "modified"
        ]
    );
    assert_eq!(get["label"], "Get customer");
    assert_eq!(get["impact"], "none");
    assert_eq!(get["stats"], json!({"calls": 0}));
    assert_eq!(get["modified"], "2026-01-01T00:00:00Z");

    let (_, acme) = engine
        .get_with("/v2/registry/functions", Some((ORG, "acme")))
        .await;
    let impact = |id: &str| {
        acme["functions"]
            .as_array()
            .and_then(|l| l.iter().find(|f| f["id"] == id))
            .map(|f| f["impact"].clone())
    };
    assert_eq!(impact("crm.set_tier"), Some(json!("modify")));
    assert_eq!(impact("crm.delete_customer"), Some(json!("remove")));
    assert_eq!(impact("mail.send"), Some(json!("outbound")));
    let retired = acme["functions"]
        .as_array()
        .and_then(|l| l.iter().find(|f| f["id"] == "crm.update_tier"))
        .cloned();
    assert_eq!(retired.map(|f| f["retired"].clone()), Some(json!(true)));

    let response = engine
        .client
        .get(engine.url("/v2/registry/functions"))
        .header(ORG, "public")
        .send()
        .await
        .expect("sent");
    let tag = response.headers()[ETAG].to_str().expect("ascii").to_owned();
    let again = engine
        .client
        .get(engine.url("/v2/registry/functions"))
        .header(ORG, "public")
        .header(IF_NONE_MATCH, &tag)
        .send()
        .await
        .expect("sent");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    assert_eq!(
        engine.get("/v2/registry/functions", None).await,
        (
            StatusCode::BAD_REQUEST,
            json!({"failure": "missing X-Org-Id header"})
        )
    );
    assert_eq!(
        engine
            .get_with("/v2/registry/functions", Some((ORG, "initech")))
            .await,
        (
            StatusCode::NOT_FOUND,
            json!({"failure": "unknown org 'initech'"})
        )
    );
}

#[tokio::test]
async fn every_message_shape_in_b_wording() {
    let engine = Engine::start_b();
    let mut seen = Vec::new();
    for (name, tenant, workflow, context, expect) in cases() {
        let mut request = json!({ "definition": workflow });
        if let Some(context) = context {
            request["ctx"] = context;
        }
        let answer = validate(&engine, tenant, request).await;
        assert_eq!(answer["valid"], expect.0 == "WARN", "{name}: {answer}");
        let issues = answer["issues"].as_array().expect("issues");
        let expected_loc = expect.2.map(|w| format!("$.{w}"));
        assert!(
            issues.iter().any(
                |i| i.get("loc").and_then(Value::as_str) == expected_loc.as_deref()
                    && i["severity"]
                        == if expect.0 == "WARN" {
                            "warning"
                        } else {
                            "error"
                        }
            ),
            "{name}: no issue at {expected_loc:?} in {answer}"
        );
        seen.extend(
            issues
                .iter()
                .map(|i| i["msg"].as_str().unwrap_or("").to_owned()),
        );
    }
    let definition =
        json!({"input": {"type": "object", "required": ["id"]}, "steps": [set("s", json!(1))]});
    let (_, job) = execute(
        &engine,
        "acme",
        json!({"definition": definition, "params": {}}),
    )
    .await;
    assert_eq!(job["status"], "rejected");
    assert_eq!(
        job["issues"][0]["msg"],
        "params do not satisfy the declared input: field 'id' is required"
    );
    seen.extend(
        job["issues"]
            .as_array()
            .expect("issues")
            .iter()
            .map(|i| i["msg"].as_str().unwrap_or("").to_owned()),
    );
    shapes::assert_complete('b', &seen);

    // A few texts word for word.
    for text in [
        "no function named 'crm.get_custmer' exists; perhaps 'crm.get_customer'",
        "function 'crm.set_tier' is not licensed for org public",
        "function crm.set_tier: argument 'tier' must be one of bronze|silver|gold (saw 'platinum')",
        "function billing.create_invoice: argument 'amount_cents' must be integer (saw string)",
        "node 'after' reads 'e', which only exists inside loop 'l'",
        "QUOTA: node budget exceeded 201 of 200",
        "function 'crm.update_tier' is retired; prefer crm.set_tier",
    ] {
        assert!(seen.iter().any(|s| s == text), "missing {text:?}");
    }
}

#[tokio::test]
async fn jobs_log_every_entry_kind() {
    let engine = Engine::start_b();
    let definition = json!({"output": {"tiers": "$.steps.l.output"}, "steps": [
        {"id": "l", "kind": "for_each", "items": "$.params.ids", "as": "id", "do": [
            call("g", "crm.get_customer", json!({"id": "$.item"})),
            {"id": "b", "kind": "branch", "when": {"op": "eq", "left": "$.steps.g.output.tier", "right": "gold"},
             "then": [set("t", json!("$.steps.g.output.tier"))], "else": [set("o", json!("other"))]}
        ]}
    ]});
    // `$.params` is not an expression root: dialect b only renames the request fields.
    let (_, rejected) = execute(
        &engine,
        "acme",
        json!({"definition": definition, "params": {"ids": ["cus_1"]}}),
    )
    .await;
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(rejected["failure"], "definition rejected");
    assert_eq!(
        rejected["issues"][0]["msg"],
        "node 'l': expression '$.params.ids' is malformed"
    );

    let mut definition = definition;
    definition["steps"][0]["items"] = json!("$.input.ids");
    let request = json!({"definition": definition, "params": {"ids": ["cus_1", "cus_2"]}, "collect_events": true});
    let (status, job) = execute(&engine, "acme", request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(job["job_id"], "J-2");
    assert_eq!(job["status"], "done");
    assert_eq!(job["failure"], Value::Null);
    assert_eq!(job["issues"], json!([]));
    assert_eq!(job["output"], json!({"tiers": ["gold", "other"]}));
    let log = &job["log"];
    assert_eq!(
        kinds(log),
        vec![
            "iterate_begin",
            "iterate_step",
            "invoke",
            "decide",
            "assign",
            "iterate_step",
            "invoke",
            "decide",
            "assign",
            "iterate_end"
        ]
    );
    assert_eq!(
        log[0],
        json!({"kind": "iterate_begin", "node": "l", "size": 2, "counters": []})
    );
    assert_eq!(
        log[1],
        json!({"kind": "iterate_step", "node": "l", "n": 1, "elem": "cus_1", "counters": []})
    );
    let invoke = &log[2];
    assert_eq!(invoke["node"], "g");
    assert_eq!(invoke["function"], "crm.get_customer");
    assert_eq!(invoke["in"], json!({"id": "cus_1"}));
    assert_eq!(invoke["out"]["name"], "Ada");
    assert_eq!(invoke["ok"], true);
    assert_eq!(invoke["err"], Value::Null);
    assert_eq!(invoke["counters"], json!([1]));
    assert!(invoke["duration_ms"].is_u64());
    assert_eq!(log[3]["path"], "then");
    assert_eq!(log[3]["reason"], "$.steps.g.output.tier eq \"gold\"");
    assert_eq!(log[3]["value"], true);
    assert_eq!(
        log[4],
        json!({"kind": "assign", "node": "t", "out": "gold", "duration_ms": log[4]["duration_ms"], "counters": [1]})
    );
    assert_eq!(log[7]["path"], "else");
    assert_eq!(log[9]["n"], 2);
    assert_eq!(log[9]["why"], "items exhausted");

    let (_, quiet) = execute(
        &engine,
        "acme",
        json!({"definition": definition, "params": {"ids": []}}),
    )
    .await;
    assert_eq!(quiet["log"], Value::Null);
}

#[tokio::test]
async fn failures_timeouts_and_simulation() {
    let engine = Engine::start_b();
    let before = engine.digest("acme").await;
    let failing = json!({"steps": [
        call("st", "crm.set_tier", json!({"id": "cus_1", "tier": "bronze"})),
        call("bad", "crm.get_customer", json!({"id": "cus_42"}))
    ]});
    let (_, job) = execute(
        &engine,
        "acme",
        json!({"definition": failing, "simulate": true, "collect_events": true}),
    )
    .await;
    assert_eq!(job["status"], "failed");
    assert_eq!(
        job["failure"],
        "node 'bad' failed: no such customer 'cus_42'"
    );
    assert_eq!(job["log"][1]["ok"], false);
    assert_eq!(job["log"][1]["err"], "no such customer 'cus_42'");
    assert_eq!(
        engine.digest("acme").await,
        before,
        "simulated jobs change nothing"
    );

    let (_, job) = execute(&engine, "acme", json!({"definition": failing})).await;
    assert_eq!(job["status"], "failed");
    assert_ne!(
        engine.digest("acme").await,
        before,
        "the real job keeps the first call's effect"
    );

    let slow = json!({"steps": [call("z", "util.sleep", json!({"ms": 2000}))]});
    let (_, job) = execute(
        &engine,
        "public",
        json!({"definition": slow, "timeout_ms": 100}),
    )
    .await;
    assert_eq!(job["status"], "timeout");
    assert_eq!(job["failure"], "timeout after 100 ms");

    let args =
        json!({"steps": [call("s", "crm.set_tier", json!({"id": "cus_1", "tier": "$.input.t"}))]});
    let (_, job) = execute(
        &engine,
        "acme",
        json!({"definition": args, "params": {"t": 3}}),
    )
    .await;
    assert_eq!(
        job["failure"],
        "node 's' failed: function crm.set_tier: argument 'tier' must be string (saw integer)"
    );

    let (status, body) = execute(
        &engine,
        "acme",
        json!({"definition": args, "collect_events": "yes"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({"failure": "field 'collect_events' must be a boolean"})
        )
    );
    let (status, body) = engine
        .post_raw("/v2/jobs/execute", Some((ORG, "acme")), "{".to_owned())
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["failure"]
            .as_str()
            .is_some_and(|f| f.starts_with("malformed JSON: "))
    );
}

#[tokio::test]
async fn faults_answer_in_b_and_admin_is_shared() {
    let engine = Engine::start_b();
    engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let definition = json!({"steps": [set("s", json!(1))]});
    let (status, body) = engine
        .post_with(
            "/v2/jobs/validate",
            Some((ORG, "acme")),
            &json!({"definition": definition}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"failure": "internal validator failure"})
        )
    );
    let (status, body) = execute(&engine, "acme", json!({"definition": definition})).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"failure": "internal validator failure"})
        )
    );

    engine.faults(json!({"runner_crash_after": 1})).await;
    let (status, body) = execute(&engine, "acme", json!({"definition": definition})).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["failure"], "runner crashed");
    assert_eq!(body["job_id"], "J-1");
    assert_eq!(kinds(&body["log"]), vec!["assign"]);

    let (status, body) = engine.post("/admin/reset", None, &json!({})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"reset": true})));
    assert_eq!(engine.state("acme").await["runs"], 0);
}
