//! `auth.anonymous_scope` through the real endpoint.
//!
//! `"session"`: an anonymous request without an MCP session belongs to nobody
//! a later request can be, so its manifest declares what it gets (retention
//! "none", no idempotency, no changed_since, execution "immediate", no trace
//! tool), everything that would store something only a later request could
//! reach is refused before any side effect with advice that works on every
//! revision, and nothing at all is written to the store for it (counted on a
//! real Redis).
//! `"tenant"`: every anonymous caller is one principal, so clients without
//! sessions (revision 2026-07-28) fetch their stored runs and promoted
//! programs from any later request.

use crate::common::redis_server::RedisServer;
use crate::common::{ACME_OPS, LANG, Mcp, TestEnv, valid_program, write_program};
use pilotage_gateway::config::{AnonymousScope, Config};
use serde_json::{Value, json};

const EXT: &str = "io.github.jafarsa0/pilotage";

/// One stateless (2026-07-28) tools/call without a session; the result.
async fn stateless_call(url: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}}}});
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .send()
        .await
        .expect("POST /mcp");
    assert_eq!(resp.status(), 200, "{tool}");
    let v: Value = resp.json().await.expect("json");
    assert!(v.get("error").is_none(), "{tool}: carrier error {v}");
    v["result"].clone()
}

