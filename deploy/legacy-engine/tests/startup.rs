//! Starting the binary: the printed address, the dialect from the environment, a
//! replacement seed, and a clean failure for a bad seed.

mod common;

use std::process::Command;

use common::Engine;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn prints_the_real_address_for_port_zero() {
    let engine = Engine::start();
    let port = engine
        .base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok());
    assert!(port.is_some_and(|p| p != 0), "{}", engine.base);
    assert!(engine.base.starts_with("http://127.0.0.1:"));
}

#[tokio::test]
async fn the_dialect_can_come_from_the_environment() {
    let engine = Engine::start_with(&[], &[("LEGACY_ENGINE_DIALECT", "b")]);
    assert_eq!(
        engine.get("/v2/ping", None).await,
        (StatusCode::OK, json!({"pong": true}))
    );
}

#[tokio::test]
async fn a_seed_file_replaces_the_shipped_seed() {
    let dir = std::env::temp_dir().join(format!("legacy-engine-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("seed.json");
    let seed = json!({
        "capabilities": [{"name": "util.echo", "title": "Echo", "doc": "", "effect": "read",
            "params": {"type": "object", "required": ["value"], "additionalProperties": false,
                       "properties": {"value": {}}},
            "returns": {"type": "object"}, "tags": ["util"], "deprecated": false}],
        "tenants": {"solo": {"allow": ["*"]}},
        "world": {"customers": [{"id": "c1", "name": "Solo", "tier": "gold", "email": "solo@example.com"}]}
    });
    std::fs::write(&path, seed.to_string()).expect("seed written");
    let engine = Engine::start_with(&["--seed", path.to_str().expect("utf-8 path")], &[]);
    let (status, body) = engine.get("/api/v1/capabilities", Some("solo")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["capabilities"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        engine.get("/api/v1/capabilities", Some("acme")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(engine.state("solo").await["customers"][0]["name"], "Solo");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_seed_stops_the_engine_with_a_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_legacy-engine"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--seed",
            "/nonexistent/seed.json",
        ])
        .env_remove("LEGACY_ENGINE_DIALECT")
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot read seed"), "{stderr}");
}
