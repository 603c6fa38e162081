//! The n8n adapter against a real n8n, driven directly through the `Engine`
//! trait as tenant users `alpha` and `beta` (their keys and logins as
//! `scripts/n8n` writes them): the catalog of node types with its stable
//! version, the node checks (a tenant's credentials read live), runs to
//! success with their events, a run past its deadline stopped, n8n's own
//! refusals as `Rejected`, tenants kept apart, and nothing left behind.
//!
//! n8n is found through `PILOTAGE_N8N_URL` and `PILOTAGE_N8N_HOME` (its
//! `tenants/` folder), else through `scripts/n8n url` with the default home
//! (target/n8n). Installing n8n takes about 15 minutes, so these tests never
//! start one: without a running n8n they say so and pass, except under CI.

use pilotage_gateway::config::Config;
use pilotage_gateway::engines::n8n::N8nEngine;
use pilotage_gateway::engines::{CatalogFetch, Engine, RunReply, RunState};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// n8n's base URL and its home, or `None` (said) when none runs.
fn n8n() -> Option<(String, PathBuf)> {
    static FOUND: OnceLock<Option<(String, PathBuf)>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
            let home = std::env::var("PILOTAGE_N8N_HOME")
                .ok()
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| repo.join("target/n8n"));
            let url = std::env::var("PILOTAGE_N8N_URL")
                .ok()
                .filter(|u| !u.is_empty())
                .or_else(|| {
                    let out = std::process::Command::new(repo.join("scripts/n8n"))
                        .arg("url")
                        .env("PILOTAGE_N8N_HOME", &home)
                        .output()
                        .ok()?;
                    out.status
                        .success()
                        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
                        .filter(|u| u.starts_with("http"))
                });
            match url {
                Some(url) => Some((url.trim_end_matches('/').to_string(), home)),
                None => {
                    let why = "no n8n runs: start one with `scripts/n8n start` (or set PILOTAGE_N8N_URL and PILOTAGE_N8N_HOME)";
                    if std::env::var_os("CI").is_some() {
                        panic!("{why}");
                    }
                    eprintln!("SKIPPED: {why}");
                    None
                }
            }
        })
        .clone()
}

/// An adapter for the n8n at `url` whose tenants live under `home`.
fn adapter(url: &str, home: &Path) -> N8nEngine {
    let text = format!(
        "[engine]\nkind = \"n8n\"\nurl = \"{url}\"\ntimeout_ms = 60000\nretry_backoff_ms = 10\n\
         [engine.n8n]\ntenants_dir = \"{}\"\n",
        home.join("tenants").display()
    );
    let cfg = Config::parse(&text, Path::new("gateway.toml")).expect("config");
    let problems: Vec<_> = cfg
        .validate()
        .into_iter()
        .filter(|p| p.key.starts_with("engine"))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    N8nEngine::new(&cfg.engine, Vec::new())
}