fn immediate(program: Value, extra: Value) -> Value {
    let mut args = json!({"workflow": program, "mode": "immediate", "input": {"id": "cus_1"}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        args[k] = v.clone();
    }
    args
}

/// A sessionless caller's arguments, formed from its manifest: its only
/// mode is "immediate", so it names none (Part III §4.4).
fn passing(program: Value, extra: Value) -> Value {
    let mut args = immediate(program, extra);
    args.as_object_mut().expect("object").remove("mode");
    args
}

async fn with_scope(scope: AnonymousScope) -> TestEnv {
    TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.auth.anonymous_scope = scope.as_str().into();
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn session_scope_refuses_what_a_sessionless_caller_could_never_reach() {
    let env = with_scope(AnonymousScope::Session).await;
    let lone = env.anonymous();
    let before = env.engine.digest("acme").await;

    // Its manifest announces exactly what it will get.
    let manifest = lone.call("pilotage_manifest", json!({})).await.structured;
    let declared = manifest["languages"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["name"] == LANG))
        .unwrap_or_else(|| panic!("{LANG} in {manifest}"))
        .clone();
    assert_eq!(declared["retention"], "none", "{declared}");
    assert_eq!(declared["execution"], "immediate", "{declared}");
    assert_eq!(declared["capabilities"]["execute"]["idempotency"], false);
    assert_eq!(declared["capabilities"]["catalog"]["changed_since"], false);
    assert!(declared["loop"].get("trace").is_none(), "{declared}");
    assert!(declared["capabilities"].get("trace_fetch").is_none());
    let tools = lone.list_tools().await;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!names.contains(&"trace_workflow"), "{names:?}");

    let stored = lone
        .call(
            "run_workflow",
            passing(write_program("gold"), json!({"store": true})),
        )
        .await;
    assert!(stored.is_error, "{}", stored.structured);
    assert_eq!(stored.structured["error"]["kind"], "unsupported");
    let message = stored.structured["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("API key") && message.contains(r#"retention "none""#),
        "the message names what the manifest declared and how to get a retained run: {message}"
    );
    assert!(
        !message.contains("initialize") && !message.contains("Mcp-Session-Id"),
        "no advice a sessionless revision cannot follow: {message}"
    );

    let keyed = lone
        .call(
            "run_workflow",
            passing(write_program("gold"), json!({"idempotency_key": "k-1"})),
        )
        .await;
    assert_eq!(
        keyed.structured["error"]["kind"], "invalid_request",
        "{}",
        keyed.structured
    );

    let deploy = lone
        .call(
            "run_workflow",
            json!({"workflow": write_program("gold"), "mode": "deploy"}),
        )
        .await;
    assert_eq!(
        deploy.structured["error"]["kind"], "invalid_request",
        "{}",
        deploy.structured
    );
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "refused before any side effect"
    );

    // Its language is not "both" for it: naming a mode is invalid_request,
    // even the one it has (Part III §4.4).
    let named = lone
        .call("run_workflow", immediate(valid_program(), json!({})))
        .await;
    assert_eq!(
        named.structured["error"]["kind"], "invalid_request",
        "{}",
        named.structured
    );

    // What keeps no promise still runs, and its run_id leads nowhere.
    let run = lone
        .call("run_workflow", passing(valid_program(), json!({})))
        .await;
    assert!(!run.is_error, "{}", run.structured);
    assert_eq!(run.structured["outcome"]["status"], "success");
    assert!(
        run.structured["trace"].is_object(),
        "its trace is in the answer"
    );
    let mut session = env.anonymous();
    session.initialize().await;
    let fetch = session
        .call(
            "trace_workflow",
            json!({"run_id": run.structured["run_id"]}),
        )
        .await;
    assert_eq!(fetch.structured["error"]["kind"], "not_found");

    // Inside a session the same requests are kept.
    let kept = session
        .call(
            "run_workflow",
            immediate(valid_program(), json!({"store": true})),
        )
        .await;
    assert!(!kept.is_error, "{}", kept.structured);
    let fetched = session
        .call(
            "trace_workflow",
            json!({"run_id": kept.structured["run_id"]}),
        )
        .await;
    assert!(!fetched.is_error, "{}", fetched.structured);
    let promoted = session
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "deploy"}),
        )
        .await;
    assert!(
        promoted.structured["output"]["program_ref"].is_string(),
        "{}",
        promoted.structured
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tenant_scope_lets_sessionless_callers_fetch_their_runs_and_programs() {
    let env = with_scope(AnonymousScope::Tenant).await;
    let run = stateless_call(
        &env.url,
        "run_workflow",
        immediate(valid_program(), json!({"store": true})),
    )
    .await;
    assert_eq!(run["isError"], false, "{run}");
    let run_id = run["structuredContent"]["run_id"].clone();
    let fetched = stateless_call(&env.url, "trace_workflow", json!({"run_id": run_id})).await;
    assert_eq!(fetched["isError"], false, "{fetched}");
    assert_eq!(
        fetched["structuredContent"]["outcome"],
        run["structuredContent"]["outcome"]
    );
    // Anonymous callers with a session of their own are the same principal.
    let mut session = env.anonymous();
    session.initialize().await;
    let same = session
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert!(!same.is_error, "{}", same.structured);
    // An API key is a principal of its own.
    let keyed = Mcp::new(&env.url, Some(ACME_OPS));
    let other = keyed
        .call("trace_workflow", json!({"run_id": run_id}))
        .await;
    assert_eq!(other.structured["error"]["kind"], "not_found");

    // A promoted program is reachable from the next sessionless request.
    let deploy = stateless_call(
        &env.url,
        "run_workflow",
        json!({"workflow": valid_program(), "mode": "deploy"}),
    )
    .await;
    let program_ref = deploy["structuredContent"]["output"]["program_ref"].clone();
    assert!(program_ref.is_string(), "{deploy}");
    let listed = stateless_call(
        &env.url,
        "pilotage_catalog",
        json!({"language": LANG, "verb": "get", "id": program_ref}),
    )
    .await;
    assert_eq!(listed["isError"], false, "{listed}");
    let again = stateless_call(
        &env.url,
        "run_workflow",
        json!({"program_ref": program_ref, "mode": "immediate", "input": {"id": "cus_1"}}),
    )
    .await;
    assert_eq!(
        again["structuredContent"]["outcome"]["status"], "success",
        "{again}"
    );
    // Idempotency keys are honoured across sessionless requests.
    let args = immediate(valid_program(), json!({"idempotency_key": "tenant-k"}));
    let first = stateless_call(&env.url, "run_workflow", args.clone()).await;
    let second = stateless_call(&env.url, "run_workflow", args).await;
    assert_eq!(
        first["structuredContent"]["run_id"], second["structuredContent"]["run_id"],
        "the retry is the recorded answer"
    );
}

#[test]
fn an_unknown_scope_is_refused_at_start_naming_the_key() {
    let path = crate::common::repo_path("deploy/gateway.local.toml");
    let text = std::fs::read_to_string(&path).expect("read the demo configuration");
    let demo = Config::parse(&text, &path).expect("parse");
    assert_eq!(
        demo.auth.scope(),
        Some(AnonymousScope::Session),
        "each anonymous session of the demo is a principal of its own"
    );
    assert!(demo.validate().is_empty());
    let text = text.replace(
        r#"anonymous_scope = "session""#,
        r#"anonymous_scope = "tenants""#,
    );
    let problems = Config::parse(&text, &path).expect("parse").validate();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].key, "auth.anonymous_scope");
    assert!(problems[0].problem.contains("'tenants'"), "{problems:?}");
    assert!(problems[0].fix.contains("\"session\"") && problems[0].fix.contains("\"tenant\""));
    let defaulted = text.replace(r#"anonymous_scope = "tenants""#, "");
    let config = Config::parse(&defaulted, &path).expect("parse");
    assert_eq!(
        config.auth.scope(),
        Some(AnonymousScope::Session),
        "the default"
    );
}

