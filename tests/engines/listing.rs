//! A capability listing revalidated against the real reference engine: an
//! unchanged one answers 304; one whose only change is a usage counter (the
//! engine counts every run) keeps the catalog under a new validator without
//! being parsed; one whose contract moved is read again in full.

use crate::common::Engine;
use pilotage_gateway::config::Config;
use pilotage_gateway::engines::CatalogFetch;
use pilotage_gateway::engines::rest::EngineClient;
use serde_json::json;
use std::path::Path;

async fn fetch(client: &EngineClient, kept: Option<&str>) -> CatalogFetch {
    client
        .catalog("acme", kept)
        .await
        .expect("the listing answers")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listing_that_only_moved_its_counters_keeps_the_catalog() {
    let engine = Engine::spawn(&[]);
    let text = format!("[engine]\nurl = \"{}\"\n", engine.url);
    let config = Config::parse(&text, Path::new("gateway.toml")).expect("config");
    let client = EngineClient::new(&config.engine);

    let CatalogFetch::Fresh { etag: first, .. } = fetch(&client, None).await else {
        panic!("a first listing is fresh");
    };
    assert!(matches!(
        fetch(&client, first.as_deref()).await,
        CatalogFetch::NotModified
    ));

    // A run moves util.echo's usage counter, and with it the engine's ETag.
    let run = reqwest::Client::new()
        .post(format!("{}/api/v1/workflows/run", engine.url))
        .header("x-tenant", "acme")
        .json(&json!({
            "workflow": {"steps": [{"id": "e", "kind": "call", "capability": "util.echo", "with": {"value": 1}}]},
            "input": {}, "trace": false, "dry_run": false, "deadline_ms": 5000
        }))
        .send()
        .await
        .expect("the engine runs");
    assert!(run.status().is_success(), "{}", run.status());
    let second = match fetch(&client, first.as_deref()).await {
        CatalogFetch::Same { etag } => etag,
        other => panic!("only a counter moved, so the catalog stands: {other:?}"),
    };
    assert_ne!(second, first, "the new ETag is what is kept");
    assert!(matches!(
        fetch(&client, second.as_deref()).await,
        CatalogFetch::NotModified
    ));

    // An edit of what reaches an entry is read in full.
    let mut echo = engine.capability("acme", "util.echo").await;
    echo["doc"] = json!("Returns its value unchanged (edited).");
    engine
        .put_capability("util.echo", &echo, Some("acme"))
        .await;
    assert!(matches!(
        fetch(&client, second.as_deref()).await,
        CatalogFetch::Fresh { .. }
    ));
}