/// A public-API GET straight to n8n with `tenant`'s own key.
async fn get_as(url: &str, home: &Path, tenant: &str, path: &str) -> (u16, Value) {
    let key = std::fs::read_to_string(home.join("tenants").join(tenant).join("api-key"))
        .expect("the tenant's key");
    let resp = reqwest::Client::new()
        .get(format!("{url}{path}"))
        .header("X-N8N-API-KEY", key.trim())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("n8n answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The names of the workflows `tenant` has.
async fn workflow_names(url: &str, home: &Path, tenant: &str) -> Vec<String> {
    let (status, body) = get_as(url, home, tenant, "/api/v1/workflows?limit=250").await;
    assert_eq!(status, 200, "{body}");
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Nothing a run created is left in `tenant`'s project.
async fn assert_nothing_left(url: &str, home: &Path, tenant: &str) {
    let owned: Vec<String> = workflow_names(url, home, tenant)
        .await
        .into_iter()
        .filter(|n| n.starts_with("pilotage-"))
        .collect();
    assert!(owned.is_empty(), "{tenant} kept {owned:?}");
}

fn corpus(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/n8n/corpus")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Manual Trigger → Set `greeting` from the input's `who`.
fn greeting() -> Value {
    json!({"nodes": [
        {"id": "a", "name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1,
         "position": [0, 0], "parameters": {}},
        {"id": "b", "name": "Greet", "type": "n8n-nodes-base.set", "typeVersion": 3.4,
         "position": [200, 0], "parameters": {"mode": "manual", "includeOtherFields": true,
           "assignments": {"assignments": [{"id": "x", "name": "greeting",
             "value": "={{ 'hello ' + $json.who }}", "type": "string"}]}, "options": {}}}],
      "connections": {"Start": {"main": [[{"node": "Greet", "type": "main", "index": 0}]]}}})
}

/// Manual Trigger → Wait `seconds`.
fn waiting(seconds: u64) -> Value {
    json!({"nodes": [
        {"id": "a", "name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1,
         "position": [0, 0], "parameters": {}},
        {"id": "b", "name": "Pause", "type": "n8n-nodes-base.wait", "typeVersion": 1.1,
         "position": [200, 0], "parameters": {"amount": seconds, "unit": "seconds"}}],
      "connections": {"Start": {"main": [[{"node": "Pause", "type": "main", "index": 0}]]}}})
}

async fn run(
    engine: &N8nEngine,
    tenant: &str,
    program: &Value,
    input: Value,
    secs: u64,
) -> RunReply {
    engine
        .run(
            tenant,
            &pilotage_gateway::engines::RunOrder {
                program,
                input: &input,
                context: None,
                dry_run: false,
                deadline: Duration::from_secs(secs),
                stop: None,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("the run answers: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_catalog_lists_node_types_with_a_stable_version() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = adapter(&url, &home);
    let CatalogFetch::Fresh { etag, capabilities } = engine.catalog("alpha", None).await.unwrap()
    else {
        panic!("a first listing is fresh")
    };
    assert!(capabilities.len() > 800, "{}", capabilities.len());
    let ids: Vec<&str> = capabilities
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    let http = capabilities
        .iter()
        .find(|e| e["id"] == "n8n-nodes-base.httpRequest")
        .unwrap();
    assert_eq!(http["kind"], "capability");
    assert_eq!(http["name"], "HTTP Request");
    assert_eq!(http["risk"], "destructive");
    assert_eq!(
        http["risk_when"][0]["in"],
        json!(["GET", "HEAD", "OPTIONS"])
    );
    assert_eq!(http["n8n"]["default_version"], json!(4.5));
    assert_eq!(http["n8n"]["outputs"], 1);
    assert!(http["input_schema"]["properties"]["url"].is_object());
    let manual = capabilities
        .iter()
        .find(|e| e["id"] == "n8n-nodes-base.manualTrigger")
        .unwrap();
    assert_eq!(manual["n8n"]["trigger"], true);
    assert_eq!(manual["risk"], "safe");
    // Derived from the served descriptions: maxNodes, n8n's trigger group,
    // main connections only.
    assert_eq!(manual["n8n"]["max_nodes"], 1);
    assert!(http["n8n"].get("max_nodes").is_none());
    let entry = |id: &str| capabilities.iter().find(|e| e["id"] == id).unwrap();
    let with_limit: Vec<&str> = capabilities
        .iter()
        .filter(|e| e["n8n"].get("max_nodes").is_some())
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(
        with_limit.contains(&"n8n-nodes-base.executeWorkflowTrigger"),
        "{with_limit:?}"
    );
    let model = entry("@n8n/n8n-nodes-langchain.lmChatOpenAi");
    assert_eq!(model["n8n"]["trigger"], false);
    assert_eq!(
        (&model["n8n"]["inputs"], &model["n8n"]["outputs"]),
        (&json!(0), &json!(0))
    );
    assert_eq!(entry("n8n-nodes-base.gmailTrigger")["n8n"]["trigger"], true);
    // The same n8n: the same version, and the same bytes for another tenant.
    let etag = etag.expect("an ETag");
    assert!(matches!(
        engine.catalog("alpha", Some(&etag)).await.unwrap(),
        CatalogFetch::NotModified
    ));
    let CatalogFetch::Fresh {
        etag: beta_etag,
        capabilities: beta,
    } = engine.catalog("beta", None).await.unwrap()
    else {
        panic!("fresh")
    };
    assert_eq!(beta_etag.as_deref(), Some(etag.as_str()));
    assert_eq!(
        serde_json::to_string(&beta).unwrap(),
        serde_json::to_string(&capabilities).unwrap()
    );
    // A tenant without an n8n user gets nothing.
    assert!(engine.catalog("nobody", None).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn checks_find_node_mistakes_and_pass_valid_workflows() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = adapter(&url, &home);
    let found = engine
        .check("alpha", &corpus("broken/http-missing-url.json"), None)
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].text, "required parameter 'url' is missing");
    assert_eq!(found[0].location.as_deref(), Some("/nodes/1/parameters"));
    // alpha has no credential of that id: read from n8n, not assumed.
    let found = engine
        .check("alpha", &corpus("broken/credentials-unknown.json"), None)
        .await
        .unwrap();
    assert!(
        found
            .iter()
            .any(|p| p.location.as_deref() == Some("/nodes/1/credentials/httpBasicAuth")),
        "{found:?}"
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/n8n/corpus/valid");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), 12);
    for file in files {
        let valid = file.trim_end_matches(".json");
        let found = engine
            .check("alpha", &corpus(&format!("valid/{valid}.json")), None)
            .await
            .unwrap();
        assert!(found.is_empty(), "{valid}: {found:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_succeeds_with_its_input_events_and_result() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = adapter(&url, &home);
    let reply = run(&engine, "alpha", &greeting(), json!({"who": "world"}), 60).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(
        reply.result,
        json!([{"who": "world", "greeting": "hello world"}])
    );
    let nodes: Vec<&str> = reply
        .events
        .iter()
        .filter_map(|e| e["node"].as_str())
        .collect();
    assert_eq!(nodes, ["Start", "Greet"]);
    let greet = &reply.events[1];
    assert_eq!(greet["status"], "success");
    assert_eq!(greet["items"], json!([1]));
    assert_eq!(greet["run"], 0);
    assert!(greet["started_ms"].as_u64().unwrap() > 1_700_000_000_000);
    assert_eq!(
        reply.events.last().unwrap(),
        &json!({"execution": "success", "error": null})
    );
    // The execution went with the workflow.
    let id = reply.engine_run_id.unwrap();
    let (status, _) = get_as(&url, &home, "alpha", &format!("/api/v1/executions/{id}")).await;
    assert_eq!(status, 404);
    assert_nothing_left(&url, &home, "alpha").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_its_deadline_is_stopped() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = adapter(&url, &home);
    let started = std::time::Instant::now();
    let reply = run(&engine, "alpha", &waiting(30), Value::Null, 3).await;
    assert_eq!(reply.state, RunState::TimedOut, "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(reply.events.last().unwrap()["execution"], "canceled");
    assert_nothing_left(&url, &home, "alpha").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn n8n_refusals_are_rejected_with_located_problems() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = adapter(&url, &home);
    let reply = run(
        &engine,
        "alpha",
        &corpus("broken/unknown-node-type.json"),
        Value::Null,
        60,
    )
    .await;
    assert_eq!(reply.state, RunState::Rejected, "{reply:?}");
    assert_eq!(
        reply.problems[0].text,
        "Unrecognized node type: n8n-nodes-base.doesNotExist"
    );
    assert_eq!(reply.problems[0].location.as_deref(), Some("/nodes/1/type"));
    let reply = run(
        &engine,
        "alpha",
        &corpus("broken/http-missing-url.json"),
        Value::Null,
        60,
    )
    .await;
    assert_eq!(reply.state, RunState::Rejected, "{reply:?}");
    assert!(
        reply.problems[0]
            .text
            .starts_with("WorkflowHasIssuesError: The 'Fetch' node has issues"),
        "{reply:?}"
    );
    assert_eq!(reply.problems[0].location.as_deref(), Some("/nodes/1"));
    // A node's own failure is a failed run with the node's error.
    let reply = run(
        &engine,
        "alpha",
        &corpus("broken/code-syntax-error.json"),
        Value::Null,
        60,
    )
    .await;
    assert_eq!(reply.state, RunState::Failed, "{reply:?}");
    assert!(
        reply.error.as_deref().unwrap_or("").contains("Code"),
        "{reply:?}"
    );
    assert_nothing_left(&url, &home, "alpha").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn beta_cannot_see_alphas_runs() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    let engine = std::sync::Arc::new(adapter(&url, &home));
    let alphas = {
        let engine = engine.clone();
        tokio::spawn(async move { run(&engine, "alpha", &waiting(4), Value::Null, 60).await })
    };
    // While it runs, alpha sees its workflow and beta does not.
    let mut seen = None;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, body) = get_as(&url, &home, "alpha", "/api/v1/workflows?limit=250").await;
        if let Some(w) = body["data"].as_array().and_then(|l| {
            l.iter()
                .find(|w| w["name"].as_str().unwrap_or("").starts_with("pilotage-"))
        }) {
            seen = w["id"].as_str().map(str::to_string);
            break;
        }
    }
    let workflow = seen.expect("alpha's run has a workflow while it runs");
    assert!(
        !workflow_names(&url, &home, "beta")
            .await
            .iter()
            .any(|n| n.starts_with("pilotage-")),
        "beta sees alpha's workflow"
    );
    let (status, _) = get_as(
        &url,
        &home,
        "beta",
        &format!("/api/v1/workflows/{workflow}"),
    )
    .await;
    assert!(matches!(status, 403 | 404), "{status}");
    let (_, executions) = get_as(
        &url,
        &home,
        "beta",
        &format!("/api/v1/executions?workflowId={workflow}"),
    )
    .await;
    assert_eq!(executions["data"], json!([]));
    let reply = alphas.await.unwrap();
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    let id = reply.engine_run_id.unwrap();
    let (status, _) = get_as(&url, &home, "beta", &format!("/api/v1/executions/{id}")).await;
    assert_eq!(status, 404);
    assert_nothing_left(&url, &home, "alpha").await;
    assert_nothing_left(&url, &home, "beta").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_health_probe_answers() {
    let Some((url, home)) = n8n() else { return };
    let _one = crate::common::n8n_gateway::turn().await;
    assert!(adapter(&url, &home).healthy().await);
    assert!(!adapter("http://127.0.0.1:1", &home).healthy().await);
}
