//! Admin endpoints: state and reset, capability edits (global and per tenant) and
//! injected faults (validator 500, slow responses, runner crash).

mod common;

use std::time::Instant;

use common::{Engine, call, set, types};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn put(engine: &Engine, path: &str, body: &Value) -> (StatusCode, Value) {
    let response = engine
        .client
        .put(engine.url(path))
        .body(body.to_string())
        .send()
        .await
        .expect("sent");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

async fn delete(engine: &Engine, path: &str) -> (StatusCode, Value) {
    let response = engine
        .client
        .delete(engine.url(path))
        .send()
        .await
        .expect("sent");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

fn capability<'a>(listing: &'a Value, name: &str) -> Option<&'a Value> {
    listing["capabilities"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == name))
}

#[tokio::test]
async fn state_and_reset() {
    let engine = Engine::start();
    let initial = engine.state("acme").await;
    assert_eq!(initial["tenant"], "acme");
    assert_eq!(initial["runs"], 0);
    assert_eq!(initial["customers"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        initial["customers"][0],
        json!({"id": "cus_1", "name": "Ada", "tier": "gold", "email": "ada@example.com"})
    );
    for key in ["invoices", "outbox", "audit"] {
        assert_eq!(initial[key], json!([]));
    }
    let digest = initial["digest"].as_str().expect("digest");
    assert_eq!(digest.len(), 64);

    let workflow = json!({"steps": [call("m", "mail.send", json!({"to": "x@y", "subject": "s", "body": "b"}))]});
    engine.run("acme", json!({"workflow": workflow})).await;
    let changed = engine.state("acme").await;
    assert_ne!(changed["digest"], initial["digest"]);
    assert_eq!(changed["outbox"][0]["message_id"], "msg_1");
    assert_eq!(
        changed["audit"][0],
        json!({"seq": 1, "run": 1, "capability": "mail.send", "detail": "msg_1 to x@y"})
    );

    let (status, body) = engine.post("/admin/reset", None, &json!({})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"reset": true})));
    assert_eq!(engine.state("acme").await, initial);
    // Run ids are never reused, even after a reset.
    let next = engine.run("acme", json!({"workflow": {"steps": []}})).await;
    assert_eq!(next["run"], "r-000002");

    let (status, body) = engine.get("/admin/state", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({"error": "missing query parameter 'tenant'"})
        )
    );
    let (status, body) = engine.get("/admin/state?tenant=nobody", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown tenant 'nobody'"})
        )
    );
}

#[tokio::test]
async fn global_capability_edits_move_updated_at_and_the_etag() {
    let engine = Engine::start();
    let (_, before) = engine.get("/api/v1/capabilities", Some("globex")).await;
    let mut edited = capability(&before, "crm.get_customer")
        .expect("listed")
        .clone();
    edited["doc"] = json!("Reads one customer. Now with more words.");
    let (status, body) = put(&engine, "/admin/capabilities/crm.get_customer", &edited).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["tenant"], Value::Null);

    for tenant in ["acme", "globex", "public"] {
        let (_, after) = engine.get("/api/v1/capabilities", Some(tenant)).await;
        let entry = capability(&after, "crm.get_customer").expect("still listed");
        assert_eq!(entry["doc"], "Reads one customer. Now with more words.");
        assert_ne!(entry["updated_at"], "2026-01-01T00:00:00Z");
    }
    let (_, after) = engine.get("/api/v1/capabilities", Some("globex")).await;
    assert_eq!(
        capability(&after, "util.echo"),
        capability(&before, "util.echo"),
        "others untouched"
    );

    // A new global capability is visible everywhere; without a handler it fails when called.
    let new = json!({"name": "crm.merge_customers", "title": "Merge", "doc": "", "effect": "write",
        "params": {"type": "object", "required": ["a", "b"], "additionalProperties": false,
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
        "returns": {"type": "object"}, "tags": ["crm"], "deprecated": false});
    let (status, _) = put(&engine, "/admin/capabilities/crm.merge_customers", &new).await;
    assert_eq!(status, StatusCode::OK);
    let (_, public) = engine.get("/api/v1/capabilities", Some("public")).await;
    assert!(capability(&public, "crm.merge_customers").is_some());
    let workflow =
        json!({"steps": [call("m", "crm.merge_customers", json!({"a": "cus_1", "b": "cus_2"}))]});
    let run = engine.run("acme", json!({"workflow": workflow})).await;
    assert_eq!(
        run["error"],
        "step 'm' failed: capability 'crm.merge_customers' has no handler on this engine"
    );

    // Bad bodies are refused with a reason.
    let (status, body) = put(
        &engine,
        "/admin/capabilities/x.y",
        &json!({"effect": "explode"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "field 'effect' must be one of read, write, delete, external"
    );
    let (status, body) = put(
        &engine,
        "/admin/capabilities/x.y",
        &json!({"name": "x.z", "effect": "read"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "capability name 'x.z' does not match the path 'x.y'"
    );
}

#[tokio::test]
async fn per_tenant_edits_and_removals() {
    let engine = Engine::start();
    // Removing from one tenant turns "unknown" into "not enabled" there only.
    let (status, body) = delete(&engine, "/admin/capabilities/util.echo?tenant=public").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            json!({"deleted": "util.echo", "tenant": "public"})
        )
    );
    let (_, public) = engine.get("/api/v1/capabilities", Some("public")).await;
    assert!(capability(&public, "util.echo").is_none());
    let workflow = json!({"steps": [call("e", "util.echo", json!({"value": 1}))]});
    let checked = engine.check("public", workflow.clone()).await;
    assert_eq!(
        checked["problems"][0]["text"],
        "capability 'util.echo' is not enabled for tenant public"
    );
    assert_eq!(engine.check("acme", workflow.clone()).await["ok"], true);

    // A tenant override changes the definition for that tenant only.
    let (_, acme) = engine.get("/api/v1/capabilities", Some("acme")).await;
    let mut mail = capability(&acme, "mail.send").expect("listed").clone();
    mail["title"] = json!("Send mail (globex edition)");
    let (status, _) = put(
        &engine,
        "/admin/capabilities/mail.send?tenant=globex",
        &mail,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, globex) = engine.get("/api/v1/capabilities", Some("globex")).await;
    assert_eq!(
        capability(&globex, "mail.send").map(|c| c["title"].clone()),
        Some(json!("Send mail (globex edition)"))
    );
    let (_, acme_after) = engine.get("/api/v1/capabilities", Some("acme")).await;
    assert_eq!(
        capability(&acme_after, "mail.send"),
        capability(&acme, "mail.send")
    );

    // Removing globally makes it unknown everywhere.
    let (status, _) = delete(&engine, "/admin/capabilities/util.echo").await;
    assert_eq!(status, StatusCode::OK);
    let checked = engine.check("acme", workflow).await;
    assert_eq!(
        checked["problems"][0]["text"],
        "unknown capability 'util.echo'"
    );
    let (status, body) = delete(&engine, "/admin/capabilities/util.echo").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown capability 'util.echo'"})
        )
    );
    let (status, body) = delete(&engine, "/admin/capabilities/util.fail?tenant=nobody").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown tenant 'nobody'"})
        )
    );

    // Reset brings the seeded registry back.
    engine.post("/admin/reset", None, &json!({})).await;
    let (_, public) = engine.get("/api/v1/capabilities", Some("public")).await;
    assert!(capability(&public, "util.echo").is_some());
}

