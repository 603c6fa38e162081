//! The capability catalog in dialect a: per-tenant visibility, the listing shape,
//! volatile fields and ETag / If-None-Match.

mod common;

use common::{Engine, call};
use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_NONE_MATCH};
use serde_json::{Value, json};

fn names(body: &Value) -> Vec<String> {
    body["capabilities"]
        .as_array()
        .expect("capabilities")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("").to_owned())
        .collect()
}

async fn etag(engine: &Engine, tenant: &str) -> String {
    let response = engine
        .client
        .get(engine.url("/api/v1/capabilities"))
        .header("X-Tenant", tenant)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()[ETAG].to_str().expect("ascii").to_owned()
}

#[tokio::test]
async fn each_tenant_sees_its_own_sorted_set() {
    let engine = Engine::start();
    let (status, acme) = engine.get("/api/v1/capabilities", Some("acme")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        names(&acme),
        vec![
            "billing.create_invoice",
            "billing.list_invoices",
            "crm.delete_customer",
            "crm.find_customer",
            "crm.get_customer",
            "crm.set_tier",
            "crm.update_tier",
            "mail.send",
            "util.echo",
            "util.fail",
            "util.sleep",
        ]
    );
    let (_, globex) = engine.get("/api/v1/capabilities", Some("globex")).await;
    let globex = names(&globex);
    assert_eq!(globex.len(), 9);
    assert!(
        !globex
            .iter()
            .any(|n| n.starts_with("mail.") || n == "crm.delete_customer")
    );
    let (_, public) = engine.get("/api/v1/capabilities", Some("public")).await;
    assert_eq!(
        names(&public),
        vec![
            "crm.find_customer",
            "crm.get_customer",
            "util.echo",
            "util.fail",
            "util.sleep"
        ]
    );
    assert!(
        acme["generated_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
}

#[tokio::test]
async fn entries_have_the_documented_fields() {
    let engine = Engine::start();
    let (_, body) = engine.get("/api/v1/capabilities", Some("acme")).await;
    let update = body["capabilities"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["name"] == "crm.update_tier"))
        .expect("crm.update_tier is listed")
        .clone();
    let keys: Vec<&String> = update.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        vec![
            "name",
            "title",
            "doc",
            "params",
            "returns",
            "effect",
            "tags",
            "deprecated",
            "usage_count",
            "updated_at"
        ]
    );
    assert_eq!(update["effect"], "write");
    assert_eq!(update["deprecated"], true);
    assert_eq!(update["usage_count"], 0);
    assert_eq!(update["updated_at"], "2026-01-01T00:00:00Z");
    assert_eq!(update["params"]["additionalProperties"], false);
    assert_eq!(
        update["params"]["properties"]["tier"]["enum"],
        json!(["bronze", "silver", "gold"])
    );
    let effects: Vec<&str> = body["capabilities"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["effect"].as_str())
        .collect();
    for effect in ["read", "write", "delete", "external"] {
        assert!(effects.contains(&effect), "{effect} is represented");
    }
}

#[tokio::test]
async fn etag_gives_304_until_a_run_moves_the_usage_counter() {
    let engine = Engine::start();
    let tag = etag(&engine, "public").await;
    assert!(
        tag.starts_with('"') && tag.ends_with('"') && tag.len() == 66,
        "{tag}"
    );

    let response = engine
        .client
        .get(engine.url("/api/v1/capabilities"))
        .header("X-Tenant", "public")
        .header(IF_NONE_MATCH, &tag)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(response.headers()[ETAG].to_str().expect("ascii"), tag);
    assert!(response.text().await.expect("body").is_empty());

    // The tag is the hash of the array as served.
    let text = engine
        .client
        .get(engine.url("/api/v1/capabilities"))
        .header("X-Tenant", "public")
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body");
    let array = text
        .strip_prefix("{\"capabilities\":")
        .and_then(|rest| rest.rsplit_once(",\"generated_at\":"))
        .map(|(array, _)| array)
        .expect("documented layout");
    use sha2::Digest;
    assert_eq!(
        tag,
        format!(
            "\"{}\"",
            hex::encode(sha2::Sha256::digest(array.as_bytes()))
        )
    );

    // A dry run counts too, and only in its tenant.
    let workflow = json!({"steps": [call("e", "util.echo", json!({"value": 1}))]});
    engine
        .run("public", json!({"workflow": workflow, "dry_run": true}))
        .await;
    assert_ne!(etag(&engine, "public").await, tag);
    let (_, body) = engine.get("/api/v1/capabilities", Some("public")).await;
    let echo = body["capabilities"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == "util.echo"))
        .cloned();
    assert_eq!(echo.map(|c| c["usage_count"].clone()), Some(json!(1)));
    let (_, acme) = engine.get("/api/v1/capabilities", Some("acme")).await;
    let echo = acme["capabilities"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == "util.echo"))
        .cloned();
    assert_eq!(echo.map(|c| c["usage_count"].clone()), Some(json!(0)));
}

#[tokio::test]
async fn failed_calls_count_as_usage() {
    let engine = Engine::start();
    let workflow = json!({"steps": [call("f", "util.fail", json!({"message": "no"}))]});
    engine.run("acme", json!({"workflow": workflow})).await;
    let (_, body) = engine.get("/api/v1/capabilities", Some("acme")).await;
    let fail = body["capabilities"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == "util.fail"))
        .cloned();
    assert_eq!(fail.map(|c| c["usage_count"].clone()), Some(json!(1)));
}

#[tokio::test]
async fn tenant_header_errors() {
    let engine = Engine::start();
    let (status, body) = engine.get("/api/v1/capabilities", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({"error": "missing X-Tenant header"})
        )
    );
    let (status, body) = engine.get("/api/v1/capabilities", Some("initech")).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown tenant 'initech'"})
        )
    );
    let (status, body) = engine
        .post(
            "/api/v1/workflows/check",
            Some("initech"),
            &json!({"workflow": {}}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "unknown tenant 'initech'"})
        )
    );
    let (status, body) = engine.get("/healthz", None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
    let (status, body) = engine.get("/api/v2/nothing", None).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "no route for GET /api/v2/nothing"})
        )
    );
}
