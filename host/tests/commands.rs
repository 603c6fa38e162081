//! `pilotage guides`, `pilotage catalog` and `pilotage trace` against the
//! real gateway: the guide cache keyed by version, search gated on the
//! declared sub-feature, and a stored run's trace with its decisions.

mod common;

use common::Env;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn guides_catalog_and_trace_commands() {
    let env = Env::start().await;
    let r = env.pilotage(&["guides"]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("closed-sets"), "{}", r.stdout);
    // The core guide is fetched once, then served from the cache.
    env.front.clear();
    let r = env.pilotage(&["guides", "core"]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("workflow"), "{}", r.stdout);
    let r = env.pilotage(&["--json", "guides", "core"]).await;
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(doc["cached"], true, "{doc}");
    assert_eq!(
        env.front.count("tools/call pilotage_get_guide"),
        3,
        "two indexes, one body"
    );

    let r = env.pilotage(&["catalog", "--q", "customer"]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("crm.delete_customer"), "{}", r.stdout);
    assert!(r.stdout.contains("destructive=true"), "{}", r.stdout);

    // A stored run's trace, fetched by run id with the same key.
    let program = json!({"steps": [
        {"id": "find", "kind": "call", "capability": "crm.find_customer", "with": {"query": "Ada"}},
        {"id": "gold", "kind": "branch", "when": {"op": "ge", "left": "$.steps.find.output.count", "right": 1},
         "then": [{"id": "hi", "kind": "call", "capability": "util.echo", "with": {"value": "found"}}], "else": []}
    ]});
    let file = env.program("branch", &program);
    let r = env.pilotage(&["--json", "run", &file]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let run_id = doc["executions"][0]["answer"]["run_id"]
        .as_str()
        .expect("run_id")
        .to_string();
    let r = env.pilotage(&["trace", &run_id]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout.contains("◆ decision at gold: took then"),
        "{}",
        r.stdout
    );
    let r = env
        .pilotage(&["trace", "run_00000000000000000000000000000000"])
        .await;
    assert_eq!(r.code, 3, "{}", r.all());
    assert!(r.stderr.contains("not_found"), "{}", r.stderr);
}

/// The second language of the conformance configuration requires a context
/// and executes only immediately: the Host sends `context`, no `mode`, and
/// no idempotency key (not declared there).
#[tokio::test(flavor = "multi_thread")]
async fn a_context_language_gets_context_and_no_mode() {
    let env = Env::start().await;
    let program = json!({"steps": [
        {"id": "say", "kind": "call", "capability": "util.echo", "with": {"value": "hi"}}
    ], "output": {"said": "$.steps.say.output.value"}});
    let file = env.program("echo", &program);
    let r = env
        .pilotage(&[
            "--json",
            "run",
            &file,
            "--context",
            r#"{"environment":"staging"}"#,
        ])
        .await;
    assert_eq!(r.code, 0, "{}", r.all());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(doc["language"]["name"], "workflow-staging/v1", "{doc}");
    let sent = &doc["executions"][0]["sent"];
    assert_eq!(sent["context"]["environment"], "staging");
    assert!(sent.get("mode").is_none(), "{sent}");
    assert!(sent.get("idempotency_key").is_none(), "{sent}");
    assert!(sent["expected_catalog_version"].is_string(), "{sent}");
    assert_eq!(doc["executions"][0]["answer"]["trace"]["level"], "summary");

    // Without a context the same program goes to workflow/v1, with `mode`.
    let r = env.pilotage(&["--json", "run", &file]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(doc["language"]["name"], "workflow/v1");
    assert_eq!(doc["executions"][0]["sent"]["mode"], "immediate");
    assert!(doc["executions"][0]["sent"]["idempotency_key"].is_string());
}