#[tokio::test]
async fn validator_fault_fails_check_and_run_with_500() {
    let engine = Engine::start();
    engine
        .faults(json!({"tenant": "acme", "validator_500": true}))
        .await;
    let workflow = json!({"steps": [set("s", json!(1))]});
    let (status, body) = engine
        .post(
            "/api/v1/workflows/check",
            Some("acme"),
            &json!({"workflow": workflow}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": "internal validator failure"})
        )
    );
    let (status, body) = engine
        .post(
            "/api/v1/workflows/run",
            Some("acme"),
            &json!({"workflow": workflow}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": "internal validator failure"})
        )
    );
    assert_eq!(engine.state("acme").await["runs"], 0, "nothing ran");
    // Other tenants are not affected; `{}` clears everything.
    assert_eq!(engine.check("globex", workflow.clone()).await["ok"], true);
    engine.faults(json!({})).await;
    assert_eq!(engine.check("acme", workflow).await["ok"], true);
}

#[tokio::test]
async fn slow_fault_delays_tenant_requests() {
    let engine = Engine::start();
    engine.faults(json!({"slow_ms": 300})).await;
    let started = Instant::now();
    let (status, _) = engine.get("/api/v1/capabilities", Some("public")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(started.elapsed().as_millis() >= 300, "the response waited");
    engine.faults(json!({})).await;
    let (status, body) = engine
        .post("/admin/faults", None, &json!({"slow_ms": -5}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "field 'slow_ms' must be an integer between 0 and 60000"
    );
    let (status, body) = engine
        .post("/admin/faults", None, &json!({"tenant": "nobody"}))
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown tenant 'nobody'"})
        )
    );
}

#[tokio::test]
async fn runner_crash_returns_the_first_events_and_keeps_their_effects() {
    let engine = Engine::start();
    engine.faults(json!({"runner_crash_after": 2})).await;
    let before = engine.digest("acme").await;
    let workflow = json!({"steps": [
        call("a", "crm.set_tier", json!({"id": "cus_1", "tier": "bronze"})),
        call("b", "crm.set_tier", json!({"id": "cus_2", "tier": "bronze"})),
        call("c", "crm.set_tier", json!({"id": "cus_3", "tier": "gold"}))
    ]});
    let (status, body) = engine
        .post(
            "/api/v1/workflows/run",
            Some("acme"),
            &json!({"workflow": workflow}),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["error"], "runner crashed");
    assert_eq!(body["run"], "r-000001");
    assert_eq!(types(&body["events"]), vec!["call", "call"]);
    let state = engine.state("acme").await;
    assert_ne!(state["digest"], before.as_str());
    let tiers: Vec<&Value> = state["customers"]
        .as_array()
        .expect("list")
        .iter()
        .map(|c| &c["tier"])
        .collect();
    assert_eq!(
        tiers,
        vec!["bronze", "bronze", "bronze"],
        "the third call never ran"
    );

    // A run with fewer events than the threshold completes normally.
    let short = json!({"steps": [set("s", json!(1))]});
    assert_eq!(
        engine.run("acme", json!({"workflow": short})).await["state"],
        "COMPLETED"
    );
    // Zero crashes before the first event.
    engine
        .faults(json!({"tenant": "globex", "runner_crash_after": 0}))
        .await;
    let (status, body) = engine
        .post(
            "/api/v1/workflows/run",
            Some("globex"),
            &json!({"workflow": short}),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["events"], json!([]));
}