/// Every kind of request a sessionless caller can send, once.
async fn one_of_each(c: &Mcp, round: usize, catalog_version: &Value) {
    let calls = [
        ("pilotage_manifest", json!({})),
        ("pilotage_get_guide", json!({"language": LANG})),
        (
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        ),
        (
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "crm.get_customer"}),
        ),
        (
            "pilotage_catalog",
            json!({"language": LANG, "verb": "changed_since", "catalog_version": catalog_version}),
        ),
        ("validate_workflow", json!({"workflow": valid_program()})),
        ("run_workflow", immediate(valid_program(), json!({}))),
        (
            "run_workflow",
            immediate(valid_program(), json!({"store": false})),
        ),
        (
            "run_workflow",
            immediate(valid_program(), json!({"store": true})),
        ),
        (
            "run_workflow",
            immediate(
                valid_program(),
                json!({"idempotency_key": format!("k-{round}")}),
            ),
        ),
        (
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "deploy"}),
        ),
        (
            "run_workflow",
            immediate(valid_program(), json!({"test_run": true})),
        ),
        (
            "run_workflow",
            json!({"program_ref": "wf_000000000000000000000000", "mode": "immediate"}),
        ),
    ];
    for (tool, args) in calls {
        c.call(tool, args).await;
    }
    let tools = c.list_tools().await;
    assert!(!tools.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn session_scope_writes_nothing_to_redis_for_sessionless_callers() {
    let redis = RedisServer::start();
    let url = redis.url();
    let env = TestEnv::with_config("tests/fixtures/features.toml", move |c| {
        c.auth.anonymous_scope = AnonymousScope::Session.as_str().into();
        c.store.redis_url = url;
    })
    .await;
    let lone = env.anonymous();
    let version = lone
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await
        .structured["catalog_version"]
        .clone();
    let before = redis.keys().await;
    for round in 0..100 {
        one_of_each(&lone, round, &version).await;
        stateless_call(
            &env.url,
            "run_workflow",
            immediate(valid_program(), json!({})),
        )
        .await;
    }
    let after = redis.keys().await;
    assert_eq!(
        after, before,
        "100 rounds of sessionless requests wrote to the store"
    );
    assert_eq!(redis.key_count().await, before.len() as u64);

    // The count does move for a caller that a later request can be.
    let mut session = env.anonymous();
    session.initialize().await;
    one_of_each(&session, 0, &version).await;
    assert!(
        redis.key_count().await > before.len() as u64,
        "a session's runs, claims, programs and snapshots are stored"
    );
}
